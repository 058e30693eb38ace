//! Tiered products: a call need not wait for a product's large form. Where a product's sizes
//! want its large form (tiled, or blocked on an emulation) and that form's pipeline is not
//! built yet, the call runs the naive form, whose pipeline builds in a fraction of the time,
//! while the large one builds on another thread; the first call after it is ready runs it.
//!
//! In: a call's chosen forms and the pipeline cache. Out: the forms the call runs (the
//! naive tier where the large form is still building), and the background builds, moved
//! into the cache once finished. Invariants: both tiers compute the same result (each form
//! is checked against the reference in tests); a build started for one device generation
//! never enters the cache of another; a background build's validation error is reported
//! by the next call, naming its kernel. Tiers need threads: the web has none here (wgpu 30
//! creates pipelines synchronously there and cannot adopt one the browser built with
//! `createComputePipelineAsync`), so on wasm32 they are off and every form is built on
//! the call's path.

use super::pipelines::PipelineKey;
use super::{Gpu, GpuError, Launch};
use crate::lower::GemmStrategy;

/// A large form's pipeline building on another thread.
#[cfg(not(target_arch = "wasm32"))]
pub(super) struct Building {
    /// The product kernel.
    kernel: String,
    /// The form being built.
    strategy: GemmStrategy,
    /// The device generation it is built for.
    generation: u64,
    /// The pipeline and its build time in ms, or wgpu's validation message.
    thread: std::thread::JoinHandle<Result<(wgpu::ComputePipeline, f64), String>>,
}

/// A product kernel that ran its naive tier while its large form was building.
#[derive(Clone, Debug, PartialEq)]
pub struct TierBuild {
    /// The product kernel.
    pub kernel: String,
    /// The form building in the background.
    pub strategy: GemmStrategy,
}

/// Whether this target can build pipelines on another thread.
pub const TIERS_AVAILABLE: bool = cfg!(not(target_arch = "wasm32"));

impl Gpu {
    /// Turns tiers on or off (on by default on a hardware GPU, where a large product's naive
    /// tier runs in well under a pipeline build; off on an emulation, whose naive kernel is
    /// slower than its blocked pipeline is to build). Ignored where tiers are unavailable.
    pub fn set_tiers(&mut self, on: bool) {
        self.tiers = on && TIERS_AVAILABLE;
    }

    /// Whether calls run the naive tier while a large form builds.
    pub fn tiers(&self) -> bool {
        self.tiers
    }

    /// Waits for every background build and moves the pipelines into the cache (tests and
    /// benchmarks: what a later call would find).
    pub fn wait_for_builds(&mut self) -> Result<(), GpuError> {
        self.collect_builds(true)
    }

    /// Moves finished background builds into the pipeline cache (every build, waiting for
    /// each, when `wait`). A build for an older device generation is dropped; a rejected
    /// one is an error naming its kernel.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn collect_builds(&mut self, wait: bool) -> Result<(), GpuError> {
        let keys: Vec<PipelineKey> = self
            .building
            .iter()
            .filter(|(_, building)| wait || building.thread.is_finished())
            .map(|(key, _)| key.clone())
            .collect();
        for key in keys {
            let building = self.building.remove(&key).expect("listed above");
            let built = building
                .thread
                .join()
                .unwrap_or_else(|_| Err("the build thread panicked".into()));
            if building.generation != self.generation {
                continue;
            }
            let (pipeline, ms) = built.map_err(|message| GpuError::Rejected {
                what: format!(
                    "the shader of {} ({}, built in the background)",
                    building.kernel,
                    building.strategy.name()
                ),
                message,
            })?;
            self.pipelines.insert(key, pipeline.into());
            self.stats.pipelines_created += 1;
            self.stats.background_builds += 1;
            self.stats.background_ms += ms;
        }
        Ok(())
    }

    /// No background builds on the web.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn collect_builds(&mut self, _wait: bool) -> Result<(), GpuError> {
        Ok(())
    }

    /// Whether `launch`'s pipeline (cache key `key`) is ready; if not, starts building it
    /// on another thread unless it is already building. Returns `false` while it builds.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn ready_or_building(
        &mut self,
        key: &PipelineKey,
        launch: &Launch<'_>,
        strategy: GemmStrategy,
    ) -> bool {
        if self.pipelines.contains_key(key) {
            return true;
        }
        if !self.building.contains_key(key) {
            let device = self.device.clone();
            let wgsl = launch.wgsl.clone();
            let overrides = key.2.clone();
            let thread = std::thread::spawn(move || {
                let started = std::time::Instant::now();
                let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
                let pipeline = super::pipelines::build_pipeline(&device, &wgsl, &overrides);
                match pollster::block_on(scope.pop()) {
                    Some(error) => Err(error.to_string()),
                    None => Ok((pipeline, started.elapsed().as_secs_f64() * 1e3)),
                }
            });
            self.building.insert(
                key.clone(),
                Building {
                    kernel: launch.wgsl.kernel.clone(),
                    strategy,
                    generation: self.generation,
                    thread,
                },
            );
        }
        false
    }

    /// On the web every form is built on the call's path (tiers are never on there).
    #[cfg(target_arch = "wasm32")]
    pub(super) fn ready_or_building(
        &mut self,
        _key: &PipelineKey,
        _launch: &Launch<'_>,
        _strategy: GemmStrategy,
    ) -> bool {
        true
    }
}
