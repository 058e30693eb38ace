//! One compilation, explained: the trace of a compiled entry, stage by stage, and `explain`,
//! which loads a file, compiles it once and returns that trace (`tailor explain`).
//!
//! In: a cache and one of its entries (or a source and its input shapes). Out: a `Trace`.
//! Invariant: every stage's text is derived from the entry alone, so the same entry always
//! prints the same trace (tests snapshot it; the page shows it).

use super::{Options, load};
use crate::cache::{Action, CodeCache, Entry};
use crate::error::Error;
use crate::graph::shape_to_string;
use crate::spec;
use crate::symbolic::SymbolNaming;
use crate::trace::{Stage, Trace};

/// Compiles `source` once for `input_shapes` (`x=8,64`) and returns the trace.
pub fn explain(source: &str, input_shapes: &str, options: &Options) -> Result<Trace, Error> {
    let mut cache = load(source, options.entry.as_deref())?;
    let call = spec::parse_shapes(input_shapes, &cache.entry_point().inputs)?;
    spec::check_marks(&call, &options.marks.dynamic, &options.marks.fixed)?;
    let event = cache
        .call(0, &options.config, &call, &options.marks, &|| 0.0)
        .clone();
    match (event.action, event.entry) {
        (Action::Compile, Some(id)) => {
            let entry = cache.entry(id).expect("the entry was just compiled");
            Ok(trace_of(&cache, entry, options.symbol_names))
        }
        _ => Err(Error::Call {
            message: event
                .error
                .unwrap_or_else(|| "the call did not compile".into()),
            span: event.error_span,
        }),
    }
}

/// Compiles `source` for the inputs described by `input_shapes` (`x=8,64;y=3`) under the
/// default mode and returns the trace as text, or the error message.
pub fn explain_text(source: &str, input_shapes: &str) -> Result<String, String> {
    explain(source, input_shapes, &Options::default())
        .map(|t| t.to_string())
        .map_err(|e| e.to_string())
}

/// The trace of entry `entry` of `cache`, its symbols named by `naming` up to the
/// guards; the compile pipeline's stages keep the numbers the kernels use.
pub fn trace_of(cache: &CodeCache, entry: &Entry, naming: SymbolNaming) -> Trace {
    let names = entry.env.symbol_names(naming);
    let mut stages = names.show(|| shape_stages(cache, entry));
    if naming != SymbolNaming::Tailor {
        let numbers: Vec<String> = entry
            .env
            .symbols()
            .iter()
            .map(|info| format!("{} is {}", names.rename(&info.sym.to_string()), info.sym))
            .collect();
        if !numbers.is_empty() {
            let symbols = stages
                .iter_mut()
                .find(|stage| stage.id == "symbols")
                .expect("shape_stages makes a symbols stage");
            symbols.text.push_str(&format!(
                    "symbols named as PyTorch 2.8+ names them (a hash of the source); the kernels keep Tailor's numbers: {}\n",
                    numbers.join(", ")
                ));
        }
    }
    stages.extend(entry.compiled.stages());
    Trace { stages }
}

/// The stages up to the guards: program, symbols, graph, shape propagation, guards.
fn shape_stages(cache: &CodeCache, entry: &Entry) -> Vec<Stage> {
    let program = cache.program();
    let point = cache.entry_point();
    let mut stages = Vec::new();

    let mut text = format!(
        "compiling {}.forward({}) with dynamic={}\n",
        point.name,
        point.inputs.join(", "),
        entry.config.dynamic
    );
    if point.is_module() {
        // A learner's own PyTorch run of `Model()` is in training mode unless it calls
        // `.eval()`: say which mode these values are from (shapes and guards are the same).
        text.push_str(&format!(
            "the module is {}().eval(): inference mode (dropout off, batch norm on its running statistics); a module PyTorch builds is in training mode until .eval(), and a script chooses its own\n",
            point.name
        ));
    }
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
    for (_, event) in entry.env.events().iter().filter(|(node, _)| {
        // The arguments' symbols, and those of the tensors the capture lifted.
        *node < entry.graph.inputs.len()
            || entry.graph.lifted.iter().any(|l| l.node.index() == *node)
    }) {
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
    stages
}
