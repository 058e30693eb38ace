//! The GPU backend: WGSL kernels on the wgpu runtime (`runtime::gpu`), one GPU shared by
//! every executor of a process (or of a page), and the GPU's own controls the benchmark and
//! the page turn (tiers, nudges, subgroups, product forms, counters).
//!
//! In: a compiled entry's WGSL in a mode; a call's inputs. Out: its outputs, with the time
//! spent building (pipelines, parameter upload) apart from running, per-kernel times when
//! asked, and the product forms that ran. Invariant: one GPU run at a time: the wgpu runtime
//! is `&mut` across its awaits, so a run takes the `Gpu` out of its slot and puts it back
//! when done (a small async lock that yields, never blocks).

use super::backend::{Backend, Kernels, LocalFuture, ProductRun, Ran, Runtime};
use crate::codegen::Mode;
use crate::compile::Compiled;
use crate::error::Error;
use crate::graph::Tensor;
use crate::lower::{GemmStrategy, Kernel};
use crate::runtime::gpu::{AdapterSummary, Gpu, GpuStats, Program};
use crate::symbolic::Bindings;
use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;
use std::task::Poll;

/// The GPU and the runs waiting for it.
struct GpuSlot {
    /// `None` while a run holds it.
    gpu: RefCell<Option<Gpu>>,
    waiting: RefCell<Vec<std::task::Waker>>,
    adapter: AdapterSummary,
}

/// The GPU, taken out of its slot for one run; dropping it puts it back.
struct Held<'a> {
    slot: &'a GpuSlot,
    gpu: Option<Gpu>,
}

impl Held<'_> {
    fn gpu(&mut self) -> &mut Gpu {
        self.gpu.as_mut().expect("held until dropped")
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        *self.slot.gpu.borrow_mut() = self.gpu.take();
        // Taken out before waking: a woken run may look at the list at once.
        let waiting = std::mem::take(&mut *self.slot.waiting.borrow_mut());
        for waker in waiting {
            waker.wake();
        }
    }
}

impl GpuSlot {
    /// Waits until no other run holds the GPU, then holds it.
    async fn hold(&self) -> Held<'_> {
        std::future::poll_fn(|cx| match self.gpu.borrow_mut().take() {
            Some(gpu) => Poll::Ready(Held {
                slot: self,
                gpu: Some(gpu),
            }),
            None => {
                self.waiting.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

/// The GPU backend: the slot its kernels share.
struct GpuRuntime(Rc<GpuSlot>);

/// WGSL, pipelines and uploaded parameters, with the GPU they run on.
struct GpuKernels {
    program: Box<Program>,
    slot: Rc<GpuSlot>,
}

impl Runtime for GpuRuntime {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn kernels(
        &self,
        compiled: &Compiled,
        mode: Mode,
        bindings: &Bindings,
    ) -> Result<Box<dyn Kernels>, Error> {
        let schedule = compiled
            .schedule()
            .map_err(|err| Error::from(err.clone()))?;
        let wgsl = compiled.wgsl(mode, bindings)?.into_owned();
        let fixed = (mode == Mode::Static).then(|| bindings.clone());
        Ok(Box::new(GpuKernels {
            program: Box::new(Program::from_wgsl(schedule.clone(), mode, wgsl, fixed)),
            slot: Rc::clone(&self.0),
        }))
    }

    fn clear_cache(&self) -> LocalFuture<'_, ()> {
        Box::pin(async move { self.0.hold().await.gpu().clear_cache() })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Kernels for GpuKernels {
    fn run<'a>(
        &'a mut self,
        inputs: &'a [Tensor],
        ints: &'a [i64],
        timing: bool,
        clock: &'a dyn Fn() -> f64,
    ) -> LocalFuture<'a, Result<Ran, Error>> {
        Box::pin(async move {
            let mut held = self.slot.hold().await;
            let gpu = held.gpu();
            let program = &mut self.program;
            let before = gpu.stats();
            let started = clock();
            gpu.prepare(program).await?;
            let prepared = clock();
            let after = gpu.stats();
            // `prepare` returns at once for a program already on the device: then nothing
            // was built, whatever the (coarse) clock says.
            let built = after.pipelines_created != before.pipelines_created
                || after.bytes_held != before.bytes_held;
            let prepare_ms = if built { prepared - started } else { 0.0 };
            // Override code creates a pipeline per new shape inside `run`: count it as
            // building, not running.
            let pipelines_before = gpu.stats().pipeline_ms;
            let run = gpu.run(program, inputs, ints, timing).await?;
            let finished = clock();
            let pipeline_ms = gpu.stats().pipeline_ms - pipelines_before;
            Ok(Ran {
                outputs: run.outputs,
                build_ms: prepare_ms + pipeline_ms,
                run_ms: (finished - prepared - pipeline_ms).max(0.0),
                kernel_ms: run.kernel_ms,
                timing: run.timing.name(),
                products: run
                    .products
                    .into_iter()
                    .map(|(kernel, strategy)| ProductRun {
                        building: run
                            .building
                            .iter()
                            .find(|b| b.kernel == kernel)
                            .map(|b| b.strategy),
                        kernel,
                        strategy,
                    })
                    .collect(),
                host_ms: run.host_ms,
                arena_bytes: 0,
                scratch_bytes: 0,
            })
        })
    }
}

impl Backend {
    /// An opened GPU.
    pub fn gpu(gpu: Gpu) -> Backend {
        Backend {
            runtime: Box::new(GpuRuntime(Rc::new(GpuSlot {
                adapter: gpu.adapter().clone(),
                gpu: RefCell::new(Some(gpu)),
                waiting: RefCell::new(Vec::new()),
            }))),
        }
    }

    /// The GPU's slot, when this backend is the GPU.
    fn slot(&self) -> Option<&GpuSlot> {
        let runtime = self.runtime.as_any().downcast_ref::<GpuRuntime>()?;
        Some(&runtime.0)
    }

    /// The wgpu adapter calls run on, when on the GPU.
    pub fn adapter(&self) -> Option<&AdapterSummary> {
        self.slot().map(|slot| &slot.adapter)
    }

    /// The form product `kernel` runs as for a call of sizes `bindings` when nothing forces
    /// one (`GemmStrategy::for_sizes` with the adapter's large form): what the call's
    /// `products` will say. `None` for a kernel that is not a tiled product, and off the GPU
    /// (the CPU backend's products are its own).
    pub fn product_form(&self, kernel: &Kernel, bindings: &Bindings) -> Option<GemmStrategy> {
        let large = self.adapter()?.large_products();
        kernel.strategy_at(bindings, large)
    }

    /// The GPU runtime's counters (pipelines created, bytes held), when on the GPU.
    pub async fn stats(&self) -> Option<GpuStats> {
        Some(self.slot()?.hold().await.gpu().stats())
    }

    /// Runs every product lowered as tiled with `strategy` on the GPU (the benchmark
    /// measures each form); `None` chooses per call by its sizes again.
    pub async fn force_product_strategy(&self, strategy: Option<GemmStrategy>) {
        if let Some(slot) = self.slot() {
            slot.hold().await.gpu().force_product_strategy(strategy);
        }
    }

    /// Turns tiers on or off on the GPU (`Gpu::set_tiers`: a product runs naive while its
    /// large form builds off the call's path); returns whether they were on. The benchmark
    /// measures both ways.
    pub async fn set_tiers(&self, on: bool) -> bool {
        let Some(slot) = self.slot() else {
            return false;
        };
        let mut held = slot.hold().await;
        let was = held.gpu().tiers();
        held.gpu().set_tiers(on);
        was
    }

    /// Turns the page's read-back nudges on or off on the GPU (`Gpu::set_nudges`: an empty
    /// command list 1 ms after a call's submit where the mapping is still pending, twice for
    /// a call that created buffers); returns whether they were on. The steady benchmark
    /// measures both ways.
    pub async fn set_nudges(&self, on: bool) -> bool {
        match self.slot() {
            Some(slot) => slot.hold().await.gpu().set_nudges(on),
            None => false,
        }
    }

    /// Turns the subgroup forms of row reductions on or off on the GPU
    /// (`Gpu::set_subgroups`); returns whether they are on now (never where the adapter has
    /// no subgroups). The benchmark measures both ways.
    pub async fn set_subgroups(&self, on: bool) -> bool {
        let Some(slot) = self.slot() else {
            return false;
        };
        let mut held = slot.hold().await;
        held.gpu().set_subgroups(on);
        held.gpu().subgroups()
    }

    /// Waits until the GPU's background builds are in its pipeline cache.
    pub async fn wait_for_builds(&self) -> Result<(), Error> {
        if let Some(slot) = self.slot() {
            slot.hold().await.gpu().wait_for_builds().await?;
        }
        Ok(())
    }
}
