//! Script mode: a whole Python script runs as Python would (`tailor script FILE.py`), and
//! each `torch.compile` wrapper it makes is a real one: its calls go through the guard cache
//! of their code object and run their kernels on the executor's backend.
//!
//! In: the script's text and [`ScriptOptions`] (which `TORCH_LOGS`-style logs to print, the
//! file's name for them, the backend and the clock). Out: a [`ScriptRun`]: what the script
//! printed and what was logged, in order; every compiled call's event; the error that
//! stopped the script. The front end runs the script (`frontend::run_script`); this module
//! is its [`ScriptHost`].
//! Invariant: wrappers of the same code (the same `forward` of the same module, or the same
//! function) share one `CodeCache` and so one recompile limit, as Dynamo's per-code-object
//! cache does; a log line is printed only for what the cache did, as PyTorch prints it.

use crate::cache::{Action, CallEvent, CodeCache, Entry};
use crate::config::{CallMarks, CompileConfig, Logs};
use crate::error::Error;
use crate::frontend::{
    self, CallArg, CodeKey, EntryPoint, FrontendError, GradMode, HostCall, Output, Program,
    ScriptHost, Stamps, Stream,
};
use crate::graph::{Graph, Span};
use crate::guard::{ArgValue, CallShapes};
use crate::session::Session;
use crate::session::executor::{Backend, RunOptions};
use crate::symbolic::SymbolNaming;
use crate::torch_trace::{self, CompileRecord};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::rc::Rc;

/// How a script runs.
pub struct ScriptOptions {
    /// The logs to print.
    pub logs: Logs,
    /// The file's name as the logs give it (`Recompiling function forward in PATH:17`).
    pub path: String,
    /// Where compiled calls run. In the page only the CPU backend runs synchronously.
    pub backend: Rc<Backend>,
    /// Milliseconds, for `compile_ms` and the time limit.
    pub clock: Rc<dyn Fn() -> f64>,
    /// How the `dynamic` log names symbols (PyTorch 2.15 prints `s77`; the material `s0`).
    pub symbol_names: SymbolNaming,
}

/// One call of a compiled wrapper.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScriptCall {
    /// The wrapper, numbered in `torch.compile` order from 0.
    pub wrapper: usize,
    /// Its `dynamic=`.
    pub dynamic: crate::config::DynamicMode,
    /// What the cache did.
    pub event: CallEvent,
    /// Running the kernels, in ms (0 when they did not run).
    pub run_ms: f64,
}

/// One call of one frame (the compiled function, or a resume function) as Dynamo numbers
/// frames in the script: what the cache did with which arguments. A trace records compiles
/// only; these say what Tailor did where PyTorch compiled and Tailor did not.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FrameCall {
    /// Dynamo's frame id.
    pub frame: u32,
    /// What the cache did.
    pub action: Action,
    /// The entry that ran, for a compile or a hit.
    pub entry: Option<u32>,
    /// The sizes of its tensor arguments, as `L['x'] [16, 64]`.
    pub inputs: Vec<String>,
}

/// A finished script.
pub struct ScriptRun {
    /// What it printed and what was logged, in order.
    pub output: Vec<Output>,
    /// Every compiled call, in order.
    pub calls: Vec<ScriptCall>,
    /// How many entries each code object's cache ended with, in first-compile order.
    pub entries: Vec<usize>,
    /// Every compilation tried, per `[frame/compile]` in the order tried, as PyTorch's trace
    /// records them (`compare` sets them beside a real trace's).
    pub compiles: Vec<CompileRecord>,
    /// Every frame's call, in order.
    pub frame_calls: Vec<FrameCall>,
    /// The error that stopped it.
    pub error: Option<Error>,
}

impl ScriptRun {
    /// The output of `stream`s, concatenated in order.
    pub fn text(&self, streams: &[Stream]) -> String {
        self.output
            .iter()
            .filter(|piece| streams.contains(&piece.stream))
            .map(|piece| piece.text.as_str())
            .collect()
    }
}

/// Runs `source` as a script.
pub fn run(source: &str, options: ScriptOptions) -> ScriptRun {
    let clock = options.clock.clone();
    let host = Rc::new(RefCell::new(Host {
        codes: Vec::new(),
        wrappers: Vec::new(),
        calls: Vec::new(),
        compiles: Vec::new(),
        frame_calls: Vec::new(),
        options,
        next_frame: 0,
        logged_breaks: Vec::new(),
    }));
    let outcome = frontend::run_script(
        frontend::Vm::fresh(),
        source,
        Box::new(SharedHost(host.clone())),
        clock,
    );
    let host = host.borrow();
    ScriptRun {
        output: outcome.output,
        calls: host.calls.clone(),
        entries: host
            .codes
            .iter()
            .map(|c| c.session.cache.entries_mru().len())
            .collect(),
        compiles: host.compiles.clone(),
        frame_calls: host.frame_calls.clone(),
        error: outcome.error.map(Error::from),
    }
}

/// The session of one code object: its cache, and the executor that keeps its entries'
/// kernels.
struct Code {
    key: CodeKey,
    session: Session,
    wrappers: usize,
    /// Dynamo's frame id of each of the cache's frames (the function, then its resume
    /// functions), given in the order frames are first called since the last reset.
    frame_ids: BTreeMap<usize, usize>,
}

/// One `torch.compile(...)` result.
struct Wrapper {
    code: usize,
    index: usize,
    config: CompileConfig,
}

struct Host {
    codes: Vec<Code>,
    wrappers: Vec<Wrapper>,
    calls: Vec<ScriptCall>,
    compiles: Vec<CompileRecord>,
    frame_calls: Vec<FrameCall>,
    options: ScriptOptions,
    /// The next frame id to give.
    next_frame: usize,
    /// The graph breaks logged so far (PyTorch prints a break's user stack only once).
    logged_breaks: Vec<(u32, u32)>,
}

/// The host as the front end holds it while the script runs; `run` keeps the other handle.
struct SharedHost(Rc<RefCell<Host>>);

impl ScriptHost for SharedHost {
    fn compile(
        &mut self,
        key: CodeKey,
        program: Program,
        entry: EntryPoint,
        config: CompileConfig,
    ) -> usize {
        let mut host = self.0.borrow_mut();
        let code = match host.codes.iter().position(|c| c.key == key) {
            Some(code) => code,
            None => {
                let session = Session::new(
                    CodeCache::new(program, entry),
                    host.options.backend.clone(),
                    host.options.clock.clone(),
                );
                host.codes.push(Code {
                    key,
                    session,
                    wrappers: 0,
                    frame_ids: BTreeMap::new(),
                });
                host.codes.len() - 1
            }
        };
        let index = host.codes[code].wrappers;
        host.codes[code].wrappers += 1;
        host.wrappers.push(Wrapper {
            code,
            index,
            config,
        });
        host.wrappers.len() - 1
    }

    fn set_logs(&mut self, logs: Logs) {
        self.0.borrow_mut().options.logs = logs;
    }

    fn reset(&mut self) {
        let mut host = self.0.borrow_mut();
        // PyTorch's frame counter starts again too, and its log of breaks seen.
        host.next_frame = 0;
        host.logged_breaks.clear();
        for code in &mut host.codes {
            code.session.cache.reset();
            code.session.executor.clear();
            code.frame_ids.clear();
        }
    }

    fn inputs(&self, wrapper: usize) -> Vec<String> {
        let host = self.0.borrow();
        host.wrappers
            .get(wrapper)
            .map(|w| {
                host.codes[w.code]
                    .session
                    .cache
                    .entry_point()
                    .inputs
                    .clone()
            })
            .unwrap_or_default()
    }

    fn call(
        &mut self,
        wrapper: usize,
        args: Vec<CallArg>,
        marks: CallMarks,
        grad: Option<GradMode>,
        span: Span,
    ) -> Result<HostCall, FrontendError> {
        let mut host = self.0.borrow_mut();
        let host = &mut *host;
        let failed = |message: String| FrontendError::Compiled { span, message };
        let wrapper_state = host
            .wrappers
            .get(wrapper)
            .ok_or_else(|| failed(format!("no compiled wrapper {wrapper}")))?;
        let (code, index, config) = (
            wrapper_state.code,
            wrapper_state.index,
            wrapper_state.config.clone(),
        );
        let code = &mut host.codes[code];
        let names = code.session.cache.entry_point().inputs.clone();
        let mut inputs = Vec::new();
        let mut values = Vec::with_capacity(args.len());
        for (name, arg) in names.into_iter().zip(args) {
            let value = match arg {
                CallArg::Tensor(tensor, dtype) => {
                    let dims = tensor.shape.iter().map(|&d| d as i64).collect();
                    inputs.push(tensor);
                    ArgValue::Tensor(dims, dtype)
                }
                CallArg::Int(int) => ArgValue::Int(int),
                CallArg::Bool(b) => ArgValue::Bool(b),
                CallArg::Float(value) => ArgValue::Float(value),
            };
            values.push((name, value));
        }
        let call = CallShapes::with_args(values);
        let event = code
            .session
            .decide(index, &config, &call, &marks, &inputs)
            .clone();
        for frame in event.frames() {
            code.frame_ids.entry(frame.frame).or_insert_with(|| {
                host.next_frame += 1;
                host.next_frame - 1
            });
        }
        let mut log = Vec::new();
        let entry_point = code.session.cache.entry_point();
        let function = (entry_point.function.0.as_str(), entry_point.function.1);
        let mut frame_log = |call: &CallEvent, function: (&str, u32), log: &mut Vec<Output>| {
            let frame = Frame {
                local: call.frame,
                id: code.frame_ids[&call.frame],
                function,
            };
            let lines = log_lines(
                &host.options,
                &frame,
                &code.session.cache,
                call,
                &mut host.logged_breaks,
            );
            log.extend(lines.into_iter().map(|line| Output {
                stream: Stream::Log,
                text: format!("{line}\n"),
            }));
            host.compiles.extend(compile_record(
                &host.options,
                &frame,
                &code.session.cache,
                call,
            ));
            let entry = call
                .entry
                .and_then(|id| code.session.cache.frame_entry(frame.local, id));
            host.frame_calls.push(FrameCall {
                frame: frame.id as u32,
                action: call.action,
                entry: call.entry.map(|id| id as u32),
                inputs: tensor_inputs(call, entry),
            });
        };
        frame_log(&event, function, &mut log);
        for resume in &event.breaks {
            log.extend(resume.printed.iter().cloned());
            let function = (resume.function.as_str(), resume.graph_break.resume_line());
            frame_log(&resume.call, function, &mut log);
        }
        let mut record = ScriptCall {
            wrapper,
            dynamic: config.dynamic,
            event: event.clone(),
            run_ms: 0.0,
        };
        if let Some(failed_frame) = event.first_error() {
            host.calls.push(record);
            let span = failed_frame.error_span.unwrap_or(span);
            // An error of `forward`'s own line already starts with its place.
            let message = failed_frame.error.clone().unwrap_or_default();
            let message = match message.strip_prefix(&format!("{span}: ")) {
                Some(rest) => rest.to_string(),
                None => message,
            };
            return Err(FrontendError::Compiled { span, message });
        }
        let ran = code
            .session
            .start_runs(&event, &call, inputs, RunOptions::default())
            .and_then(|jobs| run_now(code.session.finish(jobs)));
        let outcome = match ran {
            Ok(outcome) => outcome,
            Err(err) => {
                host.calls.push(record);
                return Err(failed(format!("running the compiled kernels: {err}")));
            }
        };
        record.run_ms = outcome.run_ms;
        host.calls.push(record);
        // An eager call has no entry of its own; every entry of one code returns alike. A
        // call through graph breaks returns what its last graph returned.
        let last = event.frames().last().unwrap_or(&event);
        let graph = last
            .entry
            .and_then(|id| code.session.cache.frame_entry(last.frame, id))
            .or_else(|| code.session.cache.entries_mru().first())
            .map(|entry| &entry.graph);
        let returned = graph.map(|g| g.returned.clone()).unwrap_or_default();
        let dtypes = graph.map(Graph::output_dtypes).unwrap_or_default();
        // AOTAutograd's runtime wrapper stamps what one graph's run returned and saved; a
        // call through graph breaks or run eagerly is not one graph's run.
        let stamps = match code.session.cache.sole_entry(&event) {
            Some(entry) => {
                let names = &code.session.cache.entry_point().inputs;
                entry.stamps(names, &config.backend, grad.as_ref())
            }
            _ => Stamps::default(),
        };
        Ok(HostCall {
            outputs: outcome.outputs,
            dtypes,
            returned,
            log,
            stamps,
        })
    }
}

/// A run's result where a script needs it at once (see `wait`).
fn run_now<T, F: Future<Output = Result<T, Error>>>(future: F) -> Result<T, Error> {
    wait(future).unwrap_or_else(|| {
        Err(Error::Call {
            message: "this backend runs asynchronously; a script's calls run on the CPU backend"
                .into(),
            span: None,
        })
    })
}

/// One frame as the logs name it: its place in the cache, its id, its name and line.
struct Frame<'a> {
    local: usize,
    id: usize,
    function: (&'a str, u32),
}

/// The log lines of one frame's call, as PyTorch's logging prints them after its
/// `[frame/compile]` prefix: the recompile reasons, the new entry's graph break, guards and
/// symbolic events, and the recompile-limit warning (printed whatever the logs, as
/// PyTorch's WARNING is).
fn log_lines(
    options: &ScriptOptions,
    frame: &Frame<'_>,
    cache: &CodeCache,
    event: &CallEvent,
    logged_breaks: &mut Vec<(u32, u32)>,
) -> Vec<String> {
    let mut lines = Vec::new();
    let (new_entry, tried) = compilation(frame, cache, event);
    // A compilation that failed logs why it was tried, as PyTorch does before it raises,
    // and so does one whose trace recorded no op (the frame is skipped from then on).
    if let (true, Some(id)) = (tried, event.compile_id)
        && options.logs.recompiles
        && id > 0
    {
        lines.extend(recompile_lines(options, frame, id, event));
    }
    if let Some(entry) = new_entry {
        let prefix = CompileId(frame.id, entry.id);
        if options.logs.dynamic {
            lines.push(format!("{prefix} create_env"));
            let names = entry.env.symbol_names(options.symbol_names);
            lines.extend(names.show(|| {
                entry
                    .env
                    .events()
                    .iter()
                    .map(|(_, e)| format!("{prefix} {e}"))
                    .collect::<Vec<_>>()
            }));
        }
        if options.logs.recompiles && entry.id > 0 {
            lines.extend(recompile_lines(options, frame, entry.id, event));
        }
        if let Some(graph_break) = &entry.graph_break
            && options.logs.graph_breaks
        {
            let tag = format!("{prefix} [__graph_breaks]");
            let place = (graph_break.span.line, graph_break.span.col);
            let mut break_lines = graph_break.log_lines(&options.path);
            if logged_breaks.contains(&place) {
                break_lines[0] = break_lines[0].replacen(
                    "Graph break in",
                    "Graph break (user stack suppressed due to duplicate graph break) in",
                    1,
                );
            } else {
                logged_breaks.push(place);
            }
            lines.extend(break_lines.iter().map(|line| format!("{tag} {line}")));
        }
        if options.logs.guards {
            let tag = format!("{prefix} [__guards]");
            lines.push(format!("{tag} GUARDS:"));
            lines.extend(
                entry
                    .guards
                    .source_lines()
                    .iter()
                    .map(|line| format!("{tag} {line}")),
            );
        }
    }
    if let Some(warning) = &event.warning {
        let prefix = CompileId(frame.id, cache.next_compile_id());
        let warning = warning.replace("model.py", &options.path);
        lines.extend(warning.lines().map(|line| format!("{prefix} {line}")));
    }
    lines
}

/// What one frame's call compiled: the entry it added, and whether it tried a compilation
/// that added none (an error, or a trace that recorded no op). The logs and the trace's
/// records both start from this.
fn compilation<'c>(
    frame: &Frame<'_>,
    cache: &'c CodeCache,
    event: &CallEvent,
) -> (Option<&'c Entry>, bool) {
    let entry = match event.action {
        Action::Compile => event
            .entry
            .and_then(|id| cache.frame_entry(frame.local, id)),
        _ => None,
    };
    let tried = event.action == Action::Error || event.skipped.is_some();
    (entry, tried)
}

/// What a trace would record of one frame's call: its compilation, or the one it tried
/// (`None` for a hit or an eager run). Symbols are named as PyTorch 2.15 names them (`s77`),
/// as in its trace.
fn compile_record(
    options: &ScriptOptions,
    frame: &Frame<'_>,
    cache: &CodeCache,
    event: &CallEvent,
) -> Option<CompileRecord> {
    let (entry, tried) = compilation(frame, cache, event);
    let compile = match (entry, event.compile_id) {
        (Some(entry), _) => entry.id,
        (None, Some(id)) if tried => id,
        _ => return None,
    };
    let mut record = CompileRecord {
        frame: frame.id as u32,
        compile: compile as u32,
        function: frame.function.0.to_string(),
        first_line: Some(frame.function.1),
        recompile_reasons: event
            .reasons
            .iter()
            .map(|(id, reason)| format!("{}/{id}: {reason}", frame.id))
            .collect(),
        inputs: tensor_inputs(event, entry),
        failure: event.error.clone(),
        ..CompileRecord::default()
    };
    if let Some(entry) = entry {
        let names = entry.env.symbol_names(SymbolNaming::PyTorch);
        names.show(|| {
            record.symbols = entry
                .env
                .events()
                .iter()
                .filter_map(|(_, event)| match event {
                    crate::shape::ShapeEvent::CreateSymbol {
                        sym,
                        source,
                        hint,
                        range,
                        ..
                    } => Some(format!("{sym} = {hint} for {source} {range}")),
                    _ => None,
                })
                .collect();
            record.outputs = entry
                .graph
                .outputs()
                .iter()
                .map(|&id| crate::graph::shape_to_string(entry.graph.shape(id)))
                .collect();
        });
        record.guards = entry.guards.source_lines();
        record.graph_break = entry.graph_break.as_ref().map(|graph_break| {
            torch_trace::graph_break_summary(&graph_break.log_lines(&options.path).join("\n"))
        });
    }
    Some(record)
}

/// The sizes of a call's tensor arguments, as a trace describes them (`L['x'] [16, 64]`):
/// those `entry`'s graph reads (its guards' tensors), as Dynamo describes only the tensors
/// it wraps (a resume function's unread arguments apart), or every one.
fn tensor_inputs(event: &CallEvent, entry: Option<&Entry>) -> Vec<String> {
    let read = |name: &str| entry.is_none_or(|e| e.guards.tensors.iter().any(|t| t.input == name));
    event
        .shapes
        .iter()
        .filter_map(|(name, value)| match value {
            ArgValue::Tensor(dims, _) if read(name) => {
                let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
                Some(format!("L['{name}'] [{}]", dims.join(", ")))
            }
            _ => None,
        })
        .collect()
}

/// `Recompiling function …` and the failing guard of every entry, in lookup order, for
/// compile `id` of `frame`.
fn recompile_lines(
    options: &ScriptOptions,
    frame: &Frame<'_>,
    id: usize,
    event: &CallEvent,
) -> Vec<String> {
    let tag = format!("{} [__recompiles]", CompileId(frame.id, id));
    let mut lines = vec![
        format!(
            "{tag} Recompiling function {} in {}:{}",
            frame.function.0, options.path, frame.function.1
        ),
        format!("{tag}     triggered by the following guard failure(s):"),
    ];
    lines.extend(
        event
            .reasons
            .iter()
            .map(|(id, reason)| format!("{tag}     - {}/{id}: {reason}", frame.id)),
    );
    lines
}

/// PyTorch's `[frame/compile]` log prefix: frames are numbered in the order their code was
/// first compiled, and compiles per frame.
struct CompileId(usize, usize);

impl fmt::Display for CompileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}/{}]", self.0, self.1)
    }
}

/// The result of `future` when it can be had without a JavaScript event loop: natively by
/// blocking; in the page only when it is ready at once (the CPU backend's runs are).
fn wait<F: Future>(future: F) -> Option<F::Output> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        Some(pollster::block_on(future))
    }
    #[cfg(target_arch = "wasm32")]
    {
        let mut future = std::pin::pin!(future);
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        }
    }
}
