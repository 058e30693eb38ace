//! The browser boundary: the only code that knows JavaScript exists (wasm32 only).
//!
//! In: calls from the page (`www/app.js`) or any other page that imports `tailor.js`:
//! `Tailor.create`, `tailor.compile(source, options)`, `model.call(inputs)`, … (README, "The
//! page"). Out: plain JS objects built from the views in `view.rs`, `Float32Array` outputs,
//! and thrown `TailorError`s with a `kind` and the source `line`/`col`. Time is
//! `performance.now()`, passed to the compiler as its clock. Page logic stays in `www/`.

mod compilation;
mod convert;
mod model;
mod presets;
mod quiz;
mod view;

pub use compilation::Compilation;
pub use model::Model;

use convert::{bad_argument, to_js};
use js_sys::{Function, Promise, Reflect};
use serde::Serialize;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

thread_local! {
    /// The message of the last panic in this module instance. After a panic the instance may
    /// be broken, but this stays readable, so the page can show the message in place (the one
    /// piece of state here: the compiler itself keeps none).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
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
    let performance = Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .filter(|p| p.is_object());
    let now = performance.as_ref().and_then(|p| {
        let now = Reflect::get(p, &"now".into())
            .ok()?
            .dyn_into::<Function>()
            .ok()?;
        now.call0(p).ok()?.as_f64()
    });
    now.unwrap_or_else(js_sys::Date::now)
}

/// What the browser offers for the kernels, and whether Tailor uses it.
#[derive(Clone, Serialize)]
struct WebGpuStatus {
    /// `navigator.gpu` exists and returned an adapter.
    available: bool,
    /// The adapter's vendor / architecture / description, when there is one.
    adapter: Option<String>,
    /// Whether kernels run on it (not yet: the GPU runtime is the kernels stage).
    used: bool,
    /// Why it is or is not used, in words.
    reason: String,
}

/// The entry point of the JS API: `await Tailor.create({ device: 'auto' })`.
#[wasm_bindgen]
pub struct Tailor {
    webgpu: WebGpuStatus,
}

const NO_GPU_RUNTIME: &str = "Tailor's GPU runtime (WGSL kernels) arrives with the kernels stage; calls run on the CPU reference";

/// Waits for `promise` at most `ms` milliseconds; `None` on timeout or rejection.
async fn await_with_timeout(promise: Promise, ms: i32) -> Option<JsValue> {
    let timeout = Promise::new(&mut |resolve, _reject| {
        let set_timeout = Reflect::get(&js_sys::global(), &"setTimeout".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok());
        if let Some(set_timeout) = set_timeout {
            let _ = set_timeout.call2(&JsValue::NULL, &resolve, &JsValue::from(ms));
        }
    });
    let race = Promise::race(&js_sys::Array::of2(&promise, &timeout));
    JsFuture::from(race)
        .await
        .ok()
        .filter(|v| !v.is_undefined())
}

/// Asks the browser for a WebGPU adapter (informative until the kernels stage).
async fn probe_webgpu() -> WebGpuStatus {
    let missing = |reason: &str| WebGpuStatus {
        available: false,
        adapter: None,
        used: false,
        reason: reason.to_string(),
    };
    let global = js_sys::global();
    let gpu = Reflect::get(&global, &"navigator".into())
        .and_then(|navigator| Reflect::get(&navigator, &"gpu".into()))
        .unwrap_or(JsValue::UNDEFINED);
    if gpu.is_undefined() || gpu.is_null() {
        return missing("this browser has no WebGPU (navigator.gpu is missing)");
    }
    let request = Reflect::get(&gpu, &"requestAdapter".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .and_then(|f| f.call0(&gpu).ok())
        .and_then(|p| p.dyn_into::<Promise>().ok());
    let Some(request) = request else {
        return missing("navigator.gpu.requestAdapter() could not be called");
    };
    let Some(adapter) = await_with_timeout(request, 3000)
        .await
        .filter(|a| !a.is_null())
    else {
        return missing("navigator.gpu.requestAdapter() found no adapter");
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
        reason: NO_GPU_RUNTIME.to_string(),
    }
}

#[wasm_bindgen]
impl Tailor {
    /// Creates the API. `options.device`: `'auto'` (default: WebGPU when present, else the
    /// CPU), `'cpu'`, or `'gpu'` (an error until the GPU runtime exists).
    pub async fn create(options: JsValue) -> Result<Tailor, JsValue> {
        let device = if options.is_object() {
            Reflect::get(&options, &"device".into())
                .ok()
                .and_then(|d| d.as_string())
        } else {
            None
        };
        let webgpu = match device.as_deref().unwrap_or("auto") {
            "auto" => probe_webgpu().await,
            "cpu" => WebGpuStatus {
                available: false,
                adapter: None,
                used: false,
                reason: "device 'cpu' was requested".into(),
            },
            "gpu" => {
                return Err(convert::js_error(
                    "device",
                    &format!("device 'gpu': {NO_GPU_RUNTIME}; use 'auto' or 'cpu'"),
                    None,
                ));
            }
            other => {
                return Err(bad_argument(format!(
                    "device: expected 'auto', 'cpu' or 'gpu', got '{other}'"
                )));
            }
        };
        Ok(Tailor { webgpu })
    }

    /// Where calls run: `'cpu'` (the reference interpreter) until the GPU runtime exists.
    #[wasm_bindgen(getter)]
    pub fn device(&self) -> String {
        "cpu".into()
    }

    /// `{ available, adapter, used, reason }`: what WebGPU the browser offers.
    #[wasm_bindgen(getter)]
    pub fn webgpu(&self) -> JsValue {
        to_js(&self.webgpu)
    }

    /// Parses `source`, builds its module and returns a `torch.compile` wrapper of it.
    /// `options`: `{ dynamic: 'auto' | 'true' | 'false', markDynamic: [['x', 0, min?, max?]],
    /// markStatic: [['x', 1]], entry?: 'ClassName', recompileLimit?: 8 }`. Throws a
    /// `TailorError` (`kind`, `message`, `line`, `col`) for a bad model or bad options.
    pub fn compile(&self, source: &str, options: JsValue) -> Result<Model, JsValue> {
        Model::new(source, &options)
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
