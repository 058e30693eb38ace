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
//!
//! Here: the policy. `event.rs`: what a call did; `entry.rs`: a compiled entry;
//! `capture.rs`: the front half of compiling one (policies, trace, guards, kernels).

mod capture;
mod entry;
mod event;

use crate::config::{CallMarks, CompileConfig};
use crate::error::Error;
use crate::frontend::{self, BreakPoint, CallArg, EntryPoint, FrontendError, Program};
use crate::guard::{ArgValue, AttributePath, CallShapes};
use crate::message::{Message, MessageId};
use crate::weights::{self, WeightsError};
use capture::random_values;
use entry::dim_spec;
pub use entry::{DimSpec, Entry, ValueSpec};
pub use event::{Action, CallEvent, ResumeEvent};
use std::collections::BTreeMap;
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
    /// Dynamo skips the code for good: a trace of it recorded no op.
    skipped: bool,
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
            skipped: false,
        }
    }

    fn reset(&mut self) {
        self.entries.clear();
        self.compiled = 0;
        self.attempts = 0;
        self.frame_state = vec![None; self.inputs.len()];
        self.run_only = false;
        self.skipped = false;
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

/// Which resume function a break leads to: the break's place (and the line of the call it
/// is inside, for a break in a function forward calls) and, for a branch, its way, with the
/// names of the arguments Python hands it.
type ResumeKey = (u32, u32, Option<u32>, Option<bool>, Vec<String>);

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
                point.graph_break.call_line,
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
            skipped: None,
            guard_ms: 0.0,
            compile_ms: 0.0,
            frame,
            breaks: Vec::new(),
        };
        if self.frames[frame].skipped {
            event.action = Action::Eager;
            event.skipped = Some(SKIPPED_FRAME.into());
            if let Err(err) = self.eager_capture(call, false) {
                event.fail(&err);
            }
            return event;
        }
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
            let used;
            let shapes = match &entry.used {
                Some(positions) => {
                    used = call.select(positions);
                    &used
                }
                None => call,
            };
            if !entry.config.same_backend(config) {
                // The entry is not tried; its reason is the first guard that fails, and the
                // backend only where every guard passes (PyTorch's
                // `get_guard_fail_reason_helper`).
                let reason = match entry.guards.check(shapes, &marked) {
                    Err(failure) => entry.guards.reason(&failure),
                    Ok(()) => backend_mismatch(entry, wrapper, config),
                };
                event.reasons.push((entry.id, reason));
                continue;
            }
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
            Ok(entry) if resume.is_none() && entry.traced_nothing() => {
                // Dynamo's `SkipFrame`: nothing to compile, so the code runs eagerly from now
                // on; this call too.
                event.action = Action::Eager;
                event.skipped = Some(SKIPPED_FRAME.into());
                code.skipped = true;
                code.attempts += 1;
                event.compile_ms = clock() - started;
                if let Err(err) = self.eager_capture(call, false) {
                    event.fail(&err);
                }
                return event;
            }
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

    /// The entry whose graph alone ran `event`'s call: none for a call run eagerly or
    /// through graph breaks (what AOTAutograd's stamps are made from).
    pub fn sole_entry(&self, event: &CallEvent) -> Option<&Entry> {
        event
            .entry
            .filter(|_| event.breaks.is_empty() && event.action != Action::Eager)
            .and_then(|id| self.frame_entry(event.frame, id))
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
}

/// PyTorch 2.15's words for a frame it skips because its trace recorded no op.
const SKIPPED_FRAME: &str =
    "No ops traced for the FX graph. `torch.compile` will skip the frame and fall back to eager.";

/// PyTorch 2.15's reason for an entry a `torch.compile` call with an unequal backend made
/// (another back end, mode, options or `dynamic=`; Tailor's "ids" are the wrappers'
/// numbers): `cached`'s wrapper against wrapper `new`, whose settings are `config`.
fn backend_mismatch(cached: &Entry, new: usize, config: &CompileConfig) -> String {
    format!(
        "BACKEND_MATCH failure: torch.compile detected different backend callables. Cached backend: {} (id={:#x}). New backend: {} (id={new:#x}). If this is unexpected, wrap your backend in functools.partial (or reuse the same cached backend) to avoid creating a new backend function each time. More details: https://github.com/pytorch/pytorch/issues/168373",
        cached.config.backend.wrapper_text(cached.config.dynamic),
        cached.wrapper,
        config.backend.wrapper_text(config.dynamic),
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
