//! Elementwise maps, row reductions and pooling as loops over blocks.
//!
//! In: a `Body::Map`, `Body::Rows` or `Body::Pool` with the call's sizes bound (`bind_*`),
//! then the kernel's memory and its output buffer (`run`). Out: the output written. A
//! map is one block program along `gid`; a row kernel reads each row along `e`, reduces or
//! normalises it with the graph's own row maths (`softmax_row`, `log_softmax_row`,
//! `layer_norm_row`, the `ReduceKind` fold in order), then runs its epilogue; a pool folds
//! its window tap by tap over a block of outputs, skipping the taps that fall into padding.
//! Invariant: jobs split the outer loop only, so every element is computed exactly as in
//! one sequential pass.

use super::super::RunError;
use super::block::{Acc, Part, PartBuilder};
use super::formula::{BLOCK, Vars, for_each_block, for_each_run, inside};
use super::memory::Memory;
use super::parallel::{for_each_window, job_count, split_range, union};
use crate::graph::{ReduceKind, layer_norm_row, log_softmax_row, softmax_row};
use crate::lower::{Pool, RowOp, Rows, Value};
use crate::symbolic::Expr;
use std::ops::Range;

/// A bound `Body::Map`: one program along `gid`, stored by one formula.
#[derive(Clone, Debug)]
pub(super) struct MapPlan {
    vars: Vars,
    part: Part,
    value: usize,
    store: usize,
}

impl MapPlan {
    pub fn bind(
        vars: Vars,
        value: &Value,
        store: &Expr,
        bind: &dyn Fn(&Expr) -> Result<Expr, RunError>,
    ) -> Result<MapPlan, RunError> {
        let mut builder = PartBuilder::new(bind);
        let value = builder.code(value)?;
        let store = builder.formula(store)?;
        let part = builder.finish(&[0], &vars, Some(store));
        Ok(MapPlan {
            vars,
            part,
            value,
            store,
        })
    }

    /// How the map runs, for tests.
    #[cfg(test)]
    pub fn describe(&self, names: &[&str]) -> String {
        format!("map {}", self.part.axis.describe(names))
    }

    pub fn run(&self, memory: &Memory<'_>, out: &mut [f32]) -> Result<(), RunError> {
        let len = self.vars.extents[0];
        let mut slots = self.vars.slots();
        let jobs = split_range(0..len, job_count(len as usize))
            .into_iter()
            .map(|range| {
                Ok((
                    self.part
                        .hull(self.store, range.clone(), &mut slots, &self.vars)?,
                    range,
                ))
            })
            .collect::<Result<Vec<_>, RunError>>()?;
        for_each_window(out, jobs, |range, window| {
            let (part, vars) = (&self.part, &self.vars);
            let (mut slots, mut starts, mut stack) = (vars.slots(), Vec::new(), part.stack());
            let mut outer = Vec::new();
            part.outer_starts(&slots, &mut outer)?;
            for_each_run(part.axis, range, |run| {
                slots[vars.slot(part.axis.var)] = run.number;
                part.starts(&slots, &outer, &mut starts)?;
                let code = (self.value, self.store);
                part.store_run(code, memory, &starts, run, Acc::none(), &mut stack, window)
            })
        })
    }
}

/// A bound `Body::Rows`: a part that reads a row along `e`, and the epilogue's part.
#[derive(Clone, Debug)]
pub(super) struct RowsPlan {
    vars: Vars,
    op: RowOp,
    input: Part,
    input_code: usize,
    epilogue: Part,
    epilogue_code: usize,
    store: usize,
}

impl RowsPlan {
    pub fn bind(
        vars: Vars,
        rows: &Rows,
        bind: &dyn Fn(&Expr) -> Result<Expr, RunError>,
    ) -> Result<RowsPlan, RunError> {
        let mut builder = PartBuilder::new(bind);
        let input_code = builder.code(&rows.input)?;
        let input = builder.finish(&[1], &vars, None);
        let mut builder = PartBuilder::new(bind);
        let epilogue_code = builder.code(&rows.epilogue)?;
        let store = builder.formula(&rows.store)?;
        // A reduction's epilogue sees one value per row, a normalisation's one per element.
        let axis = if rows.op.is_reduction() { 0 } else { 1 };
        let epilogue = builder.finish(&[axis], &vars, Some(store));
        Ok(RowsPlan {
            vars,
            op: rows.op,
            input,
            input_code,
            epilogue,
            epilogue_code,
            store,
        })
    }

    /// How the rows are read and finished, for tests.
    #[cfg(test)]
    pub fn describe(&self, names: &[&str]) -> String {
        format!(
            "rows: read {}, epilogue {}",
            self.input.axis.describe(names),
            self.epilogue.axis.describe(names)
        )
    }

    pub fn run(&self, memory: &Memory<'_>, out: &mut [f32]) -> Result<(), RunError> {
        let [rows, len, ..] = self.vars.extents;
        let mut slots = self.vars.slots();
        let mut jobs = Vec::new();
        for range in split_range(0..rows, job_count((rows * len.max(1)) as usize)) {
            let hull = if self.op.is_reduction() {
                self.epilogue
                    .hull(self.store, range.clone(), &mut slots, &self.vars)?
            } else {
                let mut all = 0..0;
                for row in range.clone() {
                    slots[self.vars.slot(0)] = row;
                    let one = self
                        .epilogue
                        .hull(self.store, 0..len, &mut slots, &self.vars)?;
                    all = union(all, one);
                }
                all
            };
            jobs.push((hull, range));
        }
        for_each_window(out, jobs, |range, window| {
            let mut job = RowJob::new(self, memory);
            match self.op {
                RowOp::Sum => job.reduce(ReduceKind::Sum, range, window),
                RowOp::Mean => job.reduce(ReduceKind::Mean, range, window),
                RowOp::Max => job.reduce(ReduceKind::Amax, range, window),
                RowOp::Softmax => job.normalise(range, window, softmax_row),
                RowOp::LogSoftmax => job.normalise(range, window, log_softmax_row),
                RowOp::LayerNorm { eps } => {
                    job.normalise(range, window, |xs| layer_norm_row(xs, eps))
                }
            }
        })
    }
}

/// One job's scratch while running rows.
struct RowJob<'p, 'm> {
    plan: &'p RowsPlan,
    memory: &'p Memory<'m>,
    slots: Vec<i64>,
    outer: Vec<i64>,
    starts: Vec<i64>,
    input_stack: super::block::Stack,
    epilogue_stack: super::block::Stack,
}

impl<'p, 'm> RowJob<'p, 'm> {
    fn new(plan: &'p RowsPlan, memory: &'p Memory<'m>) -> Self {
        RowJob {
            plan,
            memory,
            slots: plan.vars.slots(),
            outer: Vec::new(),
            starts: Vec::new(),
            input_stack: plan.input.stack(),
            epilogue_stack: plan.epilogue.stack(),
        }
    }

    /// Row `row`'s elements into `xs` (`len` long).
    fn read_row(&mut self, row: i64, xs: &mut [f32]) -> Result<(), RunError> {
        let (plan, memory) = (self.plan, self.memory);
        let part = &plan.input;
        self.slots[plan.vars.slot(0)] = row;
        let (slots, starts, stack) = (&mut self.slots, &mut self.starts, &mut self.input_stack);
        let outer = &mut self.outer;
        part.outer_starts(slots, outer)?;
        for_each_run(part.axis, 0..plan.vars.extents[1], |run| {
            slots[plan.vars.slot(part.axis.var)] = run.number;
            part.starts(slots, outer, starts)?;
            let out = &mut xs[run.value as usize..][..run.len];
            part.eval_into(
                plan.input_code,
                memory,
                starts,
                run.first,
                Acc::none(),
                stack,
                out,
            )
        })
    }

    /// Runs the epilogue along `values` of its axis, `acc` holding the accumulator from
    /// the first of them on.
    fn finish(
        &mut self,
        values: Range<i64>,
        acc: &[f32],
        window: &mut super::memory::Window<'_>,
    ) -> Result<(), RunError> {
        let (plan, memory) = (self.plan, self.memory);
        let part = &plan.epilogue;
        let origin = values.start;
        let (slots, starts, stack) = (&mut self.slots, &mut self.starts, &mut self.epilogue_stack);
        let outer = &mut self.outer;
        part.outer_starts(slots, outer)?;
        for_each_run(part.axis, values, |run| {
            slots[plan.vars.slot(part.axis.var)] = run.number;
            part.starts(slots, outer, starts)?;
            let acc = Acc::strided(&acc[(run.value - origin) as usize..], 1);
            let code = (plan.epilogue_code, plan.store);
            part.store_run(code, memory, starts, run, acc, stack, window)
        })
    }

    fn reduce(
        &mut self,
        kind: ReduceKind,
        rows: Range<i64>,
        window: &mut super::memory::Window<'_>,
    ) -> Result<(), RunError> {
        let len = self.plan.vars.extents[1] as usize;
        let (mut results, mut xs) = (vec![0.0f32; BLOCK], vec![0.0f32; len]);
        let blocks = (rows.end - rows.start + BLOCK as i64 - 1) / BLOCK as i64;
        for block in split_range(rows, blocks as usize) {
            for (slot, row) in results.iter_mut().zip(block.clone()) {
                self.read_row(row, &mut xs)?;
                let acc = xs
                    .iter()
                    .fold(kind.identity(), |acc, &x| kind.combine(acc, x));
                *slot = kind.finish(acc, len);
            }
            self.finish(block, &results, window)?;
        }
        Ok(())
    }

    fn normalise(
        &mut self,
        rows: Range<i64>,
        window: &mut super::memory::Window<'_>,
        op: impl Fn(&mut [f32]),
    ) -> Result<(), RunError> {
        let len = self.plan.vars.extents[1];
        let mut xs = vec![0.0f32; len as usize];
        for row in rows {
            self.read_row(row, &mut xs)?;
            op(&mut xs);
            self.slots[self.plan.vars.slot(0)] = row;
            self.finish(0..len, &xs, window)?;
        }
        Ok(())
    }
}

/// A bound `Body::Pool`: the window's value, the inside bounds and the epilogue, all along
/// `gid` (one part, so they share runs).
#[derive(Clone, Debug)]
pub(super) struct PoolPlan {
    vars: Vars,
    reduction: ReduceKind,
    part: Part,
    value: usize,
    epilogue: usize,
    store: usize,
    inside: Vec<(usize, usize)>,
}

impl PoolPlan {
    pub fn bind(
        vars: Vars,
        pool: &Pool,
        bind: &dyn Fn(&Expr) -> Result<Expr, RunError>,
    ) -> Result<PoolPlan, RunError> {
        let mut builder = PartBuilder::new(bind);
        let value = builder.code(&pool.value)?;
        let epilogue = builder.code(&pool.epilogue)?;
        let store = builder.formula(&pool.store)?;
        let inside = pool
            .inside
            .iter()
            .map(|b| Ok((builder.formula(&b.expr)?, builder.formula(&b.limit)?)))
            .collect::<Result<_, RunError>>()?;
        let part = builder.finish(&[0], &vars, Some(store));
        Ok(PoolPlan {
            vars,
            reduction: pool.kind.reduction(),
            part,
            value,
            epilogue,
            store,
            inside,
        })
    }

    /// How the pool runs, for tests.
    #[cfg(test)]
    pub fn describe(&self, names: &[&str]) -> String {
        format!("pool {}", self.part.axis.describe(names))
    }

    pub fn run(&self, memory: &Memory<'_>, out: &mut [f32]) -> Result<(), RunError> {
        let [len, window_y, window_x, _] = self.vars.extents;
        let mut slots = self.vars.slots();
        let work = (len * (window_y * window_x).max(1)) as usize;
        let jobs = split_range(0..len, job_count(work))
            .into_iter()
            .map(|range| {
                Ok((
                    self.part
                        .hull(self.store, range.clone(), &mut slots, &self.vars)?,
                    range,
                ))
            })
            .collect::<Result<Vec<_>, RunError>>()?;
        let taps: Vec<(i64, i64)> = (0..window_y)
            .flat_map(|ky| (0..window_x).map(move |kx| (ky, kx)))
            .collect();
        for_each_window(out, jobs, |range, window| {
            let (part, vars) = (&self.part, &self.vars);
            let (mut slots, mut stack) = (vars.slots(), part.stack());
            let (mut starts, mut tap_starts) = (Vec::new(), vec![Vec::new(); taps.len()]);
            let mut tap_outer = vec![Vec::new(); taps.len()];
            for (&(ky, kx), outer) in taps.iter().zip(&mut tap_outer) {
                (slots[vars.slot(1)], slots[vars.slot(2)]) = (ky, kx);
                part.outer_starts(&slots, outer)?;
            }
            // The epilogue and the store do not read the taps: whichever tap the slots hold.
            let mut epilogue_outer = Vec::new();
            part.outer_starts(&slots, &mut epilogue_outer)?;
            let mut acc = vec![0.0f32; BLOCK];
            let stride = part.formula(self.store).stride;
            for_each_run(part.axis, range, |run| {
                slots[vars.slot(part.axis.var)] = run.number;
                for ((&(ky, kx), starts), outer) in taps.iter().zip(&mut tap_starts).zip(&tap_outer)
                {
                    (slots[vars.slot(1)], slots[vars.slot(2)]) = (ky, kx);
                    part.starts(&slots, outer, starts)?;
                }
                part.starts(&slots, &epilogue_outer, &mut starts)?;
                for_each_block(run, |first, n| {
                    let acc = &mut acc[..n];
                    acc.fill(self.reduction.identity());
                    for starts in &tap_starts {
                        let valid = self.inside(starts, first, n);
                        if valid.is_empty() {
                            continue;
                        }
                        let at = first + valid.start as i64;
                        let values = part.eval(
                            self.value,
                            memory,
                            starts,
                            at,
                            valid.len(),
                            Acc::none(),
                            &mut stack,
                        )?;
                        for (a, &v) in acc[valid].iter_mut().zip(values) {
                            *a = self.reduction.combine(*a, v);
                        }
                    }
                    for a in acc.iter_mut() {
                        *a = self.reduction.finish(*a, taps.len());
                    }
                    let acc = Acc::strided(acc, 1);
                    let result =
                        part.eval(self.epilogue, memory, &starts, first, n, acc, &mut stack)?;
                    window.write(memory, part.at(self.store, &starts, first), stride, result)
                })
            })
        })
    }

    /// The positions of the block where this tap lies inside the input.
    fn inside(&self, starts: &[i64], first: i64, n: usize) -> Range<usize> {
        let mut valid = 0..n;
        for &(expr, limit) in &self.inside {
            let value = (
                self.part.at(expr, starts, first),
                self.part.formula(expr).stride,
            );
            let bound = (
                self.part.at(limit, starts, first),
                self.part.formula(limit).stride,
            );
            let range = inside(value, bound, n);
            valid = valid.start.max(range.start)..valid.end.min(range.end);
        }
        valid
    }
}
