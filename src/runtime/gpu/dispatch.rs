//! One call on the device: its buffers and bind groups (kept across calls), inputs written,
//! compute passes recorded.
//!
//! In: a prepared program, the call's sizes and inputs, and each kernel's pipeline. Out:
//! the call's [`Bound`] resources and the command encoder (and timestamp query set) for
//! read-back. Invariants: a program's next call with the same pipelines and buffer size
//! classes reuses its buffers and bind groups, so the steady path creates nothing and writes
//! only its inputs (and a `dims` uniform whose values changed); every pooled buffer goes back
//! to the pool when its `Bound` leaves the cache; no dispatch exceeds the adapter's
//! workgroups per dimension (nor `MAX_GRID_DIM`): a larger grid is split over x and y.

use super::limits::MAX_GRID_DIM;
use super::objects::{BindGroup, Pipeline, QuerySet, Recorder, bind_group, query_set};
use super::pool::size_class;
use super::readback::MAPPABLE;
use super::{Gpu, GpuError, Launch, Program, STORAGE, Timing};
use crate::codegen::{Mode, Resource, Wgsl};
use crate::graph::Tensor;
use crate::lower::Role;
use crate::runtime::Sizes;
use std::sync::Arc;

/// Calls' resources kept at most (the oldest goes first).
const KEPT_CALLS: usize = 16;
/// Bytes of kept calls' buffers beyond which the oldest go, whatever their number.
const KEPT_BYTES: u64 = 256 << 20;

/// One call's device buffers, `dims` uniforms and bind groups, kept for the program's next
/// call of the same pipelines and buffer size classes.
pub(super) struct Bound {
    /// The program's [`Program::id`].
    program: u64,
    /// One per schedule buffer: parameters as uploaded, the rest pooled.
    pub(super) buffers: Vec<wgpu::Buffer>,
    /// Which of `buffers` came from the pool.
    pooled: Vec<bool>,
    /// Each kernel's `dims` uniform and the values last written to it.
    uniforms: Vec<Option<(wgpu::Buffer, Vec<i32>)>>,
    /// The pipelines the bind groups were made for (their layouts are the pipelines' own).
    pipelines: Vec<Arc<Pipeline>>,
    /// Each kernel's bind group.
    pub(super) bind_groups: Vec<BindGroup>,
}

impl Bound {
    /// Whether this call's resources serve a call of `program` with these pipelines and
    /// sizes: the same pipelines, and every pooled buffer of the size class it needs.
    fn serves(&self, program: &Program, pipelines: &[Arc<Pipeline>], sizes: &Sizes) -> bool {
        self.program == program.id
            && self.pipelines.len() == pipelines.len()
            && self
                .pipelines
                .iter()
                .zip(pipelines)
                .all(|(a, b)| Arc::ptr_eq(a, b))
            && self
                .buffers
                .iter()
                .zip(&self.pooled)
                .zip(&sizes.buffer_lens)
                .all(|((buffer, &pooled), &len)| {
                    !pooled || buffer.size() == size_class(STORAGE, (len * 4) as u64)
                })
    }

    /// Bytes of its pooled buffers and uniforms.
    fn bytes(&self) -> u64 {
        let buffers = self.buffers.iter().zip(&self.pooled);
        let pooled: u64 = buffers.filter(|(_, p)| **p).map(|(b, _)| b.size()).sum();
        let uniforms: u64 = self.uniforms.iter().flatten().map(|(b, _)| b.size()).sum();
        pooled + uniforms
    }
}

/// A kernel's `dims` immediates: its symbols' values as i32.
fn immediate_values(wgsl: &Wgsl, sizes: &Sizes) -> Vec<i32> {
    wgsl.symbols
        .iter()
        .map(|&s| sizes.bindings.get(s).unwrap_or_default() as i32)
        .collect()
}

/// A kernel's `dims` uniform: its symbols' values as i32, padded to 16 bytes.
fn dims_values(wgsl: &Wgsl, sizes: &Sizes) -> Vec<i32> {
    let mut values = immediate_values(wgsl, sizes);
    values.resize(values.len().div_ceil(4) * 4, 0);
    values
}

impl Gpu {
    /// The resources of a call of `program`: the kept call's at `kept` (what
    /// [`Gpu::kept_call`] found; its changed `dims` uniforms rewritten), else new ones from
    /// the pool with new bind groups.
    pub(super) fn bound_for(
        &mut self,
        program: &Program,
        launches: &[Launch<'_>],
        pipelines: &[Arc<Pipeline>],
        sizes: &Sizes,
        kept: Option<usize>,
    ) -> Result<Bound, GpuError> {
        if let Some(position) = kept {
            let mut bound = self.bound.remove(position);
            for (launch, uniform) in launches.iter().zip(&mut bound.uniforms) {
                if let Some((buffer, written)) = uniform {
                    let values = dims_values(launch.wgsl, sizes);
                    if *written != values {
                        self.queue
                            .write_buffer(buffer, 0, bytemuck::cast_slice(&values));
                        *written = values;
                    }
                }
            }
            return Ok(bound);
        }
        let resident = program.resident.as_ref().expect("prepared");
        let mut buffers = Vec::with_capacity(program.schedule.buffers.len());
        let mut pooled = Vec::with_capacity(program.schedule.buffers.len());
        for (i, buffer) in program.schedule.buffers.iter().enumerate() {
            if let Role::Param(_) = buffer.role {
                buffers.push(resident.params[i].clone().expect("parameters are uploaded"));
                pooled.push(false);
            } else {
                let bytes = (sizes.buffer_lens[i] * 4) as u64;
                buffers.push(self.pool.acquire(&self.device, STORAGE, bytes));
                pooled.push(true);
            }
        }
        let uniforms = launches
            .iter()
            .map(|launch| {
                let wgsl = launch.wgsl;
                wgsl.resources.contains(&Resource::Dims).then(|| {
                    let values = dims_values(wgsl, sizes);
                    let usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
                    let buffer = self
                        .pool
                        .acquire(&self.device, usage, (values.len() * 4) as u64);
                    self.queue
                        .write_buffer(&buffer, 0, bytemuck::cast_slice(&values));
                    (buffer, values)
                })
            })
            .collect();
        let mut bound = Bound {
            program: program.id,
            buffers,
            pooled,
            uniforms,
            pipelines: pipelines.to_vec(),
            bind_groups: Vec::with_capacity(launches.len()),
        };
        for (k, (launch, pipeline)) in launches.iter().zip(pipelines).enumerate() {
            let wgsl = launch.wgsl;
            let bound_buffers: Vec<&wgpu::Buffer> = wgsl
                .resources
                .iter()
                .map(|resource| match resource {
                    Resource::Read(id) | Resource::ReadVec4(id) | Resource::Write(id) => {
                        &bound.buffers[id.index()]
                    }
                    Resource::Dims => &bound.uniforms[k].as_ref().expect("made above").0,
                })
                .collect();
            match bind_group(&self.device, pipeline, &wgsl.kernel, &bound_buffers) {
                Ok(group) => bound.bind_groups.push(group),
                Err(error) => {
                    self.release_bound(bound);
                    return Err(error);
                }
            }
            self.stats.bind_groups_created += 1;
        }
        Ok(bound)
    }

    /// Where in the kept calls is one whose resources serve a call of `program` with these
    /// pipelines and sizes.
    pub(super) fn kept_call(
        &self,
        program: &Program,
        pipelines: &[Arc<Pipeline>],
        sizes: &Sizes,
    ) -> Option<usize> {
        self.bound
            .iter()
            .position(|bound| bound.serves(program, pipelines, sizes))
    }

    /// Whether the pool holds a read-back buffer for each of a call's outputs (their
    /// bytes). A call whose kept resources serve it ([`Gpu::kept_call`]) and whose
    /// read-backs are pooled creates nothing on the device: it records what the device
    /// accepted before, on resources it holds.
    pub(super) fn reads_pooled(&self, output_bytes: &[u64]) -> bool {
        self.pool.holds(MAPPABLE, output_bytes)
    }

    /// Keeps a call's resources for the program's next call, newest first; the oldest kept
    /// calls beyond [`KEPT_CALLS`] or [`KEPT_BYTES`] give their buffers back to the pool.
    pub(super) fn keep_bound(&mut self, bound: Bound) {
        self.bound.insert(0, bound);
        let mut bytes: u64 = self.bound.iter().map(Bound::bytes).sum();
        while self.bound.len() > KEPT_CALLS || (bytes > KEPT_BYTES && self.bound.len() > 1) {
            let Some(oldest) = self.bound.pop() else {
                break;
            };
            bytes -= oldest.bytes();
            self.release_bound(oldest);
        }
    }

    /// Gives a call's pooled buffers and uniforms back to the pool.
    pub(super) fn release_bound(&mut self, bound: Bound) {
        for (buffer, pooled) in bound.buffers.into_iter().zip(bound.pooled) {
            if pooled {
                self.pool.release(buffer);
            }
        }
        for (buffer, _) in bound.uniforms.into_iter().flatten() {
            self.pool.release(buffer);
        }
    }

    /// Writes the call's input tensors into their buffers.
    pub(super) fn write_inputs(&self, program: &Program, bound: &Bound, inputs: &[Tensor]) {
        for (buffer, gpu_buffer) in program.schedule.buffers.iter().zip(&bound.buffers) {
            if let Role::Input(n) = buffer.role {
                let data = bytemuck::cast_slice(&inputs[n].data);
                self.queue.write_buffer(gpu_buffer, 0, data);
            }
        }
    }

    /// Records one compute pass per kernel (a grid beyond 65,535 workgroups split over x
    /// and y). Submit-to-done timing submits and waits after each pass and returns the times.
    pub(super) async fn encode(
        &mut self,
        program: &Program,
        launches: &[Launch<'_>],
        sizes: &Sizes,
        pipelines: &[Arc<Pipeline>],
        bind_groups: &[BindGroup],
        mode: Timing,
    ) -> Result<(Recorder, Option<QuerySet>, Vec<(String, f64)>), GpuError> {
        let per_dim = u64::from(self.limits.max_compute_workgroups_per_dimension).min(MAX_GRID_DIM);
        let n_kernels = program.wgsl.len() as u32;
        let queries = match mode == Timing::Timestamps && n_kernels > 0 {
            true => Some(query_set(&self.device, 2 * n_kernels)?),
            false => None,
        };
        let mut kernel_ms = Vec::new();
        let mut recorder = Recorder::new(&self.device);
        for (k, launch) in launches.iter().enumerate() {
            let wgsl = launch.wgsl;
            let workgroups = sizes.workgroups[k];
            if workgroups > 0 {
                let x = workgroups.min(per_dim);
                let grid = (x as u32, workgroups.div_ceil(x) as u32);
                let timestamps = queries.as_ref().map(|q| (q, 2 * k as u32));
                let immediates = match wgsl.mode {
                    Mode::Immediate => immediate_values(wgsl, sizes),
                    _ => Vec::new(),
                };
                let (pipeline, bind_group) = (&pipelines[k], &bind_groups[k]);
                recorder.pass(
                    &wgsl.kernel,
                    pipeline,
                    bind_group,
                    &immediates,
                    grid,
                    timestamps,
                );
            }
            if mode == Timing::SubmitToDone {
                let started = (self.clock)();
                let next = Recorder::new(&self.device);
                std::mem::replace(&mut recorder, next).submit(&self.queue)?;
                self.wait_idle().await;
                kernel_ms.push((wgsl.kernel.clone(), (self.clock)() - started));
            }
        }
        Ok((recorder, queries, kernel_ms))
    }
}
