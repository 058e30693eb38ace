//! Script mode in the page: `tailor.script(source, { logs })` runs a whole Python script as
//! `tailor script` does, and `Tailor.materialDemo()` is the course material's demo script.
//!
//! In: the script's text and the logs to print. Out: `{ output: [{ stream, text }], calls,
//! entries, error }`, with `error` `null` or `{ kind, message, messageId, messageArgs, line,
//! col }` (a thrown `TailorError`'s fields). Invariant: a
//! script's compiled calls run on the CPU backend, whatever device the page has: a Python
//! call waits for its result, and in a browser only the CPU backend gives it at once.

use super::Tailor;
use super::convert::{bad_argument, error_kind, to_js};
use crate::config::Logs;
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
        let error = run.error.as_ref().map(|error| {
            let Message { id, args } = error.message();
            ScriptError {
                kind: error_kind(error),
                message: error.to_string(),
                message_id: id,
                message_args: args,
                line: error.span().map(|s| s.line),
                col: error.span().map(|s| s.col),
            }
        });
        Ok(to_js(&ScriptView {
            output: &run.output,
            calls: &run.calls,
            entries: &run.entries,
            error,
        }))
    }

    /// The course material's demo script, verbatim (`demos/material_demo.py`).
    #[wasm_bindgen(js_name = materialDemo)]
    pub fn material_demo() -> String {
        MATERIAL_DEMO.into()
    }
}
