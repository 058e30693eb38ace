//! Script mode in the page: `tailor.script(source, { logs })` runs a whole Python script as
//! `tailor script` does, `tailor.compareTrace(source, trace)` sets PyTorch's trace of it
//! beside that run as `tailor compare` does, and `Tailor.materialDemo()` is the course
//! material's demo script.
//!
//! In: the script's text, the logs to print, a trace's text. Out: `{ output: [{ stream, text
//! }], calls, entries, error }`, or `{ comparison, error }`, with `error` `null` or `{ kind,
//! message, messageId, messageArgs, line, col }` (a thrown `TailorError`'s fields). A trace
//! that cannot be read is thrown, as a `torchTrace` error. Invariant: a
//! script's compiled calls run on the CPU backend, whatever device the page has: a Python
//! call waits for its result, and in a browser only the CPU backend gives it at once.

use super::Tailor;
use super::convert::{bad_argument, error_kind, from_error, to_js};
use crate::config::Logs;
use crate::error::Error;
use crate::message::{Message, MessageId};
use crate::script::{self, ScriptOptions};
use crate::session::executor::Backend;
use crate::symbolic::SymbolNaming;
use js_sys::Reflect;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The course material's demo script (`demos/material_demo.py`), verbatim.
const MATERIAL_DEMO: &str = include_str!("../../demos/material_demo.py");

/// An error of a finished script, as plain data.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ScriptError {
    kind: &'static str,
    message: String,
    message_id: MessageId,
    message_args: Vec<String>,
    line: Option<u32>,
    col: Option<u32>,
}

impl ScriptError {
    fn of(error: &Error) -> ScriptError {
        let Message { id, args } = error.message();
        ScriptError {
            kind: error_kind(error),
            message: error.to_string(),
            message_id: id,
            message_args: args,
            line: error.span().map(|s| s.line),
            col: error.span().map(|s| s.col),
        }
    }
}

/// What `compareTrace` returns.
#[derive(serde::Serialize)]
struct ComparisonView {
    comparison: crate::compare::Comparison,
    error: Option<ScriptError>,
}

/// What `script` returns.
#[derive(serde::Serialize)]
struct ScriptView<'a> {
    output: &'a [crate::frontend::Output],
    calls: &'a [script::ScriptCall],
    entries: &'a [usize],
    error: Option<ScriptError>,
}

#[wasm_bindgen]
impl Tailor {
    /// Runs `source` as a whole script. `options`: `{ logs: 'recompiles,guards,dynamic',
    /// path: 'demo.py' }` (both optional). Throws only for bad options; the script's own
    /// error is the result's `error`.
    pub fn script(&self, source: &str, options: JsValue) -> Result<JsValue, JsValue> {
        let option = |name: &str| {
            options
                .is_object()
                .then(|| Reflect::get(&options, &name.into()).ok()?.as_string())
                .flatten()
        };
        let logs: Logs = option("logs")
            .unwrap_or_default()
            .parse()
            .map_err(|err| bad_argument(format!("logs: {err}")))?;
        let symbol_names = match option("symbolNames") {
            None => SymbolNaming::Tailor,
            Some(name) => SymbolNaming::parse(&name).ok_or_else(|| {
                bad_argument(format!(
                    "symbolNames: expected 'tailor' or 'pytorch', got '{name}'"
                ))
            })?,
        };
        let options = ScriptOptions {
            logs,
            path: option("path").unwrap_or_else(|| "script.py".into()),
            backend: Rc::new(Backend::cpu()),
            clock: Rc::new(super::now_ms),
            symbol_names,
        };
        let run = script::run(source, options);
        Ok(to_js(&ScriptView {
            output: &run.output,
            calls: &run.calls,
            entries: &run.entries,
            error: run.error.as_ref().map(ScriptError::of),
        }))
    }

    /// Sets PyTorch's trace of `source` (the text of the log `TORCH_TRACE` wrote while the
    /// script ran) beside Tailor's run of the same script, as `tailor compare` does:
    /// `{ comparison, error }`. `options`: `{ path: 'model.py' }` (optional). Throws a `torchTrace`
    /// error for a trace that cannot be read; the script's own error is the result's.
    #[wasm_bindgen(js_name = compareTrace)]
    pub fn compare_trace(
        &self,
        source: &str,
        trace: &str,
        options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let trace =
            crate::torch_trace::parse(trace).map_err(|err| from_error(&Error::from(err)))?;
        let path = options
            .is_object()
            .then(|| Reflect::get(&options, &"path".into()).ok()?.as_string())
            .flatten();
        let options = ScriptOptions {
            logs: Logs::default(),
            path: path.unwrap_or_else(|| "model.py".into()),
            backend: Rc::new(Backend::cpu()),
            clock: Rc::new(super::now_ms),
            symbol_names: SymbolNaming::PyTorch,
        };
        let run = script::run(source, options);
        Ok(to_js(&ComparisonView {
            comparison: crate::compare::compare(&trace, &run.compiles, &run.frame_calls),
            error: run.error.as_ref().map(ScriptError::of),
        }))
    }

    /// The course material's demo script, verbatim (`demos/material_demo.py`).
    #[wasm_bindgen(js_name = materialDemo)]
    pub fn material_demo() -> String {
        MATERIAL_DEMO.into()
    }
}
