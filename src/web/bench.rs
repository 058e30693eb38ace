//! The page's CPU benchmark: issue 10's in-browser figures, one workload at a time.
//!
//! In: a workload's name (`tailor.cpuWorkloads()`: SimpleNet at batch 8, a 3→16 conv at
//! 64×64, the 256×1024→1024→1024 MLP). Out: a `CpuBenchmark` whose kernels and reference
//! the page times sample by sample (`timeCalls`, `timeReference`), yielding to the browser
//! between samples, and the memory the workload's program holds. Invariant: it runs through
//! `bench::CpuBench`, the code `tailor bench` runs, on a CPU backend of its own (wasm32: one
//! thread, simd128) whatever device the page's `Tailor` uses; it returns numbers only, and
//! every word the page shows about them is in `www/js/i18n.js`.

use super::convert::{bad_argument, from_error, to_js};
use crate::bench::{CpuBench, CpuWorkload, PAGE_CPU_WORKLOADS};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// One workload as the page lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkloadView {
    /// `simplenet_b8`, `conv16_64`, `bigmlp`.
    name: &'static str,
    /// The model's source (the page compiles the MLP's for WebGPU too).
    source: &'static str,
    /// The timed call (`x=256,1024`).
    shapes: String,
    /// The reference's call (fewer rows for the MLP).
    reference_shapes: String,
    /// Operations of one call, when the figure is a throughput.
    flops: Option<f64>,
    /// Operations of one reference call.
    reference_flops: Option<f64>,
}

impl WorkloadView {
    fn of(workload: &CpuWorkload) -> WorkloadView {
        WorkloadView {
            name: workload.name,
            source: workload.source,
            shapes: workload.call().to_spec(),
            reference_shapes: workload.reference_call().to_spec(),
            flops: workload.flops,
            reference_flops: workload.reference_flops,
        }
    }
}

/// What the workload's program holds, in bytes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MemoryView {
    /// The memory plan's buffers at the timed call (outputs and shared temporaries).
    planned_bytes: usize,
    /// The arena after the last timed call (equal to `planned_bytes` once a call ran).
    arena_bytes: usize,
    /// The products' tiles and packed operands kept between calls.
    scratch_bytes: usize,
}

/// The page's CPU workloads, in the order the view shows them.
pub(super) fn workloads() -> JsValue {
    let views: Vec<WorkloadView> = PAGE_CPU_WORKLOADS.iter().map(WorkloadView::of).collect();
    to_js(&views)
}

/// One page workload compiled on a CPU backend of its own (`tailor.cpuBenchmark(name)`).
#[wasm_bindgen]
pub struct CpuBenchmark {
    bench: CpuBench,
}

impl CpuBenchmark {
    /// Compiles the workload named `name`; a `TailorError` names the workloads otherwise.
    pub(super) fn new(name: &str) -> Result<CpuBenchmark, JsValue> {
        let workload = PAGE_CPU_WORKLOADS
            .iter()
            .find(|workload| workload.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = PAGE_CPU_WORKLOADS.iter().map(|w| w.name).collect();
                bad_argument(format!(
                    "no CPU workload '{name}' (expected {})",
                    names.join(", ")
                ))
            })?;
        let bench = CpuBench::new(workload).map_err(|err| from_error(&err))?;
        Ok(CpuBenchmark { bench })
    }
}

#[wasm_bindgen]
impl CpuBenchmark {
    /// `{ name, source, shapes, referenceShapes, flops, referenceFlops }`.
    #[wasm_bindgen(getter)]
    pub fn workload(&self) -> JsValue {
        to_js(&WorkloadView::of(self.bench.workload()))
    }

    /// Milliseconds per call of the compiled kernels: calls repeat until `minMs` have
    /// passed (one at least), so `performance.now()`'s coarse ticks still resolve a call of
    /// microseconds. The first call binds the kernels: time it apart as a warm-up.
    #[wasm_bindgen(js_name = timeCalls)]
    pub fn time_calls(&mut self, min_ms: f64) -> Result<f64, JsValue> {
        self.bench
            .time_calls(&super::now_ms, min_ms)
            .map_err(|err| from_error(&err))
    }

    /// Milliseconds per call of `graph::eval`, the op-by-op reference, at the reference's
    /// call (`workload.referenceShapes`), repeated as `timeCalls` is.
    #[wasm_bindgen(js_name = timeReference)]
    pub fn time_reference(&self, min_ms: f64) -> Result<f64, JsValue> {
        self.bench
            .time_reference(&super::now_ms, min_ms)
            .map_err(|err| from_error(&err))
    }

    /// `{ plannedBytes, arenaBytes, scratchBytes }`: the memory plan's peak at the timed
    /// call, and what the program held after the last timed call.
    #[wasm_bindgen(getter)]
    pub fn memory(&self) -> Result<JsValue, JsValue> {
        let planned_bytes = self.bench.planned_bytes().map_err(|err| from_error(&err))?;
        let (arena_bytes, scratch_bytes) = self.bench.held_bytes();
        Ok(to_js(&MemoryView {
            planned_bytes,
            arena_bytes,
            scratch_bytes,
        }))
    }
}
