//! `Compilation`: one compilation kept for the step-through and the guard widget.
//!
//! Input: source, a wrapper's settings and the first call's sizes. Output: the view of
//! every stage (graph with spans, shape events per node, symbols, guards with provenance,
//! the library's trace text), guard verdicts for other sizes, and a CPU reference run.
//! Invariant: it owns a cache of its own, so inspecting never changes a model's entries.

use super::convert::{call_inputs, from_error, js_error, set, tensors_to_js, to_js};
use super::model::run_reference;
use super::view;
use crate::cache::{Action, CallMarks, CodeCache, CompileConfig};
use crate::guard::CallShapes;
use crate::spec;
use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// A single compiled entry and the cache that holds it.
#[wasm_bindgen]
pub struct Compilation {
    cache: CodeCache,
    call: CallShapes,
    marks: CallMarks,
}

impl Compilation {
    pub(super) fn new(
        source: &str,
        entry: Option<&str>,
        config: &CompileConfig,
        marks: &CallMarks,
        shapes: &JsValue,
    ) -> Result<Compilation, JsValue> {
        let mut cache = crate::load(source, entry).map_err(|err| from_error(&err))?;
        let (call, _) = call_inputs(shapes, &cache.entry_point().inputs)?;
        spec::check_marks(&call, &marks.dynamic, &marks.fixed)
            .map_err(|err| from_error(&err.into()))?;
        let event = cache.call(0, config, &call, marks, &super::now_ms).clone();
        if event.action != Action::Compile {
            let message = event
                .error
                .unwrap_or_else(|| "the call did not compile".into());
            return Err(js_error("compile", &message, event.error_span));
        }
        Ok(Compilation {
            cache,
            call,
            marks: marks.clone(),
        })
    }

    fn entry(&self) -> &crate::cache::Entry {
        &self.cache.entries_mru()[0]
    }

    fn marked(&self) -> Vec<bool> {
        self.cache
            .entry_point()
            .inputs
            .iter()
            .map(|name| self.marks.dynamic.iter().any(|m| &m.input == name))
            .collect()
    }
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
    /// provenance, span }] }`.
    #[wasm_bindgen(getter)]
    pub fn view(&self) -> JsValue {
        to_js(&view::compilation_view(
            &self.cache,
            self.entry(),
            self.call.to_spec(),
        ))
    }

    /// The trace as the CLI's `explain` prints it.
    #[wasm_bindgen(js_name = traceText)]
    pub fn trace_text(&self) -> String {
        crate::Trace::of_entry(&self.cache, self.entry()).to_string()
    }

    /// Checks every guard of this entry against other sizes (`'x=16,64'`): which pass, which
    /// fail, and PyTorch's reason for the first failure.
    #[wasm_bindgen(js_name = checkGuards)]
    pub fn check_guards(&self, shapes: JsValue) -> Result<JsValue, JsValue> {
        let (call, _) = call_inputs(&shapes, &self.cache.entry_point().inputs)?;
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

    /// Runs the entry on the CPU reference for the sizes it was compiled for (seeded random
    /// inputs). Resolves to `{ outputs: [{ shape, data }], ms: { run }, device: 'cpu' }`.
    pub fn run(&self) -> Promise {
        let started = super::now_ms();
        let outputs = run_reference(
            &self.cache,
            Some(self.entry().id),
            &self.call,
            vec![None; self.call.inputs.len()],
            0,
        );
        let run_ms = super::now_ms() - started;
        match outputs {
            Ok(outputs) => {
                let result = js_sys::Object::new();
                set(&result, "outputs", &tensors_to_js(&outputs));
                let ms = js_sys::Object::new();
                set(&ms, "run", &JsValue::from(run_ms));
                set(&result, "ms", &ms);
                set(&result, "device", &JsValue::from_str("cpu"));
                Promise::resolve(&JsValue::from(result))
            }
            Err(err) => Promise::reject(&from_error(&err)),
        }
    }
}
