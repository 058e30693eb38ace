//! The guard cache of one compiled function: torch.compile's lookup, recompile and eager
//! fallback policies.
//!
//! Input: calls (tensors' sizes, Python ints and bools, plus per-call
//! `mark_dynamic`/`mark_static`) made through one or more wrappers (`torch.compile(model,
//! dynamic=…)`) of the same code. Output: per call a `CallEvent` (hit / compile / eager /
//! error, which entry, the failure reasons), and the entries with their guards. Invariants
//! (pytorch-semantics.md §1–2): entries are checked most recently used first and the first
//! passing one wins; a hit moves its entry to the front; a new entry goes to the front; at
//! most `recompile_limit` entries are compiled, after which misses run eagerly (a miss whose
//! eager run raises is an error); automatic-dynamic state is per input dim and per int, and
//! sticky; a call whose compilation fails adds no entry but uses up its compile id.

use crate::compile::{self, CompileOptions, Compiled};
use crate::config::{CallMarks, CompileConfig, DynamicMode};
use crate::error::Error;
use crate::frontend::{
    self, BreakPoint, CallArg, EntryPoint, FrontendError, GraphBreak, Output, Program,
};
use crate::graph::{Graph, Span, TracedArg};
use crate::guard::{ArgValue, AttributePath, CallShapes, GuardSet, LiftedArg};
use crate::message::{Message, MessageId};
use crate::shape::{DimPolicy, DimSource, Mark, ShapeEnv, ShapeError};
use crate::symbolic::{Expr, SymbolNames};
use crate::weights::{self, WeightsError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// What a call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A new entry was compiled.
    Compile,
    /// An existing entry's guards passed.
    Hit,
    /// The recompile limit was reached: the call ran uncompiled.
    Eager,
    /// Compilation failed, or the call past the recompile limit failed when run eagerly; no
    /// entry was added.
    Error,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Compile => "compile",
            Action::Hit => "hit",
            Action::Eager => "eager",
            Action::Error => "error",
        })
    }
}

/// One call's record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallEvent {
    /// The call's arguments: tensors' sizes, ints, bools.
    pub shapes: Vec<(String, ArgValue)>,
    /// Which wrapper was called (index given by the caller).
    pub wrapper: usize,
    /// What happened.
    pub action: Action,
    /// The entry that ran (compile order, from 0), for `compile` and `hit`.
    pub entry: Option<usize>,
    /// The compile id this call's compilation took (`0/N`), for `compile` and for an
    /// `error` raised while compiling: a failed compilation uses up its id, as in PyTorch.
    pub compile_id: Option<usize>,
    /// The first failing guard of every entry, in lookup order: (entry id, reason).
    #[serde(serialize_with = "serialize_reasons")]
    pub reasons: Vec<(usize, String)>,
    /// The error, for `error`.
    pub error: Option<String>,
    /// The error as a message for the page's languages (`error` is its English text).
    #[serde(skip)]
    pub error_message: Option<Message>,
    /// Where in the source the error points, when it does.
    pub error_span: Option<Span>,
    /// Whether the error is in the program itself, so every call would fail alike.
    pub error_in_program: bool,
    /// The warning PyTorch prints when the recompile limit is hit.
    pub warning: Option<String>,
    /// Time spent checking guards (ms).
    pub guard_ms: f64,
    /// Time spent compiling (ms), for `compile`.
    pub compile_ms: f64,
    /// Dynamo's frame id of the code called: 0 for the compiled function, then each resume
    /// function in the order first reached.
    pub frame: usize,
    /// The graph breaks the call went through, each with the call of the resume function
    /// after it (empty when the function's graph reaches its return).
    pub breaks: Vec<ResumeEvent>,
}

/// A graph break a call went through, and the call of the code after it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResumeEvent {
    /// The break.
    pub graph_break: GraphBreak,
    /// The resume function's name (`torch_dynamo_resume_in_forward_at_11`).
    pub function: String,
    /// Its call: lookup, compile or error, in its own cache.
    pub call: CallEvent,
    /// What Python printed between the graph before the break and this call.
    pub printed: Vec<Output>,
}

impl CallEvent {
    /// Every frame's call of this call, in order: the function's, then each resume's.
    pub fn frames(&self) -> impl Iterator<Item = &CallEvent> {
        std::iter::once(self).chain(self.breaks.iter().map(|b| &b.call))
    }

    /// Records `err` as this call's error.
    fn fail(&mut self, err: &FrontendError) {
        self.action = Action::Error;
        self.error = Some(err.to_string());
        self.error_message = Some(err.message());
        self.error_span = err.span();
        self.error_in_program = err.is_in_program();
    }

    /// The first error of any frame's call, when there is one.
    pub fn first_error(&self) -> Option<&CallEvent> {
        self.frames().find(|f| f.action == Action::Error)
    }
}

/// Reasons go to JSON as plain strings, as the CLI contract shows them.
fn serialize_reasons<S: serde::Serializer>(
    reasons: &[(usize, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(reasons.iter().map(|(_, reason)| reason))
}

/// How an input dim looks in an entry: a size or a symbol with its range.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DimSpec {
    /// A static size.
    Static(i64),
    /// A symbolic size.
    Dynamic {
        /// The symbol or expression.
        sym: String,
        /// Lower bound.
        min: Option<i64>,
        /// Upper bound (`None` = unbounded).
        max: Option<i64>,
    },
}

impl DimSpec {
    /// This dim with its symbols shown with `names` (the entry's sizes are printed with
    /// Tailor's numbers when compiled).
    pub fn named(&self, names: &SymbolNames) -> DimSpec {
        match self {
            DimSpec::Static(v) => DimSpec::Static(*v),
            DimSpec::Dynamic { sym, min, max } => DimSpec::Dynamic {
                sym: names.rename(sym),
                min: *min,
                max: *max,
            },
        }
    }
}

/// How a Python-value argument looks in an entry: an int as a constant or a symbol, a bool,
/// a float as a constant or symbolic.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ValueSpec {
    /// An int.
    Int(DimSpec),
    /// A bool (always specialised).
    Bool(bool),
    /// A float: the constant, or `None` when it is symbolic.
    Float(Option<f64>),
}

/// A compiled entry: the captured graph, the guards that say when it may be reused, and
/// its kernels (`compile::compile`).
#[derive(Clone, Debug)]
pub struct Entry {
    /// Compile order, from 0 (PyTorch's `frame/compile` id `0/N`).
    pub id: usize,
    /// The wrapper that compiled it; other wrappers never reuse it.
    pub wrapper: usize,
    /// That wrapper's mode.
    pub mode: DynamicMode,
    /// The graph, with final shapes.
    pub graph: Graph,
    /// The symbolic reasoning that produced it.
    pub env: ShapeEnv,
    /// Its guards.
    pub guards: GuardSet,
    /// Tensor arguments' dims as the entry sees them.
    pub inputs: Vec<(String, Vec<DimSpec>)>,
    /// Int and bool arguments as the entry sees them.
    pub values: Vec<(String, ValueSpec)>,
    /// The graph lowered for the ranges its guards promise, and its WGSL.
    pub compiled: Compiled,
    /// The graph break its graph ends at (`None`: it reaches the return).
    pub graph_break: Option<GraphBreak>,
    /// Dynamo's frame id of its code (0: the compiled function; else a resume function).
    pub frame: usize,
    marked: Vec<bool>,
    /// For a resume function's entry, the positions of the arguments its graph used (the
    /// only ones it guards, as Dynamo guards only what the trace read).
    used: Option<Vec<usize>>,
}

/// Automatic-dynamic memory of one input dim (PyTorch's `FrameStateSizeEntry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DimState {
    Seen(i64),
    Dynamic,
}

/// Automatic-dynamic memory of one argument: a tensor's dims, or an int (bools are
/// always specialised, so nothing is remembered of them).
#[derive(Clone, Debug, PartialEq, Eq)]
enum ArgState {
    Tensor(Vec<DimState>),
    Int(DimState),
    Bool,
    /// A float, by its bits.
    Float(DimState),
}

/// A clock in milliseconds; injected because the compiler itself does no IO.
pub type Clock<'a> = &'a dyn Fn() -> f64;

/// A call's values, made when asked: only a call whose graph ends at a graph break runs on
/// them, and the others should not copy their inputs to make them.
pub type CallValues<'a> = &'a dyn Fn() -> Vec<CallArg>;

/// The cache of one code: the compiled function's own (frame 0), or the code that resumes
/// after one of its graph breaks (a resume function, which Dynamo caches on its own).
struct Frame {
    /// Its name: the function's, or `torch_dynamo_resume_in_forward_at_11`.
    function: String,
    /// Its argument names.
    inputs: Vec<String>,
    entries: Vec<Entry>,
    compiled: usize,
    attempts: usize,
    frame_state: Vec<Option<ArgState>>,
    run_only: bool,
}

impl Frame {
    fn new(function: String, inputs: Vec<String>) -> Frame {
        let n_inputs = inputs.len();
        Frame {
            function,
            inputs,
            entries: Vec::new(),
            compiled: 0,
            attempts: 0,
            frame_state: vec![None; n_inputs],
            run_only: false,
        }
    }

    fn reset(&mut self) {
        self.entries.clear();
        self.compiled = 0;
        self.attempts = 0;
        self.frame_state = vec![None; self.inputs.len()];
        self.run_only = false;
    }

    /// Keeps `merged` as the automatic-dynamic memory of the arguments `keep` selects (by
    /// position and name); the others keep what they had.
    fn remember(&mut self, merged: &[ArgState], keep: impl Fn(usize, &str) -> bool) {
        for (i, state) in merged.iter().enumerate() {
            if keep(i, &self.inputs[i]) {
                self.frame_state[i] = Some(state.clone());
            }
        }
    }

    /// The automatic-dynamic memory with `call` merged in.
    fn merged(&self, call: &CallShapes) -> Vec<ArgState> {
        self.frame_state
            .iter()
            .zip(&call.args)
            .map(|(state, (_, value))| merge_state(state.as_ref(), value))
            .collect()
    }
}

/// Which resume function a break leads to: the break's place and, for a branch, its way,
/// with the names of the arguments Python hands it.
type ResumeKey = (u32, u32, Option<bool>, Vec<String>);

/// The cache of one code object, shared by every wrapper that compiles it.
pub struct CodeCache {
    program: Program,
    entry: EntryPoint,
    /// Frame 0 is the compiled function; the others resume after its graph breaks.
    frames: Vec<Frame>,
    resumes: BTreeMap<ResumeKey, usize>,
    /// The automatic-dynamic memory of resume functions' arguments, by function name and
    /// argument: PyTorch keys it by the code's file, first line and name, which the resume
    /// functions of a branch's two ways share.
    resume_states: BTreeMap<(String, String), ArgState>,
    /// What Python held at each break of the last call (the values its resume functions'
    /// graphs run on).
    last_points: Vec<BreakPoint>,
    /// Every call so far.
    pub events: Vec<CallEvent>,
}

impl CodeCache {
    /// An empty cache for `entry` of `program`.
    pub fn new(program: Program, entry: EntryPoint) -> CodeCache {
        let frame = Frame::new(entry.function.0.clone(), entry.inputs.clone());
        CodeCache {
            program,
            entry,
            frames: vec![frame],
            resumes: BTreeMap::new(),
            resume_states: BTreeMap::new(),
            last_points: Vec::new(),
            events: Vec::new(),
        }
    }

    /// `torch._dynamo.reset()`: no entries, no automatic-dynamic state, compile ids from 0
    /// again (the calls so far stay in `events`).
    pub fn reset(&mut self) {
        self.frames.truncate(1);
        self.frames[0].reset();
        self.resumes.clear();
        self.resume_states.clear();
        self.last_points.clear();
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The compiled function's entry point.
    pub fn entry_point(&self) -> &EntryPoint {
        &self.entry
    }

    /// Loads a weights file (`safetensors.torch.save_file(model.state_dict(), path)`'s
    /// bytes) into the entry module's parameters and buffers, matched by `state_dict` name:
    /// before the first call, since captures take the values they find.
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let entry = self.entry.name.clone();
        if !self.events.is_empty() {
            return Err(WeightsError::AfterCall { entry }.into());
        }
        let Some(state) = self.program.state(&self.entry)? else {
            return Err(WeightsError::NotAModule { entry }.into());
        };
        let values = weights::match_state(&entry, &state, bytes)?;
        for (tensor, values) in state.iter().zip(values) {
            tensor.set_values(values);
        }
        Ok(())
    }

    /// An empty cache of the same program and entry: the same module instance, with its
    /// parameters and buffers as they are now (loaded weights included), without running
    /// the file again. What a second `torch.compile` of the same model starts from.
    pub fn sibling(&self) -> CodeCache {
        CodeCache::new(self.program.clone(), self.entry.clone())
    }

    /// Entries in lookup order (most recently used first).
    pub fn entries_mru(&self) -> &[Entry] {
        &self.frames[0].entries
    }

    /// Entries in compile order.
    pub fn entries(&self) -> Vec<&Entry> {
        let mut by_id: Vec<&Entry> = self.frames[0].entries.iter().collect();
        by_id.sort_by_key(|e| e.id);
        by_id
    }

    /// The entry with compile id `id`.
    pub fn entry(&self, id: usize) -> Option<&Entry> {
        self.frames[0].entries.iter().find(|e| e.id == id)
    }

    /// Entry `id` of frame `frame` (0: the function; else a resume function).
    pub fn frame_entry(&self, frame: usize, id: usize) -> Option<&Entry> {
        self.frames.get(frame)?.entries.iter().find(|e| e.id == id)
    }

    /// The frames in id order: (name, entries in compile order).
    pub fn frames(&self) -> Vec<(&str, Vec<&Entry>)> {
        self.frames
            .iter()
            .map(|frame| {
                let mut by_id: Vec<&Entry> = frame.entries.iter().collect();
                by_id.sort_by_key(|e| e.id);
                (frame.function.as_str(), by_id)
            })
            .collect()
    }

    /// What Python held at each graph break of the last call, in order: the values the
    /// resume functions' graphs of that call run on.
    pub fn last_break_points(&self) -> &[BreakPoint] {
        &self.last_points
    }

    /// How many entries were compiled.
    pub fn compiles(&self) -> usize {
        self.frames[0].compiled
    }

    /// The compile id the next compilation will take: one past every compilation tried so
    /// far, failed ones included (PyTorch's `frame/compile` counter).
    pub fn next_compile_id(&self) -> usize {
        self.frames[0].attempts
    }

    /// Calls the function through wrapper `wrapper` (with its `config`). A function whose
    /// graph ends at a graph break runs on seeded random values of these sizes (see
    /// [`CodeCache::call_values`]).
    pub fn call(
        &mut self,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        clock: Clock<'_>,
    ) -> &CallEvent {
        self.call_values(wrapper, config, call, marks, None, clock)
    }

    /// [`CodeCache::call`] with the call's values: where the function's graph ends at a
    /// graph break, Python runs on to the return with them (`frontend::probe`), and each
    /// break leads to a call of its resume function's own cache. The values are made only
    /// there.
    pub fn call_values(
        &mut self,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        values: Option<CallValues<'_>>,
        clock: Clock<'_>,
    ) -> &CallEvent {
        self.last_points.clear();
        let mut event = self.call_frame(0, wrapper, config, call, marks, None, clock);
        let breaks = match event.entry.and_then(|id| self.frame_entry(0, id)) {
            Some(entry) if event.action != Action::Eager => entry.graph_break.is_some(),
            _ => false,
        };
        if breaks {
            // Checked on the sizes, before any value is made or read.
            let too_large = call.tensors().find_map(|(input, dims)| {
                let elements = crate::graph::element_count(dims);
                let negative = dims.iter().any(|&d| d < 0);
                (negative || elements > frontend::PROBE_MAX_ELEMENTS).then(|| {
                    FrontendError::ProbeTooLarge {
                        input: input.to_string(),
                        elements,
                        limit: frontend::PROBE_MAX_ELEMENTS,
                    }
                })
            });
            match too_large {
                Some(err) => {
                    event.fail(&err);
                }
                None => {
                    let values = match values {
                        Some(values) => values(),
                        None => random_values(call),
                    };
                    self.call_resumes(&mut event, wrapper, config, &values, clock);
                }
            }
        }
        self.events.push(event);
        self.events.last().expect("just pushed")
    }

    /// Runs Python through the call's graph breaks and calls each resume function.
    fn call_resumes(
        &mut self,
        event: &mut CallEvent,
        wrapper: usize,
        config: &CompileConfig,
        values: &[CallArg],
        clock: Clock<'_>,
    ) {
        let probed = frontend::probe(&self.program, &self.entry, values);
        let (points, mut printed) = match probed {
            Ok(probed) => (probed.points, probed.printed),
            Err(err) => {
                event.fail(&err);
                return;
            }
        };
        // Kept before the resume functions compile: their tracer reads which of a break's
        // values Python holds on its stack.
        self.last_points = points.clone();
        for (index, point) in points.iter().enumerate() {
            let key: ResumeKey = (
                point.graph_break.span.line,
                point.graph_break.span.col,
                point.graph_break.taken,
                point.arg_names(),
            );
            let frame = match self.resumes.get(&key) {
                Some(&frame) => frame,
                None => {
                    let names = point.arg_names();
                    self.frames
                        .push(Frame::new(point.graph_break.resume_name(), names));
                    self.resumes.insert(key, self.frames.len() - 1);
                    self.frames.len() - 1
                }
            };
            let args = point
                .tensors
                .iter()
                .map(|(name, t, dtype)| {
                    let dims = t.shape.iter().map(|&d| d as i64).collect();
                    (name.clone(), ArgValue::Tensor(dims, *dtype))
                })
                .chain(
                    point
                        .ints
                        .iter()
                        .map(|(name, v)| (name.clone(), ArgValue::Int(*v))),
                )
                .chain(
                    point
                        .floats
                        .iter()
                        .chain(&point.stack)
                        .map(|(name, v)| (name.clone(), ArgValue::Float(*v))),
                )
                .collect();
            let shapes = CallShapes::with_args(args);
            let resume = Some((values, index + 1));
            let call = self.call_frame(
                frame,
                wrapper,
                config,
                &shapes,
                &CallMarks::default(),
                resume,
                clock,
            );
            let ends_here = call.action != Action::Compile && call.action != Action::Hit
                || call
                    .entry
                    .and_then(|id| self.frame_entry(frame, id))
                    .is_none_or(|entry| entry.graph_break.is_none());
            let (before, after): (Vec<_>, Vec<_>) = printed
                .into_iter()
                .partition(|(passed, _)| *passed <= index + 1);
            printed = after;
            event.breaks.push(ResumeEvent {
                graph_break: point.graph_break.clone(),
                function: self.frames[frame].function.clone(),
                call,
                printed: before.into_iter().map(|(_, output)| output).collect(),
            });
            if ends_here {
                break;
            }
        }
    }

    /// One frame's lookup, then compile or eager fallback, as Dynamo does per code object.
    /// `resume` gives a resume function's call values and graph index.
    #[expect(
        clippy::too_many_arguments,
        reason = "a frame's call is all of these, none optional"
    )]
    fn call_frame(
        &mut self,
        frame: usize,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        resume: Option<(&[CallArg], usize)>,
        clock: Clock<'_>,
    ) -> CallEvent {
        let marked: Vec<bool> = self.frames[frame]
            .inputs
            .iter()
            .map(|name| marks.dynamic.iter().any(|m| &m.input == name))
            .collect();
        let mut event = CallEvent {
            shapes: call.args.clone(),
            wrapper,
            action: Action::Hit,
            entry: None,
            compile_id: None,
            reasons: Vec::new(),
            error: None,
            error_message: None,
            error_span: None,
            error_in_program: false,
            warning: None,
            guard_ms: 0.0,
            compile_ms: 0.0,
            frame,
            breaks: Vec::new(),
        };
        let started = clock();
        // The module attributes any entry guards, as they are now (read once per call).
        let attributes = self.attributes_now(&self.frames[frame].entries);
        let with_attributes;
        let call = if attributes.is_empty() {
            call
        } else {
            with_attributes = call.clone().with_attributes(attributes);
            &with_attributes
        };
        let mut hit = None;
        let code = &mut self.frames[frame];
        for (position, entry) in code.entries.iter_mut().enumerate() {
            if entry.wrapper != wrapper {
                event
                    .reasons
                    .push((entry.id, backend_mismatch(entry.wrapper, wrapper)));
                continue;
            }
            let used;
            let shapes = match &entry.used {
                Some(positions) => {
                    used = call.select(positions);
                    &used
                }
                None => call,
            };
            // The fast check re-sorts what failed to the front; the reason is the verbose
            // check's, in that new order, as PyTorch prints it.
            match entry.guards.check_and_learn(shapes, &marked) {
                Ok(()) => {
                    hit = Some(position);
                    break;
                }
                Err(failure) => {
                    let failure = entry.guards.check(shapes, &marked).err().unwrap_or(failure);
                    event
                        .reasons
                        .push((entry.id, entry.guards.reason(&failure)));
                }
            }
        }
        event.guard_ms = clock() - started;
        if let Some(position) = hit {
            let entry = code.entries.remove(position);
            event.entry = Some(entry.id);
            event.reasons.clear();
            code.entries.insert(0, entry);
            return event;
        }
        if code.run_only || code.entries.len() >= config.recompile_limit {
            event.action = Action::Eager;
            if !code.run_only {
                let last = event
                    .reasons
                    .first()
                    .map(|(id, r)| format!("{frame}/{id}: {r}"))
                    .unwrap_or_default();
                event.warning = Some(format!(
                    "torch._dynamo hit config.recompile_limit ({})\n   function: '{}' (model.py:{})\n   last reason: {last}\nTo log all recompilation reasons, use TORCH_LOGS=\"recompiles\".",
                    config.recompile_limit, code.function, self.entry.function.1
                ));
                code.run_only = true;
            }
            if frame != 0 {
                // The eager run of a resume function's graph alone is not modelled: the
                // call stops here, saying so.
                event.action = Action::Error;
                event.error = Some(format!(
                    "{} reached the recompile limit; running a resume function eagerly is not modelled yet",
                    code.function
                ));
                event.error_message = Some(Message::new(
                    MessageId::ResumeAtRecompileLimit,
                    &[&code.function],
                ));
                return event;
            }
            // The call runs eagerly, and PyTorch raises what the eager run raises: the call
            // is an error then, not an eager call (no entry is added either way).
            if let Err(err) = self.eager_capture(call, false) {
                event.fail(&err);
            }
            return event;
        }
        let started = clock();
        event.compile_id = Some(self.frames[frame].attempts);
        let compiled = match resume {
            None => self.compile(wrapper, config, call, marks, &marked),
            Some((values, index)) => {
                self.compile_resume(frame, wrapper, config, call, values, index)
            }
        };
        let code = &mut self.frames[frame];
        match compiled {
            Ok(entry) => {
                event.action = Action::Compile;
                event.entry = Some(entry.id);
                code.entries.insert(0, entry);
            }
            Err(err) => {
                event.fail(&err);
            }
        }
        code.attempts += 1;
        event.compile_ms = clock() - started;
        event
    }

    /// The current values of the module attributes that `entries` guard, each path once.
    fn attributes_now(&self, entries: &[Entry]) -> Vec<(AttributePath, Option<ArgValue>)> {
        let mut paths: Vec<AttributePath> = Vec::new();
        for path in entries
            .iter()
            .flat_map(|entry| entry.guards.attribute_paths())
        {
            if !paths.contains(path) {
                paths.push(path.clone());
            }
        }
        if paths.is_empty() {
            return Vec::new();
        }
        let values = frontend::read_attributes(&self.program, &self.entry, &paths);
        paths.into_iter().zip(values).collect()
    }

    /// `call` with the module attributes that entry `id` of the compiled function guards,
    /// as they are now (a check of a call that is not made, as the page's guard view does).
    pub fn with_attributes_now(&self, id: usize, call: CallShapes) -> CallShapes {
        match self.entry(id) {
            Some(entry) => call.with_attributes(self.attributes_now(std::slice::from_ref(entry))),
            None => call,
        }
    }

    /// Traces the function for these sizes under `config` and produces its guards.
    fn compile(
        &mut self,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        marked: &[bool],
    ) -> Result<Entry, FrontendError> {
        // PyTorch merges an input into the automatic-dynamic memory when the trace first
        // looks at it: all of them for a trace that finishes, only those looked at before the
        // failure for one that raises. (Whether the Python read an int before failing is not
        // seen here, so a failed trace leaves the ints' memory as it was.)
        let merged = self.frames[0].merged(call);
        let mut env = ShapeEnv::new();
        if config.dynamic == DynamicMode::True {
            env.lift_dynamic();
        }
        let traced = match trace_args(&mut env, &merged, call, marks, config.dynamic) {
            Ok(traced) => traced,
            Err((failing, err)) => {
                self.frames[0].remember(&merged, |i, _| i <= failing);
                return Err(err.into());
            }
        };
        let segment = match frontend::capture(&self.program, &self.entry, &traced, &mut env) {
            Ok(segment) => segment,
            Err(err) => {
                let looked_at = env.realised();
                self.frames[0].remember(&merged, |_, name| looked_at.contains(name));
                return Err(err);
            }
        };
        self.frames[0].remember(&merged, |_, _| true);
        Ok(self.new_entry(0, wrapper, config, segment, env, traced, marked, None))
    }

    /// Traces the graph after break `index - 1` (a resume function's, frame `frame`) for
    /// its arguments `call`, forward running eagerly on the call's `values` to the break.
    /// Tensors are traced as the mode and automatic dynamic say when the graph first uses
    /// them; ints are constants (Python holds them as plain ints across the break).
    fn compile_resume(
        &mut self,
        frame: usize,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        values: &[CallArg],
        index: usize,
    ) -> Result<Entry, FrontendError> {
        let function = self.frames[frame].function.clone();
        let merged: Vec<ArgState> = call
            .args
            .iter()
            .map(|(name, value)| {
                let state = self.resume_states.get(&(function.clone(), name.clone()));
                merge_state(state, value)
            })
            .collect();
        let args = call.args.clone();
        let states = merged.clone();
        let stacks: Vec<String> = self
            .last_points
            .get(index - 1)
            .map(|point| point.stack.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default();
        let dynamic = config.dynamic;
        let tracer: frontend::ResumeTracer = Box::new(move |env, name| {
            let position = args
                .iter()
                .position(|(arg, _)| arg == name)
                .expect("the break's arguments are the frame's");
            let (name, value) = &args[position];
            // Python holds the frame's numbers as plain ints and floats, which the graph
            // bakes in; the value a break hands back (`___stack0`) may be a symbol.
            let on_stack = stacks.contains(name);
            let dynamic = match value {
                ArgValue::Int(_) | ArgValue::Float(_) if !on_stack => DynamicMode::False,
                _ => dynamic,
            };
            trace_arg(
                env,
                &states[position],
                name,
                value,
                &CallMarks::default(),
                dynamic,
            )
        });
        let mut env = ShapeEnv::new();
        if dynamic == DynamicMode::True {
            env.lift_dynamic();
        }
        let segment = match frontend::capture_resume(
            &self.program,
            &self.entry,
            values,
            index,
            tracer,
            &mut env,
        ) {
            Ok(segment) => segment,
            Err(err) => {
                let looked_at = env.realised();
                self.remember_resume(&function, call, &merged, |name| looked_at.contains(name));
                return Err(err);
            }
        };
        let used_names: Vec<&str> = segment
            .resume_args
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        self.remember_resume(&function, call, &merged, |name| used_names.contains(&name));
        let mut used = Vec::new();
        let mut traced = Vec::new();
        for (position, (name, _)) in call.args.iter().enumerate() {
            if let Some((_, arg)) = segment.resume_args.iter().find(|(n, _)| n == name) {
                used.push(position);
                traced.push((name.clone(), arg.clone()));
            }
        }
        let marked = vec![false; traced.len()];
        Ok(self.new_entry(
            frame,
            wrapper,
            config,
            segment,
            env,
            traced,
            &marked,
            Some(used),
        ))
    }

    /// Keeps `merged` as the automatic-dynamic memory of resume function `function`'s
    /// arguments that `keep` selects by name.
    fn remember_resume(
        &mut self,
        function: &str,
        call: &CallShapes,
        merged: &[ArgState],
        keep: impl Fn(&str) -> bool,
    ) {
        for ((name, _), state) in call.args.iter().zip(merged) {
            if keep(name) {
                self.resume_states
                    .insert((function.to_string(), name.clone()), state.clone());
            }
        }
    }

    /// A new entry of frame `frame` from its traced graph: guards, kernels, and how its
    /// arguments look.
    #[expect(
        clippy::too_many_arguments,
        reason = "an entry is made of all of these"
    )]
    fn new_entry(
        &mut self,
        frame: usize,
        wrapper: usize,
        config: &CompileConfig,
        segment: frontend::Segment,
        env: ShapeEnv,
        traced: Vec<(String, TracedArg)>,
        marked: &[bool],
        used: Option<Vec<usize>>,
    ) -> Entry {
        let graph = segment.graph;
        let lifted: Vec<LiftedArg> = graph
            .lifted
            .iter()
            .map(|lifted| LiftedArg {
                holder: lifted.holder.clone(),
                shape: graph.shape(lifted.node).clone(),
                sizes: lifted.sizes.clone(),
                dtype: graph.node(lifted.node).dtype,
            })
            .collect();
        let guards =
            GuardSet::produce(&env, &traced, &lifted, marked).with_attributes(&segment.attributes);
        let compiled = compile::compile(&graph, &|sym| env.range(sym), &CompileOptions::ENTRY);
        let mut inputs = Vec::new();
        let mut values = Vec::new();
        for (name, arg) in &traced {
            match arg {
                TracedArg::Tensor(shape, _) => inputs.push((
                    name.clone(),
                    shape.iter().map(|d| dim_spec(&env, d)).collect(),
                )),
                TracedArg::Int(expr) => {
                    values.push((name.clone(), ValueSpec::Int(dim_spec(&env, expr))))
                }
                TracedArg::Bool(b) => values.push((name.clone(), ValueSpec::Bool(*b))),
                TracedArg::Float { value, symbolic } => values.push((
                    name.clone(),
                    ValueSpec::Float((!symbolic).then_some(*value)),
                )),
            }
        }
        let code = &mut self.frames[frame];
        let id = code.attempts;
        code.compiled += 1;
        Entry {
            id,
            wrapper,
            mode: config.dynamic,
            graph,
            env,
            guards,
            inputs,
            values,
            compiled,
            graph_break: segment.graph_break,
            frame,
            marked: marked.to_vec(),
            used,
        }
    }

    /// Captures a graph for an eager call (recompile limit reached), not cached: with every
    /// input dim symbolic when `symbolic` (so its kernels serve any later eager call with the
    /// same ops), else at the call's static sizes. Returns the graph and the `ShapeEnv`
    /// whose ranges it was traced under.
    pub fn eager_capture(
        &self,
        call: &CallShapes,
        symbolic: bool,
    ) -> Result<(Graph, ShapeEnv), FrontendError> {
        let policy = if symbolic {
            DimPolicy::Dynamic
        } else {
            DimPolicy::Static
        };
        let mut env = ShapeEnv::new();
        let mut traced = Vec::with_capacity(call.args.len());
        for (name, value) in &call.args {
            let arg = match value {
                ArgValue::Tensor(dims, dtype) => {
                    let mut shape = Vec::with_capacity(dims.len());
                    for (dim, &size) in dims.iter().enumerate() {
                        let source = DimSource::dim(name, dim);
                        shape.push(env.add_input_dim(source, size, policy, None, "eager")?);
                    }
                    TracedArg::Tensor(shape, *dtype)
                }
                ArgValue::Int(int) => {
                    TracedArg::Int(env.add_input_int(name, *int, symbolic, "eager"))
                }
                ArgValue::Bool(b) => TracedArg::Bool(*b),
                ArgValue::Float(value) => TracedArg::Float {
                    value: *value,
                    symbolic: false,
                },
            };
            traced.push((name.clone(), arg));
        }
        let segment = frontend::capture(&self.program, &self.entry, &traced, &mut env)?;
        if let Some(graph_break) = segment.graph_break {
            // PyTorch runs the whole function eagerly here, Python between the graphs
            // included; Tailor's eager kernels are one graph's.
            return Err(FrontendError::Break {
                span: graph_break.span,
                what: "in a call past the recompile limit".into(),
                note: "PyTorch runs such a call eagerly, through its breaks; Tailor's eager run covers a function without breaks".into(),
            });
        }
        Ok((segment.graph, env))
    }
}

impl Entry {
    /// Whether the entry was compiled for a `mark_dynamic`-ed input `i`.
    pub fn was_marked(&self, input: usize) -> bool {
        self.marked.get(input).copied().unwrap_or(false)
    }
}

/// The arguments of a call as the trace receives them, each dim or int given its policy:
/// `mark_dynamic`, `mark_static`, automatic dynamic (from `merged`, the memory with this
/// call merged in) or the mode's default. On an error, the argument it happened at.
fn trace_args(
    env: &mut ShapeEnv,
    merged: &[ArgState],
    call: &CallShapes,
    marks: &CallMarks,
    dynamic: DynamicMode,
) -> Result<Vec<(String, TracedArg)>, (usize, ShapeError)> {
    call.args
        .iter()
        .enumerate()
        .map(|(i, (name, value))| {
            trace_arg(env, &merged[i], name, value, marks, dynamic)
                .map(|arg| (name.clone(), arg))
                .map_err(|err| (i, err))
        })
        .collect()
}

/// One argument of [`trace_args`], with its automatic-dynamic memory `merged`.
fn trace_arg(
    env: &mut ShapeEnv,
    merged: &ArgState,
    name: &str,
    value: &ArgValue,
    marks: &CallMarks,
    dynamic: DynamicMode,
) -> Result<TracedArg, ShapeError> {
    let automatic = dynamic != DynamicMode::False;
    Ok(match value {
        ArgValue::Tensor(dims, dtype) => {
            let mut shape = Vec::with_capacity(dims.len());
            for (dim, &size) in dims.iter().enumerate() {
                let mark = marks
                    .dynamic
                    .iter()
                    .find(|m| m.input == name && m.dim == dim);
                let fixed = marks.fixed.iter().any(|(n, d)| n == name && *d == dim);
                let changed = matches!(
                    merged,
                    ArgState::Tensor(dims) if dims[dim] == DimState::Dynamic
                );
                let (policy, why) = if mark.is_some() {
                    (DimPolicy::Dynamic, "mark_dynamic")
                } else if fixed {
                    (DimPolicy::Static, "mark_static")
                } else if automatic && changed {
                    (
                        DimPolicy::Dynamic,
                        "automatic dynamic: this size changed between compilations",
                    )
                } else if dynamic == DynamicMode::True {
                    (DimPolicy::Duck, "dynamic=True")
                } else if dynamic == DynamicMode::False {
                    (DimPolicy::Static, "dynamic=False")
                } else {
                    (
                        DimPolicy::Static,
                        "dynamic=None: static until this size changes",
                    )
                };
                let mark = mark.map(|m| Mark {
                    min: m.min,
                    max: m.max,
                });
                let source = DimSource::dim(name, dim);
                shape.push(env.add_input_dim(source, size, policy, mark, why)?);
            }
            TracedArg::Tensor(shape, *dtype)
        }
        ArgValue::Int(int) => {
            let changed = *merged == ArgState::Int(DimState::Dynamic);
            let (dynamic, why) = if automatic && changed {
                (
                    true,
                    "automatic dynamic: this int changed between compilations",
                )
            } else {
                match dynamic {
                    DynamicMode::True => (true, "dynamic=True"),
                    DynamicMode::False => (false, "dynamic=False"),
                    DynamicMode::Auto => {
                        (false, "dynamic=None: an int is a constant until it changes")
                    }
                }
            };
            TracedArg::Int(env.add_input_int(name, *int, dynamic, why))
        }
        ArgValue::Bool(b) => TracedArg::Bool(*b),
        // As an int: a constant until it changes (automatic dynamic), or under
        // dynamic=True, a symbolic float, which the graph takes as a 0-d input.
        ArgValue::Float(value) => {
            let changed = *merged == ArgState::Float(DimState::Dynamic);
            let symbolic = dynamic == DynamicMode::True || (automatic && changed);
            TracedArg::Float {
                value: *value,
                symbolic,
            }
        }
    })
}

/// Seeded random values of a call's sizes: what Python runs on between the graphs of a
/// function that breaks when the caller gives sizes only.
fn random_values(call: &CallShapes) -> Vec<CallArg> {
    call.args
        .iter()
        .map(|(name, value)| match value {
            ArgValue::Tensor(dims, dtype) => {
                let shape: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
                let tensor = crate::graph::random_inputs(&[(name.clone(), shape)], 0).remove(0);
                CallArg::Tensor(tensor.as_random(*dtype), *dtype)
            }
            ArgValue::Int(v) => CallArg::Int(*v),
            ArgValue::Bool(b) => CallArg::Bool(*b),
            ArgValue::Float(v) => CallArg::Float(*v),
        })
        .collect()
}

fn dim_spec(env: &ShapeEnv, dim: &Expr) -> DimSpec {
    let dim = env.replace(dim);
    match dim.as_int() {
        Some(v) => DimSpec::Static(v),
        None => {
            let range = dim.bounds(&|s| env.range(s));
            DimSpec::Dynamic {
                sym: dim.to_string(),
                min: range.lo,
                max: range.hi,
            }
        }
    }
}

/// PyTorch 2.15's reason for an entry another `torch.compile` call made (each call has its
/// own backend object; Tailor's "ids" are the wrappers' numbers).
fn backend_mismatch(cached: usize, new: usize) -> String {
    const BACKEND: &str = "_TorchCompileInductorWrapper";
    format!(
        "BACKEND_MATCH failure: torch.compile detected different backend callables. Cached backend: {BACKEND} (id={cached:#x}). New backend: {BACKEND} (id={new:#x}). If this is unexpected, wrap your backend in functools.partial (or reuse the same cached backend) to avoid creating a new backend function each time. More details: https://github.com/pytorch/pytorch/issues/168373"
    )
}

/// PyTorch's `_merge_atom`: equal sizes or ints stay, a different or already-dynamic one
/// becomes dynamic, and a rank change (or an argument of another type) makes every dim
/// dynamic.
fn merge_state(previous: Option<&ArgState>, value: &ArgValue) -> ArgState {
    let merge = |state: &DimState, now: i64| match state {
        DimState::Seen(v) if *v == now => DimState::Seen(now),
        _ => DimState::Dynamic,
    };
    match (previous, value) {
        (_, ArgValue::Bool(_)) => ArgState::Bool,
        (None, ArgValue::Tensor(dims, _)) => {
            ArgState::Tensor(dims.iter().map(|&d| DimState::Seen(d)).collect())
        }
        (Some(ArgState::Tensor(previous)), ArgValue::Tensor(dims, _))
            if previous.len() == dims.len() =>
        {
            ArgState::Tensor(
                previous
                    .iter()
                    .zip(dims)
                    .map(|(s, &d)| merge(s, d))
                    .collect(),
            )
        }
        (Some(_), ArgValue::Tensor(dims, _)) => {
            ArgState::Tensor(vec![DimState::Dynamic; dims.len()])
        }
        (None, ArgValue::Int(v)) => ArgState::Int(DimState::Seen(*v)),
        (Some(ArgState::Int(state)), ArgValue::Int(v)) => ArgState::Int(merge(state, *v)),
        (Some(_), ArgValue::Int(_)) => ArgState::Int(DimState::Dynamic),
        (None, ArgValue::Float(v)) => ArgState::Float(DimState::Seen(v.to_bits() as i64)),
        (Some(ArgState::Float(state)), ArgValue::Float(v)) => {
            ArgState::Float(merge(state, v.to_bits() as i64))
        }
        (Some(_), ArgValue::Float(_)) => ArgState::Float(DimState::Dynamic),
    }
}
