//! Tiered products: a call need not wait for a product's large form. Where a product's sizes
//! want its large form (tiled, or blocked on an emulation) and that form's pipeline is not
//! built yet, the call runs the naive form, whose pipeline builds in a fraction of the time,
//! while the large one builds off the call's path: natively on another thread, in the page
//! by the browser (`createComputePipelineAsync`, through `browser.rs`); the first call
//! after it is ready runs it.
//!
//! In: a call's chosen forms and the pipeline cache. Out: the forms the call runs (the
//! naive tier where the large form is still building), and the background builds, moved
//! into the cache once finished. Invariants: both tiers compute the same result (each form
//! is checked against the reference in tests, natively and in the browser); a build started
//! for one device generation never enters the cache of another; a background build's
//! validation error is reported by the next call, naming its kernel.

use super::objects::Pipeline;
use super::pipelines::PipelineKey;
use super::{Gpu, GpuError, Launch};
use crate::lower::GemmStrategy;

/// A large form's pipeline building off the call's path.
pub(super) struct Building {
    /// The product kernel.
    kernel: String,
    /// The form being built.
    strategy: GemmStrategy,
    /// The device generation it is built for.
    generation: u64,
    /// The build: its pipeline and build time in ms, or the device's message.
    job: Job,
}

/// The pipeline and its build time in ms, or the device's validation message.
type Built = Result<(Pipeline, f64), String>;

/// A build on another thread.
#[cfg(not(target_arch = "wasm32"))]
struct Job(std::thread::JoinHandle<Built>);

#[cfg(not(target_arch = "wasm32"))]
impl Job {
    /// Builds `launch`'s pipeline with these override values on another thread.
    fn start(
        device: &wgpu::Device,
        launch: &Launch<'_>,
        overrides: &[i64],
    ) -> Result<Job, GpuError> {
        let device = device.clone();
        let wgsl = launch.wgsl.clone();
        let overrides = overrides.to_vec();
        Ok(Job(std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
            let pipeline = super::objects::build_pipeline(&device, &wgsl, &overrides);
            match (pipeline, pollster::block_on(scope.pop())) {
                (Err(error), _) => Err(error.to_string()),
                (_, Some(error)) => Err(error.to_string()),
                (Ok(pipeline), None) => Ok((pipeline, started.elapsed().as_secs_f64() * 1e3)),
            }
        })))
    }

    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }

    /// Waits for the build.
    async fn finish(self) -> Built {
        self.0
            .join()
            .unwrap_or_else(|_| Err("the build thread panicked".into()))
    }
}

/// A build by the browser: its promise, and whether it has settled.
#[cfg(target_arch = "wasm32")]
struct Job {
    promise: js_sys::Promise,
    settled: std::rc::Rc<std::cell::Cell<bool>>,
}

#[cfg(target_arch = "wasm32")]
impl Job {
    /// Asks the browser to build `launch`'s pipeline with these override values.
    fn start(
        device: &wgpu::Device,
        launch: &Launch<'_>,
        overrides: &[i64],
    ) -> Result<Job, GpuError> {
        let promise = super::browser::build_pipeline_async(device, launch.wgsl, overrides)?;
        let settled = super::browser::settled(&promise);
        Ok(Job { promise, settled })
    }

    fn is_finished(&self) -> bool {
        self.settled.get()
    }

    /// Waits for the build.
    async fn finish(self) -> Built {
        super::browser::built(self.promise).await
    }
}

/// A product kernel that ran its naive tier while its large form was building.
#[derive(Clone, Debug, PartialEq)]
pub struct TierBuild {
    /// The product kernel.
    pub kernel: String,
    /// The form building in the background.
    pub strategy: GemmStrategy,
}

impl Gpu {
    /// Turns tiers on or off (on by default on a hardware GPU, where a large product's naive
    /// tier runs in well under a pipeline build; off on an emulation, whose naive kernel is
    /// slower than its blocked pipeline is to build).
    pub fn set_tiers(&mut self, on: bool) {
        self.tiers = on;
        self.decisions += 1;
    }

    /// Whether calls run the naive tier while a large form builds.
    pub fn tiers(&self) -> bool {
        self.tiers
    }

    /// Waits for every background build and moves the pipelines into the cache (tests and
    /// benchmarks: what a later call would find).
    pub async fn wait_for_builds(&mut self) -> Result<(), GpuError> {
        self.collect_builds(true).await
    }

    /// Moves finished background builds into the pipeline cache (every build, waiting for
    /// each, when `wait`). A build for an older device generation is dropped; a rejected
    /// one is an error naming its kernel.
    pub(super) async fn collect_builds(&mut self, wait: bool) -> Result<(), GpuError> {
        let keys: Vec<PipelineKey> = self
            .building
            .iter()
            .filter(|(_, building)| wait || building.job.is_finished())
            .map(|(key, _)| key.clone())
            .collect();
        for key in keys {
            let building = self.building.remove(&key).expect("listed above");
            let built = building.job.finish().await;
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

    /// Whether `launch`'s pipeline (cache key `key`) is ready; if not, starts building it
    /// off the call's path unless it is already building. Returns `false` while it builds.
    pub(super) fn ready_or_building(
        &mut self,
        key: &PipelineKey,
        launch: &Launch<'_>,
        strategy: GemmStrategy,
    ) -> Result<bool, GpuError> {
        if self.pipelines.contains_key(key) {
            return Ok(true);
        }
        if !self.building.contains_key(key) {
            let job = Job::start(&self.device, launch, &key.2)?;
            self.building.insert(
                key.clone(),
                Building {
                    kernel: launch.wgsl.kernel.clone(),
                    strategy,
                    generation: self.generation,
                    job,
                },
            );
        }
        Ok(false)
    }
}
