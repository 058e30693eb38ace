//! The `tailor` command line: `run` a sequence of calls through the guard cache, or
//! `explain` one compilation step by step (DESIGN.md §6; other tools parse `run --json`).
//!
//! Input: a model file and flags. Output: a report on stdout (text or one JSON object),
//! errors on stderr with a non-zero exit. `run` executes the compiled kernels on the GPU
//! (wgpu) or the CPU backend; `--check` compares them with the CPU reference.

use std::process::ExitCode;
use std::rc::Rc;
use std::time::Instant;
use tailor::cache::{Action, CallMarks, CodeCache, CompileConfig, DimSpec, DynamicMode};
use tailor::graph::{self, Tensor};
use tailor::runtime::executor::{self, Backend, Device, Executor, RunOptions};
use tailor::{CallShapes, Error, spec};

const USAGE: &str = "usage:
  tailor run FILE [--entry NAME] [--dynamic auto|true|false] [--mark-dynamic INPUT:DIM[:MIN:MAX]]...
             [--mark-static INPUT:DIM]... [--recompile-limit N] [--device auto|gpu|cpu]
             --call SHAPES [--call SHAPES]... [--json] [--check]
  tailor explain FILE --input SHAPES [--entry NAME] [--dynamic ...] [--mark-dynamic ...] [--mark-static ...]
  tailor bench [--json] [--rounds N]
SHAPES = NAME=D,D,...[;NAME=D,...]   e.g. x=8,64  or  a=8,16;b=16,4";

/// Parsed command line.
struct Cli {
    command: String,
    file: String,
    entry: Option<String>,
    config: CompileConfig,
    mark_dynamic: Vec<String>,
    mark_static: Vec<String>,
    calls: Vec<String>,
    json: bool,
    device: Device,
    check: bool,
}

fn parse_args(args: &[String]) -> Result<Cli, String> {
    let mut iter = args.iter();
    let command = iter
        .next()
        .ok_or("missing command (run or explain)")?
        .clone();
    if command != "run" && command != "explain" {
        return Err(format!(
            "unknown command '{command}' (expected run or explain)"
        ));
    }
    let mut cli = Cli {
        command,
        file: String::new(),
        entry: None,
        config: CompileConfig::default(),
        mark_dynamic: Vec::new(),
        mark_static: Vec::new(),
        calls: Vec::new(),
        json: false,
        device: Device::Auto,
        check: false,
    };
    while let Some(arg) = iter.next() {
        let mut value = |flag: &str| {
            iter.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--entry" => cli.entry = Some(value(arg)?),
            "--dynamic" => cli.config.dynamic = value(arg)?.parse::<DynamicMode>()?,
            "--mark-dynamic" => cli.mark_dynamic.push(value(arg)?),
            "--mark-static" => cli.mark_static.push(value(arg)?),
            "--recompile-limit" => {
                let text = value(arg)?;
                cli.config.recompile_limit = text.parse().map_err(|_| {
                    format!("--recompile-limit needs a non-negative integer, got '{text}'")
                })?;
            }
            "--device" => {
                let device = value(arg)?;
                cli.device = device
                    .parse()
                    .map_err(|_| format!("--device must be auto, gpu or cpu, got '{device}'"))?;
            }
            "--call" if cli.command == "run" => cli.calls.push(value(arg)?),
            "--input" if cli.command == "explain" => cli.calls.push(value(arg)?),
            "--json" if cli.command == "run" => cli.json = true,
            "--check" if cli.command == "run" => cli.check = true,
            flag if flag.starts_with("--") => {
                return Err(format!("unknown flag '{flag}' for '{}'", cli.command));
            }
            file if cli.file.is_empty() => cli.file = file.to_string(),
            extra => return Err(format!("unexpected argument '{extra}'")),
        }
    }
    if cli.file.is_empty() {
        return Err("missing FILE".into());
    }
    match (cli.command.as_str(), cli.calls.len()) {
        ("run", 0) => Err("run needs at least one --call SHAPES".into()),
        ("explain", n) if n != 1 => Err("explain needs exactly one --input SHAPES".into()),
        _ => Ok(cli),
    }
}

fn read_source(path: &str) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        format!("{path} is not UTF-8 text (invalid byte at offset {offset})")
    })
}

/// Formats an error with the source line it points at.
fn report(path: &str, source: &str, err: &Error) -> String {
    match err.span() {
        Some(span) => {
            let line = source.lines().nth(span.line as usize - 1).unwrap_or("");
            let caret = format!("{}^", " ".repeat(span.col.saturating_sub(1) as usize));
            format!("{path}: {err}\n    {line}\n    {caret}")
        }
        None => format!("{path}: {err}"),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return if args.is_empty() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    if args[0] == "bench" {
        return bench(&args[1..]);
    }
    let cli = match parse_args(&args) {
        Ok(cli) => cli,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let source = match read_source(&cli.file) {
        Ok(source) => source,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command.as_str() {
        "run" => run(&cli, &source),
        _ => explain(&cli, &source).map(|trace| (trace, None)),
    };
    match result {
        Ok((output, None)) => {
            print!("{output}");
            ExitCode::SUCCESS
        }
        Ok((output, Some(err))) => {
            print!("{output}");
            eprintln!("error: {}", report(&cli.file, &source, &err));
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("error: {}", report(&cli.file, &source, &err));
            ExitCode::FAILURE
        }
    }
}

/// Adds the GPU figures to `metrics` when an adapter exists; returns the adapter as JSON.
#[cfg(feature = "gpu")]
fn gpu_bench(
    start: Instant,
    rounds: usize,
    metrics: &mut std::collections::BTreeMap<String, f64>,
) -> Result<serde_json::Value, ExitCode> {
    let gpu_clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    let backend = match pollster::block_on(Backend::open(Device::Gpu, gpu_clock)) {
        Ok(backend) => Rc::new(backend),
        Err(err) => {
            eprintln!("note: {err}; only the compiler's figures are reported");
            return Ok(serde_json::json!({ "name": "none (CPU only)", "backend": "cpu" }));
        }
    };
    let adapter = match backend.adapter() {
        Some(adapter) => serde_json::json!({ "name": adapter.name, "backend": adapter.backend }),
        None => serde_json::json!({ "name": "none (CPU only)", "backend": "cpu" }),
    };
    let clock: tailor::bench::SharedClock = Rc::new(move || start.elapsed().as_secs_f64() * 1e3);
    match pollster::block_on(tailor::bench::run_gpu(&backend, &clock, rounds, metrics)) {
        Ok(()) => Ok(adapter),
        Err(err) => {
            eprintln!("error: GPU benchmark failed: {err}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// Without the GPU runtime only the compiler's figures exist.
#[cfg(not(feature = "gpu"))]
fn gpu_bench(
    _start: Instant,
    _rounds: usize,
    _metrics: &mut std::collections::BTreeMap<String, f64>,
) -> Result<serde_json::Value, ExitCode> {
    Ok(serde_json::json!({ "name": "none (built without the gpu feature)", "backend": "cpu" }))
}

/// `tailor bench`: medians of the compiler's and the kernels' timings, as text or one
/// JSON object.
fn bench(args: &[String]) -> ExitCode {
    let mut json = false;
    let mut rounds = 21;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--json" => json = true,
            "--rounds" => match iter.next().and_then(|v| v.parse().ok()) {
                Some(n) => rounds = n,
                None => {
                    eprintln!("error: --rounds needs a positive integer\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            other => {
                eprintln!("error: unknown flag '{other}' for 'bench'\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let start = Instant::now();
    let clock = || start.elapsed().as_secs_f64() * 1e3;
    let mut report = tailor::bench::run(&clock, rounds);
    let adapter = match gpu_bench(start, rounds, &mut report.metrics) {
        Ok(adapter) => adapter,
        Err(code) => return code,
    };
    if json {
        println!(
            "{}",
            serde_json::json!({ "adapter": adapter, "metrics": report.metrics })
        );
    } else {
        println!(
            "tailor bench ({rounds} rounds, medians; adapter: {} on {})",
            adapter["name"].as_str().unwrap_or_default(),
            adapter["backend"].as_str().unwrap_or_default()
        );
        for (name, value) in &report.metrics {
            println!("  {name:<34} {value:>12.3}");
        }
    }
    ExitCode::SUCCESS
}

fn marks(cli: &Cli, names: &[String]) -> Result<CallMarks, Error> {
    let dynamic = cli
        .mark_dynamic
        .iter()
        .map(|m| spec::parse_mark(m, names))
        .collect::<Result<_, _>>()?;
    let fixed = cli
        .mark_static
        .iter()
        .map(|m| spec::parse_static_mark(m, names))
        .collect::<Result<_, _>>()?;
    Ok(CallMarks { dynamic, fixed })
}

fn explain(cli: &Cli, source: &str) -> Result<String, Error> {
    let names = tailor::load(source, cli.entry.as_deref())?
        .entry_point()
        .inputs
        .clone();
    let options = tailor::Options {
        entry: cli.entry.clone(),
        config: cli.config,
        marks: marks(cli, &names)?,
    };
    Ok(tailor::explain(source, &cli.calls[0], &options)?.to_string())
}

/// The report, and the error that fails the whole run, if any.
fn run(cli: &Cli, source: &str) -> Result<(String, Option<Error>), Error> {
    let mut cache = tailor::load(source, cli.entry.as_deref())?;
    let names = cache.entry_point().inputs.clone();
    let marks = marks(cli, &names)?;
    let mut calls = Vec::new();
    for text in &cli.calls {
        let call = spec::parse_shapes(text, &names)?;
        spec::check_marks(&call, &marks.dynamic, &marks.fixed)?;
        for (name, dims) in &call.inputs {
            let elements = dims
                .iter()
                .fold(1u128, |acc, &d| acc.saturating_mul(d as u128));
            if elements > graph::MAX_ELEMENTS as u128 {
                return Err(Error::Call {
                    message: format!(
                        "--call {text}: input '{name}' would have {elements} elements; the CPU reference holds at most {}",
                        graph::MAX_ELEMENTS
                    ),
                    span: None,
                });
            }
        }
        calls.push(call);
    }
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1e3;
    let gpu_clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    let backend = pollster::block_on(Backend::open(cli.device, gpu_clock))?;
    let mut runner = Runner {
        executor: Executor::new(Rc::new(backend), Rc::new(clock)),
        check: cli.check,
    };
    let mut results = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let event = cache.call(0, &cli.config, call, &marks, &clock).clone();
        let outputs = match event.action {
            Action::Error => Ok(CallOutput::default()),
            _ => runner.execute(&cache, &event, call, index as u64),
        };
        results.push((event, outputs));
    }
    let report = if cli.json {
        json_report(&cache, &runner, &results)
    } else {
        text_report(cli, &cache, &runner, &results)
    };
    // An error in the program itself (not in one call's sizes) fails the whole run.
    let failure = results
        .iter()
        .map(|(event, _)| event)
        .find(|event| event.error_in_program)
        .map(|event| Error::Call {
            message: event.error.clone().unwrap_or_default(),
            span: event.error_span,
        });
    Ok((report, failure))
}

/// What one call returned.
#[derive(Default)]
struct CallOutput {
    tensors: Vec<Tensor>,
    /// With `--check`: the largest difference from the CPU reference.
    max_abs_err: Option<f32>,
}

/// Runs each call's kernels through the executor, with seeded random inputs.
struct Runner {
    executor: Executor,
    check: bool,
}

impl Runner {
    /// `gpu` or `cpu`.
    fn device_name(&self) -> &'static str {
        self.executor.backend().name()
    }

    /// The adapter's name and backend, on the GPU.
    fn adapter(&self) -> Option<(String, String)> {
        #[cfg(feature = "gpu")]
        if let Some(adapter) = self.executor.backend().adapter() {
            return Some((adapter.name.clone(), adapter.backend.clone()));
        }
        None
    }

    /// Runs call `seed`'s kernels (the entry's, or an eager call's per-op kernels); with
    /// `--check`, also the CPU reference.
    fn execute(
        &mut self,
        cache: &CodeCache,
        event: &tailor::CallEvent,
        call: &CallShapes,
        seed: u64,
    ) -> Result<CallOutput, Error> {
        let inputs = executor::call_inputs(call, Vec::new(), seed);
        let options = RunOptions {
            check: self.check,
            timing: false,
        };
        let job = self
            .executor
            .start_call(cache, event, call, inputs, options)?;
        let outcome = pollster::block_on(self.executor.execute(job))?;
        Ok(CallOutput {
            tensors: outcome.outputs,
            max_abs_err: outcome.max_abs_err,
        })
    }
}

type CallResult = (tailor::CallEvent, Result<CallOutput, Error>);

fn dims_json(dims: &[DimSpec]) -> serde_json::Value {
    serde_json::to_value(dims).expect("dim specs serialize")
}

fn json_report(cache: &CodeCache, runner: &Runner, results: &[CallResult]) -> String {
    let calls: Vec<serde_json::Value> = results
        .iter()
        .map(|(event, outputs)| {
            let shapes: serde_json::Map<String, serde_json::Value> = event
                .shapes
                .iter()
                .map(|(n, d)| (n.clone(), serde_json::json!(d)))
                .collect();
            let mut object = serde_json::json!({
                "shapes": shapes,
                "action": event.action.to_string(),
                "entry": event.entry,
                "reasons": event.reasons.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(),
            });
            let fields = object.as_object_mut().expect("an object");
            if let Some(error) = &event.error {
                fields.insert("error".into(), serde_json::json!(error));
            }
            if let Some(warning) = &event.warning {
                fields.insert("warning".into(), serde_json::json!(warning));
            }
            match outputs {
                Ok(outputs) if event.action != Action::Error => {
                    let shapes: Vec<&Vec<usize>> =
                        outputs.tensors.iter().map(|t| &t.shape).collect();
                    fields.insert("output_shapes".into(), serde_json::json!(shapes));
                    if let Some(err) = outputs.max_abs_err {
                        fields.insert("max_abs_err".into(), serde_json::json!(err));
                    }
                }
                Err(err) => {
                    fields.insert("error".into(), serde_json::json!(err.to_string()));
                }
                Ok(_) => {}
            }
            object
        })
        .collect();
    let entries: Vec<serde_json::Value> = cache
        .entries()
        .iter()
        .map(|entry| {
            let inputs: serde_json::Map<String, serde_json::Value> = entry
                .inputs
                .iter()
                .map(|(n, dims)| (n.clone(), dims_json(dims)))
                .collect();
            serde_json::json!({ "inputs": inputs, "guards": entry.guards.source_lines() })
        })
        .collect();
    let mut report = serde_json::json!({
        "compiles": cache.compiles(),
        "device": runner.device_name(),
        "calls": calls,
        "entries": entries,
    });
    if let Some((name, backend)) = runner.adapter() {
        report["adapter"] = serde_json::json!({ "name": name, "backend": backend });
    }
    format!("{report}\n")
}

fn text_report(cli: &Cli, cache: &CodeCache, runner: &Runner, results: &[CallResult]) -> String {
    let mut out = String::new();
    if cli.device != Device::Auto || cli.check {
        let adapter = runner.adapter().map_or(String::new(), |(name, backend)| {
            format!(" ({name}, {backend})")
        });
        out.push_str(&format!("device: {}{adapter}\n", runner.device_name()));
    }
    out.push_str(&format!(
        "{} (dynamic={})\n",
        cache.entry_point().name,
        cli.config.dynamic
    ));
    for (i, (event, outputs)) in results.iter().enumerate() {
        let shapes = CallShapes::new(event.shapes.clone()).to_spec();
        let entry = event
            .entry
            .map_or(String::new(), |e| format!(" entry 0/{e}"));
        out.push_str(&format!(
            "call {:>2}  {shapes:<20} {}{entry}\n",
            i + 1,
            event.action
        ));
        for (id, reason) in &event.reasons {
            out.push_str(&format!("          guard failed 0/{id}: {reason}\n"));
        }
        if let Some(warning) = &event.warning {
            out.push_str(&format!(
                "          warning: {}\n",
                warning.replace('\n', "\n          ")
            ));
        }
        if let Some(error) = &event.error {
            out.push_str(&format!("          error: {error}\n"));
        }
        match outputs {
            Ok(outputs) if !outputs.tensors.is_empty() => {
                let shapes: Vec<String> = outputs
                    .tensors
                    .iter()
                    .map(|t| format!("{:?}", t.shape))
                    .collect();
                let check = outputs
                    .max_abs_err
                    .map_or(String::new(), |e| format!("  max_abs_err {e:.3e}"));
                out.push_str(&format!("          output {}{check}\n", shapes.join(", ")));
            }
            Err(err) => out.push_str(&format!("          run error: {err}\n")),
            Ok(_) => {}
        }
    }
    out.push_str(&format!("compiles: {}\n", cache.compiles()));
    for entry in cache.entries() {
        let inputs: Vec<String> = entry
            .inputs
            .iter()
            .map(|(n, dims)| {
                let dims: Vec<String> = dims
                    .iter()
                    .map(|d| match d {
                        DimSpec::Static(v) => v.to_string(),
                        DimSpec::Dynamic { sym, .. } => sym.clone(),
                    })
                    .collect();
                format!("{n}=[{}]", dims.join(", "))
            })
            .collect();
        out.push_str(&format!("entry 0/{}: {}\n", entry.id, inputs.join(" ")));
        for line in entry.guards.source_lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}
