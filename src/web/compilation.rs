//! `Compilation`: one compilation kept for the step-through, the guard widget and the
//! benchmark.
//!
//! Input: a fresh cache of the model (its weights loaded, if any), a wrapper's settings and
//! the first call's sizes. Output: the view of every stage (graph with spans, shape events
//! per node, symbols, guards with provenance, the library's trace as text and as JSON, the
//! lowered schedule, WGSL in each mode), guard verdicts for other sizes, and runs of its
//! kernels on the device checked against the CPU reference.
//! Invariant: it owns a cache of its own, so inspecting never changes a model's entries;
//! a run in flight owns what it uses, so freeing the compilation never breaks it.

use super::convert::{self, call_inputs, from_error, js_error, to_js};
use super::driven;
use super::kernels;
use super::view;
use crate::cache::{Action, CodeCache};
use crate::codegen::Mode;
use crate::config::{CallMarks, CompileConfig};
use crate::guard::CallShapes;
use crate::lower::{Kernel, Schedule};
use crate::message::{Message, MessageId};
use crate::session::executor::{self, Backend, Executor, Job, RunOptions};
use crate::spec;
use crate::symbolic::{Bindings, SymbolNaming};
use js_sys::{Promise, Reflect};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// A single compiled entry and the cache that holds it.
#[wasm_bindgen]
pub struct Compilation {
    cache: CodeCache,
    call: CallShapes,
    marks: CallMarks,
    /// How the views name symbols.
    symbol_names: SymbolNaming,
    backend: Rc<Backend>,
    /// Keeps the kernels `run` builds per mode, so that later runs measure the steady state.
    executor: Rc<RefCell<Executor>>,
}

impl Compilation {
    pub(super) fn new(
        mut cache: CodeCache,
        config: &CompileConfig,
        marks: &CallMarks,
        symbol_names: SymbolNaming,
        shapes: &JsValue,
        backend: Rc<Backend>,
    ) -> Result<Compilation, JsValue> {
        let (call, _) = call_inputs(shapes, &cache.entry_point().inputs)?;
        spec::check_marks(&call, &marks.dynamic, &marks.fixed)
            .map_err(|err| from_error(&err.into()))?;
        let event = cache.call(0, config, &call, marks, &super::now_ms).clone();
        if event.action != Action::Compile {
            return Err(convert::compile_error(&event));
        }
        let executor = Executor::new(Rc::clone(&backend), Rc::new(super::now_ms));
        Ok(Compilation {
            cache,
            call,
            marks: marks.clone(),
            symbol_names,
            backend,
            executor: Rc::new(RefCell::new(executor)),
        })
    }

    fn entry(&self) -> &crate::cache::Entry {
        &self.cache.entries_mru()[0]
    }

    /// The call that compiled the entry (with its graph breaks' resume calls).
    fn event(&self) -> &crate::cache::CallEvent {
        self.cache
            .events
            .first()
            .expect("`new` made the compiling call")
    }

    /// The library's trace of this entry, its symbols named as the views name them.
    fn trace(&self) -> crate::trace::Trace {
        crate::session::trace_of(&self.cache, self.entry(), self.symbol_names)
    }

    fn marked(&self) -> Vec<bool> {
        self.cache
            .entry_point()
            .inputs
            .iter()
            .map(|name| self.marks.dynamic.iter().any(|m| &m.input == name))
            .collect()
    }

    fn lowered(&self) -> Result<&Schedule, JsValue> {
        self.entry()
            .compiled
            .schedule()
            .map_err(|err| from_error(&err.clone().into()))
    }

    /// The symbol values of `call` in the schedule (what static code bakes in).
    fn bindings(schedule: &Schedule, call: &CallShapes) -> Result<Bindings, JsValue> {
        executor::call_bindings(schedule, call).map_err(|err| from_error(&err.into()))
    }

    /// `options.mode` as a `Mode`, defaulting to the entry's own.
    fn mode_option(schedule: &Schedule, value: &JsValue) -> Result<Mode, JsValue> {
        match value.as_string() {
            None => Ok(crate::codegen::entry_mode(schedule)),
            Some(name) => kernels::parse_mode(&name).ok_or_else(|| {
                super::convert::bad_argument(format!(
                    "mode: expected 'static', 'override' or 'dynamic', got '{name}'"
                ))
            }),
        }
    }

    /// The synchronous half of `run`: the call, its inputs, the reference, the kernels.
    fn start_run(&self, options: &JsValue) -> Result<PendingRun, JsValue> {
        let schedule = self.lowered()?;
        let get = |key: &str| {
            if options.is_object() {
                Reflect::get(options, &key.into()).unwrap_or(JsValue::UNDEFINED)
            } else {
                JsValue::UNDEFINED
            }
        };
        let mode = Self::mode_option(schedule, &get("mode"))?;
        let shapes = get("shapes");
        let call = if shapes.is_undefined() || shapes.is_null() {
            self.call.clone()
        } else {
            call_inputs(&shapes, &self.cache.entry_point().inputs)?.0
        };
        // The sizes come from the page or the compile; the module attributes the guards read
        // are the model's own, as a real call would see them.
        let call = self.cache.with_attributes_now(self.entry().id, call);
        let guards = &self.entry().guards;
        if let Err(failure) = guards.check(&call, &self.marked()) {
            let (spec, reason) = (call.to_spec(), guards.reason(&failure));
            return Err(convert::js_error_message(
                "call",
                &format!(
                    "{spec} fails this entry's guards ({reason}); a model call would compile another entry"
                ),
                &Message::new(MessageId::GuardsFailed, &[&spec, &reason]),
                None,
            ));
        }
        let options = RunOptions {
            check: get("check").as_bool().unwrap_or(true),
            timing: get("timing").is_truthy(),
        };
        let inputs =
            executor::call_inputs(&call, Vec::new(), 0).map_err(|err| from_error(&err.into()))?;
        let job = self
            .executor
            .borrow_mut()
            .start_entry(self.entry(), mode, &call, inputs, options)
            .map_err(|err| from_error(&err))?;
        Ok(PendingRun {
            mode,
            shapes: call.to_spec(),
            job,
        })
    }
}

/// A run whose kernels are ready to go to the device.
struct PendingRun {
    mode: Mode,
    shapes: String,
    job: Job,
}

/// What `run` reports besides the outputs.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunView {
    /// `static`, `override` or `dynamic`.
    mode: &'static str,
    /// The sizes run.
    shapes: String,
    ms: RunTimes,
    /// Output shapes of the CPU reference (when checked).
    reference_shapes: Option<Vec<Vec<usize>>>,
}

#[derive(Serialize)]
struct RunTimes {
    /// Upload, kernels, read-back.
    run: f64,
    /// WGSL emission, parameter upload, pipeline creation (0 in the steady state).
    build: f64,
    /// The CPU reference (`graph::eval`), when checked.
    reference: f64,
}

/// Runs the kernels, keeps them for the next run, and builds the result object.
async fn finish_run(
    backend: Rc<Backend>,
    executor: Rc<RefCell<Executor>>,
    pending: PendingRun,
) -> Result<JsValue, JsValue> {
    let PendingRun { mode, shapes, job } = pending;
    let finished = Executor::run(&super::now_ms, job).await;
    let ran = executor
        .borrow_mut()
        .keep(finished)
        .map_err(|err| from_error(&err))?;
    let result = to_js(&RunView {
        mode: mode.name(),
        shapes,
        ms: RunTimes {
            run: ran.run_ms,
            build: ran.build_ms,
            reference: ran.reference_ms,
        },
        reference_shapes: ran
            .expected
            .as_ref()
            .map(|tensors| tensors.iter().map(|t| t.shape.clone()).collect()),
    });
    kernels::set_run_fields(&result, None, backend.name(), &ran);
    Ok(result)
}

/// The verdicts for one call: per printed guard, and what the cache would do.
#[derive(Serialize)]
struct CheckView {
    /// The call, as `x=8,64`.
    shapes: String,
    /// Pass/fail per guard, in the order of `view.guards`.
    pass: Vec<bool>,
    /// `hit` when every guard passes, else `recompile`.
    outcome: &'static str,
    /// PyTorch's reason for the first failing guard.
    reason: Option<String>,
}

#[wasm_bindgen]
impl Compilation {
    /// Every stage as data: `{ entryName, mode, shapes, stages: [{ id, title, text }],
    /// inputs, symbols, nodes: [{ id, name, op, role, inputs, shape, shapeText, text, span }],
    /// events: [{ node, kind, text }], guards: [{ kind, source, reason, symbolic,
    /// provenance, span }], graphs }`. `graphs` lists the compiling call's graphs: forward's,
    /// then each resume function's after a graph break, `[{ frame, compileId, function,
    /// action, reasons: [{ entry, text }], error, errorSpan, text, nodes, guards, endsAt: {
    /// line, col, kind, reason, taken, resume } | null, printed }]` (one when forward does
    /// not break).
    #[wasm_bindgen(getter)]
    pub fn view(&self) -> JsValue {
        to_js(&view::compilation_view(
            &self.cache,
            self.entry(),
            self.event(),
            self.call.to_spec(),
            self.symbol_names,
        ))
    }

    /// The trace as the CLI's `explain` prints it.
    #[wasm_bindgen(js_name = traceText)]
    pub fn trace_text(&self) -> String {
        self.trace().to_string()
    }

    /// The trace as the CLI's `explain --json` prints it: one JSON object on one line,
    /// `{"stages": [{"id", "title", "text"}]}` (the page's "export the trace" downloads it).
    #[wasm_bindgen(js_name = traceJson)]
    pub fn trace_json(&self) -> Result<String, JsValue> {
        self.trace()
            .to_json()
            .map_err(|err| js_error("trace", &err.to_string(), None))
    }

    /// Checks every guard of this entry against other sizes (`'x=16,64'`): which pass, which
    /// fail, and PyTorch's reason for the first failure.
    #[wasm_bindgen(js_name = checkGuards)]
    pub fn check_guards(&self, shapes: JsValue) -> Result<JsValue, JsValue> {
        let (call, _) = call_inputs(&shapes, &self.cache.entry_point().inputs)?;
        let call = self.cache.with_attributes_now(self.entry().id, call);
        let marked = self.marked();
        let guards = &self.entry().guards;
        let reason = guards
            .check(&call, &marked)
            .err()
            .map(|failure| guards.reason(&failure));
        Ok(to_js(&CheckView {
            shapes: call.to_spec(),
            pass: view::guard_verdicts(guards, &call, &marked),
            outcome: if reason.is_none() { "hit" } else { "recompile" },
            reason,
        }))
    }

    /// The entry's lowered schedule: `{ entryMode: 'static' | 'dynamic', kernels: [{ id, name,
    /// nodes, nodeNames, kind, form, text, workgroups, workgroupSize, reads, writes, symbols }],
    /// buffers: [{ name, role, lenElems, tenants: [{ node, from, until }] }], notes, text }`.
    /// `form`: the form a product kernel runs as on this device for the compiled sizes
    /// (`'tiled'`, `'blocked'` or `'naive'`, what a run's `products` says), `null` for the
    /// other kernels and on the CPU backend. Throws a `TailorError` of kind `lower` when the
    /// graph has no kernels.
    #[wasm_bindgen(getter)]
    pub fn schedule(&self) -> Result<JsValue, JsValue> {
        let schedule = self.lowered()?;
        let bindings = Self::bindings(schedule, &self.call)?;
        let form = |kernel: &Kernel| self.backend.product_form(kernel, &bindings);
        Ok(to_js(&kernels::schedule_view(schedule, form)))
    }

    /// Every kernel's WGSL in `mode` (`'static'`, `'override'`, `'dynamic'`; default: the
    /// mode the entry runs in): `[{ kernel, mode, source, symbols, bindings: [{ binding,
    /// access, name }] }]`. Static code bakes in the sizes this compilation was made for.
    pub fn wgsl(&self, mode: JsValue) -> Result<JsValue, JsValue> {
        let schedule = self.lowered()?;
        let mode = Self::mode_option(schedule, &mode)?;
        let bindings = Self::bindings(schedule, &self.call)?;
        let emitted = self
            .entry()
            .compiled
            .wgsl(mode, &bindings)
            .map_err(|err| from_error(&err.into()))?;
        Ok(to_js(&kernels::wgsl_views(schedule, &emitted)))
    }

    /// Runs the entry's kernels on the device (WebGPU, or the CPU backend) with
    /// seeded random inputs. `options`: `{ mode?: 'static' | 'override' | 'dynamic' (default:
    /// the entry's), shapes?: 'x=16,64' (default: the compiled sizes; they must pass the
    /// entry's guards), check?: true (compare with the CPU reference), timing?: false
    /// (per-kernel times) }`. Kernels are kept per mode (and per size for static code), so a
    /// second run measures the steady state. Resolves to `{ outputs, device, mode, shapes,
    /// ms: { run, build, reference }, referenceShapes, maxAbsErr, kernelMs?, timing? }`.
    pub fn run(&self, options: JsValue) -> Promise {
        match self.start_run(&options) {
            Ok(pending) => driven::promise(finish_run(
                Rc::clone(&self.backend),
                Rc::clone(&self.executor),
                pending,
            )),
            Err(error) => Promise::reject(&error),
        }
    }
}
