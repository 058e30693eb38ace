//! One call on the device: buffers uploaded, bind groups made, compute passes recorded.
//!
//! In: a prepared program, the call's sizes and inputs, and each kernel's pipeline. Out:
//! the command encoder (and timestamp query set) for read-back, with every pooled buffer
//! the call uses pushed on `held`, for the pool once the call is done. Invariant: no
//! dispatch exceeds the adapter's workgroups per dimension (nor `MAX_GRID_DIM`): a larger
//! grid is split over x and y.

use super::limits::MAX_GRID_DIM;
use super::{Gpu, Launch, Program, STORAGE, Timing};
use crate::codegen::Resource;
use crate::graph::Tensor;
use crate::lower::Role;
use crate::runtime::Sizes;
use std::sync::Arc;

impl Gpu {
    /// One device buffer per schedule buffer: parameters as uploaded, the rest from the
    /// pool (pushed on `held`), inputs written.
    pub(super) fn upload(
        &mut self,
        program: &Program,
        sizes: &Sizes,
        inputs: &[Tensor],
        held: &mut Vec<wgpu::Buffer>,
    ) -> Vec<wgpu::Buffer> {
        let resident = program.resident.as_ref().expect("prepared");
        let mut buffers = Vec::with_capacity(program.schedule.buffers.len());
        for (i, buffer) in program.schedule.buffers.iter().enumerate() {
            if let Role::Param(_) = buffer.role {
                buffers.push(resident.params[i].clone().expect("parameters are uploaded"));
                continue;
            }
            let bytes = (sizes.buffer_lens[i] * 4) as u64;
            let gpu_buffer = self.pool.acquire(&self.device, STORAGE, bytes);
            if let Role::Input(n) = buffer.role {
                let data = bytemuck::cast_slice(&inputs[n].data);
                self.queue.write_buffer(&gpu_buffer, 0, data);
            }
            held.push(gpu_buffer.clone());
            buffers.push(gpu_buffer);
        }
        buffers
    }

    /// Each kernel's bind group for the WGSL form it launches with, with its `dims`
    /// uniform written where it has one.
    pub(super) fn bind_groups(
        &mut self,
        launches: &[Launch<'_>],
        sizes: &Sizes,
        buffers: &[wgpu::Buffer],
        pipelines: &[Arc<wgpu::ComputePipeline>],
        held: &mut Vec<wgpu::Buffer>,
    ) -> Vec<wgpu::BindGroup> {
        let mut bind_groups = Vec::with_capacity(launches.len());
        for (launch, pipeline) in launches.iter().zip(pipelines) {
            let wgsl = launch.wgsl;
            let mut uniform = None;
            if wgsl.resources.contains(&Resource::Dims) {
                // A uniform struct of i32 fields, padded to 16 bytes.
                let mut values: Vec<i32> = wgsl
                    .symbols
                    .iter()
                    .map(|&s| sizes.bindings.get(s).unwrap_or_default() as i32)
                    .collect();
                values.resize(values.len().div_ceil(4) * 4, 0);
                let usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
                let bytes = (values.len() * 4) as u64;
                let gpu_buffer = self.pool.acquire(&self.device, usage, bytes);
                self.queue
                    .write_buffer(&gpu_buffer, 0, bytemuck::cast_slice(&values));
                held.push(gpu_buffer.clone());
                uniform = Some(gpu_buffer);
            }
            let entries: Vec<wgpu::BindGroupEntry<'_>> = wgsl
                .resources
                .iter()
                .enumerate()
                .map(|(binding, resource)| wgpu::BindGroupEntry {
                    binding: binding as u32,
                    resource: match resource {
                        Resource::Read(id) | Resource::Write(id) => {
                            buffers[id.index()].as_entire_binding()
                        }
                        Resource::Dims => uniform.as_ref().expect("made above").as_entire_binding(),
                    },
                })
                .collect();
            bind_groups.push(self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&wgsl.kernel),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            }));
        }
        bind_groups
    }

    /// Records one compute pass per kernel (a grid beyond 65,535 workgroups split over x
    /// and y). Submit-to-done timing submits and waits after each pass and returns the times.
    pub(super) async fn encode(
        &mut self,
        program: &Program,
        sizes: &Sizes,
        pipelines: &[Arc<wgpu::ComputePipeline>],
        bind_groups: &[wgpu::BindGroup],
        mode: Timing,
    ) -> (
        wgpu::CommandEncoder,
        Option<wgpu::QuerySet>,
        Vec<(String, f64)>,
    ) {
        let per_dim = u64::from(self.limits.max_compute_workgroups_per_dimension).min(MAX_GRID_DIM);
        let n_kernels = program.wgsl.len() as u32;
        let queries = (mode == Timing::Timestamps && n_kernels > 0).then(|| {
            self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel times"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * n_kernels,
            })
        });
        let mut kernel_ms = Vec::new();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        for (k, wgsl) in program.wgsl.iter().enumerate() {
            let workgroups = sizes.workgroups[k];
            if workgroups > 0 {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some(&wgsl.kernel),
                    timestamp_writes: queries.as_ref().map(|query_set| {
                        wgpu::ComputePassTimestampWrites {
                            query_set,
                            beginning_of_pass_write_index: Some(2 * k as u32),
                            end_of_pass_write_index: Some(2 * k as u32 + 1),
                        }
                    }),
                });
                pass.set_pipeline(&pipelines[k]);
                pass.set_bind_group(0, &bind_groups[k], &[]);
                let x = workgroups.min(per_dim);
                pass.dispatch_workgroups(x as u32, workgroups.div_ceil(x) as u32, 1);
            }
            if mode == Timing::SubmitToDone {
                let started = (self.clock)();
                let next = self.device.create_command_encoder(&Default::default());
                self.queue
                    .submit([std::mem::replace(&mut encoder, next).finish()]);
                self.wait_idle().await;
                kernel_ms.push((wgsl.kernel.clone(), (self.clock)() - started));
            }
        }
        (encoder, queries, kernel_ms)
    }
}
