//! The CPU backend: a compiled schedule bound to `runtime::cpu`'s kernels and buffers.
//!
//! In: a compiled entry's schedule; a call's inputs. Out: its outputs, with the run's time
//! and the arena and scratch the program keeps. Invariant: kernels run back to back on the
//! calling thread, and are not timed one by one; nothing is built ahead (binding is free).

use super::backend::{Backend, Kernels, LocalFuture, Ran, Runtime};
use crate::codegen::Mode;
use crate::compile::Compiled;
use crate::error::Error;
use crate::graph::Tensor;
use crate::runtime::cpu::Program;
use crate::symbolic::Bindings;
use std::any::Any;

/// The CPU backend.
struct CpuRuntime;

impl Backend {
    /// The CPU backend.
    pub fn cpu() -> Backend {
        Backend {
            runtime: Box::new(CpuRuntime),
        }
    }
}

/// A schedule with its bound kernels and buffers.
struct CpuKernels(Box<Program>);

impl Runtime for CpuRuntime {
    fn name(&self) -> &'static str {
        "cpu"
    }

    /// The CPU runs the schedule itself: WGSL modes and baked sizes do not apply.
    fn kernels(
        &self,
        compiled: &Compiled,
        _mode: Mode,
        _bindings: &Bindings,
    ) -> Result<Box<dyn Kernels>, Error> {
        let schedule = compiled
            .schedule()
            .map_err(|err| Error::from(err.clone()))?;
        Ok(Box::new(CpuKernels(Box::new(Program::new(
            schedule.clone(),
        )))))
    }

    fn clear_cache(&self) -> LocalFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Kernels for CpuKernels {
    fn run<'a>(
        &'a mut self,
        inputs: &'a [Tensor],
        ints: &'a [i64],
        _timing: bool,
        clock: &'a dyn Fn() -> f64,
    ) -> LocalFuture<'a, Result<Ran, Error>> {
        Box::pin(async move {
            let program = &mut self.0;
            let started = clock();
            let outputs = program.run(inputs, ints)?;
            let run_ms = clock() - started;
            Ok(Ran {
                outputs,
                build_ms: 0.0,
                run_ms,
                kernel_ms: Vec::new(),
                timing: "off",
                products: Vec::new(),
                host_ms: run_ms,
                arena_bytes: program.arena_elems() * size_of::<f32>(),
                scratch_bytes: program.scratch_elems() * size_of::<f32>(),
            })
        })
    }
}
