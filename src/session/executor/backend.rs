//! What kernels run on: the [`Runtime`] interface every backend implements (the CPU's in
//! `cpu.rs`, the GPU's in `gpu.rs`), and the [`Backend`] a caller opens and shares.
//!
//! In: a [`Device`] choice (`auto|gpu|cpu`, parsed only here), then a compiled entry's
//! schedule to build kernels of, and inputs to run them on. Out: [`Kernels`] that the
//! executor keeps, and per run a [`Ran`]. Invariant: the executor sees backends only through
//! these two traits, so it has no arm per backend; kernels run only on the backend that
//! built them (each carries what it needs of it).

use crate::codegen::Mode;
use crate::compile::Compiled;
use crate::error::Error;
use crate::graph::Tensor;
use crate::lower::GemmStrategy;
use crate::symbolic::Bindings;
use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

/// A future a backend hands back; single-threaded, as the page's wasm is.
pub(super) type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Where a caller asks kernels to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// The GPU when an adapter works, else the CPU.
    #[default]
    Auto,
    /// The GPU, or an error saying why not.
    Gpu,
    /// The CPU backend.
    Cpu,
}

impl FromStr for Device {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(Device::Auto),
            "gpu" => Ok(Device::Gpu),
            "cpu" => Ok(Device::Cpu),
            other => Err(format!("expected 'auto', 'gpu' or 'cpu', got '{other}'")),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Device::Auto => "auto",
            Device::Gpu => "gpu",
            Device::Cpu => "cpu",
        })
    }
}

/// What `gpu` says on a build without the GPU runtime.
pub const NO_GPU_RUNTIME: &str = "this build has no GPU runtime (the crate's 'gpu' feature is off)";

/// One backend: what building and running a compiled schedule means on it.
pub(super) trait Runtime {
    /// `gpu` or `cpu`.
    fn name(&self) -> &'static str;

    /// The kernels of `compiled` in `mode`; `bindings` fixes the sizes of static code.
    fn kernels(
        &self,
        compiled: &Compiled,
        mode: Mode,
        bindings: &Bindings,
    ) -> Result<Box<dyn Kernels>, Error>;

    /// Drops cached pipelines and pooled buffers, so the next builds pay what a fresh
    /// process pays (kept kernels rebuild theirs on their next run).
    fn clear_cache(&self) -> LocalFuture<'_, ()>;

    /// The backend itself, for the GPU's own controls (`gpu.rs`).
    #[cfg_attr(
        not(feature = "gpu"),
        expect(dead_code, reason = "only the GPU's controls look their backend up")
    )]
    fn as_any(&self) -> &dyn Any;
}

/// An entry's (or an eager call's) kernels, ready for the backend that built them.
pub(super) trait Kernels {
    /// Runs the kernels on `inputs` and the call's `ints`; `timing` asks for per-kernel
    /// times where the backend measures them; `clock` gives milliseconds.
    fn run<'a>(
        &'a mut self,
        inputs: &'a [Tensor],
        ints: &'a [i64],
        timing: bool,
        clock: &'a dyn Fn() -> f64,
    ) -> LocalFuture<'a, Result<Ran, Error>>;
}

/// One run on a backend.
pub(super) struct Ran {
    pub outputs: Vec<Tensor>,
    pub build_ms: f64,
    pub run_ms: f64,
    pub kernel_ms: Vec<(String, f64)>,
    pub timing: &'static str,
    pub products: Vec<ProductRun>,
    pub host_ms: f64,
    pub arena_bytes: usize,
    pub scratch_bytes: usize,
}

/// A product kernel of a GPU call: the form it ran with at the call's sizes, and the large
/// form that was building off the call's path while it ran naive (tiers).
#[derive(Clone, Debug, PartialEq)]
pub struct ProductRun {
    /// The product kernel.
    pub kernel: String,
    /// The form it ran with.
    pub strategy: GemmStrategy,
    /// The form building in the background, when this call ran the naive tier for it.
    pub building: Option<GemmStrategy>,
}

/// What kernels run on: the CPU backend, or one GPU shared by every executor of a
/// process (or of a page).
pub struct Backend {
    pub(super) runtime: Box<dyn Runtime>,
}

impl Backend {
    /// Opens what `device` asks for (natively; the page probes WebGPU first and uses
    /// `Backend::gpu` or [`Backend::cpu`]). `clock` gives milliseconds to the GPU runtime.
    #[cfg(not(target_arch = "wasm32"))]
    pub async fn open(
        device: Device,
        clock: Box<dyn Fn() -> f64 + Send + Sync>,
    ) -> Result<Backend, Error> {
        if device == Device::Cpu {
            return Ok(Backend::cpu());
        }
        #[cfg(feature = "gpu")]
        {
            match crate::runtime::gpu::Gpu::new(clock).await {
                Ok(gpu) => Ok(Backend::gpu(gpu)),
                Err(_) if device == Device::Auto => Ok(Backend::cpu()),
                Err(err) => Err(err.into()),
            }
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = clock;
            match device {
                Device::Gpu => Err(Error::Call {
                    message: format!("device 'gpu': {NO_GPU_RUNTIME}"),
                    span: None,
                }),
                _ => Ok(Backend::cpu()),
            }
        }
    }

    /// `gpu` or `cpu`.
    pub fn name(&self) -> &'static str {
        self.runtime.name()
    }

    /// Drops the backend's cached pipelines and pooled buffers, so the next builds pay what
    /// a fresh process pays (kept kernels rebuild their pipelines on their next run).
    pub async fn clear_cache(&self) {
        self.runtime.clear_cache().await;
    }

    /// The kernels of `compiled` in `mode` for this backend; `bindings` fixes the sizes of
    /// static code.
    pub(super) fn kernels(
        &self,
        compiled: &Compiled,
        mode: Mode,
        bindings: &Bindings,
    ) -> Result<Box<dyn Kernels>, Error> {
        self.runtime.kernels(compiled, mode, bindings)
    }
}
