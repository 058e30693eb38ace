//! The command line, parsed: which command, and its flags checked and typed.
//!
//! In: the arguments after the program name, as the OS gave them. Out: a [`Command`], or
//! the message of a usage error (the caller prints it with [`USAGE`] and exits with 2).
//! `lexopt` splits the arguments into flags and values (so `--entry=Net` is `--entry Net`,
//! and `--` ends the flags); this module owns every message, so the wording is the CLI's own.
//!
//! Invariant: a parsed `run` has a FILE and at least one call (`--call`s, or the one call
//! of `--inputs`; exactly one with `--outputs`), a parsed `explain` a FILE and exactly one
//! input; every value is checked here except those that need the model
//! (shapes, marks, the entry), which the commands check against its inputs.

use lexopt::{Arg, Parser};
use std::ffi::OsString;
use tailor::config::{CallMarks, CompileConfig, DynamicMode, Logs};
use tailor::session::executor::Device;
use tailor::spec;
use tailor::{Error, SymbolNaming};

/// What `--help` prints, and every usage error after its message.
pub const USAGE: &str = "usage:
  tailor run FILE [--entry NAME] [--dynamic auto|true|false] [--mark-dynamic INPUT:DIM[:MIN:MAX]]...
             [--mark-static INPUT:DIM]... [--recompile-limit N] [--device auto|gpu|cpu]
             [--symbol-names tailor|pytorch] [--weights W.safetensors] [--json] [--check]
             [--memory-budget SIZE]
             (--call SHAPES [--call SHAPES]... | --inputs I.safetensors) [--outputs O.safetensors]
  tailor explain FILE --input SHAPES [--entry NAME] [--dynamic ...] [--mark-dynamic ...] [--mark-static ...]
                 [--symbol-names tailor|pytorch] [--memory-budget SIZE] [--json]
  tailor script FILE.py [--logs recompiles,guards,dynamic] [--device auto|gpu|cpu] [--json]
                [--symbol-names tailor|pytorch] [--memory-budget SIZE]
                (without --logs, the TORCH_LOGS variable's artifacts)
  tailor compare TRACE FILE.py [--device auto|gpu|cpu] [--json] [--memory-budget SIZE]
                (TRACE: the log, or the folder, TORCH_TRACE=TRACE python FILE.py wrote; its
                newest log is read; the script runs as in `tailor script`, and each
                [frame/compile] is set beside PyTorch's)
  tailor bench [--json] [--rounds N]
  tailor supported [--json]   (the modules, functions, methods and operators capture supports)
SHAPES = NAME=VALUE[;NAME=VALUE...], VALUE = D,D,...[:DTYPE] (a tensor's sizes; float32
         unless :int64, :int32 or :bool), int(N) or True/False
         e.g. x=8,64  or  a=8,16;b=16,4  or  x=8,64;n=int(3);flag=True  or  idx=2,16:int64
--entry: the nn.Module class, the module the file builds (model = Net(64)) or the function
         to compile; without it, the last class or module the file builds, else its last
         function
--weights: the model's state_dict (safetensors.torch.save_file(model.state_dict(), W)),
         matched by name; --inputs: one call's arguments by name (F32, I64 or BOOL tensors;
         an int or bool argument a 0-dim I64 or BOOL), instead of --call's seeded random
         values; --outputs: the call's returned tensors as out0, out1, ... in their dtypes
         (needs exactly one call)
--symbol-names: tailor (s0, s1, ... in creation order, the default) or pytorch
         (PyTorch 2.8+: a hash of the source, L['x'].size()[0] is s77)
--memory-budget: the bytes the tensors may take (a tensor, and a call's buffers together on
         the CPU backend), e.g. 512MiB or 16GiB; 8GiB unless given";

/// A parsed command line.
pub enum Command {
    /// `tailor run`: calls through the guard cache, their kernels run.
    Run(RunArgs),
    /// `tailor explain`: one compilation, step by step.
    Explain(ExplainArgs),
    /// `tailor bench`: the compiler's and the kernels' timings.
    Bench(BenchArgs),
    /// `tailor script`: a whole script, its `torch.compile` wrappers compiled and run.
    Script(ScriptArgs),
    /// `tailor supported`: what capture supports; `true` for one JSON object.
    Supported(bool),
    /// `tailor compare`: a PyTorch trace beside Tailor's run of the same script.
    Compare(CompareArgs),
}

/// `tailor compare`.
pub struct CompareArgs {
    /// The trace: a log file, or the folder `TORCH_TRACE` named.
    pub trace: String,
    /// The script PyTorch ran.
    pub file: String,
    /// Where compiled calls run.
    pub device: Device,
    /// One JSON object instead of the report.
    pub json: bool,
    /// `--memory-budget`: the bytes tensors may take (`None`: the default).
    pub memory_budget: Option<u64>,
}

/// `tailor script`.
pub struct ScriptArgs {
    /// The script.
    pub file: String,
    /// `--logs`: the `TORCH_LOGS` artifacts to print (`None`: the `TORCH_LOGS` variable's).
    pub logs: Option<Logs>,
    /// Where compiled calls run.
    pub device: Device,
    /// One JSON object (output and calls) instead of the script's own output.
    pub json: bool,
    /// `--symbol-names`: how the `dynamic` log names symbols.
    pub symbol_names: SymbolNaming,
    /// `--memory-budget`: the bytes tensors may take (`None`: the default).
    pub memory_budget: Option<u64>,
}

/// What `run` and `explain` share: the model and how it compiles.
#[derive(Default)]
pub struct ModelArgs {
    /// The model file.
    pub file: String,
    /// The function to compile, when not the file's default.
    pub entry: Option<String>,
    /// `--dynamic` and `--recompile-limit`.
    pub config: CompileConfig,
    /// `--mark-dynamic` texts, parsed once the model's inputs are known.
    pub mark_dynamic: Vec<String>,
    /// `--mark-static` texts, parsed once the model's inputs are known.
    pub mark_static: Vec<String>,
    /// `--symbol-names`: how the report names symbols.
    pub symbol_names: SymbolNaming,
    /// `--memory-budget`: the bytes tensors may take (`None`: the default).
    pub memory_budget: Option<u64>,
}

impl ModelArgs {
    /// The marks, checked against the model's input `names`.
    pub fn marks(&self, names: &[String]) -> Result<CallMarks, Error> {
        let dynamic = self
            .mark_dynamic
            .iter()
            .map(|m| spec::parse_mark(m, names))
            .collect::<Result<_, _>>()?;
        let fixed = self
            .mark_static
            .iter()
            .map(|m| spec::parse_static_mark(m, names))
            .collect::<Result<_, _>>()?;
        Ok(CallMarks {
            dynamic,
            fixed,
            propagated: Vec::new(),
        })
    }
}

/// `tailor run`.
pub struct RunArgs {
    /// The model and how it compiles.
    pub model: ModelArgs,
    /// Each `--call`'s shapes, in order.
    pub calls: Vec<String>,
    /// Where the kernels run.
    pub device: Device,
    /// One JSON object instead of the text report.
    pub json: bool,
    /// Compare every call's outputs with the CPU reference.
    pub check: bool,
    /// `--weights`: a safetensors file of the model's `state_dict`.
    pub weights: Option<String>,
    /// `--inputs`: a safetensors file of one call's arguments, by name (instead of `--call`).
    pub inputs: Option<String>,
    /// `--outputs`: where the one call's returned tensors are written.
    pub outputs: Option<String>,
}

/// `tailor explain`.
pub struct ExplainArgs {
    /// The model and how it compiles.
    pub model: ModelArgs,
    /// The one call's shapes.
    pub input: String,
    /// The trace as one JSON object (`{"stages": [{"id", "title", "text"}]}`) instead of text.
    pub json: bool,
}

/// `tailor bench`.
pub struct BenchArgs {
    /// One JSON object instead of the text table.
    pub json: bool,
    /// Samples per figure (the median is reported).
    pub rounds: usize,
}

/// Parses `args` (without the program name).
pub fn parse(args: Vec<OsString>) -> Result<Command, String> {
    let mut args = args.into_iter();
    let command = args
        .next()
        .ok_or("missing command (run, explain, script, compare, bench or supported)")?;
    let mut parser = Parser::from_args(args);
    match command.to_str() {
        Some("run") => run_args(&mut parser).map(Command::Run),
        Some("explain") => explain_args(&mut parser).map(Command::Explain),
        Some("bench") => bench_args(&mut parser).map(Command::Bench),
        Some("script") => script_args(&mut parser).map(Command::Script),
        Some("supported") => supported_args(&mut parser).map(Command::Supported),
        Some("compare") => compare_args(&mut parser).map(Command::Compare),
        _ => Err(format!(
            "unknown command '{}' (expected run, explain, script, compare, bench or supported)",
            command.to_string_lossy()
        )),
    }
}

fn run_args(parser: &mut Parser) -> Result<RunArgs, String> {
    let args = model_command_args("run", parser)?;
    let n_calls = args.calls.len() + usize::from(args.inputs.is_some());
    match n_calls {
        _ if args.inputs.is_some() && !args.calls.is_empty() => {
            Err("--inputs gives the call: run takes it or --call, not both".into())
        }
        0 => Err("run needs at least one --call SHAPES (or --inputs FILE)".into()),
        1 => Ok(args),
        _ if args.outputs.is_some() => Err("--outputs needs exactly one call".into()),
        _ => Ok(args),
    }
}

fn explain_args(parser: &mut Parser) -> Result<ExplainArgs, String> {
    // Explain compiles without running, so `--device` has nothing to choose; it is still
    // accepted and checked, as for `run`, because the two share one flag set.
    let RunArgs {
        model,
        mut calls,
        json,
        ..
    } = model_command_args("explain", parser)?;
    match calls.len() {
        1 => Ok(ExplainArgs {
            model,
            input: calls.remove(0),
            json,
        }),
        _ => Err("explain needs exactly one --input SHAPES".into()),
    }
}

/// The flags of `run` and `explain`, in any order; `--call`, `--check`, `--weights`,
/// `--inputs` and `--outputs` are `run`'s, `--input` is `explain`'s (kept in `calls`), and
/// `--json` is both's.
fn model_command_args(command: &str, parser: &mut Parser) -> Result<RunArgs, String> {
    let running = command == "run";
    let mut args = RunArgs {
        model: ModelArgs::default(),
        calls: Vec::new(),
        device: Device::Auto,
        json: false,
        check: false,
        weights: None,
        inputs: None,
        outputs: None,
    };
    while let Some(arg) = next(parser, command)? {
        let flag = match arg {
            Arg::Value(value) if args.model.file.is_empty() => {
                args.model.file = text(value, "FILE")?;
                continue;
            }
            Arg::Value(extra) => {
                return Err(format!("unexpected argument '{}'", extra.to_string_lossy()));
            }
            flag => spelled(&flag),
        };
        match flag.as_str() {
            "--entry" => args.model.entry = Some(value(parser, &flag)?),
            "--dynamic" => {
                args.model.config.dynamic = value(parser, &flag)?.parse::<DynamicMode>()?
            }
            "--mark-dynamic" => args.model.mark_dynamic.push(value(parser, &flag)?),
            "--mark-static" => args.model.mark_static.push(value(parser, &flag)?),
            "--symbol-names" => args.model.symbol_names = symbol_naming(parser, &flag)?,
            "--memory-budget" => args.model.memory_budget = Some(memory_budget(parser, &flag)?),
            "--recompile-limit" => {
                let limit = value(parser, &flag)?;
                args.model.config.recompile_limit = limit.parse().map_err(|_| {
                    format!("--recompile-limit needs a non-negative integer, got '{limit}'")
                })?;
            }
            "--device" => args.device = device(parser, &flag)?,
            "--call" if running => args.calls.push(value(parser, &flag)?),
            "--input" if !running => args.calls.push(value(parser, &flag)?),
            "--json" => args.json = true,
            "--check" if running => args.check = true,
            "--weights" if running => args.weights = Some(value(parser, &flag)?),
            "--inputs" if running => args.inputs = Some(value(parser, &flag)?),
            "--outputs" if running => args.outputs = Some(value(parser, &flag)?),
            _ => return Err(format!("unknown flag '{flag}' for '{command}'")),
        }
    }
    if args.model.file.is_empty() {
        return Err("missing FILE".into());
    }
    Ok(args)
}

fn script_args(parser: &mut Parser) -> Result<ScriptArgs, String> {
    let mut args = ScriptArgs {
        file: String::new(),
        logs: None,
        device: Device::Auto,
        json: false,
        symbol_names: SymbolNaming::Tailor,
        memory_budget: None,
    };
    while let Some(arg) = next(parser, "script")? {
        let flag = match arg {
            Arg::Value(value) if args.file.is_empty() => {
                args.file = text(value, "FILE")?;
                continue;
            }
            Arg::Value(extra) => {
                return Err(format!("unexpected argument '{}'", extra.to_string_lossy()));
            }
            flag => spelled(&flag),
        };
        match flag.as_str() {
            "--logs" => args.logs = Some(value(parser, &flag)?.parse()?),
            "--device" => args.device = device(parser, &flag)?,
            "--json" => args.json = true,
            "--symbol-names" => args.symbol_names = symbol_naming(parser, &flag)?,
            "--memory-budget" => args.memory_budget = Some(memory_budget(parser, &flag)?),
            _ => return Err(format!("unknown flag '{flag}' for 'script'")),
        }
    }
    if args.file.is_empty() {
        return Err("missing FILE".into());
    }
    Ok(args)
}

/// `--device`'s value.
fn device(parser: &mut Parser, flag: &str) -> Result<Device, String> {
    let device = value(parser, flag)?;
    device
        .parse()
        .map_err(|_| format!("--device must be auto, gpu or cpu, got '{device}'"))
}

fn compare_args(parser: &mut Parser) -> Result<CompareArgs, String> {
    let mut args = CompareArgs {
        trace: String::new(),
        file: String::new(),
        device: Device::Auto,
        json: false,
        memory_budget: None,
    };
    while let Some(arg) = next(parser, "compare")? {
        let flag = match arg {
            Arg::Value(value) if args.trace.is_empty() => {
                args.trace = text(value, "TRACE")?;
                continue;
            }
            Arg::Value(value) if args.file.is_empty() => {
                args.file = text(value, "FILE")?;
                continue;
            }
            Arg::Value(extra) => {
                return Err(format!("unexpected argument '{}'", extra.to_string_lossy()));
            }
            flag => spelled(&flag),
        };
        match flag.as_str() {
            "--device" => args.device = device(parser, &flag)?,
            "--json" => args.json = true,
            "--memory-budget" => args.memory_budget = Some(memory_budget(parser, &flag)?),
            _ => return Err(format!("unknown flag '{flag}' for 'compare'")),
        }
    }
    if args.file.is_empty() {
        return Err("compare needs TRACE and FILE.py".into());
    }
    Ok(args)
}

fn bench_args(parser: &mut Parser) -> Result<BenchArgs, String> {
    let mut args = BenchArgs {
        json: false,
        rounds: 21,
    };
    while let Some(arg) = next(parser, "bench")? {
        match arg {
            Arg::Long("json") => args.json = true,
            Arg::Long("rounds") => {
                args.rounds = parser
                    .value()
                    .ok()
                    .and_then(|rounds| rounds.to_str()?.parse().ok())
                    .ok_or("--rounds needs a positive integer")?;
            }
            // `bench` takes no positional argument; one is named like an unknown flag.
            other => return Err(format!("unknown flag '{}' for 'bench'", spelled(&other))),
        }
    }
    Ok(args)
}

fn supported_args(parser: &mut Parser) -> Result<bool, String> {
    let mut json = false;
    while let Some(arg) = next(parser, "supported")? {
        match arg {
            Arg::Long("json") => json = true,
            other => {
                return Err(format!(
                    "unknown flag '{}' for 'supported'",
                    spelled(&other)
                ));
            }
        }
    }
    Ok(json)
}

/// The next flag or value of `command`. A value glued to a flag that takes none
/// (`--json=1`) is named whole, as an unknown flag, like any other flag `command` lacks.
fn next<'a>(parser: &'a mut Parser, command: &str) -> Result<Option<Arg<'a>>, String> {
    parser.next().map_err(|err| match err {
        lexopt::Error::UnexpectedValue { option, value } => format!(
            "unknown flag '{option}={}' for '{command}'",
            value.to_string_lossy()
        ),
        other => other.to_string(),
    })
}

/// The value of `flag`: the next argument, even one that starts with `-` (`-1`).
fn value(parser: &mut Parser, flag: &str) -> Result<String, String> {
    let value = parser
        .value()
        .map_err(|_| format!("{flag} needs a value"))?;
    text(value, flag)
}

/// The value of `--symbol-names`.
fn memory_budget(parser: &mut Parser, flag: &str) -> Result<u64, String> {
    let budget = value(parser, flag)?;
    tailor::graph::parse_bytes(&budget).ok_or_else(|| {
        format!("{flag} needs a size in bytes such as 512MiB or 16GiB, got '{budget}'")
    })
}

fn symbol_naming(parser: &mut Parser, flag: &str) -> Result<SymbolNaming, String> {
    let naming = value(parser, flag)?;
    SymbolNaming::parse(&naming)
        .ok_or_else(|| format!("{flag} must be tailor or pytorch, got '{naming}'"))
}

/// `value` as UTF-8 text, or an error naming what it was for.
fn text(value: OsString, what: &str) -> Result<String, String> {
    value.into_string().map_err(|value| {
        format!(
            "{what} must be UTF-8 text, got '{}'",
            value.to_string_lossy()
        )
    })
}

/// An argument as the user typed it (`--json`, `-x`, `file.py`), for error messages.
fn spelled(arg: &Arg<'_>) -> String {
    match arg {
        Arg::Long(name) => format!("--{name}"),
        Arg::Short(letter) => format!("-{letter}"),
        Arg::Value(value) => value.to_string_lossy().into_owned(),
    }
}
