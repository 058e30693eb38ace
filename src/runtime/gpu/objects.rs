//! The GPU runtime's compute objects: pipelines, bind groups, timestamp query sets and one
//! call's recorded commands. Natively they are wgpu's; on the web they are the browser's
//! own WebGPU objects ([`super::browser`]), made and recorded around wgpu, which still owns
//! the adapter, the device, the queue, the buffers, their mapping and the error scopes.
//!
//! In: the device, a kernel's WGSL and override values, a pipeline and its buffers, a
//! call's passes and copies. Out: the objects, and the call's commands submitted to the
//! queue. Invariants: both targets record the same commands in the same order (one compute
//! pass per kernel, then the copies and the timestamp resolve), so everything above this
//! file is one code path; on the web the browser's objects belong to wgpu's device, so its
//! error scopes and its uncaptured-error handler see their errors as they see wgpu's own.
//! Why the web goes around wgpu: wgpu 30 creates pipelines only synchronously there and
//! cannot adopt a pipeline the browser built with `createComputePipelineAsync`, which
//! tiers need (`tiers.rs`).

#[cfg(not(target_arch = "wasm32"))]
use super::GpuError;
#[cfg(not(target_arch = "wasm32"))]
use crate::codegen::Wgsl;

#[cfg(target_arch = "wasm32")]
pub(super) use super::browser::{
    BindGroup, Pipeline, QuerySet, Recorder, bind_group, build_pipeline, query_set,
};

/// A compute pipeline (wgpu's natively).
#[cfg(not(target_arch = "wasm32"))]
pub(super) type Pipeline = wgpu::ComputePipeline;
/// A bind group (wgpu's natively).
#[cfg(not(target_arch = "wasm32"))]
pub(super) type BindGroup = wgpu::BindGroup;
/// A timestamp query set (wgpu's natively).
#[cfg(not(target_arch = "wasm32"))]
pub(super) type QuerySet = wgpu::QuerySet;

/// A kernel's shader module and pipeline with these override values; errors surface in
/// the caller's error scope (on the caller's thread).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn build_pipeline(
    device: &wgpu::Device,
    wgsl: &Wgsl,
    overrides: &[i64],
) -> Result<Pipeline, GpuError> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&wgsl.kernel),
        source: wgpu::ShaderSource::Wgsl(wgsl.source.as_str().into()),
    });
    let constants = wgsl.override_constants(overrides);
    let constants: Vec<(&str, f64)> = constants
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect();
    Ok(
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&wgsl.kernel),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &constants,
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        }),
    )
}

/// A bind group of `pipeline`'s layout with `buffers` bound whole at bindings 0, 1, ….
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn bind_group(
    device: &wgpu::Device,
    pipeline: &Pipeline,
    label: &str,
    buffers: &[&wgpu::Buffer],
) -> Result<BindGroup, GpuError> {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(binding, buffer)| wgpu::BindGroupEntry {
            binding: binding as u32,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    Ok(device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    }))
}

/// A set of `count` timestamp queries.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn query_set(device: &wgpu::Device, count: u32) -> Result<QuerySet, GpuError> {
    Ok(device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("kernel times"),
        ty: wgpu::QueryType::Timestamp,
        count,
    }))
}

/// One submission's commands, recorded into a wgpu command encoder.
#[cfg(not(target_arch = "wasm32"))]
pub(super) struct Recorder {
    encoder: wgpu::CommandEncoder,
}

#[cfg(not(target_arch = "wasm32"))]
impl Recorder {
    /// An empty recording.
    pub(super) fn new(device: &wgpu::Device) -> Recorder {
        Recorder {
            encoder: device.create_command_encoder(&Default::default()),
        }
    }

    /// One compute pass named `label`: `pipeline` with `bind_group` and `immediates` (none
    /// when empty), a grid of `x` by `y` workgroups, and, when given, timestamps written at
    /// query `index` (begin) and `index + 1` (end).
    pub(super) fn pass(
        &mut self,
        label: &str,
        pipeline: &Pipeline,
        bind_group: &BindGroup,
        immediates: &[i32],
        (x, y): (u32, u32),
        timestamps: Option<(&QuerySet, u32)>,
    ) {
        let mut pass = self
            .encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: timestamps.map(|(query_set, index)| {
                    wgpu::ComputePassTimestampWrites {
                        query_set,
                        beginning_of_pass_write_index: Some(index),
                        end_of_pass_write_index: Some(index + 1),
                    }
                }),
            });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        if !immediates.is_empty() {
            pass.set_immediates(0, bytemuck::cast_slice(immediates));
        }
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Copies the first `bytes` of `from` to `to`.
    pub(super) fn copy(&mut self, from: &wgpu::Buffer, to: &wgpu::Buffer, bytes: u64) {
        self.encoder.copy_buffer_to_buffer(from, 0, to, 0, bytes);
    }

    /// Resolves the first `count` queries of `query_set` into `into`.
    pub(super) fn resolve(&mut self, query_set: &QuerySet, count: u32, into: &wgpu::Buffer) {
        self.encoder.resolve_query_set(query_set, 0..count, into, 0);
    }

    /// Submits the recording to the queue.
    pub(super) fn submit(self, queue: &wgpu::Queue) -> Result<(), GpuError> {
        queue.submit([self.encoder.finish()]);
        Ok(())
    }
}
