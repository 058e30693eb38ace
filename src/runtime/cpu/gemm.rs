//! Matrix products (`Body::Gemm`, so also convolutions) through `matrixmultiply`'s SIMD
//! micro-kernels, by way of `ndarray`'s safe strided views.
//!
//! In: a bound `Gemm` and the kernel's memory. Out: the output written. Each operand is a
//! strided view of its buffer when its offset is affine in (row, kk) — resp. (kk, col) —
//! with non-negative strides (a linear layer's input and weight, a transposed view); any
//! other operand (a convolution's implicit im2col, masked by padding) is packed block by
//! block into scratch rows. Rows are cut into chunks, one per thread and wave; each chunk's
//! product lands in a tile, and the epilogue (bias, fused chain) runs over the tile into
//! the output, split by rows or by columns, whichever writes disjoint memory. Invariant:
//! `acc` is the dot product of row `row` of `a` and column `col` of `b`, and every output
//! element gets `epilogue(acc)` exactly once; scratch is at most `TILE_ELEMS` per wave plus
//! `PACK_ELEMS` per thread (or one row of each, if a row is longer), and `k * n` for a
//! packed `b`.

use super::super::RunError;
use super::block::{Acc, Part, PartBuilder, Stack};
use super::formula::{Axis, Strided, Vars, for_each_run, matrix_view};
use super::memory::{Memory, Window};
use super::parallel::{for_each_window, job_count, run_jobs, split_range, threads, union};
use crate::lower::{Gemm, Value};
use crate::symbolic::Expr;
use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, Axis as MatrixAxis, ShapeBuilder, Slice};
use std::ops::Range;

/// Tile elements per wave: a wave's products wait here for the epilogue.
const TILE_ELEMS: usize = 1 << 18;
/// Packed operand elements per chunk (a chunk of an im2col).
const PACK_ELEMS: usize = 1 << 18;
/// Multiply-adds below which a product is not worth a second thread.
const MIN_PARALLEL_MACS: i64 = 1 << 16;

const BAT: usize = 0;
const ROW: usize = 1;
const COL: usize = 2;
const KK: usize = 3;

/// How an operand reaches the product.
#[derive(Clone, Debug)]
enum Operand {
    /// Element (r, c) at `base + r * row_stride + c * col_stride` of `buffer`; rows are cut
    /// into runs of `rows.period` inside which that holds.
    View {
        buffer: usize,
        rows: Axis,
        base: Strided,
        row_stride: i64,
        col_stride: i64,
    },
    /// Computed element by element into scratch.
    Packed { part: Part, code: usize },
}

/// How a product's work is cut into jobs: rows per chunk, and column groups per chunk.
#[derive(Clone, Copy, Debug)]
struct Sharing {
    chunk_rows: i64,
    col_groups: usize,
}

/// A bound `Body::Gemm`.
#[derive(Clone, Debug)]
pub(super) struct GemmPlan {
    vars: Vars,
    a: Operand,
    b: Operand,
    epilogue: Part,
    epilogue_code: usize,
    store: usize,
}

impl GemmPlan {
    pub fn bind(
        vars: Vars,
        gemm: &Gemm,
        bind: &dyn Fn(&Expr) -> Result<Expr, RunError>,
    ) -> Result<GemmPlan, RunError> {
        let a = operand(&gemm.a, (ROW, KK), true, &vars, bind)?;
        let b = operand(&gemm.b, (KK, COL), false, &vars, bind)?;
        let mut builder = PartBuilder::new(bind);
        let epilogue_code = builder.code(&gemm.epilogue)?;
        let store = builder.formula(&gemm.store)?;
        let epilogue = builder.finish(&[COL, ROW], &vars, Some(store));
        Ok(GemmPlan {
            vars,
            a,
            b,
            epilogue,
            epilogue_code,
            store,
        })
    }

    /// Runs the product; `scratch` (kept by the program between calls) grows to what the
    /// tile and the packs need.
    pub fn run(
        &self,
        memory: &Memory<'_>,
        out: &mut [f32],
        scratch: &mut Vec<f32>,
    ) -> Result<(), RunError> {
        let [batch, m, n, k] = self.vars.extents;
        if batch == 0 || m == 0 || n == 0 {
            return Ok(());
        }
        let macs = m.saturating_mul(n).saturating_mul(k.max(1));
        let threads = if macs < MIN_PARALLEL_MACS {
            1
        } else {
            threads()
        };
        let sharing = self.sharing(threads as i64);
        let chunks_per_wave = (threads / sharing.col_groups).max(1);
        let tile_len = sharing.chunk_rows * chunks_per_wave as i64 * n;
        let packs_len = self.pack_len(sharing.chunk_rows) * chunks_per_wave;
        let b_pack_len = match self.b {
            Operand::Packed { .. } => (k * n) as usize,
            Operand::View { .. } => 0,
        };
        let needed = tile_len as usize + packs_len + b_pack_len;
        if scratch.len() < needed {
            super::grow_to(scratch, needed);
        }
        let (tile, rest) = scratch.split_at_mut(tile_len as usize);
        let (packs, rest) = rest.split_at_mut(packs_len);
        let b_pack = &mut rest[..b_pack_len];
        let mut slots = self.vars.slots();
        for bat in 0..batch {
            slots[self.vars.slot(BAT)] = bat;
            let b = match &self.b {
                Operand::View { .. } => self.view(&self.b, memory, &slots, (0, k), n)?,
                Operand::Packed { part, code } => {
                    let layout = pack(
                        part,
                        *code,
                        memory,
                        &slots,
                        &self.vars,
                        (KK, 0..k),
                        (COL, 0..n),
                        b_pack,
                    )?;
                    dense(b_pack, k, n, layout)
                }
            };
            let chunks = self.chunks(m, sharing.chunk_rows);
            for wave in chunks.chunks(chunks_per_wave) {
                let rows = wave[0].start..wave[wave.len() - 1].end;
                let tile = &mut tile[..((rows.end - rows.start) * n) as usize];
                let work = (wave, sharing.col_groups);
                self.products(work, &b, memory, &slots, tile, packs)?;
                self.epilogue(memory, &slots, rows, tile, out)?;
            }
        }
        Ok(())
    }

    /// How each operand and the epilogue run, for tests.
    #[cfg(test)]
    pub fn describe(&self, names: &[&str]) -> String {
        let operand = |operand: &Operand| match operand {
            Operand::View {
                rows,
                row_stride,
                col_stride,
                ..
            } => format!(
                "viewed (strides {row_stride}, {col_stride}; runs of {} rows)",
                rows.period
            ),
            Operand::Packed { part, .. } => format!("packed {}", part.axis.describe(names)),
        };
        format!(
            "product: a {}, b {}, epilogue {}",
            operand(&self.a),
            operand(&self.b),
            self.epilogue.axis.describe(names)
        )
    }

    /// How the threads share the product. Each job packs the part of `a` and of `b` it
    /// multiplies (inside `matrixmultiply`), so cutting rows repeats packing `b` (`k x n`)
    /// once per thread and cutting columns repeats packing `a` (`m x k`): a wide product
    /// with a viewed `a` is cut by columns, any other by rows.
    fn sharing(&self, threads: i64) -> Sharing {
        let [_, m, n, k] = self.vars.extents;
        let viewed = matches!(self.a, Operand::View { .. });
        if threads > 1 && viewed && m < n {
            return Sharing {
                chunk_rows: m.min((TILE_ELEMS as i64 / n).max(1)),
                col_groups: threads.min(n) as usize,
            };
        }
        let mut rows = (m + threads - 1) / threads;
        rows = rows.min((TILE_ELEMS as i64 / (n * threads)).max(1));
        if !viewed {
            rows = rows.min((PACK_ELEMS as i64 / k.max(1)).max(1));
        }
        Sharing {
            chunk_rows: rows.max(1),
            col_groups: 1,
        }
    }

    fn pack_len(&self, chunk_rows: i64) -> usize {
        match self.a {
            Operand::Packed { .. } => (chunk_rows * self.vars.extents[3]) as usize,
            Operand::View { .. } => 0,
        }
    }

    /// Rows `0..m` cut into chunks of at most `chunk_rows`, none crossing a run of a viewed
    /// `a` (where its base formula changes).
    fn chunks(&self, m: i64, chunk_rows: i64) -> Vec<Range<i64>> {
        let period = match &self.a {
            Operand::View { rows, .. } => rows.period,
            Operand::Packed { .. } => m,
        };
        let mut chunks = Vec::new();
        for run_start in (0..m).step_by(period.max(1) as usize) {
            let run = run_start..(run_start + period).min(m);
            let pieces = ((run.end - run.start) + chunk_rows - 1) / chunk_rows;
            chunks.extend(split_range(run, pieces as usize));
        }
        chunks
    }

    /// Phase one: each chunk's product (or each column group's part of it) into its block
    /// of the tile, one job per thread.
    fn products(
        &self,
        (wave, col_groups): (&[Range<i64>], usize),
        b: &ArrayView2<'_, f32>,
        memory: &Memory<'_>,
        slots: &[i64],
        tile: &mut [f32],
        packs: &mut [f32],
    ) -> Result<(), RunError> {
        let [_, _, n, k] = self.vars.extents;
        let pack_len = packs.len() / wave.len().max(1);
        let rows_in_wave = (wave[wave.len() - 1].end - wave[0].start) as usize;
        let shape = (rows_in_wave, n as usize);
        let tile = match self.tile_layout() {
            Layout::RowMajor => ArrayViewMut2::from_shape(shape, tile),
            Layout::ColumnMajor => ArrayViewMut2::from_shape(shape.f(), tile),
        }
        .expect("a wave's tile holds its rows");
        let mut jobs = Vec::with_capacity(wave.len() * col_groups);
        let (mut tile_rest, mut pack_rest) = (tile, packs);
        for rows in wave {
            let (chunk, tail) = tile_rest.split_at(MatrixAxis(0), (rows.end - rows.start) as usize);
            let (pack, pack_tail) = pack_rest.split_at_mut(pack_len.min(pack_rest.len()));
            (tile_rest, pack_rest) = (tail, pack_tail);
            let mut chunk_rest = chunk;
            let mut pack = Some(pack);
            for cols in split_range(0..n, col_groups) {
                let width = (cols.end - cols.start) as usize;
                let (block, tail) = chunk_rest.split_at(MatrixAxis(1), width);
                chunk_rest = tail;
                // Only a product cut by rows packs `a` (see `sharing`): one group per chunk.
                jobs.push((rows.clone(), cols, block, pack.take().unwrap_or_default()));
            }
        }
        run_jobs(jobs, |(rows, cols, mut c, scratch)| {
            let mut slots = slots.to_vec();
            let len = rows.end - rows.start;
            let a = match &self.a {
                Operand::View { rows: axis, .. } => {
                    slots[self.vars.slot(ROW)] = rows.start / axis.period;
                    let first = rows.start % axis.period;
                    self.view(&self.a, memory, &slots, (first, len), k)?
                }
                Operand::Packed { part, code } => {
                    let layout = pack(
                        part,
                        *code,
                        memory,
                        &slots,
                        &self.vars,
                        (ROW, rows),
                        (KK, 0..k),
                        scratch,
                    )?;
                    dense(scratch, len, k, layout)
                }
            };
            let b = b.slice_axis(
                MatrixAxis(1),
                Slice::from(cols.start as usize..cols.end as usize),
            );
            general_mat_mul(1.0, &a, &b, 0.0, &mut c);
            Ok(())
        })
    }

    /// The tile's layout: the epilogue reads it along its axis, so along that axis the
    /// accumulators are contiguous (column-major for an epilogue down the rows, such as a
    /// convolution's, whose output is channel-major).
    fn tile_layout(&self) -> Layout {
        if self.epilogue.axis.var == ROW {
            Layout::ColumnMajor
        } else {
            Layout::RowMajor
        }
    }

    /// The view of a viewed operand: `rows.1` rows from position `rows.0` of the run in
    /// `slots`, by `cols` columns.
    fn view<'m>(
        &self,
        operand: &Operand,
        memory: &Memory<'m>,
        slots: &[i64],
        rows: (i64, i64),
        cols: i64,
    ) -> Result<ArrayView2<'m, f32>, RunError> {
        let Operand::View {
            buffer,
            base,
            row_stride,
            col_stride,
            ..
        } = operand
        else {
            unreachable!("view is called for viewed operands")
        };
        let start = base
            .start(slots)?
            .saturating_add(row_stride.saturating_mul(rows.0));
        let data = memory.buffers[*buffer];
        let offset = usize::try_from(start).ok().filter(|&s| s <= data.len());
        let offset = offset.ok_or_else(|| memory.out_of_bounds(*buffer, start))?;
        let shape =
            (rows.1 as usize, cols as usize).strides((*row_stride as usize, *col_stride as usize));
        ArrayView2::from_shape(shape, &data[offset..]).map_err(|_| {
            let last = start
                .saturating_add(row_stride.saturating_mul((rows.1 - 1).max(0)))
                .saturating_add(col_stride.saturating_mul((cols - 1).max(0)));
            memory.out_of_bounds(*buffer, last)
        })
    }

    /// Phase two: the epilogue over rows `rows` of the product (in `tile`) into the output,
    /// split along whichever variable its part does not run along.
    fn epilogue(
        &self,
        memory: &Memory<'_>,
        slots: &[i64],
        rows: Range<i64>,
        tile: &[f32],
        out: &mut [f32],
    ) -> Result<(), RunError> {
        let n = self.vars.extents[COL];
        let axis = self.epilogue.axis.var;
        let (outer, outer_values, axis_values) = if axis == COL {
            (ROW, rows.clone(), 0..n)
        } else {
            (COL, 0..n, rows.clone())
        };
        let work = ((rows.end - rows.start) * n) as usize;
        let mut slots = slots.to_vec();
        let mut jobs = Vec::new();
        for values in split_range(outer_values, job_count(work)) {
            let mut all = 0..0;
            for value in values.clone() {
                slots[self.vars.slot(outer)] = value;
                let one =
                    self.epilogue
                        .hull(self.store, axis_values.clone(), &mut slots, &self.vars)?;
                all = union(all, one);
            }
            jobs.push((all, values));
        }
        let job = EpilogueJob {
            plan: self,
            memory,
            slots: &slots,
            tile,
            rows: rows.clone(),
            outer,
            axis_values,
        };
        for_each_window(out, jobs, |values, window| job.run(values, window))
    }
}

/// What every epilogue job shares.
struct EpilogueJob<'a, 'm> {
    plan: &'a GemmPlan,
    memory: &'a Memory<'m>,
    slots: &'a [i64],
    tile: &'a [f32],
    rows: Range<i64>,
    outer: usize,
    axis_values: Range<i64>,
}

impl EpilogueJob<'_, '_> {
    fn run(&self, outer_values: Range<i64>, window: &mut Window<'_>) -> Result<(), RunError> {
        let plan = self.plan;
        let (part, vars) = (&plan.epilogue, &plan.vars);
        let n = vars.extents[COL];
        let mut slots = self.slots.to_vec();
        let (mut outer_starts, mut starts, mut stack) = (Vec::new(), Vec::new(), part.stack());
        for outer in outer_values {
            slots[vars.slot(self.outer)] = outer;
            part.outer_starts(&slots, &mut outer_starts)?;
            for_each_run(part.axis, self.axis_values.clone(), |run| {
                slots[vars.slot(part.axis.var)] = run.number;
                part.starts(&slots, &outer_starts, &mut starts)?;
                // The tile's layout follows the axis (`tile_layout`): contiguous here.
                let rows = self.rows.end - self.rows.start;
                let at = if self.outer == ROW {
                    (outer - self.rows.start) * n + run.value
                } else {
                    outer * rows + run.value - self.rows.start
                };
                let acc = Acc::strided(&self.tile[at as usize..], 1);
                let code = (plan.epilogue_code, plan.store);
                part.store_run(code, self.memory, &starts, run, acc, &mut stack, window)
            })?;
        }
        Ok(())
    }
}

/// How a packed matrix is laid out: along its rows (column-major) or its columns.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    ColumnMajor,
    RowMajor,
}

/// A dense `rows x cols` view of `data` in `layout`.
fn dense(data: &[f32], rows: i64, cols: i64, layout: Layout) -> ArrayView2<'_, f32> {
    let (rows, cols) = (rows as usize, cols as usize);
    let shape = match layout {
        Layout::ColumnMajor => (rows, cols).strides((1, rows)),
        Layout::RowMajor => (rows, cols).strides((cols, 1)),
    };
    ArrayView2::from_shape(shape, &data[..rows * cols]).expect("a dense matrix fits its data")
}

/// Evaluates `code` over `rows x cols` into `out`, running along the part's axis (which is
/// one of the two variables): column-major when it runs along the rows.
#[expect(
    clippy::too_many_arguments,
    reason = "the matrix's variables and ranges, named"
)]
fn pack(
    part: &Part,
    code: usize,
    memory: &Memory<'_>,
    slots: &[i64],
    vars: &Vars,
    rows: (usize, Range<i64>),
    cols: (usize, Range<i64>),
    out: &mut [f32],
) -> Result<Layout, RunError> {
    let (layout, outer, inner) = if part.axis.var == rows.0 {
        (Layout::ColumnMajor, cols, rows)
    } else {
        (Layout::RowMajor, rows, cols)
    };
    let inner_len = inner.1.end - inner.1.start;
    let mut slots = slots.to_vec();
    let (mut outer_starts, mut starts) = (Vec::new(), Vec::new());
    let mut stack: Stack = part.stack();
    for outer_value in outer.1.clone() {
        slots[vars.slot(outer.0)] = outer_value;
        part.outer_starts(&slots, &mut outer_starts)?;
        let line = (outer_value - outer.1.start) * inner_len - inner.1.start;
        for_each_run(part.axis, inner.1.clone(), |run| {
            slots[vars.slot(part.axis.var)] = run.number;
            part.starts(&slots, &outer_starts, &mut starts)?;
            let at = (line + run.value) as usize;
            let out = &mut out[at..at + run.len];
            part.eval_into(
                code,
                memory,
                &starts,
                run.first,
                Acc::none(),
                &mut stack,
                out,
            )
        })?;
    }
    Ok(layout)
}

/// An operand as a view when it is one plain load affine in its two variables, else packed
/// along whichever of them gives longer runs.
fn operand(
    value: &Value,
    (rows, cols): (usize, usize),
    split_rows: bool,
    vars: &Vars,
    bind: &dyn Fn(&Expr) -> Result<Expr, RunError>,
) -> Result<Operand, RunError> {
    if let Value::Load(load) = value
        && load.mask.is_empty()
        && let Some((axis, row_stride, col_stride, base)) =
            matrix_view(&bind(&load.offset_elems)?, rows, cols, vars, split_rows)
    {
        return Ok(Operand::View {
            buffer: load.buffer.index(),
            rows: axis,
            base,
            row_stride,
            col_stride,
        });
    }
    let mut builder = PartBuilder::new(bind);
    let code = builder.code(value)?;
    let part = builder.finish(&[rows, cols], vars, None);
    Ok(Operand::Packed { part, code })
}
