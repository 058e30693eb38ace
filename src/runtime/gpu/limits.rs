//! What a call is checked against before anything is uploaded or dispatched: the device
//! limits its kernels need and, for static code, the sizes it was compiled for.
//!
//! In: a program and the call's sizes. Out: `Ok`, or the `GpuError` naming the kernel and
//! what it exceeds. Invariant: the checks only read the program, the sizes and the limits,
//! so a refused call leaves the device untouched.

use super::{Gpu, GpuError, Program};
use crate::codegen::{Mode, Resource};
use crate::runtime::Sizes;

/// Largest workgroup count per grid dimension the runtime ever uses (WebGPU's default).
pub(super) const MAX_GRID_DIM: u64 = 65_535;

impl Gpu {
    /// Checks every limit a call depends on, before anything is dispatched.
    pub(super) fn check_limits(
        &self,
        program: &Program,
        lens: &[usize],
        workgroups: &[u64],
    ) -> Result<(), GpuError> {
        let limits = &self.limits;
        let per_dim = u64::from(limits.max_compute_workgroups_per_dimension).min(MAX_GRID_DIM);
        for (kernel, wgsl) in program.schedule.kernels.iter().zip(&program.wgsl) {
            let limit = |limit, needed: u64, max: u64| {
                (needed > max).then(|| GpuError::Limit {
                    kernel: kernel.name.clone(),
                    limit,
                    needed,
                    max,
                })
            };
            let storage = wgsl
                .resources
                .iter()
                .filter(|r| !matches!(r, Resource::Dims))
                .count() as u64;
            let immediates = match program.mode {
                Mode::Immediate => 4 * wgsl.symbols.len() as u64,
                _ => 0,
            };
            let checks = [
                limit(
                    "maxImmediateSize",
                    immediates,
                    u64::from(limits.max_immediate_size),
                ),
                limit(
                    "maxStorageBuffersPerShaderStage",
                    storage,
                    u64::from(limits.max_storage_buffers_per_shader_stage),
                ),
                limit(
                    "maxComputeWorkgroupsPerDimension (after splitting the grid over x and y)",
                    workgroups[kernel.id],
                    per_dim * per_dim,
                ),
            ];
            if let Some(error) = checks.into_iter().flatten().next() {
                return Err(error);
            }
            for resource in &wgsl.resources {
                if let Resource::Read(id) | Resource::ReadVec4(id) | Resource::Write(id) = resource
                {
                    let bytes = (lens[id.index()] * 4) as u64;
                    let max = limits
                        .max_storage_buffer_binding_size
                        .min(limits.max_buffer_size);
                    if let Some(error) = limit("maxStorageBufferBindingSize", bytes, max) {
                        return Err(error);
                    }
                }
            }
        }
        Ok(())
    }
}

/// A static program runs only at the sizes it was specialised for.
pub(super) fn check_static_sizes(program: &Program, sizes: &Sizes) -> Result<(), GpuError> {
    let Some(fixed) = &program.static_bindings else {
        return Ok(());
    };
    for (sym, value) in sizes.bindings.iter() {
        if let Some(expected) = fixed.get(sym).filter(|&v| v != value) {
            return Err(GpuError::StaticSizes {
                kernel: program
                    .wgsl
                    .first()
                    .map_or(String::new(), |w| w.kernel.clone()),
                detail: format!("{sym} = {value}, compiled for {expected}"),
            });
        }
    }
    Ok(())
}
