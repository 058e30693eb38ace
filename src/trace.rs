//! The trace: one `Stage` per compilation step, for the CLI's `explain`, tests and the page.
//!
//! Input: a program and one compiled `Entry`. Output: stages in pipeline order — the
//! program, the input symbols, the captured graph, shape propagation node by node, the
//! guards, and the stages the compile pipeline recorded for it (`compile.rs`: fusion
//! groups, memory plan, WGSL). Invariant: every stage's text is derived from the entry
//! alone, so the same entry always prints the same trace (tests snapshot it; the page
//! shows it).

use crate::cache::{CodeCache, Entry};
use crate::graph::shape_to_string;
use serde::Serialize;
use std::fmt;

/// One step of a compilation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stage {
    /// A stable id (`program`, `symbols`, `graph`, `shapes`, `guards`).
    pub id: &'static str,
    /// A heading.
    pub title: String,
    /// The step's text form.
    pub text: String,
}

/// All stages of one compilation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Trace {
    /// The stages in pipeline order.
    pub stages: Vec<Stage>,
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for stage in &self.stages {
            writeln!(f, "== {} ==", stage.title)?;
            f.write_str(&stage.text)?;
            if !stage.text.ends_with('\n') {
                writeln!(f)?;
            }
        }
        Ok(())
    }
}

impl Trace {
    /// The trace of entry `entry` of `cache`.
    pub fn of_entry(cache: &CodeCache, entry: &Entry) -> Trace {
        let program = cache.program();
        let point = cache.entry_point();
        let mut stages = Vec::new();

        let mut text = format!(
            "compiling {}.forward({}) with dynamic={}\n",
            point.name,
            point.inputs.join(", "),
            entry.mode
        );
        for skipped in program.skipped() {
            text.push_str(&format!(
                "skipped line {}: {}\n",
                skipped.span.line, skipped.reason
            ));
        }
        stages.push(Stage {
            id: "program",
            title: "Program".into(),
            text,
        });

        let mut text = String::new();
        for (_, event) in entry
            .env
            .events()
            .iter()
            .filter(|(node, _)| *node < entry.graph.inputs.len())
        {
            text.push_str(&format!("{event}\n"));
        }
        stages.push(Stage {
            id: "symbols",
            title: "Input symbols (ShapeEnv)".into(),
            text,
        });

        stages.push(Stage {
            id: "graph",
            title: "Captured graph (FX)".into(),
            text: entry.graph.to_string(),
        });

        let mut text = String::new();
        for node in &entry.graph.nodes {
            if node.span.is_none() {
                continue;
            }
            let line = node
                .span
                .map(|s| program.line_text(s.line).trim().to_string())
                .unwrap_or_default();
            text.push_str(&format!(
                "%{} : {}    # {}\n",
                node.name,
                shape_to_string(&node.shape),
                line
            ));
            for (_, event) in entry
                .env
                .events()
                .iter()
                .filter(|(at, _)| *at == node.id.index())
            {
                text.push_str(&format!("    {event}\n"));
            }
        }
        stages.push(Stage {
            id: "shapes",
            title: "Shape propagation".into(),
            text,
        });

        stages.push(Stage {
            id: "guards",
            title: "Guards".into(),
            text: entry.guards.to_string(),
        });
        stages.extend(entry.compiled.stages());
        Trace { stages }
    }
}
