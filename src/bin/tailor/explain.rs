//! `tailor explain`: one compilation, step by step — the library's trace as text, or with
//! `--json` as one JSON object.
//!
//! In: the parsed [`ExplainArgs`] and the model's source. Out: the trace, or the error
//! that stopped the compilation (a bad mark or shape, an unsupported construct).
//!
//! Invariant: the output is exactly `tailor::explain`'s trace (`Display` or
//! `Trace::to_json`), so the CLI and the page explain and export a compilation alike.

use crate::args::ExplainArgs;
use tailor::Error;

/// The trace of compiling the model in `source` for `args.input`, as text or JSON.
pub fn explain(args: &ExplainArgs, source: &str) -> Result<String, Error> {
    let model = &args.model;
    let names = tailor::load(source, model.entry.as_deref())?
        .entry_point()
        .inputs
        .clone();
    let options = tailor::Options {
        entry: model.entry.clone(),
        config: model.config.clone(),
        marks: model.marks(&names)?,
        symbol_names: model.symbol_names,
    };
    let trace = tailor::explain(source, &args.input, &options)?;
    if !args.json {
        return Ok(trace.to_string());
    }
    trace.to_json().map_err(|err| tailor::Error::Call {
        message: format!("cannot write the trace as JSON: {err}"),
        span: None,
    })
}
