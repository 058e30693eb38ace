//! `tailor explain`: one compilation, step by step — the library's trace as text.
//!
//! In: the parsed [`ExplainArgs`] and the model's source. Out: the trace, or the error
//! that stopped the compilation (a bad mark or shape, an unsupported construct).
//!
//! Invariant: the text is exactly `tailor::explain`'s trace, so the CLI and the page
//! explain a compilation alike.

use crate::args::ExplainArgs;
use tailor::Error;

/// The trace of compiling the model in `source` for `args.input`.
pub fn explain(args: &ExplainArgs, source: &str) -> Result<String, Error> {
    let model = &args.model;
    let names = tailor::load(source, model.entry.as_deref())?
        .entry_point()
        .inputs
        .clone();
    let options = tailor::Options {
        entry: model.entry.clone(),
        config: model.config,
        marks: model.marks(&names)?,
        symbol_names: model.symbol_names,
    };
    Ok(tailor::explain(source, &args.input, &options)?.to_string())
}
