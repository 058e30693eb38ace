//! The browser boundary: the only code that knows JavaScript exists (wasm32 only).
//!
//! In: calls from the page (`www/app.js`) or any other page that imports `tailor.js`:
//! `Tailor.create`, `tailor.compile(source, options)`, `model.call(inputs)`, … (docs/js-api.md).
//! Out: plain JS objects built from the views in `view.rs`, `Float32Array` outputs,
//! and thrown `TailorError`s with a `kind` and the source `line`/`col`. Kernels run on the
//! `Device` that `Tailor.create` opens (wgpu on WebGPU, else the CPU backend;
//! `device.rs`). Time is `performance.now()`, passed to the compiler as its clock. Page
//! logic stays in `www/`.

mod bench;
mod breaks;
mod compilation;
mod convert;
mod device;
mod driven;
mod kernels;
mod model;
mod parts;
mod presets;
mod quiz;
mod script;
mod view;

pub use bench::CpuBenchmark;
pub use compilation::Compilation;
pub use model::Model;

use crate::session::executor::{Backend, Device};
use convert::{bad_argument, to_js};
use device::WebGpuStatus;
use js_sys::{Function, Reflect};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

thread_local! {
    /// The message of the last panic in this module instance. After a panic the instance may
    /// be broken, but this stays readable, so the page can show the message in place.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };

    /// An interpreter made in idle time (`Tailor.warmUp`), its imports done, for the next
    /// model: the page's one cache, which changes no result, only when the imports are paid.
    static WARM: RefCell<Option<crate::frontend::Vm>> = const { RefCell::new(None) };

    /// `performance` and its `now`, looked up once: a call reads the clock several times,
    /// and each lookup by name cost more than the reading (29 µs of a steady call).
    static PERFORMANCE_NOW: Option<(JsValue, Function)> = {
        let performance = Reflect::get(&js_sys::global(), &"performance".into())
            .ok()
            .filter(JsValue::is_object);
        performance.and_then(|performance| {
            let now = Reflect::get(&performance, &"now".into())
                .ok()?
                .dyn_into::<Function>()
                .ok()?;
            Some((performance, now))
        })
    };
}

/// Loads `source`'s `entry` in the interpreter warmed in idle time when there is one,
/// else in a fresh one.
fn load(source: &str, entry: Option<&str>) -> Result<crate::cache::CodeCache, crate::error::Error> {
    let vm = WARM
        .with(|warm| warm.borrow_mut().take())
        .unwrap_or_else(crate::frontend::Vm::fresh);
    crate::session::load_in(vm, source, entry)
}

/// Runs once when the module is instantiated: routes Rust panics to `console.error` (message
/// and location instead of a bare `RuntimeError: unreachable`) and keeps the message for
/// `Tailor.lastPanic()`.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        let message = info.to_string();
        LAST_PANIC.with(|last| last.replace(Some(message)));
    }));
}

/// Milliseconds from `performance.now()` (`Date.now()` where there is no `performance`).
fn now_ms() -> f64 {
    PERFORMANCE_NOW
        .with(|now| {
            let (performance, now) = now.as_ref()?;
            now.call0(performance).ok()?.as_f64()
        })
        .unwrap_or_else(js_sys::Date::now)
}

/// The entry point of the JS API: `await Tailor.create({ device: 'auto' })`.
#[wasm_bindgen]
pub struct Tailor {
    backend: Rc<Backend>,
    webgpu: WebGpuStatus,
}

#[wasm_bindgen]
impl Tailor {
    /// Creates the API. `options.device`: `'auto'` (default: WebGPU when the browser has a
    /// working adapter, else the CPU backend), `'gpu'` (WebGPU, or a `TailorError`
    /// of kind `device` saying why not) or `'cpu'`.
    pub async fn create(options: JsValue) -> Result<Tailor, JsValue> {
        let device = if options.is_object() {
            Reflect::get(&options, &"device".into())
                .ok()
                .and_then(|d| d.as_string())
        } else {
            None
        };
        let choice: Device = device
            .as_deref()
            .unwrap_or("auto")
            .parse()
            .map_err(|err| bad_argument(format!("device: {err}")))?;
        let (backend, webgpu) = device::open(choice).await?;
        Ok(Tailor {
            backend: Rc::new(backend),
            webgpu,
        })
    }

    /// Makes the interpreter the next model loads in, its `torch` package and common
    /// stdlib modules imported (a page calls it in idle time: after load and after each
    /// compile); does nothing when one is ready. Returns the ms it took (0 when ready).
    #[wasm_bindgen(js_name = warmUp)]
    pub fn warm_up(&self) -> Result<f64, JsValue> {
        if WARM.with(|warm| warm.borrow().is_some()) {
            return Ok(0.0);
        }
        let started = now_ms();
        let vm = crate::frontend::Vm::warm().map_err(|err| convert::from_error(&err.into()))?;
        WARM.with(|warm| warm.replace(Some(vm)));
        Ok(now_ms() - started)
    }

    /// Where calls run: `'gpu'` (the compiled WGSL kernels on WebGPU) or `'cpu'` (the same
    /// kernels on the CPU backend).
    #[wasm_bindgen(getter)]
    pub fn device(&self) -> String {
        self.backend.name().into()
    }

    /// `{ available, adapter, used, reason }`: what WebGPU the browser offers and why it is
    /// or is not used.
    #[wasm_bindgen(getter)]
    pub fn webgpu(&self) -> JsValue {
        to_js(&self.webgpu)
    }

    /// `{ name, backend, timestamps, emulated, subgroups, immediates }` of the wgpu adapter calls run on, or
    /// `null` on the CPU.
    #[wasm_bindgen(getter)]
    pub fn adapter(&self) -> JsValue {
        #[cfg(feature = "gpu")]
        if let Some(adapter) = self.backend.adapter() {
            return to_js(adapter);
        }
        JsValue::NULL
    }

    /// Drops the GPU's cached pipelines and pooled buffers, as a fresh page has them: the
    /// next compile of any model pays for its pipelines again (the benchmark starts each
    /// policy cold). Resolves once done; nothing to drop on the CPU.
    #[wasm_bindgen(js_name = clearKernelCache)]
    pub fn clear_kernel_cache(&self) -> js_sys::Promise {
        let backend = Rc::clone(&self.backend);
        driven::promise(async move {
            backend.clear_cache().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Turns tiers on or off: a product whose large form is not built yet runs naive while
    /// the browser builds that form (`createComputePipelineAsync`), and the first call after
    /// it is ready runs it. On by default on a hardware GPU, off on an emulation. Resolves to
    /// whether they were on; `false` on the CPU.
    #[wasm_bindgen(js_name = setTiers)]
    pub fn set_tiers(&self, on: bool) -> js_sys::Promise {
        let backend = Rc::clone(&self.backend);
        driven::promise(async move {
            #[cfg(feature = "gpu")]
            return Ok(JsValue::from(backend.set_tiers(on).await));
            #[cfg(not(feature = "gpu"))]
            {
                let _ = (backend, on);
                Ok(JsValue::FALSE)
            }
        })
    }

    /// Turns read-back nudges on or off (on by default): while a call's output is not
    /// mapped, an empty command list is submitted every 1 ms, 8 times at most (none where
    /// the same-shaped call before waited longer than 4 ms), because the browser's GPU
    /// process otherwise notices finished work only on its own timer (2 ms after the last
    /// command, then every 1 ms, measured in headless Chromium). Resolves to whether they
    /// were on; `false` on the CPU.
    #[wasm_bindgen(js_name = setNudges)]
    pub fn set_nudges(&self, on: bool) -> js_sys::Promise {
        let backend = Rc::clone(&self.backend);
        driven::promise(async move {
            #[cfg(feature = "gpu")]
            return Ok(JsValue::from(backend.set_nudges(on).await));
            #[cfg(not(feature = "gpu"))]
            {
                let _ = (backend, on);
                Ok(JsValue::FALSE)
            }
        })
    }

    /// Turns the subgroup forms of row reductions on or off (on by default where the
    /// device has the browser's subgroup operations). Resolves to whether they are on now:
    /// never where the device has none, and `false` on the CPU.
    #[wasm_bindgen(js_name = setSubgroups)]
    pub fn set_subgroups(&self, on: bool) -> js_sys::Promise {
        let backend = Rc::clone(&self.backend);
        driven::promise(async move {
            #[cfg(feature = "gpu")]
            return Ok(JsValue::from(backend.set_subgroups(on).await));
            #[cfg(not(feature = "gpu"))]
            {
                let _ = (backend, on);
                Ok(JsValue::FALSE)
            }
        })
    }

    /// Resolves once every large form the browser is building in the background is in the
    /// pipeline cache (the benchmark's "tiers ready"); rejects with a `TailorError` naming
    /// the kernel whose build the browser refused.
    #[wasm_bindgen(js_name = waitForBuilds)]
    pub fn wait_for_builds(&self) -> js_sys::Promise {
        let backend = Rc::clone(&self.backend);
        driven::promise(async move {
            #[cfg(feature = "gpu")]
            backend
                .wait_for_builds()
                .await
                .map_err(|e| convert::from_error(&e))?;
            let _ = backend;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// `{ pipelinesCreated, pipelineMs, pipelinesCached, bytesHeld, devicesRecreated,
    /// bindGroupsCreated, backgroundBuilds, backgroundMs, unscopedCalls, nudgesSent }` of the
    /// GPU runtime (`GpuStats`), or `null` on the CPU: what the page's comparisons count as
    /// built.
    #[wasm_bindgen(js_name = gpuStats)]
    pub fn gpu_stats(&self) -> js_sys::Promise {
        let backend = Rc::clone(&self.backend);
        driven::promise(async move {
            #[cfg(feature = "gpu")]
            if let Some(stats) = backend.stats().await {
                return Ok(to_js(&stats));
            }
            let _ = backend;
            Ok(JsValue::NULL)
        })
    }

    /// Parses `source`, builds its module and returns a `torch.compile` wrapper of it.
    /// `options`: `{ dynamic: 'auto' | 'true' | 'false', markDynamic: [['x', 0, min?, max?]],
    /// markStatic: [['x', 1]], entry?: 'ClassName', recompileLimit?: 8, memoryBudget?:
    /// '1GiB' (bytes, or a size; the process's budget for tensors, 1 GiB unless given) }`. Throws a
    /// `TailorError` (`kind`, `message`, `line`, `col`) for a bad model or bad options.
    pub fn compile(&self, source: &str, options: JsValue) -> Result<Model, JsValue> {
        Model::new(source, &options, Rc::clone(&self.backend))
    }

    /// The CPU benchmark's workloads: `[{ name, source, shapes, referenceShapes, flops,
    /// referenceFlops }]` (SimpleNet at batch 8, a 3→16 conv at 64×64, the MLP).
    #[wasm_bindgen(js_name = cpuWorkloads)]
    pub fn cpu_workloads() -> JsValue {
        bench::workloads()
    }

    /// Compiles the CPU workload `name` for the benchmark view, on a CPU backend of its own
    /// whatever this API's device: its kernels and `graph::eval` timed sample by sample,
    /// and the memory its program holds. Throws a `TailorError` for an unknown name.
    #[wasm_bindgen(js_name = cpuBenchmark)]
    pub fn cpu_benchmark(name: &str) -> Result<CpuBenchmark, JsValue> {
        CpuBenchmark::new(name)
    }

    /// What capture supports, read from Tailor's `torch` package in a fresh interpreter and
    /// from the op table: `{ groups: { "torch.nn": ["AdaptiveAvgPool2d", …],
    /// "torch.nn.functional": […], "torch": […], "Tensor": […], "operators": ["x + y", …] },
    /// ops: [{ signature, aliases, example, shape_rule, lowering, reference }] }` (the page's
    /// reference panel; it takes as long as a fresh interpreter's imports, so the page asks
    /// once, when the panel opens).
    pub fn supported() -> Result<JsValue, JsValue> {
        let surface = crate::frontend::surface_in(crate::frontend::Vm::fresh())
            .map_err(|err| convert::from_error(&err.into()))?;
        Ok(to_js(&surface))
    }

    /// The example models: `[{ id, file, source, shapes, vary: [[input, dim]], sequence,
    /// slider: [min, max, step] }]`, the material's `SimpleNet` first.
    pub fn presets() -> JsValue {
        to_js(presets::PRESETS)
    }

    /// The message and location of the last Rust panic in this module instance, if any (a
    /// panic reaches JS as `RuntimeError: unreachable`; this says what went wrong).
    #[wasm_bindgen(js_name = lastPanic)]
    pub fn last_panic() -> Option<String> {
        LAST_PANIC.with(|last| last.borrow().clone())
    }

    /// The crate version.
    pub fn version() -> String {
        env!("CARGO_PKG_VERSION").into()
    }
}
