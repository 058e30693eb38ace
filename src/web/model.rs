//! `Model`: one `torch.compile` wrapper of a model, as JS sees it, with its guard cache.
//!
//! Input: calls from JS (sizes with optional data), through one or more wrappers that share
//! a cache (`model.wrap(options)`, the material's `model_dynamic` / `model_static`). Output:
//! per call the action, the entry, PyTorch's failure reasons, the outputs of the CPU
//! reference and the time of each phase; the entries with their guards. Invariant: every
//! wrapper of one model sees the same entries and the same recompile limit, as in PyTorch
//! (pytorch-semantics.md §12), and a failed call adds no entry.

use super::compilation::Compilation;
use super::convert::{self, call_inputs, from_error, js_error, set, to_js};
use super::view;
use crate::cache::{Action, CallMarks, CodeCache, CompileConfig};
use crate::error::Error;
use crate::graph::{self, Tensor};
use crate::guard::CallShapes;
use crate::spec;
use crate::symbolic::Bindings;
use js_sys::Promise;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The state every wrapper of one model shares.
pub(super) struct Shared {
    /// The source, kept so that `reset` can rebuild the cache.
    pub source: String,
    /// The compiled class or function.
    pub entry: Option<String>,
    /// The guard cache.
    pub cache: CodeCache,
    /// Time of the reference run of each call in `cache.events` (0 for errors).
    pub run_ms: Vec<f64>,
    /// How many wrappers exist (the next one's index).
    pub wrappers: usize,
}

/// A compiled model: `torch.compile(model, dynamic=…)` plus its marks.
#[wasm_bindgen]
pub struct Model {
    shared: Rc<RefCell<Shared>>,
    wrapper: usize,
    config: CompileConfig,
    marks: CallMarks,
}

impl Model {
    /// The first wrapper of a freshly loaded model.
    pub(super) fn new(source: &str, options: &JsValue) -> Result<Model, JsValue> {
        let entry = convert::entry_option(options)?;
        let cache = crate::load(source, entry.as_deref()).map_err(|err| from_error(&err))?;
        let parsed = convert::compile_options(options, &cache.entry_point().inputs)?;
        Ok(Model {
            shared: Rc::new(RefCell::new(Shared {
                source: source.to_string(),
                entry,
                cache,
                run_ms: Vec::new(),
                wrappers: 1,
            })),
            wrapper: 0,
            config: parsed.config,
            marks: parsed.marks,
        })
    }

    fn input_names(&self) -> Vec<String> {
        self.shared.borrow().cache.entry_point().inputs.clone()
    }

    /// Runs one call and returns its result object, or the error to throw.
    fn call_now(&self, inputs: &JsValue) -> Result<JsValue, JsValue> {
        let names = self.input_names();
        let (call, data) = call_inputs(inputs, &names)?;
        spec::check_marks(&call, &self.marks.dynamic, &self.marks.fixed)
            .map_err(|err| from_error(&err.into()))?;
        check_size(&call)?;
        let mut shared = self.shared.borrow_mut();
        let index = shared.cache.events.len();
        let event = shared
            .cache
            .call(
                self.wrapper,
                &self.config,
                &call,
                &self.marks,
                &super::now_ms,
            )
            .clone();
        if event.action == Action::Error {
            shared.run_ms.push(0.0);
            let record = view::call_view(index, &event, 0.0);
            let message = event.error.clone().unwrap_or_default();
            let error = js_error("compile", &message, event.error_span);
            set(&error, "call", &to_js(&record));
            return Err(error);
        }
        let started = super::now_ms();
        let outputs = run_reference(&shared.cache, event.entry, &call, data, index as u64);
        let run_ms = super::now_ms() - started;
        shared.run_ms.push(run_ms);
        let outputs = outputs.map_err(|err| from_error(&err))?;
        let result = to_js(&view::call_view(index, &event, run_ms));
        set(&result, "outputs", &convert::tensors_to_js(&outputs));
        Ok(result)
    }
}

/// Refuses calls whose inputs the CPU reference could not hold, before any work.
fn check_size(call: &CallShapes) -> Result<(), JsValue> {
    for (name, dims) in &call.inputs {
        let elements = dims
            .iter()
            .fold(1u128, |acc, &d| acc.saturating_mul(d as u128));
        if elements > graph::MAX_ELEMENTS as u128 {
            return Err(js_error(
                "input",
                &format!(
                    "input '{name}' would have {elements} elements; the CPU reference holds at most {}",
                    graph::MAX_ELEMENTS
                ),
                None,
            ));
        }
    }
    Ok(())
}

/// Runs a call on the CPU reference: its entry's graph, or (eager) an uncached capture.
pub(super) fn run_reference(
    cache: &CodeCache,
    entry: Option<usize>,
    call: &CallShapes,
    data: convert::InputData,
    seed: u64,
) -> Result<Vec<Tensor>, Error> {
    let eager;
    let graph = match entry.and_then(|id| cache.entry(id)) {
        Some(entry) => &entry.graph,
        None => {
            eager = cache.eager_graph(call)?;
            &eager
        }
    };
    let mut bindings = Bindings::new();
    for (&id, (_, dims)) in graph.inputs.iter().zip(&call.inputs) {
        for (expr, &value) in graph.shape(id).iter().zip(dims) {
            if let Some(sym) = expr.as_sym() {
                bindings.set(sym, value);
            }
        }
    }
    let shapes: Vec<(String, Vec<usize>)> = call
        .inputs
        .iter()
        .map(|(n, d)| (n.clone(), d.iter().map(|&v| v as usize).collect()))
        .collect();
    let mut tensors = graph::random_inputs(&shapes, seed);
    for (tensor, values) in tensors.iter_mut().zip(data) {
        if let Some(values) = values {
            tensor.data = values;
        }
    }
    Ok(graph::eval(graph, &bindings, &tensors)?)
}

#[wasm_bindgen]
impl Model {
    /// Calls the compiled model. `inputs` is `{ x: { shape: [8, 64], data?: Float32Array } }`
    /// (missing data is seeded random) or a string such as `'x=8,64'`. Resolves to
    /// `{ outputs: [{ shape, data }], action, entry, reasons, warning, ms: { guard, compile,
    /// run }, index, shapes }`; rejects with a `TailorError` whose `call` is the record of a
    /// call that failed to compile.
    pub fn call(&self, inputs: JsValue) -> Promise {
        match self.call_now(&inputs) {
            Ok(result) => Promise::resolve(&result),
            Err(error) => Promise::reject(&error),
        }
    }

    /// Another `torch.compile` wrapper of the same module (`options` as for `compile`): it
    /// shares this model's cache, entries and recompile limit, but never reuses an entry of
    /// another wrapper.
    pub fn wrap(&self, options: JsValue) -> Result<Model, JsValue> {
        let parsed = convert::compile_options(&options, &self.input_names())?;
        let wrapper = {
            let mut shared = self.shared.borrow_mut();
            shared.wrappers += 1;
            shared.wrappers - 1
        };
        Ok(Model {
            shared: Rc::clone(&self.shared),
            wrapper,
            config: parsed.config,
            marks: parsed.marks,
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
        self.shared.borrow().cache.entry_point().name.clone()
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
    /// reasons: [{ entry, text }], error, span, warning, ms }]`.
    pub fn events(&self) -> JsValue {
        let shared = self.shared.borrow();
        let views: Vec<view::CallView> = shared
            .cache
            .events
            .iter()
            .zip(&shared.run_ms)
            .enumerate()
            .map(|(i, (event, &run_ms))| view::call_view(i, event, run_ms))
            .collect();
        to_js(&views)
    }

    /// The cache's entries in compile order: `[{ id, wrapper, mode, lookupPosition, inputs,
    /// guards: [{ kind, source, reason, symbolic, provenance, span }] }]`.
    pub fn entries(&self) -> JsValue {
        to_js(&view::entry_views(&self.shared.borrow().cache))
    }

    /// Empties the cache (entries, call log, automatic-dynamic memory) for every wrapper.
    pub fn reset(&self) -> Result<(), JsValue> {
        let mut shared = self.shared.borrow_mut();
        let cache =
            crate::load(&shared.source, shared.entry.as_deref()).map_err(|err| from_error(&err))?;
        shared.cache = cache;
        shared.run_ms.clear();
        Ok(())
    }

    /// Compiles once for `shapes` (`'x=8,64'` or `{ x: { shape } }`) with this wrapper's
    /// settings, in a cache of its own, and returns the compilation for the step-through.
    pub fn trace(&self, shapes: JsValue) -> Result<Compilation, JsValue> {
        let (source, entry) = {
            let shared = self.shared.borrow();
            (shared.source.clone(), shared.entry.clone())
        };
        Compilation::new(
            &source,
            entry.as_deref(),
            &self.config,
            &self.marks,
            &shapes,
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
