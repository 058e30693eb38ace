//! `tailor compare`: PyTorch's trace of a script (`TORCH_TRACE=DIR python FILE.py`) beside
//! Tailor's run of the same script.
//!
//! In: the parsed [`CompareArgs`] and the script's source. Out: the report, or one JSON
//! object with `--json`. The trace is read here (a log file, or the newest `.log` of the
//! folder `TORCH_TRACE` named); the script runs as `tailor script` runs it, its output and
//! logs kept out of the report. Invariant: a comparison made is a success, whatever the two
//! differ in (the script's own error is part of the report); a trace that cannot be read is
//! the error.

use crate::args::CompareArgs;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;
use tailor::Error;
use tailor::config::Logs;
use tailor::script::{self, ScriptOptions};
use tailor::session::executor::Backend;
use tailor::{SymbolNaming, compare, torch_trace};

/// The most of a trace read: a trace of a long job is tens of megabytes, and a path to
/// `/dev/zero` must end.
const MAX_TRACE_BYTES: u64 = 1 << 30;

/// Reads the trace, runs the script, and reports the comparison.
pub fn compare(args: &CompareArgs, source: &str) -> Result<String, Error> {
    let (path, text) = read_trace(&args.trace)?;
    let trace = torch_trace::parse(&text)?;
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1e3;
    let backend = pollster::block_on(Backend::open(args.device, Box::new(clock)))?;
    let options = ScriptOptions {
        logs: Logs::default(),
        path: args.file.clone(),
        backend: Rc::new(backend),
        clock: Rc::new(clock),
        symbol_names: SymbolNaming::PyTorch,
    };
    let run = script::run(source, options);
    let comparison = compare::compare(&trace, &run.compiles, &run.frame_calls);
    let script_error = run.error.as_ref().map(ToString::to_string);
    if args.json {
        let value = serde_json::json!({
            "trace": path.display().to_string(),
            "comparison": comparison,
            "script_error": script_error,
        });
        return Ok(format!("{value:#}\n"));
    }
    let mut report = format!("Trace: {}\n{comparison}", path.display());
    if let Some(error) = script_error {
        report.push_str(&format!("Tailor's run of {} stopped: {error}\n", args.file));
    }
    Ok(report)
}

/// The trace's path and text: `path` itself, or the newest `.log` in the folder it names.
fn read_trace(path: &str) -> Result<(PathBuf, String), Error> {
    let failed = |message: String| Error::Call {
        message,
        span: None,
    };
    let given = Path::new(path);
    let file = if given.is_dir() {
        newest_log(given).ok_or_else(|| {
            failed(format!(
                "{path} holds no .log file: run the script with TORCH_TRACE={path} first"
            ))
        })?
    } else {
        given.to_path_buf()
    };
    let text = crate::cli::read_text(&file, MAX_TRACE_BYTES, "1 GiB").map_err(failed)?;
    Ok((file, text))
}

/// The most recently written `.log` file in `folder` (TORCH_TRACE writes one per process).
fn newest_log(folder: &Path) -> Option<PathBuf> {
    std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "log"))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .max()
        .map(|(_, path)| path)
}
