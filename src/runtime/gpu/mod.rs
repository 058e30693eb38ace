//! The wgpu runtime: runs a lowered `Schedule` as WGSL compute pipelines, natively (Vulkan,
//! Metal, DX12 — lavapipe on a machine without a GPU) and in the browser (WebGPU).
//!
//! In: a [`Program`] (a schedule, the mode its sizes are passed in, and its WGSL) and one
//! call's input tensors. Out: the returned tensors, read back asynchronously, and per-kernel
//! times (timestamp queries where the adapter has them, else submit-to-done). Each product
//! runs the form its sizes want (naive, blocked or tiled); with tiers (`tiers.rs`) a
//! large form still building off the call's path (on another thread natively, by the
//! browser's `createComputePipelineAsync` in the page) is stood in for by the naive one.
//! Pipelines are cached by WGSL source and override values, buffers are pooled by size,
//! parameters are uploaded once per program, and a program keeps what its last call
//! decided ([`CallPlan`]) for the next call at the same sizes. Invariants: every failure is
//! a [`GpuError`] value, never a panic — no adapter, a lost device (recreated, and the call
//! retried once), out of memory, and limits (buffer binding size, storage buffers per
//! stage, workgroups per grid dimension) checked before anything is dispatched, naming the
//! kernel; nothing blocks on the web: read-back is a future, and native callers drive it
//! with `device.poll`; a kept plan serves only calls that would decide the same.

#[cfg(target_arch = "wasm32")]
mod browser;
mod dispatch;
mod limits;
mod objects;
mod pipelines;
mod pool;
mod readback;
mod recovery;
mod tiers;

use crate::codegen::{self, Mode, Specialization, Wgsl};
use crate::graph::{Tensor, numel};
use crate::lower::{BLOCK_M, Body, GemmStrategy, Kernel, Schedule};
use crate::runtime::{RunError, Sizes, bind, output_shapes};
use crate::symbolic::Bindings;
use dispatch::Bound;
use limits::check_static_sizes;
use pool::Pool;
use recovery::open_device;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
pub use tiers::TierBuild;

/// Why the GPU could not run a program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuError {
    /// No adapter: no GPU, no Vulkan/Metal/DX12 driver, or no WebGPU in this browser.
    #[error("no GPU adapter found ({0})")]
    NoAdapter(String),
    /// The adapter refused to open a device.
    #[error("could not open a device on the GPU adapter: {0}")]
    Device(String),
    /// The device was lost and could not be recreated.
    #[error("the GPU device was lost ({0}) and could not be recreated")]
    DeviceLost(String),
    /// An allocation failed on the device.
    #[error("out of GPU memory while running {kernel}")]
    OutOfMemory {
        /// The kernels of the call, in launch order.
        kernel: String,
    },
    /// A call needs more than a device limit allows.
    #[error("{kernel}: needs {needed} but the adapter's {limit} is {max}")]
    Limit {
        /// The kernel.
        kernel: String,
        /// The limit's WebGPU name.
        limit: &'static str,
        /// What the call needs.
        needed: u64,
        /// What the adapter allows.
        max: u64,
    },
    /// wgpu rejected something it was given: a bug in the generated code or the runtime.
    #[error("wgpu rejected {what}: {message}")]
    Rejected {
        /// What was submitted.
        what: String,
        /// wgpu's message.
        message: String,
    },
    /// Mapping a result buffer for reading failed.
    #[error("reading results back failed: {0}")]
    ReadBack(String),
    /// A static program was called with sizes it was not compiled for.
    #[error("{kernel} was compiled with static sizes for other inputs ({detail})")]
    StaticSizes {
        /// The first kernel.
        kernel: String,
        /// Which symbol differs.
        detail: String,
    },
    /// The inputs do not fit the schedule.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// The adapter, as reported to users and in benchmark output.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AdapterSummary {
    /// The driver's name for it (`llvmpipe (LLVM 15.0.6, 256 bits)`, `NVIDIA H200`, …).
    pub name: String,
    /// `vulkan`, `metal`, `dx12`, `webgpu`, …
    pub backend: String,
    /// Whether per-kernel times come from timestamp queries.
    pub timestamps: bool,
    /// Whether it is a CPU emulation of a GPU (SwiftShader, llvmpipe/lavapipe, WARP): its
    /// pipelines are compiled for the CPU, and large products run blocked, not tiled.
    pub emulated: bool,
    /// Whether it has subgroup operations (wgpu's `SUBGROUP` natively; in the page the
    /// browser's `subgroups`, which wgpu 30's web backend does not map, so the device request
    /// asks for it around wgpu: `browser.rs`).
    pub subgroups: bool,
    /// Whether its device takes immediates, so immediate code runs (wgpu's `IMMEDIATES`
    /// natively; in the page the browser's `immediate_address_space` and `setImmediates`,
    /// which wgpu 30's web backend does not map but the browser objects use).
    pub immediates: bool,
}

impl AdapterSummary {
    /// The form large products run in on this adapter (convolutions excepted: see
    /// `Gemm::gathers_windows`). On SwiftShader the blocked kernel builds in tens of ms
    /// against the tiled one's 0.4-1.5 s (no workgroup memory to compile), and on both
    /// SwiftShader and lavapipe it runs faster: a CPU core's caches do what workgroup
    /// memory does on a GPU. On a hardware GPU the tiled kernel keeps the operands in
    /// on-chip memory; that side is not measured here (no GPU).
    pub fn large_products(&self) -> GemmStrategy {
        if self.emulated {
            GemmStrategy::Blocked
        } else {
            GemmStrategy::Tiled
        }
    }
}

/// Counters of what the runtime holds and has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuStats {
    /// Pipelines created (cache misses).
    pub pipelines_created: usize,
    /// Time spent creating them, in ms.
    pub pipeline_ms: f64,
    /// Pipelines in the cache now.
    pub pipelines_cached: usize,
    /// Bytes held in buffers: pooled scratch and uploaded parameters.
    pub bytes_held: u64,
    /// Times the device was lost and recreated.
    pub devices_recreated: usize,
    /// Bind groups created: a call's first at its size class, none on the steady path.
    pub bind_groups_created: usize,
    /// Pipelines of products' large forms built off the calls' path while calls ran their
    /// naive tier (counted in `pipelines_created` too).
    pub background_builds: usize,
    /// Their build time, in ms (no call waited for it).
    pub background_ms: f64,
    /// Calls that created nothing and so ran without error scopes (the steady path).
    pub unscoped_calls: usize,
    /// Empty command lists the page's read-backs submitted while waiting for their mappings
    /// (`readback::MAX_NUDGES`; none natively).
    pub nudges_sent: u64,
}

/// How per-kernel times were measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Not measured.
    Off,
    /// GPU timestamp queries around each kernel's pass.
    Timestamps,
    /// Each kernel submitted alone and waited for (includes submission overhead).
    SubmitToDone,
}

impl Timing {
    /// Its name in a run's report: `off`, `timestamps` or `submit_to_done`.
    pub fn name(self) -> &'static str {
        match self {
            Timing::Off => "off",
            Timing::Timestamps => "timestamps",
            Timing::SubmitToDone => "submit_to_done",
        }
    }
}

/// The result of one call.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRun {
    /// The returned tensors.
    pub outputs: Vec<Tensor>,
    /// Each kernel's time in ms, when measured.
    pub kernel_ms: Vec<(String, f64)>,
    /// How they were measured.
    pub timing: Timing,
    /// Each product kernel and the strategy it ran with at this call's sizes.
    pub products: Vec<(String, GemmStrategy)>,
    /// The products that ran their naive tier because their large form was still building
    /// off the call's path.
    pub building: Vec<TierBuild>,
    /// The CPU's part of the call, in ms: resources found or made, inputs written, passes
    /// recorded and submitted (the rest of the call is the device's work and read-back).
    pub host_ms: f64,
}

/// A schedule ready to run: its mode, WGSL, and (once run) its device resources.
pub struct Program {
    /// Unique in the process: the key of its calls' kept resources.
    id: u64,
    schedule: Schedule,
    mode: Mode,
    wgsl: Vec<Wgsl>,
    source_hashes: Vec<u64>,
    /// Static code: the sizes it was specialised for.
    static_bindings: Option<Bindings>,
    /// Each tiled product kernel's other forms (blocked, naive), each emitted when a call
    /// first runs it.
    forms: Vec<BTreeMap<GemmStrategy, ProductForm>>,
    /// Each kernel's WGSL with subgroup operations and its hash, where they change it (row
    /// reductions), emitted when a device with subgroups first runs the program.
    subgroup_forms: Option<Vec<Option<(Wgsl, u64)>>>,
    /// Parameter buffers, for device `generation`.
    resident: Option<Resident>,
    /// What its last call decided, for the next call at the same sizes.
    plan: Option<CallPlan>,
}

/// What a call of a program decided at its input sizes: the sizes bound, the output
/// shapes, each product's form and each kernel's pipeline. The program keeps it for its
/// next call: at the same input shapes and int arguments, and with the runtime's decisions
/// unchanged (the same device, subgroups, forced strategy, tiers and limits:
/// [`Gpu::decisions`]), that call decides the same, so it skips binding, the checks, the
/// output shapes and the pipeline lookup. A call that ran a naive tier while a large form
/// built keeps none: its next call takes the large form once built.
struct CallPlan {
    shapes: Vec<Vec<usize>>,
    ints: Vec<i64>,
    /// The [`Gpu::decisions`] it was made under.
    decisions: u64,
    sizes: Sizes,
    /// The output tensors' shapes at these sizes, and each one's bytes.
    outputs: Vec<Vec<usize>>,
    output_bytes: Vec<u64>,
    chosen: Vec<Option<GemmStrategy>>,
    pipelines: Vec<Arc<objects::Pipeline>>,
    building: Vec<TierBuild>,
    /// How long the last call's read-back waited for the device, from the submit, in ms
    /// (none before the first): it decides the next one's nudges (`readback::MAX_NUDGES`).
    last_wait_ms: Option<f64>,
}

impl CallPlan {
    /// Whether a call with these inputs, under these decisions, decides as this one did.
    fn serves(&self, inputs: &[Tensor], ints: &[i64], decisions: u64) -> bool {
        self.decisions == decisions
            && self.building.is_empty()
            && self.ints == ints
            && self.shapes.len() == inputs.len()
            && self
                .shapes
                .iter()
                .zip(inputs)
                .all(|(shape, t)| *shape == t.shape)
    }
}

/// A tiled product kernel in another strategy (blocked or naive): no workgroup memory, so
/// its pipeline builds in a fraction of the tiled one's time.
struct ProductForm {
    kernel: Kernel,
    wgsl: Wgsl,
    source_hash: u64,
    /// Its WGSL with subgroup operations and that WGSL's hash, where they change it (a
    /// blocked product), emitted when a device with subgroups first runs it.
    subgroup_form: Option<(Wgsl, u64)>,
}

struct Resident {
    generation: u64,
    params: Vec<Option<wgpu::Buffer>>,
}

/// How one kernel of a call runs: the WGSL form chosen for the call's sizes.
pub(super) struct Launch<'a> {
    wgsl: &'a Wgsl,
    source_hash: u64,
    /// A product kernel's strategy (`None` for other kernels).
    strategy: Option<GemmStrategy>,
}

/// WGSL with subgroup operations as the device takes it, and its hash. The browser's WGSL
/// wants the extension enabled and Tint's `subgroup_uniformity` diagnostic off: a blocked
/// product's subgroup form shuffles behind a branch on `subgroupAll`, which keeps each
/// subgroup whole, but Tint proves uniformity for the workgroup only and rejects it. Naga
/// (natively) has implemented neither directive and takes the functions without them.
fn for_subgroup_device(wgsl: Wgsl) -> (Wgsl, u64) {
    #[cfg(target_arch = "wasm32")]
    let wgsl = Wgsl {
        source: format!(
            "enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n{}",
            wgsl.source
        ),
        ..wgsl
    };
    let hash = source_hash(&wgsl);
    (wgsl, hash)
}

impl Program {
    /// Emits the WGSL of `schedule` in `mode`; `bindings` fixes the sizes of static code
    /// (ignored otherwise).
    pub fn new(schedule: Schedule, mode: Mode, bindings: &Bindings) -> Program {
        let spec = Specialization::of(mode, bindings);
        let wgsl = codegen::emit_schedule(&schedule, &spec);
        let static_bindings = (mode == Mode::Static).then(|| bindings.clone());
        Program::from_wgsl(schedule, mode, wgsl, static_bindings)
    }

    /// A program from WGSL already emitted for `schedule` in `mode` (by
    /// `codegen::emit_schedule`); `static_bindings` are the sizes static code was
    /// specialised for (`None` otherwise).
    pub fn from_wgsl(
        schedule: Schedule,
        mode: Mode,
        wgsl: Vec<Wgsl>,
        static_bindings: Option<Bindings>,
    ) -> Program {
        // Launches, limit checks and timestamp queries pair kernel `k` with `wgsl[k]`.
        debug_assert_eq!(wgsl.len(), schedule.kernels.len(), "one WGSL per kernel");
        let source_hashes = wgsl.iter().map(source_hash).collect();
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Program {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            forms: (0..schedule.kernels.len())
                .map(|_| BTreeMap::new())
                .collect(),
            subgroup_forms: None,
            schedule,
            mode,
            wgsl,
            source_hashes,
            static_bindings,
            resident: None,
            plan: None,
        }
    }

    /// The form each kernel wants for a call of these sizes: a tiled product runs as
    /// `GemmStrategy::for_sizes` says (`large` where its tiles pay, naive where they do not),
    /// or as `forced` says; `None` for kernels that are not products.
    fn wanted_forms(
        &self,
        bindings: &Bindings,
        large: GemmStrategy,
        forced: Option<GemmStrategy>,
    ) -> Vec<Option<GemmStrategy>> {
        self.schedule
            .kernels
            .iter()
            .map(|kernel| {
                let lowered = lowered_strategy(kernel);
                match (forced, lowered) {
                    (Some(forced), Some(GemmStrategy::Tiled)) => Some(forced),
                    _ => kernel.strategy_at(bindings, large).or(lowered),
                }
            })
            .collect()
    }

    /// Emits every form of `chosen` other than the lowered one (once per program; with
    /// `subgroups`, its subgroup form too), and sets each kernel's workgroup count in
    /// `sizes` to its form's.
    fn choose_forms(
        &mut self,
        sizes: &mut Sizes,
        chosen: &[Option<GemmStrategy>],
        subgroups: bool,
    ) -> Result<(), GpuError> {
        for (k, kernel) in self.schedule.kernels.iter().enumerate() {
            let lowered = lowered_strategy(kernel);
            let Some(other) = chosen[k]
                .filter(|&s| lowered == Some(GemmStrategy::Tiled) && s != GemmStrategy::Tiled)
            else {
                continue;
            };
            let no_sizes = Bindings::new();
            let fixed = self.static_bindings.as_ref().unwrap_or(&no_sizes);
            let (schedule, spec) = (&self.schedule, Specialization::of(self.mode, fixed));
            let form = self.forms[k].entry(other).or_insert_with(|| {
                let kernel = kernel.with_strategy(other);
                let wgsl = codegen::emit_wgsl(schedule, &kernel, &spec);
                ProductForm {
                    source_hash: source_hash(&wgsl),
                    kernel,
                    wgsl,
                    subgroup_form: None,
                }
            });
            if subgroups && form.subgroup_form.is_none() {
                form.subgroup_form =
                    codegen::emit_wgsl_with_subgroups(schedule, &form.kernel, &spec)
                        .map(for_subgroup_device);
            }
            let workgroups = &form.kernel.workgroups;
            sizes.workgroups[k] = workgroups
                .eval(&sizes.bindings)
                .filter(|&n| n >= 0)
                .ok_or_else(|| RunError::Size {
                    what: format!("{} workgroups", form.kernel.name),
                    expr: workgroups.to_string(),
                })? as u64;
        }
        Ok(())
    }

    /// Emits the kernels' subgroup forms ([`codegen::emit_wgsl_with_subgroups`]), once.
    fn emit_subgroup_forms(&mut self) {
        if self.subgroup_forms.is_some() {
            return;
        }
        let fixed = self.static_bindings.clone().unwrap_or_default();
        let spec = Specialization::of(self.mode, &fixed);
        let forms = self
            .schedule
            .kernels
            .iter()
            .map(|kernel| {
                codegen::emit_wgsl_with_subgroups(&self.schedule, kernel, &spec)
                    .map(for_subgroup_device)
            })
            .collect();
        self.subgroup_forms = Some(forms);
    }

    /// Each kernel's WGSL for a call, given the forms [`Program::choose_forms`] emitted,
    /// and with `subgroups` the subgroup forms [`Program::emit_subgroup_forms`] emitted.
    fn launches(&self, chosen: &[Option<GemmStrategy>], subgroups: bool) -> Vec<Launch<'_>> {
        let subgroup_forms = self.subgroup_forms.as_ref().filter(|_| subgroups);
        chosen
            .iter()
            .enumerate()
            .map(|(k, &strategy)| {
                let subgroup_form = subgroup_forms.and_then(|forms| forms[k].as_ref());
                match (strategy.and_then(|s| self.forms[k].get(&s)), subgroup_form) {
                    (Some(form), _) => match form.subgroup_form.as_ref().filter(|_| subgroups) {
                        Some((wgsl, source_hash)) => Launch {
                            wgsl,
                            source_hash: *source_hash,
                            strategy,
                        },
                        None => Launch {
                            wgsl: &form.wgsl,
                            source_hash: form.source_hash,
                            strategy,
                        },
                    },
                    (None, Some((wgsl, source_hash))) => Launch {
                        wgsl,
                        source_hash: *source_hash,
                        strategy,
                    },
                    (None, None) => Launch {
                        wgsl: &self.wgsl[k],
                        source_hash: self.source_hashes[k],
                        strategy,
                    },
                }
            })
            .collect()
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The mode sizes are passed in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The WGSL of each kernel, as lowered (a call may run a product naive instead:
    /// [`GpuRun::products`] says which ran).
    pub fn wgsl(&self) -> &[Wgsl] {
        &self.wgsl
    }
}

/// The strategy a product kernel was lowered with (`None` for other kernels).
fn lowered_strategy(kernel: &Kernel) -> Option<GemmStrategy> {
    match &kernel.body {
        Body::Gemm(gemm) => Some(gemm.strategy),
        _ => None,
    }
}

/// A hash of a kernel's WGSL source: with its length, the pipeline cache's key.
fn source_hash(wgsl: &Wgsl) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    wgsl.source.hash(&mut hasher);
    hasher.finish()
}

/// The GPU runtime: one adapter and device, a pipeline cache, a buffer pool.
pub struct Gpu {
    instance: wgpu::Instance,
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    summary: AdapterSummary,
    limits: wgpu::Limits,
    lost: Arc<AtomicBool>,
    uncaptured: Arc<Mutex<Option<String>>>,
    generation: u64,
    pipelines: HashMap<(u64, usize, Vec<i64>), Arc<objects::Pipeline>>,
    /// Recent calls' buffers and bind groups, newest first, for their programs' next calls.
    bound: Vec<Bound>,
    pool: Pool,
    param_bytes: u64,
    stats: GpuStats,
    /// Runs every tiled product with this strategy instead of choosing by its sizes.
    forced_strategy: Option<GemmStrategy>,
    /// Whether a product runs naive while its large form builds off the call's path.
    tiers: bool,
    /// Whether row reductions and blocked products run their subgroup forms.(only where the adapter has them).
    subgroups: bool,
    /// Whether every subgroup has at least a blocked product's rows of lanes, so that its
    /// subgroup form can share them (SwiftShader's subgroups have 4 lanes: there the form
    /// would only take its plain loads, and build twice the code for nothing).
    product_subgroups: bool,
    /// Large forms building off the calls' path, by pipeline key.
    building: HashMap<pipelines::PipelineKey, tiers::Building>,
    /// Whether the page's read-backs nudge the browser while their mappings are pending
    /// (`readback::MAX_NUDGES`).
    nudges_on: bool,
    /// The nudges they sent.
    nudges_sent: Arc<AtomicU64>,
    /// Bumped whenever what a call decides can change for the same sizes (a new device, a
    /// setting, the limits): the programs' [`CallPlan`]s made before no longer serve.
    decisions: u64,
    clock: Box<dyn Fn() -> f64 + Send + Sync>,
}

/// Parameter, input, output and scratch buffers: written from the host, bound to kernels,
/// copied out for read-back.
const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::COPY_SRC);

impl Gpu {
    /// Opens the best adapter (a discrete GPU when there is one); `clock` gives
    /// milliseconds and times pipeline creation and submit-to-done kernels.
    pub async fn new(clock: Box<dyn Fn() -> f64 + Send + Sync>) -> Result<Gpu, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let (device, queue, limits) = open_device(&adapter).await?;
        // What the device was opened with: in the page, the browser's subgroups.
        #[cfg(not(target_arch = "wasm32"))]
        let (subgroups, subgroup_min_size) = (
            device.features().contains(wgpu::Features::SUBGROUP),
            info.subgroup_min_size,
        );
        #[cfg(target_arch = "wasm32")]
        let (subgroups, subgroup_min_size) = (
            browser::has_subgroups(&device),
            browser::subgroup_min_size(&device),
        );
        let summary = AdapterSummary {
            name: info.name.clone(),
            backend: info.backend.to_string().to_lowercase(),
            timestamps,
            emulated: info.device_type == wgpu::DeviceType::Cpu
                || crate::runtime::is_software_adapter(&info.name),
            subgroups,
            immediates: limits.max_immediate_size > 0,
        };
        let tiers = !summary.emulated;
        let mut gpu = Gpu {
            instance,
            adapter,
            device,
            queue,
            summary,
            limits,
            lost: Arc::new(AtomicBool::new(false)),
            uncaptured: Arc::new(Mutex::new(None)),
            generation: 0,
            pipelines: HashMap::new(),
            bound: Vec::new(),
            pool: Pool::default(),
            param_bytes: 0,
            stats: GpuStats::default(),
            forced_strategy: None,
            tiers,
            subgroups,
            product_subgroups: subgroups && i64::from(subgroup_min_size) >= BLOCK_M,
            building: HashMap::new(),
            nudges_on: true,
            nudges_sent: Arc::new(AtomicU64::new(0)),
            decisions: 0,
            clock,
        };
        gpu.watch_device();
        Ok(gpu)
    }

    /// The adapter's name and backend.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// Counters: pipelines, bytes held, recreated devices.
    pub fn stats(&self) -> GpuStats {
        GpuStats {
            pipelines_cached: self.pipelines.len(),
            bytes_held: self.pool.bytes + self.param_bytes,
            nudges_sent: self.nudges_sent.load(Ordering::Relaxed),
            ..self.stats
        }
    }

    /// Marks the adapter as a CPU emulation, which the caller knows better (the browser's
    /// adapter info names SwiftShader where wgpu's does not).
    pub fn mark_emulated(&mut self) {
        self.summary.emulated = true;
        self.tiers = false;
        self.decisions += 1;
    }

    /// Turns the subgroup forms of row reductions and blocked products on or off (on by
    /// default where the adapter has subgroups; never on where it has none). The benchmark
    /// measures both.
    pub fn set_subgroups(&mut self, on: bool) {
        self.subgroups = on && self.summary.subgroups;
        self.decisions += 1;
    }

    /// Whether row reductions and blocked products run their subgroup forms.
    pub fn subgroups(&self) -> bool {
        self.subgroups
    }

    /// The form large products run in on this adapter (`AdapterSummary::large_products`).
    pub fn large_products(&self) -> GemmStrategy {
        self.summary.large_products()
    }

    /// Runs every product lowered as tiled with `strategy` (tests check every form against
    /// the reference); `None`, the default, chooses per call by its sizes
    /// (`GemmStrategy::for_sizes`, with [`Gpu::large_products`]).
    pub fn force_product_strategy(&mut self, strategy: Option<GemmStrategy>) {
        self.forced_strategy = strategy;
        self.decisions += 1;
    }

    /// The limits calls are checked against; lowering them simulates a smaller device.
    pub fn limits_mut(&mut self) -> &mut wgpu::Limits {
        self.decisions += 1;
        &mut self.limits
    }

    /// Runs `program` on `inputs` and `ints` (the int arguments); `timing` asks for per-kernel times. A device lost
    /// during the call is recreated and the call retried once.
    pub async fn run(
        &mut self,
        program: &mut Program,
        inputs: &[Tensor],
        ints: &[i64],
        timing: bool,
    ) -> Result<GpuRun, GpuError> {
        match self.run_once(program, inputs, ints, timing).await {
            Err(_) if self.lost.load(Ordering::SeqCst) => {
                self.recover().await?;
                self.run_once(program, inputs, ints, timing).await
            }
            result => result,
        }
    }

    async fn run_once(
        &mut self,
        program: &mut Program,
        inputs: &[Tensor],
        ints: &[i64],
        timing: bool,
    ) -> Result<GpuRun, GpuError> {
        self.recover().await?;
        let mut plan = match program.plan.take() {
            Some(plan) if plan.serves(inputs, ints, self.decisions) => plan,
            _ => self.plan_call(program, inputs, ints).await?,
        };
        let (sizes, pipelines) = (&plan.sizes, &plan.pipelines);
        let launches = program.launches(&plan.chosen, self.subgroups);
        let mode = match (timing, self.summary.timestamps) {
            (false, _) => Timing::Off,
            (true, true) => Timing::Timestamps,
            (true, false) => Timing::SubmitToDone,
        };
        // A call that creates nothing records only what the device accepted before: it
        // goes without error scopes (on the web each pop is a round trip to the GPU
        // process), and whatever the device might still raise reaches the uncaptured-error
        // handler, checked after the read-back.
        let kept = self.kept_call(program, pipelines, sizes);
        let repeat = mode == Timing::Off && kept.is_some() && self.reads_pooled(&plan.output_bytes);
        self.stats.unscoped_calls += usize::from(repeat);
        let scopes = (!repeat).then(|| {
            (
                self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
                self.device.push_error_scope(wgpu::ErrorFilter::Validation),
            )
        });
        let nudges = self.nudges_for(plan.last_wait_ms);
        let host_started = (self.clock)();
        let mut held = Vec::new();
        let recorded = self
            .record_call(
                program, &launches, &plan, kept, inputs, mode, &mut held, nudges,
            )
            .await;
        let submitted = (self.clock)();
        let host_ms = submitted - host_started;
        let kernels = || {
            let names: Vec<&str> = program.wgsl.iter().map(|w| w.kernel.as_str()).collect();
            names.join(", ")
        };
        let failure = match scopes {
            Some((oom, rejected)) => {
                // Both scopes' futures are made before either is awaited (pops are LIFO).
                let (rejected, oom) = (rejected.pop(), oom.pop());
                match (rejected.await, oom.await) {
                    (Some(error), _) => Some(GpuError::Rejected {
                        what: format!("a call of {}", kernels()),
                        message: error.to_string(),
                    }),
                    (None, Some(_)) => Some(GpuError::OutOfMemory { kernel: kernels() }),
                    (None, None) => None,
                }
            }
            None => None,
        };
        let (bound, read, mut kernel_ms) = match recorded {
            Ok(recorded) => recorded,
            Err(error) => {
                // Nothing was submitted: the read-back buffers were never mapped.
                for buffer in held {
                    self.pool.release(buffer);
                }
                return Err(error);
            }
        };
        if let Some(failure) = failure {
            // Resources of a call the device refused are not kept for the next one.
            self.release_bound(bound);
            return Err(failure);
        }
        self.keep_bound(bound);
        let (outputs, timestamps) = read.await?;
        plan.last_wait_ms = Some((self.clock)() - submitted);
        kernel_ms.extend(timestamps);
        for buffer in held {
            self.pool.release(buffer);
        }
        if let Some(message) = self.uncaptured.lock().expect("error lock").take() {
            return Err(GpuError::Rejected {
                what: format!("a call of {}", kernels()),
                message,
            });
        }
        let products = program
            .schedule
            .kernels
            .iter()
            .zip(&launches)
            .filter_map(|(kernel, launch)| Some((kernel.name.clone(), launch.strategy?)))
            .collect();
        let building = plan.building.clone();
        program.plan = Some(plan);
        Ok(GpuRun {
            outputs,
            kernel_ms,
            timing: mode,
            products,
            building,
            host_ms,
        })
    }

    /// What a call of `program` with these inputs runs: its sizes bound and checked, each
    /// product's form (with tiers, naive while its large form builds), the parameters
    /// uploaded and each kernel's pipeline, made where missing.
    async fn plan_call(
        &mut self,
        program: &mut Program,
        inputs: &[Tensor],
        ints: &[i64],
    ) -> Result<CallPlan, GpuError> {
        // Taken first: a device recreated while planning makes the plan stale at once.
        let decisions = self.decisions;
        let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
        let mut sizes = bind(&program.schedule, &shapes, ints)?;
        check_static_sizes(program, &sizes)?;
        let outputs = output_shapes(&program.schedule, &sizes)?;
        let output_bytes = outputs
            .iter()
            .map(|s| (numel(s) as u64).saturating_mul(4))
            .collect();
        let mut chosen =
            program.wanted_forms(&sizes.bindings, self.large_products(), self.forced_strategy);
        self.collect_builds(false).await?;
        let building = self.naive_while_building(program, &mut sizes, &mut chosen)?;
        program.choose_forms(
            &mut sizes,
            &chosen,
            self.subgroups && self.product_subgroups,
        )?;
        self.check_limits(program, &sizes.buffer_lens, &sizes.workgroups)?;
        self.prepare(program).await?;
        if self.subgroups {
            program.emit_subgroup_forms();
        }
        let launches = program.launches(&chosen, self.subgroups);
        let pipelines = self.pipelines_for(program, &launches, &sizes).await?;
        Ok(CallPlan {
            shapes,
            ints: ints.to_vec(),
            decisions,
            sizes,
            outputs,
            output_bytes,
            chosen,
            pipelines,
            building,
            last_wait_ms: None,
        })
    }

    /// The host's part of a call: its resources found or made, inputs written, passes
    /// recorded, outputs copied for read-back and the recording submitted (its read-back
    /// nudged `nudges` times at most). Returns the call's resources, the read-back's future
    /// and submit-to-done kernel times; on an error its resources are already released.
    #[expect(clippy::too_many_arguments, reason = "a call is all of these")]
    async fn record_call(
        &mut self,
        program: &Program,
        launches: &[Launch<'_>],
        plan: &CallPlan,
        kept: Option<usize>,
        inputs: &[Tensor],
        mode: Timing,
        held: &mut Vec<wgpu::Buffer>,
        nudges: u32,
    ) -> Result<
        (
            Bound,
            impl std::future::Future<Output = readback::ReadBack> + use<>,
            Vec<(String, f64)>,
        ),
        GpuError,
    > {
        let (sizes, pipelines) = (&plan.sizes, &plan.pipelines);
        let bound = self.bound_for(program, launches, pipelines, sizes, kept)?;
        self.write_inputs(program, &bound, inputs);
        let recorded = self
            .encode(
                program,
                launches,
                sizes,
                pipelines,
                &bound.bind_groups,
                mode,
            )
            .await
            .and_then(|(recorder, queries, kernel_ms)| {
                let read = self.read_back(
                    recorder,
                    program,
                    plan,
                    &bound.buffers,
                    queries.as_ref(),
                    held,
                    nudges,
                )?;
                Ok((read, kernel_ms))
            });
        match recorded {
            Ok((read, kernel_ms)) => Ok((bound, read, kernel_ms)),
            Err(error) => {
                self.release_bound(bound);
                Err(error)
            }
        }
    }

    /// With tiers on, each product that wants a large form whose pipeline is not built yet
    /// runs naive instead (`chosen` changed), and that form starts building off the call's
    /// path; returns those products.
    fn naive_while_building(
        &mut self,
        program: &mut Program,
        sizes: &mut Sizes,
        chosen: &mut [Option<GemmStrategy>],
    ) -> Result<Vec<TierBuild>, GpuError> {
        let large = |s: &Option<GemmStrategy>| s.is_some_and(|s| s != GemmStrategy::Naive);
        if !self.tiers || self.forced_strategy.is_some() || !chosen.iter().any(large) {
            return Ok(Vec::new());
        }
        program.choose_forms(sizes, chosen, self.subgroups && self.product_subgroups)?;
        let mut building = Vec::new();
        let launches = program.launches(chosen, self.subgroups);
        for (k, launch) in launches.iter().enumerate() {
            let Some(strategy) = chosen[k].filter(|s| *s != GemmStrategy::Naive) else {
                continue;
            };
            let key = pipelines::pipeline_key(program, launch, sizes);
            if !self.ready_or_building(&key, launch, strategy)? {
                building.push((k, strategy));
            }
        }
        for &(k, _) in &building {
            chosen[k] = Some(GemmStrategy::Naive);
        }
        let building = building
            .into_iter()
            .map(|(k, strategy)| TierBuild {
                kernel: program.schedule.kernels[k].name.clone(),
                strategy,
            })
            .collect();
        Ok(building)
    }
}
