//! `tailor script`: the whole file runs as a Python script, its `torch.compile` wrappers
//! compiled by Tailor and run on the chosen device.
//!
//! In: the parsed [`ScriptArgs`] and the script's source. Out: the text to print on stdout
//! (what the script printed, or one JSON object with `--json`), after the log lines went to
//! stderr as PyTorch's logging sends them; and the error that stopped the script.
//! Invariant: stdout and the logs keep the order the script wrote them in.

use crate::args::ScriptArgs;
use std::io::Write;
use std::rc::Rc;
use std::time::Instant;
use tailor::Error;
use tailor::frontend::Stream;
use tailor::script::{self, ScriptOptions};
use tailor::session::executor::Backend;

/// Runs the script; returns what goes to stdout and the error that stopped it.
pub fn script(args: &ScriptArgs, source: &str) -> Result<(String, Option<Error>), Error> {
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1e3;
    let backend = pollster::block_on(Backend::open(args.device, Box::new(clock)))?;
    let logs = match args.logs {
        Some(logs) => logs,
        None => std::env::var("TORCH_LOGS")
            .unwrap_or_default()
            .parse()
            .map_err(|message| Error::Call {
                message: format!("TORCH_LOGS: {message}"),
                span: None,
            })?,
    };
    let options = ScriptOptions {
        logs,
        path: args.file.clone(),
        backend: Rc::new(backend),
        clock: Rc::new(clock),
        symbol_names: args.symbol_names,
    };
    let run = script::run(source, options);
    if args.json {
        let value = serde_json::json!({
            "output": run.output,
            "calls": run.calls,
            "entries": run.entries,
            "error": run.error.as_ref().map(ToString::to_string),
        });
        return Ok((format!("{value:#}\n"), run.error));
    }
    // The logs go to stderr as they were written; stdout is flushed before each, so a
    // terminal shows both in the script's order.
    let mut stdout = String::new();
    for piece in &run.output {
        match piece.stream {
            Stream::Stdout => stdout.push_str(&piece.text),
            Stream::Stderr | Stream::Log => {
                print!("{stdout}");
                stdout.clear();
                let _ = std::io::stdout().flush();
                eprint!("{}", piece.text);
            }
        }
    }
    Ok((stdout, run.error))
}
