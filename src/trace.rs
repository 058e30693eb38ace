//! The trace: one `Stage` per compilation step, for the CLI's `explain`, tests and the page.
//!
//! Input: a program and one compiled `Entry`. Output: stages in pipeline order — the
//! program, the input symbols, the captured graph, shape propagation node by node, the
//! guards, and the stages the compile pipeline recorded for it (`compile.rs`: fusion
//! groups, memory plan, WGSL); as text (`Display`) or as one JSON object (`to_json`).
//! Invariant: every stage's text is derived from the entry alone, so the same entry always
//! prints the same trace (tests snapshot it; the page shows it), and the CLI's
//! `explain --json` and the page's export are the same `to_json`.

use crate::cache::{CodeCache, Entry};
use crate::graph::shape_to_string;
use crate::symbolic::SymbolNaming;
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
    /// The trace as one JSON object on one line, `{"stages": [{"id", "title", "text"}]}`:
    /// what `tailor explain --json` prints and the page's "export the trace" downloads
    /// (one function, so the two cannot drift apart).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        Ok(format!("{}\n", serde_json::to_string(self)?))
    }

    /// The trace of entry `entry` of `cache`, its symbols named by `naming` up to the
    /// guards; the compile pipeline's stages keep the numbers the kernels use.
    pub fn of_entry(cache: &CodeCache, entry: &Entry, naming: SymbolNaming) -> Trace {
        let names = entry.env.symbol_names(naming);
        let mut stages = names.show(|| Trace::shape_stages(cache, entry));
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
}
