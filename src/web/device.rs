//! The device calls run on: the wgpu runtime on WebGPU, or the CPU kernel interpreter.
//!
//! In: `Tailor.create`'s `device` option (`auto`, `gpu`, `cpu`), then an entry's lowered
//! `Schedule` and one call's input tensors. Out: a [`Device`] shared by every model of one
//! `Tailor`, the [`Kernels`] an entry keeps (its schedule and, on the GPU, its `Program`),
//! and per run the outputs read back with the time spent building (parameters, pipelines)
//! and running. Invariants: one GPU run at a time — the wgpu runtime is `&mut` across its
//! awaits, so a run takes the `Gpu` out of its slot and the guard puts it back (a small async
//! lock that yields, never blocks); read-back is awaited, so the page keeps painting.

use super::convert::js_error;
use crate::codegen::Mode;
use crate::error::Error;
use crate::graph::Tensor;
use crate::lower::Schedule;
use crate::symbolic::Bindings;
use js_sys::{Function, Promise, Reflect};
use serde::Serialize;
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[cfg(feature = "gpu")]
use crate::runtime::gpu::{AdapterSummary, Gpu, Program};
#[cfg(feature = "gpu")]
use std::cell::RefCell;

/// What the browser offers for the kernels, and whether Tailor uses it.
#[derive(Clone, Serialize)]
pub(super) struct WebGpuStatus {
    /// `navigator.gpu` exists and returned an adapter.
    available: bool,
    /// The adapter's vendor / architecture / description, when there is one.
    adapter: Option<String>,
    /// Whether kernels run on it.
    used: bool,
    /// Why it is or is not used, in words.
    reason: String,
}

impl WebGpuStatus {
    fn missing(reason: impl Into<String>) -> WebGpuStatus {
        WebGpuStatus {
            available: false,
            adapter: None,
            used: false,
            reason: reason.into(),
        }
    }
}

/// Resolves after `ms` milliseconds (never, where there is no `setTimeout`).
fn sleep(ms: i32) -> JsFuture {
    JsFuture::from(Promise::new(&mut |resolve, _reject| {
        let set_timeout = Reflect::get(&js_sys::global(), &"setTimeout".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok());
        if let Some(set_timeout) = set_timeout {
            let _ = set_timeout.call2(&JsValue::NULL, &resolve, &JsValue::from(ms));
        }
    }))
}

/// Waits for `future` at most `ms` milliseconds; `None` on timeout.
async fn within<F: Future>(future: F, ms: i32) -> Option<F::Output> {
    let mut future = pin!(future);
    let mut timer = pin!(sleep(ms));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(value) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        match timer.as_mut().poll(cx) {
            Poll::Ready(_) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// Asks the browser for a WebGPU adapter, with a timeout (some browsers never answer).
async fn probe_webgpu() -> WebGpuStatus {
    let gpu = Reflect::get(&js_sys::global(), &"navigator".into())
        .and_then(|navigator| Reflect::get(&navigator, &"gpu".into()))
        .unwrap_or(JsValue::UNDEFINED);
    if gpu.is_undefined() || gpu.is_null() {
        return WebGpuStatus::missing("this browser has no WebGPU (navigator.gpu is missing)");
    }
    let request = Reflect::get(&gpu, &"requestAdapter".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .and_then(|f| f.call0(&gpu).ok())
        .and_then(|p| p.dyn_into::<Promise>().ok());
    let Some(request) = request else {
        return WebGpuStatus::missing("navigator.gpu.requestAdapter() could not be called");
    };
    let adapter = within(JsFuture::from(request), 3000)
        .await
        .and_then(Result::ok)
        .filter(|a| !a.is_null() && !a.is_undefined());
    let Some(adapter) = adapter else {
        return WebGpuStatus::missing("navigator.gpu.requestAdapter() found no adapter");
    };
    let info = Reflect::get(&adapter, &"info".into()).unwrap_or(JsValue::UNDEFINED);
    let field = |key: &str| {
        Reflect::get(&info, &key.into())
            .ok()
            .and_then(|v| v.as_string())
            .filter(|s| !s.is_empty())
    };
    let name: Vec<String> = ["vendor", "architecture", "description"]
        .iter()
        .filter_map(|key| field(key))
        .collect();
    WebGpuStatus {
        available: true,
        adapter: Some(if name.is_empty() {
            "unnamed adapter".to_string()
        } else {
            name.join(" / ")
        }),
        used: false,
        reason: String::new(),
    }
}

/// The GPU and the calls waiting for it.
#[cfg(feature = "gpu")]
struct GpuSlot {
    /// `None` while a run holds it.
    gpu: RefCell<Option<Gpu>>,
    waiting: RefCell<Vec<std::task::Waker>>,
    adapter: AdapterSummary,
}

/// The GPU, taken out of its slot for one run; dropping it puts it back.
#[cfg(feature = "gpu")]
struct Held<'a> {
    slot: &'a GpuSlot,
    gpu: Option<Gpu>,
}

#[cfg(feature = "gpu")]
impl Held<'_> {
    fn gpu(&mut self) -> &mut Gpu {
        self.gpu.as_mut().expect("held until dropped")
    }
}

#[cfg(feature = "gpu")]
impl Drop for Held<'_> {
    fn drop(&mut self) {
        *self.slot.gpu.borrow_mut() = self.gpu.take();
        for waker in self.slot.waiting.borrow_mut().drain(..) {
            waker.wake();
        }
    }
}

#[cfg(feature = "gpu")]
impl GpuSlot {
    /// Waits until no other run holds the GPU, then holds it.
    async fn hold(&self) -> Held<'_> {
        std::future::poll_fn(|cx| match self.gpu.borrow_mut().take() {
            Some(gpu) => Poll::Ready(Held {
                slot: self,
                gpu: Some(gpu),
            }),
            None => {
                self.waiting.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

/// Where kernels run.
pub(super) struct Device {
    status: WebGpuStatus,
    #[cfg(feature = "gpu")]
    gpu: Option<GpuSlot>,
}

/// What an entry keeps so that its later calls only run: its schedule, and on the GPU its
/// program (WGSL, pipelines, uploaded parameters).
pub(super) enum Kernels {
    /// For the kernel interpreter.
    Cpu(Schedule),
    /// For the wgpu runtime.
    #[cfg(feature = "gpu")]
    Gpu(Box<Program>),
}

/// One run of an entry's kernels.
pub(super) struct Ran {
    /// The returned tensors, read back.
    pub outputs: Vec<Tensor>,
    /// Parameters uploaded and pipelines created for this run (0 once they exist), in ms.
    pub build_ms: f64,
    /// Upload, kernels and read-back, in ms (without `build_ms`).
    pub run_ms: f64,
    /// Each kernel's time, when asked for and measured.
    pub kernel_ms: Vec<(String, f64)>,
    /// How `kernel_ms` was measured: `timestamps`, `submit_to_done`, or `off`.
    pub timing: String,
}

/// The error `Tailor.create({ device: 'gpu' })` throws when there is no GPU to use.
fn no_gpu(reason: &str) -> JsValue {
    js_error(
        "device",
        &format!(
            "device 'gpu': {reason}; use 'auto' (the GPU when present, else the CPU) or 'cpu'"
        ),
        None,
    )
}

impl Device {
    /// Opens the device `choice` asks for: `auto` (WebGPU when it works, else the CPU),
    /// `gpu` (WebGPU or an error) or `cpu`.
    pub async fn open(choice: &str) -> Result<Device, JsValue> {
        if choice == "cpu" {
            return Ok(Device::cpu(WebGpuStatus::missing(
                "device 'cpu' was requested",
            )));
        }
        let mut status = probe_webgpu().await;
        if !status.available {
            return match choice {
                "gpu" => Err(no_gpu(&status.reason)),
                _ => Ok(Device::cpu(status)),
            };
        }
        Device::open_gpu(choice, &mut status).await
    }

    fn cpu(status: WebGpuStatus) -> Device {
        Device {
            status,
            #[cfg(feature = "gpu")]
            gpu: None,
        }
    }

    #[cfg(feature = "gpu")]
    async fn open_gpu(choice: &str, status: &mut WebGpuStatus) -> Result<Device, JsValue> {
        let opened = within(Gpu::new(Box::new(super::now_ms)), 10_000).await;
        let failure = match opened {
            Some(Ok(gpu)) => {
                status.used = true;
                status.reason = "the compiled kernels run on it (wgpu on WebGPU)".into();
                return Ok(Device {
                    status: status.clone(),
                    gpu: Some(GpuSlot {
                        adapter: gpu.adapter().clone(),
                        gpu: RefCell::new(Some(gpu)),
                        waiting: RefCell::new(Vec::new()),
                    }),
                });
            }
            Some(Err(err)) => err.to_string(),
            None => "opening a WebGPU device took longer than 10 s".to_string(),
        };
        match choice {
            "gpu" => Err(no_gpu(&failure)),
            _ => {
                status.reason = failure;
                Ok(Device::cpu(status.clone()))
            }
        }
    }

    #[cfg(not(feature = "gpu"))]
    async fn open_gpu(choice: &str, status: &mut WebGpuStatus) -> Result<Device, JsValue> {
        let reason = "this build has no GPU runtime (the crate's 'gpu' feature is off)";
        match choice {
            "gpu" => Err(no_gpu(reason)),
            _ => {
                status.reason = reason.into();
                Ok(Device::cpu(status.clone()))
            }
        }
    }

    /// `gpu` or `cpu`.
    pub fn name(&self) -> &'static str {
        #[cfg(feature = "gpu")]
        if self.gpu.is_some() {
            return "gpu";
        }
        "cpu"
    }

    /// What WebGPU the browser offers and whether it is used.
    pub fn status(&self) -> &WebGpuStatus {
        &self.status
    }

    /// The wgpu adapter calls run on, when on the GPU.
    #[cfg(feature = "gpu")]
    pub fn adapter(&self) -> Option<&AdapterSummary> {
        self.gpu.as_ref().map(|slot| &slot.adapter)
    }

    /// Drops the GPU's cached pipelines and pooled buffers, so the next builds pay what a
    /// fresh page pays (kept kernels rebuild their pipelines on their next run).
    pub async fn clear_cache(&self) {
        #[cfg(feature = "gpu")]
        if let Some(slot) = &self.gpu {
            slot.hold().await.gpu().clear_cache();
        }
    }

    /// The kernels of `schedule` for this device: on the GPU, its WGSL emitted in `mode`
    /// (`bindings` fixes the sizes of static code); on the CPU, the schedule itself.
    pub fn kernels(&self, schedule: Schedule, mode: Mode, bindings: &Bindings) -> Kernels {
        #[cfg(feature = "gpu")]
        if self.gpu.is_some() {
            return Kernels::Gpu(Box::new(Program::new(schedule, mode, bindings)));
        }
        let _ = (mode, bindings);
        Kernels::Cpu(schedule)
    }

    /// Runs `kernels` on `inputs`; `timing` asks for per-kernel times (GPU only).
    pub async fn run(
        &self,
        kernels: &mut Kernels,
        inputs: &[Tensor],
        timing: bool,
    ) -> Result<Ran, Error> {
        match kernels {
            Kernels::Cpu(schedule) => {
                // The interpreter runs kernels back to back and does not time them one by one.
                let _ = timing;
                let started = super::now_ms();
                let outputs = crate::runtime::cpu::run(schedule, inputs)?;
                Ok(Ran {
                    outputs,
                    build_ms: 0.0,
                    run_ms: super::now_ms() - started,
                    kernel_ms: Vec::new(),
                    timing: "off".into(),
                })
            }
            #[cfg(feature = "gpu")]
            Kernels::Gpu(program) => {
                let slot = self
                    .gpu
                    .as_ref()
                    .expect("GPU kernels are made only by a GPU device");
                let mut held = slot.hold().await;
                let gpu = held.gpu();
                let before = gpu.stats();
                let started = super::now_ms();
                gpu.prepare(program).await?;
                let prepared = super::now_ms();
                let after = gpu.stats();
                // `prepare` returns at once for a program already on the device: then
                // nothing was built, whatever the (coarse) clock says.
                let built = after.pipelines_created != before.pipelines_created
                    || after.bytes_held != before.bytes_held;
                let prepare_ms = if built { prepared - started } else { 0.0 };
                // Override code creates a pipeline per new shape inside `run`: count it as
                // building, not running.
                let pipelines_before = gpu.stats().pipeline_ms;
                let run = gpu.run(program, inputs, timing).await?;
                let finished = super::now_ms();
                let pipeline_ms = gpu.stats().pipeline_ms - pipelines_before;
                let timing = serde_json::to_value(run.timing)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                Ok(Ran {
                    outputs: run.outputs,
                    build_ms: prepare_ms + pipeline_ms,
                    run_ms: (finished - prepared - pipeline_ms).max(0.0),
                    kernel_ms: run.kernel_ms,
                    timing,
                })
            }
        }
    }
}
