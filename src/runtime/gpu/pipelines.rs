//! The GPU runtime's pipelines: parameters uploaded and pipelines created once per program
//! and device, cached by WGSL source and override values.
//!
//! In: a program and, for override code, a call's sizes. Out: the program's resident
//! parameters, and one compute pipeline per kernel. Invariant: a pipeline is created once
//! per (source, override values) on a device, and a program's resources are reused only on
//! the device `generation` they were made for.

use super::{Gpu, GpuError, Program, Resident, STORAGE};
use crate::codegen::Mode;
use crate::lower::Role;
use crate::runtime::Sizes;
use crate::symbolic::Sym;
use std::sync::Arc;

impl Gpu {
    /// Uploads parameters and creates the pipelines of static and dynamic code (override
    /// code gets a pipeline per shape, at its first call).
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
        let mut pipelines = Vec::with_capacity(program.wgsl.len());
        for k in 0..program.wgsl.len() {
            pipelines.push(match program.mode {
                Mode::Override => None,
                Mode::Static | Mode::Dynamic => Some(self.pipeline(program, k, &[]).await?),
            });
        }
        program.resident = Some(Resident {
            generation: self.generation,
            params,
            pipelines,
        });
        Ok(())
    }

    /// The cached pipeline of kernel `k` with these override values.
    async fn pipeline(
        &mut self,
        program: &Program,
        k: usize,
        overrides: &[i64],
    ) -> Result<Arc<wgpu::ComputePipeline>, GpuError> {
        let wgsl = &program.wgsl[k];
        let key = (
            program.source_hashes[k],
            wgsl.source.len(),
            overrides.to_vec(),
        );
        if let Some(pipeline) = self.pipelines.get(&key) {
            return Ok(pipeline.clone());
        }
        let started = (self.clock)();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&wgsl.kernel),
                source: wgpu::ShaderSource::Wgsl(wgsl.source.as_str().into()),
            });
        let names: Vec<String> = wgsl.symbols.iter().map(Sym::to_string).collect();
        let constants: Vec<(&str, f64)> = names
            .iter()
            .zip(overrides)
            .map(|(name, &value)| (name.as_str(), value as f64))
            .collect();
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&wgsl.kernel),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            });
        if let Some(error) = scope.pop().await {
            return Err(GpuError::Rejected {
                what: format!("the shader of {}", wgsl.kernel),
                message: error.to_string(),
            });
        }
        self.stats.pipelines_created += 1;
        self.stats.pipeline_ms += (self.clock)() - started;
        let pipeline = Arc::new(pipeline);
        self.pipelines.insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// Each kernel's pipeline: prepared ones, or (override code) one per size binding.
    pub(super) async fn pipelines_for(
        &mut self,
        program: &Program,
        sizes: &Sizes,
    ) -> Result<Vec<Arc<wgpu::ComputePipeline>>, GpuError> {
        let resident = program.resident.as_ref().expect("prepared");
        let mut pipelines = Vec::with_capacity(program.wgsl.len());
        for (k, prepared) in resident.pipelines.iter().enumerate() {
            pipelines.push(match prepared {
                Some(pipeline) => pipeline.clone(),
                None => {
                    let values: Vec<i64> = program.wgsl[k]
                        .symbols
                        .iter()
                        .map(|&s| sizes.bindings.get(s).unwrap_or_default())
                        .collect();
                    self.pipeline(program, k, &values).await?
                }
            });
        }
        Ok(pipelines)
    }
}
