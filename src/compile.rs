//! The compile pipeline: a captured graph to the kernels that run it, in one function.
//!
//! In: a graph captured by `frontend::capture` (its shapes symbolic), the value ranges its
//! guards promise for each symbol, and [`CompileOptions`] (fused for a cache entry, one
//! kernel per op for an eager call). Out: a [`Compiled`] — the lowered `Schedule` (or why it
//! could not be lowered), its WGSL in the mode the entry runs in, the other specialisations
//! emitted on demand, and the trace `Stage` of each pass (its text made when a trace asks).
//! Invariants: this is the only caller of `lower::lower*` outside `lower/` (a tidy test
//! checks it); every pass is followed by a check of what it produced, so a broken schedule
//! or a kernel without WGSL is an error value here, never something a runtime discovers; the
//! same graph and ranges always give the same `Compiled` text.

use crate::codegen::{self, Mode, Resource, Specialization, Wgsl};
use crate::graph::Graph;
use crate::lower::{self, FusionPolicy, GemmStrategy, LowerError, Schedule};
use crate::symbolic::{Bindings, Sym, ValueRange};
use crate::trace::Stage;
use std::borrow::Cow;
use std::sync::OnceLock;

/// How a graph is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Fused kernels (a cache entry) or one kernel per op (an eager call).
    pub fusion: FusionPolicy,
    /// Forces every matrix product to one strategy (benchmarks compare them); `None` keeps
    /// lowering's choice.
    pub gemm: Option<GemmStrategy>,
}

impl CompileOptions {
    /// What a cache entry gets: fused kernels, lowering's own GEMM strategy.
    pub const ENTRY: CompileOptions = CompileOptions {
        fusion: FusionPolicy::Fused,
        gemm: None,
    };

    /// What an eager call gets: one kernel per op, as PyTorch's eager mode runs one library
    /// kernel per op.
    pub const EAGER: CompileOptions = CompileOptions {
        fusion: FusionPolicy::PerOp,
        gemm: None,
    };
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions::ENTRY
    }
}

/// Why a graph has no kernels.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    /// Lowering refused the graph (an op configuration the kernels do not cover).
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// A pass produced something its check rejects: a compiler bug, reported, not run.
    #[error("the {pass} pass produced a bad result: {detail}")]
    Verify {
        /// `lower` or `emit`.
        pass: &'static str,
        /// What the check found.
        detail: String,
    },
}

/// A graph compiled to kernels.
#[derive(Clone, Debug)]
pub struct Compiled {
    schedule: Result<Schedule, CompileError>,
    /// `codegen::entry_mode` of the schedule, decided once: every call asks for it.
    entry_mode: Mode,
    /// WGSL per mode, emitted once when first asked for (index: `Mode as usize`); static code
    /// is cached only for a schedule without symbols, where it needs no sizes.
    emitted: [OnceLock<Vec<Wgsl>>; Mode::ALL.len()],
}

/// Compiles `graph` for every binding of its symbols inside `ranges`: lower, check the
/// schedule, emit the WGSL of the entry's own mode, and check it.
pub fn compile(
    graph: &Graph,
    ranges: &dyn Fn(Sym) -> ValueRange,
    options: &CompileOptions,
) -> Compiled {
    let schedule = lower_pass(graph, ranges, options);
    let entry_mode = schedule.as_ref().map_or(Mode::Static, codegen::entry_mode);
    let mut compiled = Compiled {
        schedule,
        entry_mode,
        emitted: Default::default(),
    };
    if let Ok(schedule) = &compiled.schedule {
        let wgsl =
            codegen::emit_schedule(schedule, &Specialization::of(entry_mode, &Bindings::new()));
        if let Err(err) = verify_emitted(schedule, &wgsl) {
            compiled.schedule = Err(err);
        } else {
            let _ = compiled.emitted[entry_mode as usize].set(wgsl);
        }
    }
    compiled
}

/// Lowering, then the schedule's own check (`lower::verify`).
fn lower_pass(
    graph: &Graph,
    ranges: &dyn Fn(Sym) -> ValueRange,
    options: &CompileOptions,
) -> Result<Schedule, CompileError> {
    let mut schedule = lower::lower_with(graph, ranges, options.fusion)?;
    if let Some(strategy) = options.gemm {
        schedule.kernels = schedule
            .kernels
            .iter()
            .map(|kernel| kernel.with_strategy(strategy))
            .collect();
    }
    lower::verify(&schedule).map_err(|detail| CompileError::Verify {
        pass: "lower",
        detail,
    })?;
    Ok(schedule)
}

/// Emission's check: one WGSL per kernel, in launch order, binding only the schedule's
/// buffers, supplying only the schedule's shape symbols.
fn verify_emitted(schedule: &Schedule, wgsl: &[Wgsl]) -> Result<(), CompileError> {
    let bad = |detail: String| CompileError::Verify {
        pass: "emit",
        detail,
    };
    if wgsl.len() != schedule.kernels.len() {
        return Err(bad(format!(
            "{} kernels but {} shaders",
            schedule.kernels.len(),
            wgsl.len()
        )));
    }
    let shape_syms = schedule.shape_syms();
    for (kernel, shader) in schedule.kernels.iter().zip(wgsl) {
        if shader.kernel != kernel.name {
            return Err(bad(format!(
                "shader {} stands where {} should",
                shader.kernel, kernel.name
            )));
        }
        let buffer_ok = |resource: &Resource| match resource {
            Resource::Read(id) | Resource::ReadVec4(id) | Resource::Write(id) => {
                id.index() < schedule.buffers.len()
            }
            Resource::Dims => true,
        };
        if !shader.resources.iter().all(buffer_ok) {
            return Err(bad(format!(
                "{} binds a buffer the schedule lacks",
                kernel.name
            )));
        }
        if let Some(sym) = shader.symbols.iter().find(|s| !shape_syms.contains(s)) {
            return Err(bad(format!(
                "{} asks the host for {sym}, which is not a shape symbol",
                kernel.name
            )));
        }
    }
    Ok(())
}

impl Compiled {
    /// The lowered schedule, or why there is none.
    pub fn schedule(&self) -> Result<&Schedule, &CompileError> {
        self.schedule.as_ref()
    }

    /// The mode the kernels run in by default: static for a schedule without shape symbols,
    /// dynamic otherwise (`codegen::entry_mode`).
    pub fn mode(&self) -> Result<Mode, &CompileError> {
        self.schedule().map(|_| self.entry_mode)
    }

    /// Every kernel's WGSL in `mode`. Override and dynamic code, and static code of a
    /// schedule without symbols, are emitted once and kept; static code of a symbolic
    /// schedule bakes in `bindings` and is emitted afresh.
    pub fn wgsl(&self, mode: Mode, bindings: &Bindings) -> Result<Cow<'_, [Wgsl]>, CompileError> {
        let schedule = self.schedule.as_ref().map_err(Clone::clone)?;
        let keeps = mode != Mode::Static || self.entry_mode == Mode::Static;
        if !keeps {
            return Ok(Cow::Owned(codegen::emit_schedule(
                schedule,
                &Specialization::of(mode, bindings),
            )));
        }
        let wgsl = self.emitted[mode as usize]
            .get_or_init(|| codegen::emit_schedule(schedule, &Specialization::of(mode, bindings)));
        Ok(Cow::Borrowed(wgsl))
    }

    /// The trace stages of the passes, in order. Their text is built when a trace asks for
    /// it, not on every compile: most compiles (a lab sequence, the benchmark) never print.
    pub fn stages(&self) -> Vec<Stage> {
        vec![self.kernels_stage()]
    }

    /// Fusion groups, the memory plan and each kernel's WGSL in the default mode.
    fn kernels_stage(&self) -> Stage {
        let text = match (&self.schedule, self.mode()) {
            (Ok(schedule), Ok(mode)) => {
                let mut text = schedule.to_string();
                for wgsl in self.emitted[mode as usize].get().into_iter().flatten() {
                    text.push('\n');
                    text.push_str(&wgsl.source);
                }
                text
            }
            (Err(err), _) | (_, Err(err)) => format!("lowering failed: {err}\n"),
        };
        Stage {
            id: "kernels",
            title: "Kernels (fusion groups, memory plan, WGSL)".into(),
            text,
        }
    }
}
