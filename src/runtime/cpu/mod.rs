//! The CPU backend: runs a lowered `Schedule` on the CPU, kernel by kernel, compiled.
//!
//! In: a schedule and one call's input tensors. Out: the returned tensors. It executes the
//! fused kernels as lowered — the same buffers (temporaries shared as the memory plan
//! says), the same index formulas, the same epilogues — but not by interpreting them per
//! element: per distinct call sizes, every kernel is bound once (`bind`: sizes become
//! numbers, each formula becomes a start and a stride along one variable, each value tree a
//! block program), then matrix products go to `matrixmultiply` (`gemm.rs`), maps, rows and
//! pools run as block loops (`loops.rs`), on rayon's threads natively (`parallel.rs`).
//! Invariant: no panic on a bad schedule or bad input — an out-of-range address is a
//! `RunError`, sizes are checked before any buffer is allocated — and a call at sizes seen
//! before allocates only its returned tensors, small per-job scratch (index slots, block
//! stacks of a few KiB) and `matrixmultiply`'s packing buffers: the schedule's buffers
//! and the products' tiles live in the program, sized by the largest call so far.

mod block;
mod formula;
mod gemm;
mod loops;
mod memory;
mod parallel;
#[cfg(test)]
mod tests;

use super::{RunError, Sizes, bind, output_shapes};
use crate::graph::{self, Tensor, numel};
use crate::lower::{Body, Kernel, MAX_VARS, Role, Schedule};
use crate::symbolic::{CompiledExpr, Expr};
use formula::Vars;
use gemm::GemmPlan;
use loops::{MapPlan, PoolPlan, RowsPlan};
use memory::Memory;

/// Bound kernels kept per program: the demo's sizes cycle through a few batch sizes.
const BOUND_SIZES_KEPT: usize = 8;

/// Runs `schedule` on `inputs` (one tensor per graph input, in order) and `ints` (one
/// value per int argument) once.
pub fn run(schedule: &Schedule, inputs: &[Tensor], ints: &[i64]) -> Result<Vec<Tensor>, RunError> {
    Program::new(schedule.clone()).run(inputs, ints)
}

/// A schedule ready to run on the CPU again and again: its kernels bound for the last few
/// call sizes, and the memory its buffers live in.
pub struct Program {
    schedule: Schedule,
    /// Most recent first: the call's symbol values and the kernels bound to them.
    bound: Vec<(Vec<i64>, Vec<Plan>)>,
    /// One vector per buffer; empty for inputs and parameters, which are read in place.
    arena: Vec<Vec<f32>>,
    /// Matrix products' tiles and packed operands, reused by every product of every call.
    scratch: Vec<f32>,
}

/// One kernel bound to a call's sizes.
#[derive(Debug)]
enum Plan {
    Map(MapPlan),
    Gemm(Box<GemmPlan>),
    Rows(RowsPlan),
    Pool(PoolPlan),
}

impl Program {
    /// A program for `schedule`; nothing is bound or allocated until the first call.
    pub fn new(schedule: Schedule) -> Program {
        let arena = vec![Vec::new(); schedule.buffers.len()];
        Program {
            schedule,
            bound: Vec::new(),
            arena,
            scratch: Vec::new(),
        }
    }

    /// The schedule it runs.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Elements the program holds between calls: temporaries, outputs and scratch, as
    /// allocated (the most any call so far needed).
    pub fn held_elems(&self) -> usize {
        self.arena_elems() + self.scratch_elems()
    }

    /// Elements of the arena as allocated: the memory plan's buffers (outputs and shared
    /// temporaries), each as long as the longest call so far needed it.
    pub fn arena_elems(&self) -> usize {
        self.arena.iter().map(Vec::capacity).sum()
    }

    /// Elements of the products' tiles and packed operands as allocated (outside the
    /// memory plan: the plan places tensors, this is the products' working space).
    pub fn scratch_elems(&self) -> usize {
        self.scratch.capacity()
    }

    /// Refuses a call whose buffers together take more than the memory budget, naming the
    /// largest.
    fn check_budget(&self, buffer_lens: &[usize]) -> Result<(), RunError> {
        let total: u128 = buffer_lens
            .iter()
            .map(|&len| graph::bytes_of(len as u128))
            .sum();
        let budget = graph::memory_budget();
        if total <= u128::from(budget) {
            return Ok(());
        }
        let (buffer, &largest) = self
            .schedule
            .buffers
            .iter()
            .zip(buffer_lens)
            .max_by_key(|(_, len)| **len)
            .expect("a call over budget has a buffer");
        Err(RunError::OverBudget {
            buffer: buffer.name.clone(),
            buffer_bytes: graph::bytes_of(largest as u128),
            total_bytes: total,
            budget,
        })
    }

    /// Runs the kernels on `inputs` (one tensor per graph input, in order) and `ints` (one
    /// value per int argument).
    pub fn run(&mut self, inputs: &[Tensor], ints: &[i64]) -> Result<Vec<Tensor>, RunError> {
        let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
        let sizes = bind(&self.schedule, &shapes, ints)?;
        self.check_budget(&sizes.buffer_lens)?;
        self.bind_plans(&sizes)?;
        for ((buffer, &len), memory) in self
            .schedule
            .buffers
            .iter()
            .zip(&sizes.buffer_lens)
            .zip(&mut self.arena)
        {
            if matches!(buffer.role, Role::Output(_) | Role::Temp) {
                grow_to(memory, len);
            }
        }
        let plans = &self.bound[0].1;
        for (kernel, plan) in self.schedule.kernels.iter().zip(plans) {
            let output = kernel.output.index();
            let mut out = std::mem::take(&mut self.arena[output]);
            let memory = readable(&self.schedule, &self.arena, kernel, inputs);
            let result = match plan {
                Plan::Map(plan) => plan.run(&memory, &mut out),
                Plan::Gemm(plan) => plan.run(&memory, &mut out, &mut self.scratch),
                Plan::Rows(plan) => plan.run(&memory, &mut out),
                Plan::Pool(plan) => plan.run(&memory, &mut out),
            };
            self.arena[output] = out;
            result?;
        }
        let shapes = output_shapes(&self.schedule, &sizes)?;
        let buffers = buffer_slices(&self.schedule, &self.arena, inputs);
        self.schedule
            .outputs
            .iter()
            .zip(shapes)
            .map(|(id, shape)| {
                let len = numel(&shape);
                let buffer = buffers[id.index()];
                let data = buffer.get(..len).ok_or(RunError::OutOfBounds {
                    kernel: "the caller".into(),
                    buffer: self.schedule.buffer(*id).name.clone(),
                    offset: len as i64,
                    len_elems: buffer.len(),
                })?;
                Ok(Tensor {
                    data: data.to_vec(),
                    shape,
                })
            })
            .collect()
    }

    /// One line per kernel: how it runs at the sizes of `inputs` (for tests).
    #[cfg(test)]
    fn describe(&mut self, inputs: &[Tensor]) -> Result<Vec<String>, RunError> {
        let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
        self.bind_plans(&bind(&self.schedule, &shapes, &[])?)?;
        let lines = self
            .schedule
            .kernels
            .iter()
            .zip(&self.bound[0].1)
            .map(|(kernel, plan)| {
                let names = kernel.body.var_names();
                let how = match plan {
                    Plan::Map(plan) => plan.describe(names),
                    Plan::Gemm(plan) => plan.describe(names),
                    Plan::Rows(plan) => plan.describe(names),
                    Plan::Pool(plan) => plan.describe(names),
                };
                format!("{}: {how}", kernel.name)
            });
        Ok(lines.collect())
    }

    /// Puts the kernels bound to `sizes` first in `bound`: kept from an earlier call at the
    /// same sizes, or bound now (dropping the least recently used beyond `BOUND_SIZES_KEPT`).
    fn bind_plans(&mut self, sizes: &Sizes) -> Result<(), RunError> {
        if let Some(at) = self
            .bound
            .iter()
            .position(|(slots, _)| *slots == sizes.slots)
        {
            let entry = self.bound.remove(at);
            self.bound.insert(0, entry);
            return Ok(());
        }
        let plans = self
            .schedule
            .kernels
            .iter()
            .map(|kernel| bind_kernel(&self.schedule, kernel, sizes))
            .collect::<Result<Vec<_>, _>>()?;
        self.bound.insert(0, (sizes.slots.clone(), plans));
        self.bound.truncate(BOUND_SIZES_KEPT);
        Ok(())
    }
}

/// Makes `memory` `len` long, allocating exactly what a longer call needs (never the
/// doubling `resize` would do) and keeping the allocation when a call needs less.
pub(super) fn grow_to(memory: &mut Vec<f32>, len: usize) {
    if len > memory.capacity() {
        memory.reserve_exact(len - memory.len());
    }
    memory.resize(len, 0.0);
}

/// Every buffer's elements: the caller's tensors and the parameters in place, the rest
/// in the arena.
fn buffer_slices<'a>(
    schedule: &'a Schedule,
    arena: &'a [Vec<f32>],
    inputs: &'a [Tensor],
) -> Vec<&'a [f32]> {
    schedule
        .buffers
        .iter()
        .zip(arena)
        .map(|(buffer, memory)| match &buffer.role {
            Role::Input(n) => inputs.get(*n).map_or(&[][..], |t| &t.data[..]),
            Role::Param(values) => &values[..],
            Role::Output(_) | Role::Temp => &memory[..],
        })
        .collect()
}

/// What `kernel` may read: every buffer, its output (taken out of the arena) empty.
fn readable<'a>(
    schedule: &'a Schedule,
    arena: &'a [Vec<f32>],
    kernel: &'a Kernel,
    inputs: &'a [Tensor],
) -> Memory<'a> {
    Memory {
        buffers: buffer_slices(schedule, arena, inputs),
        schedule,
        kernel,
    }
}

/// Binds one kernel to the call's sizes: every shape symbol and derived size becomes its
/// number, then each body part is split along its variables.
fn bind_kernel(schedule: &Schedule, kernel: &Kernel, sizes: &Sizes) -> Result<Plan, RunError> {
    let first = schedule.first_index_sym as usize;
    let mut values = sizes.slots.clone();
    values.resize(first + MAX_VARS + kernel.sizes.len(), 0);
    for size in &kernel.sizes {
        let value = CompiledExpr::new(&size.value)
            .eval(&values)
            .ok_or_else(|| RunError::Size {
                what: format!("{} {}", kernel.name, size.name),
                expr: size.value.to_string(),
            })?;
        values[size.sym.index()] = value;
    }
    let is_var = |index: usize| (first..first + MAX_VARS).contains(&index);
    let bind = |expr: &Expr| {
        let bound = expr.substitute_with(&|sym| {
            let index = sym.index();
            // A symbol beyond the call's values stays: its formula then fails to evaluate.
            let value = values.get(index).filter(|_| !is_var(index));
            value.map(|&v| Expr::int(v))
        });
        if bound.is_overflow() {
            return Err(RunError::Size {
                what: format!("{} index", kernel.name),
                expr: expr.to_string(),
            });
        }
        Ok(bound)
    };
    let extent = |what: &str, expr: &Expr| {
        bind(expr)?
            .as_int()
            .filter(|v| *v >= 0)
            .ok_or_else(|| RunError::Size {
                what: format!("{} {what}", kernel.name),
                expr: expr.to_string(),
            })
    };
    let vars = |extents: &[i64]| Vars::new(schedule.first_index_sym, extents);
    Ok(match &kernel.body {
        Body::Map { len, value, store } => {
            let vars = vars(&[extent("len", len)?]);
            Plan::Map(MapPlan::bind(vars, value, store, &bind)?)
        }
        Body::Gemm(gemm) => {
            let extents = [
                extent("batch", &gemm.batch)?,
                extent("m", &gemm.m)?,
                extent("n", &gemm.n)?,
                extent("k", &gemm.k)?,
            ];
            Plan::Gemm(Box::new(GemmPlan::bind(vars(&extents), gemm, &bind)?))
        }
        Body::Rows(rows) => {
            let extents = [extent("rows", &rows.rows)?, extent("len", &rows.len)?];
            Plan::Rows(RowsPlan::bind(vars(&extents), rows, &bind)?)
        }
        Body::Pool(pool) => {
            let window = pool.window.map(|w| w.max(0));
            let extents = [extent("len", &pool.len)?, window[0], window[1]];
            Plan::Pool(PoolPlan::bind(vars(&extents), pool, &bind)?)
        }
    })
}
