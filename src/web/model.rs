//! `Model`: one `torch.compile` wrapper of a model, as JS sees it, with its guard cache.
//!
//! Input: calls from JS (sizes with optional data), through one or more wrappers that share
//! a cache (`model.wrap(options)`, the material's `model_dynamic` / `model_static`), and
//! optionally a weights file's bytes (`loadWeights`, kept for every cache rebuilt). Output:
//! per call the action, the entry, PyTorch's failure reasons, the outputs of the entry's
//! kernels run on the device (optionally checked against the CPU reference) and the time of
//! each phase; the entries with their guards. Invariants: every wrapper of one model sees
//! the same entries and the same recompile limit, as in PyTorch (pytorch-semantics.md §12),
//! and a failed call adds no entry; an entry is compiled once and the executor keeps its
//! kernels; the guards and the compile happen before `call` returns, and on the GPU the
//! kernels are submitted then too unless an earlier call still holds the device (only
//! their read-back is awaited, while the call's record is built).

use super::breaks;
use super::compilation::Compilation;
use super::convert::{self, call_inputs, from_error, js_error, set, to_js};
use super::driven;
use super::kernels;
use super::view::{self, CallTimes};
use crate::cache::{CallEvent, CodeCache};
use crate::config::{CallMarks, CompileConfig};
use crate::frontend::GradMode;
use crate::runtime::RunError;
use crate::session::Session;
use crate::session::executor::{self, Backend, Executor, Job, Outcome, RunOptions};
use crate::spec;
use crate::symbolic::SymbolNaming;
use js_sys::Promise;
use std::cell::RefCell;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use wasm_bindgen::prelude::*;

/// The state every wrapper of one model shares.
pub(super) struct Shared {
    /// The source, kept so that `reset` can rebuild the cache.
    pub source: String,
    /// The compiled class or function.
    pub entry: Option<String>,
    /// The weights file's bytes `loadWeights` took, loaded again into every rebuilt cache.
    pub weights: Option<Rc<[u8]>>,
    /// The guard cache, and the executor that runs calls and keeps each entry's kernels
    /// (absent while one of its calls runs them).
    pub session: Session,
    /// Building and run time of each call in `session.cache.events` (0 for errors).
    pub times: Vec<CallTimes>,
    /// Bumped by `reset`: a run that finishes after it records nothing.
    pub generation: u64,
    /// How many wrappers exist (the next one's index).
    pub wrappers: usize,
}

/// A compiled model: `torch.compile(model, dynamic=…)` plus its marks.
#[wasm_bindgen]
pub struct Model {
    shared: Rc<RefCell<Shared>>,
    backend: Rc<Backend>,
    wrapper: usize,
    config: CompileConfig,
    marks: CallMarks,
    /// How this wrapper's views name symbols.
    symbol_names: SymbolNaming,
}

/// A call whose guards and compilation are done and whose kernels are about to run.
struct Pending {
    index: usize,
    generation: u64,
    /// What the cache recorded of the call.
    event: CallEvent,
    /// The function's run, then those of the resume functions after its graph breaks.
    jobs: Vec<Job>,
    /// What AOTAutograd stamps on the call's tensors, as `{ inputs, outputs }`.
    stamps: JsValue,
}

/// `call`'s options: `{ check?: false, timing?: false }`.
fn call_options(options: &JsValue) -> RunOptions {
    let flag = |key: &str| {
        options.is_object()
            && js_sys::Reflect::get(options, &key.into()).is_ok_and(|v| v.is_truthy())
    };
    RunOptions {
        check: flag("check"),
        timing: flag("timing"),
    }
}

impl Model {
    /// The first wrapper of a freshly loaded model.
    pub(super) fn new(
        source: &str,
        options: &JsValue,
        backend: Rc<Backend>,
    ) -> Result<Model, JsValue> {
        let entry = convert::entry_option(options)?;
        if let Some(bytes) = convert::memory_budget_option(options)? {
            crate::graph::set_memory_budget(bytes);
        }
        let cache = super::load(source, entry.as_deref()).map_err(|err| from_error(&err))?;
        let parsed = convert::compile_options(options, &cache.entry_point().inputs)?;
        Ok(Model {
            shared: Rc::new(RefCell::new(Shared {
                source: source.to_string(),
                entry,
                weights: None,
                session: Session::new(cache, Rc::clone(&backend), Rc::new(super::now_ms)),
                times: Vec::new(),
                generation: 0,
                wrappers: 1,
            })),
            backend,
            wrapper: 0,
            config: parsed.config,
            marks: parsed.marks,
            symbol_names: parsed.symbol_names,
        })
    }

    /// A fresh cache of the source with `weights` loaded (the shared state is unchanged when
    /// they do not fit).
    fn rebuild(&self, weights: Option<Rc<[u8]>>) -> Result<(), JsValue> {
        let mut shared = self.shared.borrow_mut();
        let cache = load_with(&shared.source, shared.entry.as_deref(), weights.as_deref())?;
        shared.session.cache = cache;
        shared.weights = weights;
        shared.session.executor.clear();
        shared.times.clear();
        shared.generation += 1;
        Ok(())
    }

    fn input_names(&self) -> Vec<String> {
        self.shared
            .borrow()
            .session
            .cache
            .entry_point()
            .inputs
            .clone()
    }

    /// The synchronous half of a call: guards, compilation, the kernels, the reference.
    fn start_call(&self, inputs: &JsValue, options: &JsValue) -> Result<Pending, JsValue> {
        let (propagated, grad) = convert::autograd_options(options, &self.input_names())?;
        let options = call_options(options);
        let names = self.input_names();
        let (call, data) = call_inputs(inputs, &names)?;
        spec::check_marks(&call, &self.marks.dynamic, &self.marks.fixed)
            .map_err(|err| from_error(&err.into()))?;
        let marks = CallMarks {
            propagated,
            ..self.marks.clone()
        };
        let mut shared = self.shared.borrow_mut();
        let shared = &mut *shared;
        let index = shared.session.cache.events.len();
        let inputs = executor::call_inputs(&call, data, index as u64).map_err(|err| match err {
            RunError::NegativeSize { .. } | RunError::InputTooLarge { .. } => {
                convert::js_error_message("input", &err.to_string(), &err.message(), None)
            }
            err => from_error(&err.into()),
        })?;
        let event = shared
            .session
            .decide(self.wrapper, &self.config, &call, &marks, &inputs)
            .clone();
        let stamps = stamps_view(&shared.session.cache, &event, &names, &self.config, grad);
        shared.times.push(CallTimes::default());
        if let Some(failed) = event.first_error() {
            let record = view::call_view(index, &event, CallTimes::default());
            let error = convert::compile_error(failed);
            set(&error, "call", &to_js(&record));
            return Err(error);
        }
        let jobs = shared
            .session
            .start_runs(&event, &call, inputs, options)
            .map_err(|err| from_error(&err))?;
        Ok(Pending {
            index,
            generation: shared.generation,
            event,
            jobs,
            stamps,
        })
    }
}

/// A new cache of `source`'s `entry`, with the weights file `weights` loaded when given.
fn load_with(
    source: &str,
    entry: Option<&str>,
    weights: Option<&[u8]>,
) -> Result<CodeCache, JsValue> {
    let mut cache = super::load(source, entry).map_err(|err| from_error(&err))?;
    if let Some(bytes) = weights {
        cache.load_state(bytes).map_err(|err| from_error(&err))?;
    }
    Ok(cache)
}

/// Runs a started call's kernels, records the times and resolves to the call's result
/// object. The record is built while the device runs the kernels: the first poll submits
/// them where the device is free (`Model::call` makes it before returning) and pends on
/// their read-back.
async fn finish_call(
    shared: Rc<RefCell<Shared>>,
    backend: Rc<Backend>,
    pending: Pending,
) -> Result<JsValue, JsValue> {
    let Pending {
        index,
        generation,
        event,
        jobs,
        stamps,
    } = pending;
    let mut running = pin!(run_jobs(&shared, generation, jobs));
    let first = std::future::poll_fn(|cx| Poll::Ready(running.as_mut().poll(cx))).await;
    let result = to_js(&view::call_view(index, &event, CallTimes::default()));
    let ran = match first {
        Poll::Ready(ran) => ran,
        Poll::Pending => running.await,
    }?;
    let times = CallTimes {
        build: ran.build_ms,
        run: ran.run_ms,
        host: ran.host_ms,
    };
    let mut shared = shared.borrow_mut();
    if shared.generation != generation {
        return Err(js_error(
            "call",
            "the model was reset while this call ran",
            None,
        ));
    }
    shared.times[index] = times;
    let ms = view::TimingView::of(&event, times).to_js();
    kernels::set_run_fields(&result, Some(&ms), backend.name(), &ran);
    set(&result, "stamps", &stamps);
    Ok(result)
}

/// `{ inputs: [['x', 0]], outputs: [[0]] }`: the dims AOTAutograd stamps dynamic after a
/// call that ran one entry's graph (the arguments it saved for backward, with gradients on
/// and every parameter trainable, as a fresh module's are; and what it returned), in the
/// form a later call's `propagated` option takes.
fn stamps_view(
    cache: &CodeCache,
    event: &CallEvent,
    names: &[String],
    config: &CompileConfig,
    grad: bool,
) -> JsValue {
    let stamps = cache
        .sole_entry(event)
        .map(|entry| {
            let grad = grad.then(|| GradMode {
                params: entry.graph.param_paths(),
                args: vec![false; names.len()],
            });
            entry.stamps(names, &config.backend, grad.as_ref())
        })
        .unwrap_or_default();
    let inputs: Vec<(String, usize)> = stamps
        .args
        .iter()
        .flat_map(|(position, dims)| dims.iter().map(|&dim| (names[*position].clone(), dim)))
        .collect();
    to_js(&serde_json::json!({ "inputs": inputs, "outputs": stamps.outputs }))
}

/// Runs a call's jobs in order and gives each one's kernels back to the executor (unless
/// the model was reset meanwhile).
async fn run_jobs(
    shared: &RefCell<Shared>,
    generation: u64,
    jobs: Vec<Job>,
) -> Result<Outcome, JsValue> {
    let mut ran: Option<Outcome> = None;
    for job in jobs {
        let finished = Executor::run(&super::now_ms, job).await;
        let mut kept = shared.borrow_mut();
        let outcome = if kept.generation == generation {
            kept.session.executor.keep(finished)
        } else {
            finished.outcome
        };
        let outcome = outcome.map_err(|err| from_error(&err))?;
        ran = Some(match ran {
            Some(earlier) => earlier.then(outcome),
            None => outcome,
        });
    }
    ran.ok_or_else(|| js_error("call", "the call had nothing to run", None))
}

#[wasm_bindgen]
impl Model {
    /// Calls the compiled model. `inputs` is `{ x: { shape: [8, 64], data?: Float32Array } }`
    /// (missing data is seeded random) or a string such as `'x=8,64'`; `options` is
    /// `{ check?: false, timing?: false, propagated?: [['x', 0]], grad?: true }`
    /// (`propagated`: an earlier result's `stamps.inputs`, for the same tensor passed again). The entry's kernels run on the device (WebGPU or
    /// the CPU backend) and are read back. Resolves to `{ outputs: [{ shape, data }], action,
    /// entry, reasons, warning, breaks (as in `events`), ms: { guard, compile, run, build },
    /// index, shapes, device, maxAbsErr? (with check), kernelMs?, timing? (with timing),
    /// stamps }`;
    /// rejects with a `TailorError` whose `call` is the record of a call that failed to
    /// compile.
    pub fn call(&self, inputs: JsValue, options: JsValue) -> Promise {
        match self.start_call(&inputs, &options) {
            // Polled at once, so that the kernels are submitted before `call` returns
            // (unless an earlier call holds the device), and again by the output's mapping.
            Ok(pending) => driven::promise(finish_call(
                Rc::clone(&self.shared),
                Rc::clone(&self.backend),
                pending,
            )),
            Err(error) => Promise::reject(&error),
        }
    }

    /// Another `torch.compile` wrapper of the same module (`options` as for `compile`): it
    /// shares this model's cache and recompile limit, and reuses another wrapper's entries
    /// only where their settings are equal (`dynamic`, `backend`), as PyTorch compares its
    /// backends (`CompileConfig::same_backend`).
    pub fn wrap(&self, options: JsValue) -> Result<Model, JsValue> {
        let parsed = convert::compile_options(&options, &self.input_names())?;
        let wrapper = {
            let mut shared = self.shared.borrow_mut();
            shared.wrappers += 1;
            shared.wrappers - 1
        };
        Ok(Model {
            shared: Rc::clone(&self.shared),
            backend: Rc::clone(&self.backend),
            wrapper,
            config: parsed.config,
            marks: parsed.marks,
            symbol_names: parsed.symbol_names,
        })
    }

    /// This wrapper's index in the shared cache (0 for the model `compile` returned).
    #[wasm_bindgen(getter)]
    pub fn wrapper(&self) -> usize {
        self.wrapper
    }

    /// The model's input names, in parameter order.
    #[wasm_bindgen(getter)]
    pub fn inputs(&self) -> Vec<String> {
        self.input_names()
    }

    /// The compiled class or function.
    #[wasm_bindgen(getter, js_name = entryName)]
    pub fn entry_name(&self) -> String {
        self.shared
            .borrow()
            .session
            .cache
            .entry_point()
            .name
            .clone()
    }

    /// `'auto'`, `'true'` or `'false'`.
    #[wasm_bindgen(getter)]
    pub fn dynamic(&self) -> String {
        self.config
            .dynamic
            .to_string()
            .to_ascii_lowercase()
            .replace("none", "auto")
    }

    /// The recompile limit (PyTorch's `torch._dynamo.config.recompile_limit`, 8).
    #[wasm_bindgen(getter, js_name = recompileLimit)]
    pub fn recompile_limit(&self) -> usize {
        self.config.recompile_limit
    }

    /// Every call so far, through any wrapper: `[{ index, wrapper, shapes, action, entry,
    /// reasons: [{ entry, text }], error, span, warning, breaks, ms }]`; `breaks` are the
    /// resume functions called after the graph breaks, `[{ frame, function, action, entry,
    /// reasons, error, graphBreak: { line, col, kind, reason, taken, resume } }]`.
    pub fn events(&self) -> JsValue {
        let shared = self.shared.borrow();
        let views: Vec<view::CallView> = shared
            .session
            .cache
            .events
            .iter()
            .zip(&shared.times)
            .enumerate()
            .map(|(i, (event, &times))| view::call_view(i, event, times))
            .collect();
        to_js(&views)
    }

    /// The graphs call `index` went through, as `Compilation.view`'s `graphs`: forward's,
    /// then each resume function's after a graph break. Throws a `TailorError` of kind
    /// `argument` for a call that does not exist.
    pub fn graphs(&self, index: usize) -> Result<JsValue, JsValue> {
        let shared = self.shared.borrow();
        let event = shared.session.cache.events.get(index).ok_or_else(|| {
            convert::bad_argument(format!(
                "index: there are {} calls, none at {index}",
                shared.session.cache.events.len()
            ))
        })?;
        Ok(to_js(&breaks::graph_views(
            &shared.session.cache,
            event,
            self.symbol_names,
        )))
    }

    /// The cache's entries in compile order: `[{ id, wrapper, mode, lookupPosition, inputs,
    /// guards: [{ kind, source, reason, symbolic, provenance, span }] }]`.
    pub fn entries(&self) -> JsValue {
        to_js(&view::entry_views(
            &self.shared.borrow().session.cache,
            self.symbol_names,
        ))
    }

    /// Empties the cache (entries, call log, automatic-dynamic memory) for every wrapper;
    /// loaded weights stay.
    pub fn reset(&self) -> Result<(), JsValue> {
        let weights = self.shared.borrow().weights.clone();
        self.rebuild(weights)
    }

    /// Loads a `.safetensors` file of the model's `state_dict` (PyTorch's
    /// `safetensors.torch.save_file(model.state_dict(), path)`, read by the page; nothing
    /// leaves the browser) into its parameters and buffers, matched by name, for every
    /// wrapper; the cache starts again, since its entries hold the earlier values. Throws a
    /// `TailorError` of kind `weights` that lists missing, unexpected and mis-shaped keys.
    #[wasm_bindgen(js_name = loadWeights)]
    pub fn load_weights(&self, bytes: &[u8]) -> Result<(), JsValue> {
        let mut shared = self.shared.borrow_mut();
        // Before any call the module's state is loaded in place; the file runs again only
        // where calls have compiled entries that hold the earlier values.
        if shared.session.cache.events.is_empty() {
            shared
                .session
                .cache
                .load_state(bytes)
                .map_err(|err| from_error(&err))?;
            shared.weights = Some(Rc::from(bytes));
            return Ok(());
        }
        drop(shared);
        self.rebuild(Some(Rc::from(bytes)))
    }

    /// Drops loaded weights: the parameters are Tailor's initialisation again.
    #[wasm_bindgen(js_name = clearWeights)]
    pub fn clear_weights(&self) -> Result<(), JsValue> {
        self.rebuild(None)
    }

    /// Compiles once for `shapes` (`'x=8,64'` or `{ x: { shape } }`) with this wrapper's
    /// settings, in a cache of its own over the same module (the file is not run again),
    /// and returns the compilation for the step-through.
    pub fn trace(&self, shapes: JsValue) -> Result<Compilation, JsValue> {
        let sibling = self.shared.borrow().session.cache.sibling();
        Compilation::new(
            sibling,
            &self.config,
            &self.marks,
            self.symbol_names,
            &shapes,
            Rc::clone(&self.backend),
        )
    }

    /// Panics inside the module on purpose, so that a host page can test its recovery.
    #[wasm_bindgen(js_name = debugPanic)]
    pub fn debug_panic(&self) {
        panic!("debugPanic: a deliberate panic, to test recovery")
    }

    /// Checks a call's inputs without running it and returns them as `x=8,64`.
    #[wasm_bindgen(js_name = checkShapes)]
    pub fn check_shapes(&self, shapes: JsValue) -> Result<String, JsValue> {
        let (call, _) = call_inputs(&shapes, &self.input_names())?;
        spec::check_marks(&call, &self.marks.dynamic, &self.marks.fixed)
            .map_err(|err| from_error(&err.into()))?;
        Ok(call.to_spec())
    }
}
