//! The op table (`frontend::table`), checked entry by entry: every schema parses and every
//! name is unique; every shape rule and reference it names as a function exists; and every
//! entry's example compiles under `dynamic=True`, returns a node of the lowering the entry
//! names, and runs on the CPU backend as the graph reference computes it.

use crate::kernels::{CPU_TOLERANCE, assert_close, case_inputs, compile, reference};
use std::collections::BTreeSet;
use tailor::config::DynamicMode;
use tailor::frontend::{Lowering, check_schemas, op_entries};
use tailor::graph::Op;
use tailor::runtime;

/// The input every example reads: `x`, a float tensor of these sizes (and the module's
/// parameters, as `OpEntry::example` lists them).
const EXAMPLE_INPUT: &str = "x=2,4,6,6";

#[test]
fn every_schema_parses_and_every_name_and_alias_is_unique() {
    check_schemas().expect("every schema parses");
    let mut names = BTreeSet::new();
    let mut aliases = BTreeSet::new();
    for entry in op_entries() {
        assert!(
            names.insert(entry.name),
            "op '{}' is listed twice",
            entry.name
        );
        for alias in entry.aliases {
            assert!(aliases.insert(*alias), "alias '{alias}' names two ops");
            let prefix = alias.split('.').next().unwrap_or_default();
            assert!(
                ["Tensor", "torch", "F"].contains(&prefix),
                "alias '{alias}' is not in a namespace the package defines from the table"
            );
        }
    }
}

/// The table's `shape_rule` and `reference` name a function where they are written as a
/// path (`shape::rules::conv`, `graph::eval::conv`, `graph::UnaryOp::apply`) and an arm of
/// `graph::eval` as `graph::eval Op::Where`; a shape rule may instead be its formula in
/// Python (`input.shape`).
#[test]
fn every_rule_and_reference_the_table_names_exists() {
    let sources = [
        ("shape::rules::", include_str!("../../src/shape/rules.rs")),
        ("shape::layout::", include_str!("../../src/shape/layout.rs")),
        ("graph::eval::", include_str!("../../src/graph/eval.rs")),
        // `graph`'s ops and numerics are re-exported from its root (`graph::softmax_row`,
        // `graph::UnaryOp::apply`).
        (
            "graph::",
            concat!(
                include_str!("../../src/graph/mod.rs"),
                include_str!("../../src/graph/op.rs"),
                include_str!("../../src/graph/numerics.rs")
            ),
        ),
    ];
    let eval = include_str!("../../src/graph/eval.rs");
    for entry in op_entries() {
        if let Some(arm) = entry.reference.strip_prefix("graph::eval ") {
            assert!(
                eval.contains(&format!("{arm} ")),
                "{}: graph::eval has no arm {arm}",
                entry.name
            );
        }
        for path in [entry.shape_rule, entry.reference] {
            if path.contains(' ') || !path.contains("::") {
                continue;
            }
            let (prefix, source) = sources
                .iter()
                .find(|(prefix, _)| path.starts_with(prefix))
                .unwrap_or_else(|| panic!("{}: '{path}' is in no known module", entry.name));
            let function = path[prefix.len()..].rsplit("::").next().unwrap_or_default();
            let defined = [format!("fn {function}("), format!("fn {function}<")]
                .iter()
                .any(|definition| source.contains(definition.as_str()));
            assert!(defined, "{}: '{path}' names no function", entry.name);
        }
    }
}

#[test]
fn every_op_compiles_lowers_as_the_table_says_and_matches_its_reference() {
    for entry in op_entries() {
        let source = format!(
            "import torch\nimport torch.nn.functional as F\n\n\nclass Example(torch.nn.Module):\n    \
             def __init__(self):\n        super().__init__()\n        \
             self.table = torch.nn.Parameter(torch.randn(64, 3))\n        \
             self.kernel = torch.nn.Parameter(torch.randn(8, 4, 3, 3))\n        \
             self.kernel_t = torch.nn.Parameter(torch.randn(4, 3, 2, 2))\n\n    \
             def forward(self, x):\n        return {}\n",
            entry.example
        );
        let compiled = compile(&source, EXAMPLE_INPUT, DynamicMode::True);
        let graph = &compiled.graph;
        let output = graph
            .nodes
            .iter()
            .find(|node| matches!(node.op, Op::Output))
            .expect("an output node");
        let returned = graph.node(output.inputs[0]);
        assert_eq!(
            Lowering::of(&returned.op),
            Some(entry.lowering),
            "{}: `{}` returns {} ({:?}), which does not lower as the table says\n{graph}",
            entry.name,
            entry.example,
            returned.name,
            returned.op,
        );
        let inputs = case_inputs(graph, "2,4,6,6", 11);
        let actual = runtime::cpu::run(&compiled.schedule, &inputs, &[])
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", entry.name, compiled.schedule));
        let expected = reference(graph, &inputs);
        assert_close(entry.name, &actual, &expected, CPU_TOLERANCE);
    }
}
