//! Opening the backend in a browser: probing WebGPU, then the wgpu runtime on it or the CPU
//! backend.
//!
//! In: `Tailor.create`'s `device` option, parsed by `session::executor::Device`. Out: the
//! `Backend` every model of one `Tailor` shares, and a [`WebGpuStatus`] saying what the
//! browser offers and why it is or is not used. Invariant: nothing here waits forever —
//! a browser that never answers `requestAdapter` or never opens a device is timed out, and
//! `auto` then falls back to the CPU; choosing, building and running kernels is the
//! executor's, not this file's.

use super::convert::js_error;
use crate::session::executor::{Backend, Device};
use js_sys::{Function, Promise, Reflect};
use serde::Serialize;
use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[cfg(feature = "gpu")]
use crate::runtime::gpu::Gpu;

/// What the browser offers for the kernels, and whether Tailor uses it.
#[derive(Clone, Serialize)]
pub(super) struct WebGpuStatus {
    /// `navigator.gpu` exists and returned an adapter.
    available: bool,
    /// The adapter's vendor / architecture / description, when there is one.
    adapter: Option<String>,
    /// Whether the adapter is a CPU emulation of a GPU (SwiftShader, llvmpipe/lavapipe, WARP,
    /// or any adapter the browser flags `isFallbackAdapter`): its times only compare with each
    /// other, and say nothing of a real GPU.
    emulated: bool,
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
            emulated: false,
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
    let flagged = |object: &JsValue| {
        Reflect::get(object, &"isFallbackAdapter".into()).is_ok_and(|v| v.is_truthy())
    };
    let name = name.join(" / ");
    WebGpuStatus {
        available: true,
        emulated: flagged(&info) || flagged(&adapter) || crate::runtime::is_software_adapter(&name),
        adapter: Some(if name.is_empty() {
            "unnamed adapter".to_string()
        } else {
            name
        }),
        used: false,
        reason: String::new(),
    }
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

/// Opens the backend `device` asks for: `auto` (WebGPU when it works, else the CPU), `gpu`
/// (WebGPU or an error) or `cpu`.
pub(super) async fn open(device: Device) -> Result<(Backend, WebGpuStatus), JsValue> {
    if device == Device::Cpu {
        let status = WebGpuStatus::missing("device 'cpu' was requested");
        return Ok((Backend::cpu(), status));
    }
    let mut status = probe_webgpu().await;
    if !status.available {
        return match device {
            Device::Gpu => Err(no_gpu(&status.reason)),
            _ => Ok((Backend::cpu(), status)),
        };
    }
    let failure = match open_gpu(&mut status).await {
        Ok(backend) => return Ok((backend, status)),
        Err(failure) => failure,
    };
    match device {
        Device::Gpu => Err(no_gpu(&failure)),
        _ => {
            status.reason = failure;
            Ok((Backend::cpu(), status))
        }
    }
}

/// The wgpu runtime on the browser's WebGPU, or why not.
#[cfg(feature = "gpu")]
async fn open_gpu(status: &mut WebGpuStatus) -> Result<Backend, String> {
    match within(Gpu::new(Box::new(super::now_ms)), 10_000).await {
        Some(Ok(mut gpu)) => {
            if status.emulated {
                gpu.mark_emulated();
            }
            status.used = true;
            status.reason = "the compiled kernels run on it (wgpu on WebGPU)".into();
            Ok(Backend::gpu(gpu))
        }
        Some(Err(err)) => Err(err.to_string()),
        None => Err("opening a WebGPU device took longer than 10 s".to_string()),
    }
}

#[cfg(not(feature = "gpu"))]
async fn open_gpu(_status: &mut WebGpuStatus) -> Result<Backend, String> {
    Err(crate::session::executor::NO_GPU_RUNTIME.to_string())
}
