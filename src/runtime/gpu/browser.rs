//! The page's compute objects as the browser's own WebGPU objects: pipelines (built
//! synchronously on a call's path, or with `createComputePipelineAsync` for tiers), bind
//! groups, timestamp query sets, and one submission recorded by one call into JavaScript.
//!
//! In: wgpu's device and queue and buffers, whose browser objects wgpu hands out
//! (`as_webgpu`); a kernel's WGSL and override values. Out: the browser's objects, and a
//! call's commands submitted on wgpu's queue. Invariants: every object is made on wgpu's
//! device, so wgpu's error scopes and uncaptured-error handler see its errors; commands are
//! recorded in the order the [`Recorder`] was given them; a JavaScript exception comes
//! back as a [`GpuError::Rejected`] naming what was being made, never as a trap.

use super::GpuError;
use crate::codegen::Wgsl;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
function descriptor(device, label, code, constants) {
  const module = device.createShaderModule({ label, code });
  return { label, layout: "auto", compute: { module, entryPoint: "main", constants } };
}
export function tailorPipeline(device, label, code, constants) {
  return device.createComputePipeline(descriptor(device, label, code, constants));
}
export async function tailorPipelineAsync(device, label, code, constants) {
  const started = performance.now();
  const pipeline = await device.createComputePipelineAsync(descriptor(device, label, code, constants));
  return [pipeline, performance.now() - started];
}
export function tailorBindGroup(device, pipeline, buffers) {
  const entries = buffers.map((buffer, binding) => ({ binding, resource: { buffer } }));
  return device.createBindGroup({ label: pipeline.label, layout: pipeline.getBindGroupLayout(0), entries });
}
export function tailorImmediateSize(device) {
  const wgsl = globalThis.navigator?.gpu?.wgslLanguageFeatures;
  const pass = globalThis.GPUComputePassEncoder?.prototype;
  const usable = wgsl?.has("immediate_address_space") && typeof pass?.setImmediates === "function";
  return usable ? (device.limits.maxImmediateSize ?? 0) : 0;
}
export function tailorAskForSubgroups() {
  const adapter = globalThis.GPUAdapter?.prototype;
  const requestDevice = adapter?.requestDevice;
  if (!requestDevice) return () => {};
  adapter.requestDevice = function (descriptor = {}) {
    const wanted = this.features.has("subgroups") ? ["subgroups"] : [];
    const requiredFeatures = [...(descriptor.requiredFeatures ?? []), ...wanted];
    return requestDevice.call(this, { ...descriptor, requiredFeatures });
  };
  return () => { adapter.requestDevice = requestDevice; };
}
export function tailorHasSubgroups(device) {
  return device.features.has("subgroups");
}
export function tailorSubgroupMinSize(device) {
  return device.adapterInfo?.subgroupMinSize ?? 0;
}
export function tailorQuerySet(device, count) {
  return device.createQuerySet({ label: "kernel times", type: "timestamp", count });
}
export function tailorSubmit(device, queue, numbers, objects) {
  const encoder = device.createCommandEncoder();
  let n = 0, o = 0;
  while (n < numbers.length) {
    const command = numbers[n++];
    if (command === 0) {
      const [x, y, index, count] = [numbers[n++], numbers[n++], numbers[n++], numbers[n++]];
      const immediates = count > 0 ? Int32Array.from(numbers.subarray(n, n + count)) : null;
      n += count;
      const pipeline = objects[o++], bindGroup = objects[o++];
      const pass = encoder.beginComputePass(index < 0 ? { label: pipeline.label } : {
        label: pipeline.label,
        timestampWrites: { querySet: objects[o++], beginningOfPassWriteIndex: index, endOfPassWriteIndex: index + 1 },
      });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      if (immediates) pass.setImmediates(0, immediates);
      pass.dispatchWorkgroups(x, y);
      pass.end();
    } else if (command === 1) {
      encoder.copyBufferToBuffer(objects[o++], 0, objects[o++], 0, numbers[n++]);
    } else {
      encoder.resolveQuerySet(objects[o++], 0, numbers[n++], objects[o++], 0);
    }
  }
  queue.submit([encoder.finish()]);
}
export function tailorMapRead(buffers, bytes, queue, nudgeEveryMs, nudges) {
  const mapped = Promise.all(buffers.map((buffer, i) => bytes[i] > 0 ? buffer.mapAsync(GPUMapMode.READ, 0, bytes[i]) : null));
  if (nudges === 0) return mapped.then(() => 0);
  let sent = 0;
  const nudge = () => {
    queue.submit([]);
    sent += 1;
  };
  const timers = Array.from({ length: nudges }, (_, i) => setTimeout(nudge, (i + 1) * nudgeEveryMs));
  const stop = () => timers.forEach(clearTimeout);
  return mapped.then(() => {
    stop();
    return sent;
  }, (error) => {
    stop();
    throw error;
  });
}
export function tailorReadMapped(buffer, into) {
  into.set(new Uint8Array(buffer.getMappedRange(0, into.length)));
  buffer.unmap();
}
"#)]
extern "C" {
    #[wasm_bindgen(catch, js_name = tailorPipeline)]
    fn js_pipeline(
        device: &JsValue,
        label: &str,
        code: &str,
        constants: &JsValue,
    ) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(catch, js_name = tailorPipelineAsync)]
    fn js_pipeline_async(
        device: &JsValue,
        label: &str,
        code: &str,
        constants: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(catch, js_name = tailorBindGroup)]
    fn js_bind_group(
        device: &JsValue,
        pipeline: &JsValue,
        buffers: Vec<JsValue>,
    ) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(js_name = tailorImmediateSize)]
    fn js_immediate_size(device: &JsValue) -> u32;

    #[wasm_bindgen(js_name = tailorAskForSubgroups)]
    fn js_ask_for_subgroups() -> js_sys::Function;

    #[wasm_bindgen(js_name = tailorHasSubgroups)]
    fn js_has_subgroups(device: &JsValue) -> bool;

    #[wasm_bindgen(js_name = tailorSubgroupMinSize)]
    fn js_subgroup_min_size(device: &JsValue) -> u32;

    #[wasm_bindgen(catch, js_name = tailorQuerySet)]
    fn js_query_set(device: &JsValue, count: u32) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(catch, js_name = tailorSubmit)]
    fn js_submit(
        device: &JsValue,
        queue: &JsValue,
        numbers: &[f64],
        objects: Vec<JsValue>,
    ) -> Result<(), JsValue>;

    #[wasm_bindgen(catch, js_name = tailorMapRead)]
    fn js_map_read(
        buffers: Vec<JsValue>,
        bytes: &[f64],
        queue: &JsValue,
        nudge_every_ms: f64,
        nudges: u32,
    ) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(catch, js_name = tailorReadMapped)]
    fn js_read_mapped(buffer: &JsValue, into: &mut [u8]) -> Result<(), JsValue>;
}

/// A `GPUComputePipeline`.
pub(in crate::runtime::gpu) struct Pipeline(JsValue);

/// A `GPUBindGroup`.
pub(in crate::runtime::gpu) struct BindGroup(JsValue);

/// A `GPUQuerySet` of timestamps.
pub(in crate::runtime::gpu) struct QuerySet(JsValue);

/// wgpu's device as the browser's `GPUDevice`.
fn raw_device(device: &wgpu::Device) -> JsValue {
    JsValue::from(device.as_webgpu().expect(ONLY_WEBGPU).clone())
}

/// wgpu's buffer as the browser's `GPUBuffer`.
fn raw_buffer(buffer: &wgpu::Buffer) -> JsValue {
    JsValue::from(buffer.as_webgpu().expect(ONLY_WEBGPU).clone())
}

/// Why `as_webgpu` always answers here.
const ONLY_WEBGPU: &str = "WebGPU is wgpu's only backend on wasm32";

/// A JavaScript exception's or rejection's message.
fn message(error: &JsValue) -> String {
    js_sys::Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| format!("{error:?}"))
}

/// A JavaScript exception as the error of making `what`.
fn rejected(what: String, error: &JsValue) -> GpuError {
    GpuError::Rejected {
        what,
        message: message(error),
    }
}

/// The override constants as a JavaScript object, name to value.
fn constants_object(wgsl: &Wgsl, overrides: &[i64]) -> JsValue {
    let object = js_sys::Object::new();
    for (name, value) in wgsl.override_constants(overrides) {
        // Setting a property on a fresh plain object cannot fail.
        let _ = js_sys::Reflect::set(&object, &name.into(), &value.into());
    }
    object.into()
}

/// A kernel's shader module and pipeline with these override values, made on the call's
/// path; validation errors surface in the caller's error scope.
pub(in crate::runtime::gpu) fn build_pipeline(
    device: &wgpu::Device,
    wgsl: &Wgsl,
    overrides: &[i64],
) -> Result<Pipeline, GpuError> {
    let constants = constants_object(wgsl, overrides);
    js_pipeline(&raw_device(device), &wgsl.kernel, &wgsl.source, &constants)
        .map(Pipeline)
        .map_err(|e| rejected(format!("the shader of {}", wgsl.kernel), &e))
}

/// A kernel's pipeline built by the browser off the call's path: a promise of the
/// pipeline and its build time in ms, rejected with the browser's `GPUPipelineError`.
pub(in crate::runtime::gpu) fn build_pipeline_async(
    device: &wgpu::Device,
    wgsl: &Wgsl,
    overrides: &[i64],
) -> Result<js_sys::Promise, GpuError> {
    let constants = constants_object(wgsl, overrides);
    js_pipeline_async(&raw_device(device), &wgsl.kernel, &wgsl.source, &constants)
        .map_err(|e| rejected(format!("the shader of {}", wgsl.kernel), &e))
}

/// A flag set once `promise` settles (resolved or rejected), for a caller that must not
/// wait for it.
pub(in crate::runtime::gpu) fn settled(promise: &js_sys::Promise) -> Rc<Cell<bool>> {
    let settled = Rc::new(Cell::new(false));
    let (watched, flag) = (promise.clone(), settled.clone());
    wasm_bindgen_futures::spawn_local(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(watched).await;
        flag.set(true);
    });
    settled
}

/// The pipeline and build time a settled [`build_pipeline_async`] promise gave, or the
/// browser's message.
pub(in crate::runtime::gpu) async fn built(
    promise: js_sys::Promise,
) -> Result<(Pipeline, f64), String> {
    match wasm_bindgen_futures::JsFuture::from(promise).await {
        Ok(pair) => {
            let pair = js_sys::Array::from(&pair);
            Ok((Pipeline(pair.get(0)), pair.get(1).as_f64().unwrap_or(0.0)))
        }
        Err(error) => Err(message(&error)),
    }
}

/// A bind group of `pipeline`'s layout with `buffers` bound whole at bindings 0, 1, ….
pub(in crate::runtime::gpu) fn bind_group(
    device: &wgpu::Device,
    pipeline: &Pipeline,
    label: &str,
    buffers: &[&wgpu::Buffer],
) -> Result<BindGroup, GpuError> {
    let buffers = buffers.iter().map(|b| raw_buffer(b)).collect();
    js_bind_group(&raw_device(device), &pipeline.0, buffers)
        .map(BindGroup)
        .map_err(|e| rejected(format!("the bind group of {label}"), &e))
}

/// The bytes of immediates the browser's device takes per dispatch: its
/// `maxImmediateSize` where the browser has WGSL's `immediate_address_space` and
/// `setImmediates`, else 0 (wgpu 30's web backend reports 0 whatever the browser has).
pub(in crate::runtime::gpu) fn immediate_size(device: &wgpu::Device) -> u32 {
    js_immediate_size(&raw_device(device))
}

/// Makes the device requests started until `restore` runs ask for the browser's
/// `subgroups` feature where the adapter has it: wgpu 30's web backend does not map that
/// feature, so it cannot ask for it itself. The request starts when wgpu's
/// `request_device` is called, so the caller restores right after that call.
pub(in crate::runtime::gpu) fn ask_for_subgroups() -> SubgroupRequest {
    SubgroupRequest(js_ask_for_subgroups())
}

/// The browser's device requests asking for `subgroups`, until dropped.
pub(in crate::runtime::gpu) struct SubgroupRequest(js_sys::Function);

impl Drop for SubgroupRequest {
    fn drop(&mut self) {
        // Restoring the browser's own method cannot fail.
        let _ = self.0.call0(&JsValue::UNDEFINED);
    }
}

/// Whether wgpu's device has the browser's subgroup operations.
pub(in crate::runtime::gpu) fn has_subgroups(device: &wgpu::Device) -> bool {
    js_has_subgroups(&raw_device(device))
}

/// The fewest lanes a subgroup of wgpu's device has (the adapter's `subgroupMinSize`; 0
/// where the browser does not say).
pub(in crate::runtime::gpu) fn subgroup_min_size(device: &wgpu::Device) -> u32 {
    js_subgroup_min_size(&raw_device(device))
}

/// A set of `count` timestamp queries.
pub(in crate::runtime::gpu) fn query_set(
    device: &wgpu::Device,
    count: u32,
) -> Result<QuerySet, GpuError> {
    js_query_set(&raw_device(device), count)
        .map(QuerySet)
        .map_err(|e| rejected("the kernels' timestamp queries".into(), &e))
}

/// One submission's commands, kept as numbers and objects and recorded into one command
/// encoder by one call into JavaScript when submitted.
pub(in crate::runtime::gpu) struct Recorder {
    device: JsValue,
    /// Each command's tag (0 pass, 1 copy, 2 resolve) and numbers (a pass's immediates
    /// after their count).
    numbers: Vec<f64>,
    /// Each command's objects, in the order the commands take them.
    objects: Vec<JsValue>,
}

impl Recorder {
    /// An empty recording.
    pub(in crate::runtime::gpu) fn new(device: &wgpu::Device) -> Recorder {
        Recorder {
            device: raw_device(device),
            numbers: Vec::new(),
            objects: Vec::new(),
        }
    }

    /// One compute pass (named by its pipeline's label): `pipeline` with `bind_group` and
    /// `immediates` (none when empty), a grid of `x` by `y` workgroups, and, when given,
    /// timestamps written at query `index` (begin) and `index + 1` (end).
    pub(in crate::runtime::gpu) fn pass(
        &mut self,
        _label: &str,
        pipeline: &Pipeline,
        bind_group: &BindGroup,
        immediates: &[i32],
        (x, y): (u32, u32),
        timestamps: Option<(&QuerySet, u32)>,
    ) {
        let index = timestamps.map_or(-1.0, |(_, index)| f64::from(index));
        let count = immediates.len() as f64;
        self.numbers
            .extend([0.0, f64::from(x), f64::from(y), index, count]);
        self.numbers
            .extend(immediates.iter().map(|&value| f64::from(value)));
        self.objects.push(pipeline.0.clone());
        self.objects.push(bind_group.0.clone());
        if let Some((query_set, _)) = timestamps {
            self.objects.push(query_set.0.clone());
        }
    }

    /// Copies the first `bytes` of `from` to `to`.
    pub(in crate::runtime::gpu) fn copy(
        &mut self,
        from: &wgpu::Buffer,
        to: &wgpu::Buffer,
        bytes: u64,
    ) {
        self.numbers.extend([1.0, bytes as f64]);
        self.objects.push(raw_buffer(from));
        self.objects.push(raw_buffer(to));
    }

    /// Resolves the first `count` queries of `query_set` into `into`.
    pub(in crate::runtime::gpu) fn resolve(
        &mut self,
        query_set: &QuerySet,
        count: u32,
        into: &wgpu::Buffer,
    ) {
        self.numbers.extend([2.0, f64::from(count)]);
        self.objects.push(query_set.0.clone());
        self.objects.push(raw_buffer(into));
    }

    /// Records everything into one command encoder and submits it to `queue`.
    pub(in crate::runtime::gpu) fn submit(self, queue: &wgpu::Queue) -> Result<(), GpuError> {
        let queue = JsValue::from(queue.as_webgpu().expect(ONLY_WEBGPU).clone());
        js_submit(&self.device, &queue, &self.numbers, self.objects)
            .map_err(|e| rejected("a call's commands".into(), &e))
    }
}

/// The time between a pending read-back's nudges, and before the first, in ms
/// (`readback::MAX_NUDGES`): the shortest timer there is, since `setTimeout` takes whole
/// milliseconds. All of a read-back's timers are set at once: a timer set by a timer is
/// clamped to 4 ms after five levels of nesting.
const NUDGE_EVERY_MS: f64 = 1.0;

/// Maps the first `bytes` of each buffer (none of an empty one) for reading: a future that
/// ends once all are mapped. The browser's objects are mapped directly, not through wgpu,
/// so that [`read_mapped`] reads each with one call into JavaScript (wgpu's mapped range
/// copies through a buffer of its own); wgpu's record of the mappings stays empty, and
/// every mapping of a read-back buffer goes through here. While the mappings are pending,
/// an empty command list is submitted to `queue` every [`NUDGE_EVERY_MS`], `nudges` times
/// at most, and counted in `nudges_sent`.
pub(in crate::runtime::gpu) fn map_read(
    targets: &[(wgpu::Buffer, u64)],
    queue: &wgpu::Queue,
    nudges: u32,
    nudges_sent: &Arc<AtomicU64>,
) -> impl std::future::Future<Output = Result<(), GpuError>> + use<> {
    let buffers = targets
        .iter()
        .map(|(buffer, _)| raw_buffer(buffer))
        .collect();
    let bytes: Vec<f64> = targets.iter().map(|&(_, bytes)| bytes as f64).collect();
    let queue = JsValue::from(queue.as_webgpu().expect(ONLY_WEBGPU).clone());
    let mapping = js_map_read(buffers, &bytes, &queue, NUDGE_EVERY_MS, nudges);
    let sent = Arc::clone(nudges_sent);
    async move {
        let promise = mapping.map_err(|e| GpuError::ReadBack(message(&e)))?;
        let nudged = wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .map_err(|e| GpuError::ReadBack(message(&e)))?;
        sent.fetch_add(nudged.as_f64().unwrap_or(0.0) as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// Copies the first `into.len()` bytes of a buffer [`map_read`] mapped into `into`, and
/// unmaps it.
pub(in crate::runtime::gpu) fn read_mapped(
    buffer: &wgpu::Buffer,
    into: &mut [u8],
) -> Result<(), GpuError> {
    js_read_mapped(&raw_buffer(buffer), into).map_err(|e| GpuError::ReadBack(message(&e)))
}
