//! The native command line behind `main`: dispatch, reading the model's file, the error
//! report with the caret, and the exit codes (see `main.rs`).
//!
//! In: the process arguments. Out: stdout, stderr and an `ExitCode`. Invariant: the only
//! place (with `bench`) that prints an error or picks an exit code.

use crate::args::{self, Command, ModelArgs, USAGE};
use crate::{bench, compare, explain, report, run, script};
use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;
use tailor::Error;

/// The command line's entry: parses, dispatches, prints, and picks the exit code.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return if args.is_empty() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let command = match args::parse(args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let budget = match &command {
        Command::Run(args) => args.model.memory_budget,
        Command::Explain(args) => args.model.memory_budget,
        Command::Script(args) => args.memory_budget,
        Command::Compare(args) => args.memory_budget,
        Command::Bench(_) | Command::Supported(_) => None,
    };
    if let Some(bytes) = budget {
        tailor::graph::set_memory_budget(bytes);
    }
    match command {
        Command::Bench(args) => bench::bench(&args),
        Command::Run(args) => on_the_model(&args.model, |source| {
            let results = run::run(&args, source)?;
            let report = if args.json {
                report::json(&results, args.model.symbol_names)
            } else {
                report::text(&args, &results)
            };
            Ok((report, results.failure()))
        }),
        Command::Explain(args) => on_the_model(&args.model, |source| {
            explain::explain(&args, source).map(|trace| (trace, None))
        }),
        Command::Script(args) => on_the_file(&args.file, |source| script::script(&args, source)),
        Command::Supported(json) => supported(json),
        Command::Compare(args) => on_the_file(&args.file, |source| {
            compare::compare(&args, source).map(|report| (report, None))
        }),
    }
}

/// `tailor supported`: each group's names, a line each (`torch.nn: Conv2d, Linear, …`), then
/// the op table, a line per op (its signature, lowering, shape rule and reference); or one
/// JSON object of both.
fn supported(json: bool) -> ExitCode {
    match tailor::frontend::surface_in(tailor::frontend::Vm::fresh()) {
        Ok(surface) if json => {
            println!("{}", serde_json::to_string(&surface).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(surface) => {
            for (group, names) in &surface.groups {
                println!("{group} ({}): {}", names.len(), names.join(", "));
            }
            println!("ops ({}):", surface.ops.len());
            for op in &surface.ops {
                println!(
                    "  {}: {}; shape {}; reference {}",
                    op.signature,
                    op.lowering.name(),
                    op.shape_rule,
                    op.reference
                );
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(1)
        }
    }
}

/// Reads the model's file and runs `command` on its source: prints the output, then the
/// error that failed the command, if any; the exit code.
fn on_the_model(
    model: &ModelArgs,
    command: impl FnOnce(&str) -> Result<(String, Option<Error>), Error>,
) -> ExitCode {
    on_the_file(&model.file, command)
}

/// `on_the_model` for a command that takes only a file.
fn on_the_file(
    file: &str,
    command: impl FnOnce(&str) -> Result<(String, Option<Error>), Error>,
) -> ExitCode {
    let source = match read_source(file) {
        Ok(source) => source,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let error = match command(&source) {
        Ok((output, error)) => {
            print!("{output}");
            error
        }
        Err(err) => Some(err),
    };
    match error {
        None => ExitCode::SUCCESS,
        Some(err) => {
            eprintln!("error: {}", report_error(file, &source, &err));
            ExitCode::FAILURE
        }
    }
}

fn read_source(path: &str) -> Result<String, String> {
    read_text(
        std::path::Path::new(path),
        tailor::frontend::MAX_SOURCE_BYTES as u64,
        "8 MiB",
    )
}

/// The UTF-8 text of `path`, at most `limit` bytes (`shown` in words): it reads at most one
/// byte past the limit, so a link to /dev/zero is refused, not read for ever.
pub fn read_text(path: &std::path::Path, limit: u64, shown: &str) -> Result<String, String> {
    let name = path.display();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(limit + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{name} is larger than {limit} bytes ({shown}), the most Tailor reads"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        format!("{name} is not UTF-8 text (invalid byte at offset {offset})")
    })
}

/// Formats an error with the source line it points at.
fn report_error(path: &str, source: &str, err: &Error) -> String {
    match err.span() {
        Some(span) => {
            let line = source.lines().nth(span.line as usize - 1).unwrap_or("");
            let caret = format!("{}^", " ".repeat(span.col.saturating_sub(1) as usize));
            format!("{path}: {err}\n    {line}\n    {caret}")
        }
        None => format!("{path}: {err}"),
    }
}
