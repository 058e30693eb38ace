//! The GPU runtime's pipelines: parameters uploaded once per program and device, and
//! pipelines cached by WGSL source and override values.
//!
//! In: a program and a call's launches (each kernel's WGSL form for its sizes) and, for
//! override code, its sizes. Out: the program's resident parameters, and one compute
//! pipeline per kernel. Invariants: a pipeline is created once per (source, override values)
//! on a device; the pipelines a call lacks are all created before any is waited for, so
//! their builds overlap where the browser allows; a program's parameters are reused only on
//! the device `generation` they were uploaded to.

use super::objects::{Pipeline, build_pipeline};
use super::{Gpu, GpuError, Launch, Program, Resident, STORAGE};
use crate::codegen::Mode;
use crate::lower::Role;
use crate::runtime::Sizes;
use std::sync::Arc;

/// The pipeline cache's key: a WGSL source's hash and length, and override values.
pub(super) type PipelineKey = (u64, usize, Vec<i64>);

/// The cache key of `launch`'s pipeline at these sizes (override code: one per size
/// binding).
pub(super) fn pipeline_key(program: &Program, launch: &Launch<'_>, sizes: &Sizes) -> PipelineKey {
    let overrides = match program.mode {
        Mode::Override => launch
            .wgsl
            .symbols
            .iter()
            .map(|&s| sizes.bindings.get(s).unwrap_or_default())
            .collect(),
        Mode::Static | Mode::Dynamic | Mode::Immediate => Vec::new(),
    };
    (launch.source_hash, launch.wgsl.source.len(), overrides)
}

impl Gpu {
    /// Uploads the program's parameters to the device, once per device generation.
    pub async fn prepare(&mut self, program: &mut Program) -> Result<(), GpuError> {
        self.recover().await?;
        if program
            .resident
            .as_ref()
            .is_some_and(|r| r.generation == self.generation)
        {
            return Ok(());
        }
        let params = program
            .schedule
            .buffers
            .iter()
            .map(|buffer| match &buffer.role {
                Role::Param(values) => {
                    let size = (values.len() * 4).max(16) as u64;
                    self.param_bytes += size;
                    let gpu_buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&buffer.name),
                        size,
                        usage: STORAGE,
                        mapped_at_creation: false,
                    });
                    self.queue
                        .write_buffer(&gpu_buffer, 0, bytemuck::cast_slice(values));
                    Some(gpu_buffer)
                }
                _ => None,
            })
            .collect();
        program.resident = Some(Resident {
            generation: self.generation,
            params,
        });
        Ok(())
    }

    /// Each launch's pipeline: cached ones, and the missing ones created together under one
    /// error scope (override code: one per size binding).
    pub(super) async fn pipelines_for(
        &mut self,
        program: &Program,
        launches: &[Launch<'_>],
        sizes: &Sizes,
    ) -> Result<Vec<Arc<Pipeline>>, GpuError> {
        let keys: Vec<PipelineKey> = launches
            .iter()
            .map(|launch| pipeline_key(program, launch, sizes))
            .collect();
        let missing: Vec<usize> = (0..launches.len())
            .filter(|&k| !self.pipelines.contains_key(&keys[k]))
            .collect();
        if !missing.is_empty() {
            let started = (self.clock)();
            let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
            let mut created = Vec::new();
            let mut thrown = None;
            for &k in &missing {
                if self.pipelines.contains_key(&keys[k]) {
                    continue;
                }
                match build_pipeline(&self.device, launches[k].wgsl, &keys[k].2) {
                    Ok(pipeline) => {
                        self.pipelines.insert(keys[k].clone(), Arc::new(pipeline));
                        created.push(k);
                    }
                    Err(error) => {
                        thrown = Some(error);
                        break;
                    }
                }
            }
            let popped = scope.pop().await;
            if let Some(error) = thrown {
                for &k in &created {
                    self.pipelines.remove(&keys[k]);
                }
                return Err(error);
            }
            if let Some(error) = popped {
                let kernels: Vec<&str> = created
                    .iter()
                    .map(|&k| launches[k].wgsl.kernel.as_str())
                    .collect();
                for &k in &created {
                    self.pipelines.remove(&keys[k]);
                }
                return Err(GpuError::Rejected {
                    what: format!("the shaders of {}", kernels.join(", ")),
                    message: error.to_string(),
                });
            }
            self.stats.pipelines_created += created.len();
            self.stats.pipeline_ms += (self.clock)() - started;
        }
        Ok(keys.iter().map(|key| self.pipelines[key].clone()).collect())
    }
}
