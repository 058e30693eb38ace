//! The kernel interpreter: runs a lowered `Schedule` on the CPU, kernel by kernel.
//!
//! In: a schedule and one call's input tensors. Out: the returned tensors. It executes the
//! fused kernels exactly as lowered — the same buffers (temporaries shared as the memory
//! plan says), the same index formulas, the same epilogues — with each kernel's threads
//! run one after another. So it tests lowering, fusion and the memory plan on machines
//! without any GPU, and it is the fallback runtime when no adapter exists. Invariant: no
//! panic on a bad schedule; an out-of-range address is a `RunError`.

use super::{RunError, Sizes, bind, output_shapes};
use crate::graph::{
    BinaryOp, ReduceKind, Tensor, UnaryOp, embedding_row, layer_norm_row, softmax_row,
};
use crate::lower::{Body, Gemm, Kernel, MAX_VARS, Pool, Role, RowOp, Rows, Schedule, Value};
use crate::symbolic::{CompiledExpr, Expr};

/// Runs `schedule` on `inputs` (one tensor per graph input, in order).
pub fn run(schedule: &Schedule, inputs: &[Tensor]) -> Result<Vec<Tensor>, RunError> {
    let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
    let sizes = bind(schedule, &shapes)?;
    let mut memory: Vec<Vec<f32>> = schedule
        .buffers
        .iter()
        .zip(&sizes.buffer_lens)
        .map(|(buffer, &len)| match &buffer.role {
            Role::Input(n) => inputs[*n].data.clone(),
            Role::Param(values) => values.to_vec(),
            Role::Output(_) | Role::Temp => vec![0.0; len],
        })
        .collect();
    for kernel in &schedule.kernels {
        run_kernel(schedule, kernel, &sizes, &mut memory)?;
    }
    let shapes = output_shapes(schedule, &sizes)?;
    Ok(schedule
        .outputs
        .iter()
        .zip(shapes)
        .map(|(id, shape)| {
            let len: usize = shape.iter().product();
            Tensor {
                data: memory[id.index()][..len].to_vec(),
                shape,
            }
        })
        .collect())
}

/// A value with its formulas compiled.
enum Compiled {
    Acc,
    Literal(f32),
    Size(CompiledExpr),
    Load {
        buffer: usize,
        offset: CompiledExpr,
        mask: Vec<(CompiledExpr, CompiledExpr)>,
    },
    Embed {
        index: Box<Compiled>,
        table: usize,
        rows: CompiledExpr,
        width: CompiledExpr,
        col: CompiledExpr,
    },
    Unary(UnaryOp, Box<Compiled>),
    Binary(BinaryOp, Box<Compiled>, Box<Compiled>),
}

fn compile(value: &Value) -> Compiled {
    match value {
        Value::Acc => Compiled::Acc,
        Value::Literal(v) => Compiled::Literal(*v),
        Value::Size(expr) => Compiled::Size(CompiledExpr::new(expr)),
        Value::Load(load) => Compiled::Load {
            buffer: load.buffer.index(),
            offset: CompiledExpr::new(&load.offset_elems),
            mask: load
                .mask
                .iter()
                .map(|b| (CompiledExpr::new(&b.expr), CompiledExpr::new(&b.limit)))
                .collect(),
        },
        Value::Embed {
            index,
            table,
            rows,
            width,
            col,
        } => Compiled::Embed {
            index: Box::new(compile(index)),
            table: table.index(),
            rows: CompiledExpr::new(rows),
            width: CompiledExpr::new(width),
            col: CompiledExpr::new(col),
        },
        Value::Unary(op, inner) => Compiled::Unary(*op, Box::new(compile(inner))),
        Value::Binary(op, lhs, rhs) => {
            Compiled::Binary(*op, Box::new(compile(lhs)), Box::new(compile(rhs)))
        }
    }
}

/// Everything one kernel's threads read: symbol slots, memory, the kernel (for errors).
struct Frame<'a> {
    schedule: &'a Schedule,
    kernel: &'a Kernel,
    slots: Vec<i64>,
    memory: &'a [Vec<f32>],
}

impl Frame<'_> {
    fn int(&self, expr: &CompiledExpr) -> Result<i64, RunError> {
        expr.eval(&self.slots).ok_or_else(|| RunError::Size {
            what: format!("{} index", self.kernel.name),
            expr: "an index formula".into(),
        })
    }

    fn read(&self, buffer: usize, offset: i64) -> Result<f32, RunError> {
        usize::try_from(offset)
            .ok()
            .and_then(|o| self.memory[buffer].get(o).copied())
            .ok_or_else(|| RunError::OutOfBounds {
                kernel: self.kernel.name.clone(),
                buffer: self.schedule.buffers[buffer].name.clone(),
                offset,
                len_elems: self.memory[buffer].len(),
            })
    }

    fn eval(&self, value: &Compiled, acc: f32) -> Result<f32, RunError> {
        Ok(match value {
            Compiled::Acc => acc,
            Compiled::Literal(v) => *v,
            Compiled::Size(expr) => self.int(expr)? as f32,
            Compiled::Load {
                buffer,
                offset,
                mask,
            } => {
                for (expr, limit) in mask {
                    let at = self.int(expr)?;
                    if at < 0 || at >= self.int(limit)? {
                        return Ok(0.0);
                    }
                }
                self.read(*buffer, self.int(offset)?)?
            }
            Compiled::Embed {
                index,
                table,
                rows,
                width,
                col,
            } => {
                // A negative row count is a bad schedule; as no rows it wraps every index to 0.
                let rows = usize::try_from(self.int(rows)?).unwrap_or(0);
                let row = embedding_row(self.eval(index, acc)?, rows) as i64;
                self.read(*table, row * self.int(width)? + self.int(col)?)?
            }
            Compiled::Unary(op, inner) => op.apply(self.eval(inner, acc)?),
            Compiled::Binary(op, lhs, rhs) => op.apply(self.eval(lhs, acc)?, self.eval(rhs, acc)?),
        })
    }

    fn set(&mut self, var: usize, value: i64) {
        self.slots[self.schedule.first_index_sym as usize + var] = value;
    }
}

fn run_kernel(
    schedule: &Schedule,
    kernel: &Kernel,
    sizes: &Sizes,
    memory: &mut [Vec<f32>],
) -> Result<(), RunError> {
    let first = schedule.first_index_sym as usize;
    let mut slots = sizes.slots.clone();
    slots.resize(first + MAX_VARS + kernel.sizes.len(), 0);
    for size in &kernel.sizes {
        let value = CompiledExpr::new(&size.value)
            .eval(&slots)
            .ok_or_else(|| RunError::Size {
                what: format!("{} {}", kernel.name, size.name),
                expr: size.value.to_string(),
            })?;
        slots[size.sym.index()] = value;
    }
    let mut out = std::mem::take(&mut memory[kernel.output.index()]);
    let mut frame = Frame {
        schedule,
        kernel,
        slots,
        memory: &*memory,
    };
    let result = execute(&mut frame, &mut out);
    memory[kernel.output.index()] = out;
    result
}

/// Writes `value` at `offset` of the kernel's output.
fn store(frame: &Frame<'_>, out: &mut [f32], offset: i64, value: f32) -> Result<(), RunError> {
    let len_elems = out.len();
    match usize::try_from(offset).ok().and_then(|o| out.get_mut(o)) {
        Some(slot) => {
            *slot = value;
            Ok(())
        }
        None => Err(RunError::OutOfBounds {
            kernel: frame.kernel.name.clone(),
            buffer: frame.schedule.buffer(frame.kernel.output).name.clone(),
            offset,
            len_elems,
        }),
    }
}

fn execute(frame: &mut Frame<'_>, out: &mut [f32]) -> Result<(), RunError> {
    match &frame.kernel.body {
        Body::Map { len, value, store } => run_map(frame, out, len, value, store),
        Body::Gemm(gemm) => run_gemm(frame, out, gemm),
        Body::Rows(rows) => run_rows(frame, out, rows),
        Body::Pool(pool) => run_pool(frame, out, pool),
    }
}

fn run_map(
    frame: &mut Frame<'_>,
    out: &mut [f32],
    len: &Expr,
    value: &Value,
    at: &Expr,
) -> Result<(), RunError> {
    let (value, at) = (compile(value), CompiledExpr::new(at));
    for gid in 0..frame.int(&CompiledExpr::new(len))? {
        frame.set(0, gid);
        let v = frame.eval(&value, 0.0)?;
        store(frame, out, frame.int(&at)?, v)?;
    }
    Ok(())
}

/// The product in plain loops, summing over `kk` in order as the tiled shader does.
fn run_gemm(frame: &mut Frame<'_>, out: &mut [f32], gemm: &Gemm) -> Result<(), RunError> {
    let (a, b, epilogue) = (compile(&gemm.a), compile(&gemm.b), compile(&gemm.epilogue));
    let at = CompiledExpr::new(&gemm.store);
    let size = |frame: &Frame<'_>, expr| frame.int(&CompiledExpr::new(expr));
    let (batch, m) = (size(frame, &gemm.batch)?, size(frame, &gemm.m)?);
    let (n, k) = (size(frame, &gemm.n)?, size(frame, &gemm.k)?);
    for bat in 0..batch {
        frame.set(0, bat);
        for row in 0..m {
            frame.set(1, row);
            for col in 0..n {
                frame.set(2, col);
                let mut acc = 0.0;
                for kk in 0..k {
                    frame.set(3, kk);
                    acc += frame.eval(&a, 0.0)? * frame.eval(&b, 0.0)?;
                }
                let v = frame.eval(&epilogue, acc)?;
                store(frame, out, frame.int(&at)?, v)?;
            }
        }
    }
    Ok(())
}

fn run_rows(frame: &mut Frame<'_>, out: &mut [f32], rows: &Rows) -> Result<(), RunError> {
    let (input, epilogue) = (compile(&rows.input), compile(&rows.epilogue));
    let at = CompiledExpr::new(&rows.store);
    let len = frame.int(&CompiledExpr::new(&rows.len))?;
    let mut xs = Vec::with_capacity(len as usize);
    for row in 0..frame.int(&CompiledExpr::new(&rows.rows))? {
        frame.set(0, row);
        xs.clear();
        for e in 0..len {
            frame.set(1, e);
            xs.push(frame.eval(&input, 0.0)?);
        }
        // The graph's own maths, so the rows differ from the reference only in how they are laid
        // out: a reduction writes one value, a normalisation one per element.
        let reduction = match rows.op {
            RowOp::Sum => Some(ReduceKind::Sum),
            RowOp::Mean => Some(ReduceKind::Mean),
            RowOp::Max => Some(ReduceKind::Amax),
            RowOp::Softmax => {
                softmax_row(&mut xs);
                None
            }
            RowOp::LayerNorm { eps } => {
                layer_norm_row(&mut xs, eps);
                None
            }
        };
        if let Some(kind) = reduction {
            let acc = xs
                .iter()
                .fold(kind.identity(), |acc, &x| kind.combine(acc, x));
            let v = frame.eval(&epilogue, kind.finish(acc, xs.len()))?;
            store(frame, out, frame.int(&at)?, v)?;
            continue;
        }
        for (e, &acc) in xs.iter().enumerate() {
            frame.set(1, e as i64);
            let v = frame.eval(&epilogue, acc)?;
            store(frame, out, frame.int(&at)?, v)?;
        }
    }
    Ok(())
}

fn run_pool(frame: &mut Frame<'_>, out: &mut [f32], pool: &Pool) -> Result<(), RunError> {
    let (value, epilogue) = (compile(&pool.value), compile(&pool.epilogue));
    let at = CompiledExpr::new(&pool.store);
    let inside: Vec<(CompiledExpr, CompiledExpr)> = pool
        .inside
        .iter()
        .map(|b| (CompiledExpr::new(&b.expr), CompiledExpr::new(&b.limit)))
        .collect();
    let reduction = pool.kind.reduction();
    let window = (pool.window[0] * pool.window[1]) as usize;
    for gid in 0..frame.int(&CompiledExpr::new(&pool.len))? {
        frame.set(0, gid);
        let mut acc = reduction.identity();
        for ky in 0..pool.window[0] {
            frame.set(1, ky);
            for kx in 0..pool.window[1] {
                frame.set(2, kx);
                let mut is_inside = true;
                for (expr, limit) in &inside {
                    let position = frame.int(expr)?;
                    is_inside &= position >= 0 && position < frame.int(limit)?;
                }
                if !is_inside {
                    continue;
                }
                acc = reduction.combine(acc, frame.eval(&value, 0.0)?);
            }
        }
        let v = frame.eval(&epilogue, reduction.finish(acc, window))?;
        store(frame, out, frame.int(&at)?, v)?;
    }
    Ok(())
}
