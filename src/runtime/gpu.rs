//! The wgpu runtime: runs a lowered `Schedule` as WGSL compute pipelines, natively (Vulkan,
//! Metal, DX12 — lavapipe on a machine without a GPU) and in the browser (WebGPU).
//!
//! In: a [`Program`] (a schedule, the mode its sizes are passed in, and its WGSL) and one
//! call's input tensors. Out: the returned tensors, read back asynchronously, and per-kernel
//! times (timestamp queries where the adapter has them, else submit-to-done). Pipelines
//! are cached by WGSL source and override values, buffers are pooled by size, parameters
//! are uploaded once per program. Invariants: every failure is a [`GpuError`] value, never
//! a panic — no adapter, a lost device (recreated, and the call retried once), out of
//! memory, and limits (buffer binding size, storage buffers per stage, workgroups per grid
//! dimension) checked before anything is dispatched, naming the kernel; nothing blocks on
//! the web: read-back is a future, and native callers drive it with `device.poll`.

use super::{RunError, Sizes, bind, output_shapes};
use crate::codegen::{self, Mode, Resource, Specialization, Wgsl};
use crate::graph::Tensor;
use crate::lower::{Role, Schedule};
use crate::symbolic::{Bindings, Sym};
use std::collections::HashMap;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

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
}

/// Counters of what the runtime holds and has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
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
}

/// How per-kernel times were measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// Not measured.
    Off,
    /// GPU timestamp queries around each kernel's pass.
    Timestamps,
    /// Each kernel submitted alone and waited for (includes submission overhead).
    SubmitToDone,
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
}

/// A schedule ready to run: its mode, WGSL, and (once run) its device resources.
pub struct Program {
    schedule: Schedule,
    mode: Mode,
    wgsl: Vec<Wgsl>,
    source_hashes: Vec<u64>,
    /// Static code: the sizes it was specialised for.
    static_bindings: Option<Bindings>,
    /// Parameter buffers and non-override pipelines, for device `generation`.
    resident: Option<Resident>,
}

struct Resident {
    generation: u64,
    params: Vec<Option<wgpu::Buffer>>,
    pipelines: Vec<Option<Arc<wgpu::ComputePipeline>>>,
}

impl Program {
    /// Emits the WGSL of `schedule` in `mode`; `bindings` fixes the sizes of static code
    /// (ignored otherwise).
    pub fn new(schedule: Schedule, mode: Mode, bindings: &Bindings) -> Program {
        let spec = match mode {
            Mode::Static => Specialization::Static(bindings),
            Mode::Override => Specialization::Override,
            Mode::Dynamic => Specialization::Dynamic,
        };
        let wgsl = codegen::emit_schedule(&schedule, &spec);
        let fixed = (mode == Mode::Static).then(|| bindings.clone());
        Program::from_wgsl(schedule, mode, wgsl, fixed)
    }

    /// A program from WGSL already emitted for `schedule` in `mode`; `static_bindings` are
    /// the sizes static code was specialised for (`None` otherwise).
    pub fn from_wgsl(
        schedule: Schedule,
        mode: Mode,
        wgsl: Vec<Wgsl>,
        static_bindings: Option<Bindings>,
    ) -> Program {
        let source_hashes = wgsl
            .iter()
            .map(|w| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                w.source.hash(&mut hasher);
                hasher.finish()
            })
            .collect();
        Program {
            schedule,
            mode,
            wgsl,
            source_hashes,
            static_bindings,
            resident: None,
        }
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The mode sizes are passed in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The WGSL of each kernel.
    pub fn wgsl(&self) -> &[Wgsl] {
        &self.wgsl
    }
}

/// A one-shot value set by a callback and awaited as a future (read-back on the web must
/// not block, so completion is signalled, not waited for).
struct Signal<T> {
    state: Arc<Mutex<(Option<T>, Option<Waker>)>>,
}

impl<T> Signal<T> {
    fn new() -> (Signal<T>, impl FnOnce(T) + Clone) {
        let state = Arc::new(Mutex::new((None, None::<Waker>)));
        let setter_state = state.clone();
        let set = move |value: T| {
            let mut guard = setter_state.lock().expect("signal lock");
            guard.0 = Some(value);
            if let Some(waker) = guard.1.take() {
                waker.wake();
            }
        };
        (Signal { state }, set)
    }
}

impl<T> Future for Signal<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut guard = self.state.lock().expect("signal lock");
        match guard.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                guard.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Buffers kept for reuse, by usage and size (sizes round up to a power of two so calls
/// of nearby sizes share buffers).
#[derive(Default)]
struct Pool {
    free: HashMap<(u32, u64), Vec<wgpu::Buffer>>,
    bytes: u64,
}

impl Pool {
    fn acquire(
        &mut self,
        device: &wgpu::Device,
        usage: wgpu::BufferUsages,
        size: u64,
    ) -> wgpu::Buffer {
        let size = size.max(16).next_power_of_two();
        if let Some(buffer) = self.free.get_mut(&(usage.bits(), size)).and_then(Vec::pop) {
            return buffer;
        }
        self.bytes += size;
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tailor pool"),
            size,
            usage,
            mapped_at_creation: false,
        })
    }

    fn release(&mut self, buffer: wgpu::Buffer) {
        self.free
            .entry((buffer.usage().bits(), buffer.size()))
            .or_default()
            .push(buffer);
    }
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
    pipelines: HashMap<(u64, usize, Vec<i64>), Arc<wgpu::ComputePipeline>>,
    pool: Pool,
    param_bytes: u64,
    stats: GpuStats,
    clock: Box<dyn Fn() -> f64 + Send + Sync>,
}

const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::COPY_SRC);

/// Largest workgroup count per grid dimension the runtime ever uses (WebGPU's default).
const MAX_GRID_DIM: u64 = 65_535;

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
        let summary = AdapterSummary {
            name: info.name.clone(),
            backend: info.backend.to_string().to_lowercase(),
            timestamps,
        };
        let (device, queue, limits) = open_device(&adapter).await?;
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
            pool: Pool::default(),
            param_bytes: 0,
            stats: GpuStats::default(),
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
            ..self.stats
        }
    }

    /// Drops every cached pipeline and pooled buffer (programs re-upload their parameters),
    /// so the next calls pay full price again — what a fresh process would pay.
    pub fn clear_cache(&mut self) {
        self.pipelines.clear();
        self.pool = Pool::default();
        self.param_bytes = 0;
        self.generation += 1;
    }

    /// The limits calls are checked against; lowering them simulates a smaller device.
    pub fn limits_mut(&mut self) -> &mut wgpu::Limits {
        &mut self.limits
    }

    /// Destroys the device, as a driver reset would; the next call recreates it. For tests
    /// of the recovery path.
    pub fn destroy_device(&self) {
        self.device.destroy();
    }

    fn watch_device(&mut self) {
        let lost = self.lost.clone();
        self.device
            .set_device_lost_callback(move |_, _| lost.store(true, Ordering::SeqCst));
        let uncaptured = self.uncaptured.clone();
        self.device.on_uncaptured_error(Arc::new(move |error| {
            *uncaptured.lock().expect("error lock") = Some(error.to_string());
        }));
    }

    /// Recreates the device after a loss; every cached resource belonged to the old one.
    async fn recover(&mut self) -> Result<(), GpuError> {
        if !self.lost.load(Ordering::SeqCst) {
            return Ok(());
        }
        let opened = match open_device(&self.adapter).await {
            Ok(opened) => opened,
            Err(_) => {
                self.adapter = self
                    .instance
                    .request_adapter(&wgpu::RequestAdapterOptions::default())
                    .await
                    .map_err(|e| GpuError::DeviceLost(e.to_string()))?;
                open_device(&self.adapter)
                    .await
                    .map_err(|e| GpuError::DeviceLost(e.to_string()))?
            }
        };
        (self.device, self.queue, self.limits) = opened;
        self.lost.store(false, Ordering::SeqCst);
        self.generation += 1;
        self.pipelines.clear();
        self.pool = Pool::default();
        self.param_bytes = 0;
        self.stats.devices_recreated += 1;
        self.watch_device();
        Ok(())
    }

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

    /// Checks every limit a call depends on, before anything is dispatched.
    fn check_limits(
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
            let checks = [
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
                if let Resource::Read(id) | Resource::Write(id) = resource {
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

    /// Runs `program` on `inputs`; `timing` asks for per-kernel times. A device lost
    /// during the call is recreated and the call retried once.
    pub async fn run(
        &mut self,
        program: &mut Program,
        inputs: &[Tensor],
        timing: bool,
    ) -> Result<GpuRun, GpuError> {
        match self.run_once(program, inputs, timing).await {
            Err(_) if self.lost.load(Ordering::SeqCst) => {
                self.recover().await?;
                self.run_once(program, inputs, timing).await
            }
            result => result,
        }
    }

    async fn run_once(
        &mut self,
        program: &mut Program,
        inputs: &[Tensor],
        timing: bool,
    ) -> Result<GpuRun, GpuError> {
        self.recover().await?;
        let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
        let sizes = bind(&program.schedule, &shapes)?;
        check_static_sizes(program, &sizes)?;
        self.check_limits(program, &sizes.buffer_lens, &sizes.workgroups)?;
        self.prepare(program).await?;
        let pipelines = self.pipelines_for(program, &sizes).await?;
        let mode = match (timing, self.summary.timestamps) {
            (false, _) => Timing::Off,
            (true, true) => Timing::Timestamps,
            (true, false) => Timing::SubmitToDone,
        };
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let rejected = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut held = Vec::new();
        let buffers = self.upload(program, &sizes, inputs, &mut held);
        let bind_groups = self.bind_groups(program, &sizes, &buffers, &pipelines, &mut held);
        let (encoder, queries, mut kernel_ms) = self
            .encode(program, &sizes, &pipelines, &bind_groups, mode)
            .await;
        let read = self.read_back(
            encoder,
            program,
            &sizes,
            &buffers,
            queries.as_ref(),
            &mut held,
        );
        let kernels = || {
            let names: Vec<&str> = program.wgsl.iter().map(|w| w.kernel.as_str()).collect();
            names.join(", ")
        };
        if let Some(error) = rejected.pop().await {
            return Err(GpuError::Rejected {
                what: format!("a call of {}", kernels()),
                message: error.to_string(),
            });
        }
        if oom.pop().await.is_some() {
            return Err(GpuError::OutOfMemory { kernel: kernels() });
        }
        let (outputs, timestamps) = read.await?;
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
        Ok(GpuRun {
            outputs,
            kernel_ms,
            timing: mode,
        })
    }

    /// Each kernel's pipeline: prepared ones, or (override code) one per size binding.
    async fn pipelines_for(
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

    /// One device buffer per schedule buffer: parameters as uploaded, the rest from the
    /// pool (pushed on `held`), inputs written.
    fn upload(
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

    /// Each kernel's bind group, with its `dims` uniform written where it has one.
    fn bind_groups(
        &mut self,
        program: &Program,
        sizes: &Sizes,
        buffers: &[wgpu::Buffer],
        pipelines: &[Arc<wgpu::ComputePipeline>],
        held: &mut Vec<wgpu::Buffer>,
    ) -> Vec<wgpu::BindGroup> {
        let mut bind_groups = Vec::with_capacity(program.wgsl.len());
        for (wgsl, pipeline) in program.wgsl.iter().zip(pipelines) {
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
    async fn encode(
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

    /// Copies the outputs (and resolved timestamps) to mappable buffers, submits, and
    /// returns a future of the tensors and kernel times. Natively the mapping completes
    /// here, by polling; on the web the browser completes it and the future waits.
    fn read_back(
        &mut self,
        mut encoder: wgpu::CommandEncoder,
        program: &Program,
        sizes: &Sizes,
        buffers: &[wgpu::Buffer],
        queries: Option<&wgpu::QuerySet>,
        held: &mut Vec<wgpu::Buffer>,
    ) -> impl Future<Output = ReadBack> + use<> {
        let schedule = &program.schedule;
        let mappable = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let out_shapes = output_shapes(schedule, sizes);
        let mut targets: Vec<(wgpu::Buffer, u64)> = Vec::new();
        for (&id, shape) in schedule.outputs.iter().zip(out_shapes.iter().flatten()) {
            let bytes = (shape.iter().product::<usize>() * 4) as u64;
            let target = self.pool.acquire(&self.device, mappable, bytes);
            if bytes > 0 {
                encoder.copy_buffer_to_buffer(&buffers[id.index()], 0, &target, 0, bytes);
            }
            targets.push((target, bytes));
        }
        let n_queries = 2 * schedule.kernels.len() as u32;
        if let Some(query_set) = queries {
            let bytes = u64::from(n_queries) * 8;
            let usage = wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC;
            let resolve = self.pool.acquire(&self.device, usage, bytes);
            let target = self.pool.acquire(&self.device, mappable, bytes);
            encoder.resolve_query_set(query_set, 0..n_queries, &resolve, 0);
            encoder.copy_buffer_to_buffer(&resolve, 0, &target, 0, bytes);
            held.push(resolve);
            targets.push((target, bytes));
        }
        self.queue.submit([encoder.finish()]);
        let mut signals = Vec::with_capacity(targets.len());
        for (target, bytes) in &targets {
            let (signal, set) = Signal::new();
            if *bytes > 0 {
                target.slice(..*bytes).map_async(wgpu::MapMode::Read, set);
            } else {
                set(Ok(()));
            }
            signals.push(signal);
        }
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        held.extend(targets.iter().map(|(target, _)| target.clone()));
        let names: Vec<String> = schedule.kernels.iter().map(|k| k.name.clone()).collect();
        let period_ns = f64::from(self.queue.get_timestamp_period());
        let timed = queries.is_some();
        async move {
            for signal in signals {
                signal
                    .await
                    .map_err(|e| GpuError::ReadBack(e.to_string()))?;
            }
            let mut mapped = targets
                .iter()
                .map(|(target, bytes)| read_mapped(target, *bytes));
            let mut outputs = Vec::new();
            for shape in out_shapes? {
                let data = bytemuck::pod_collect_to_vec::<u8, f32>(
                    &mapped.next().expect("one per output")?,
                );
                outputs.push(Tensor { shape, data });
            }
            let mut times = Vec::new();
            if timed {
                let bytes = mapped.next().expect("the timestamps")?;
                let ticks = bytemuck::pod_collect_to_vec::<u8, u64>(&bytes);
                for (k, name) in names.into_iter().enumerate() {
                    let elapsed = ticks[2 * k + 1].saturating_sub(ticks[2 * k]);
                    times.push((name, elapsed as f64 * period_ns / 1e6));
                }
            }
            Ok((outputs, times))
        }
    }

    /// Waits until the queue is idle (natively by polling, on the web by a callback).
    async fn wait_idle(&self) {
        let (signal, set) = Signal::new();
        self.queue.on_submitted_work_done(move || set(()));
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        signal.await;
    }
}

/// The tensors and per-kernel times of a call, once read back.
type ReadBack = Result<(Vec<Tensor>, Vec<(String, f64)>), GpuError>;

/// The bytes of a mapped buffer's first `bytes`, unmapping it afterwards.
fn read_mapped(target: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>, GpuError> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let view = target
        .slice(..bytes)
        .get_mapped_range()
        .map_err(|e| GpuError::ReadBack(e.to_string()))?;
    let data = view.to_vec();
    drop(view);
    target.unmap();
    Ok(data)
}

/// A static program runs only at the sizes it was specialised for.
fn check_static_sizes(program: &Program, sizes: &Sizes) -> Result<(), GpuError> {
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

/// Opens a device with the adapter's own limits and timestamp queries when offered.
async fn open_device(
    adapter: &wgpu::Adapter,
) -> Result<(wgpu::Device, wgpu::Queue, wgpu::Limits), GpuError> {
    let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
    let limits = adapter.limits();
    let (device, queue) = adapter
        .request_device(&wgpu::DeviceDescriptor {
            label: Some("tailor"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        })
        .await
        .map_err(|e| GpuError::Device(e.to_string()))?;
    Ok((device, queue, limits))
}
