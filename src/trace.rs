//! The trace: one `Stage` per compilation step, for the CLI's `explain`, tests and the page.
//!
//! A leaf of the house: the compile pipeline (`compile.rs`: fusion groups, memory plan, WGSL)
//! records its stages here, and the session (`session::trace_of`) puts the stages of one
//! compiled entry in pipeline order (program, input symbols, captured graph, shape
//! propagation, guards, then the pipeline's). In: stages. Out: the trace as text (`Display`)
//! or as one JSON object (`to_json`). Invariant: the CLI's `explain --json` and the page's
//! export are the same `to_json`, and the text is what tests snapshot and the page shows.

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
}
