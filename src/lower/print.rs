//! The schedule's one text form: kernels with their fusion groups, index formulas and
//! dispatch, then the memory plan. The trace, the tests and the page show this text.
//!
//! In: a `Schedule`. Out: lines such as
//! `t0[128*row + col] = relu(acc + p_layers_0_bias[col])`. Invariant: deterministic — it
//! depends only on the schedule, index variables print by name, never as raw symbols.

use super::kernel::{Body, Kernel, Load, Role, RowOp, Schedule, Value};
use crate::graph::{PoolKind, RandomKind, UnaryOp};
use crate::symbolic::{Expr, Sym, SymbolNames, rename_syms};
use std::fmt::{self, Write};

/// A schedule names symbols by their numbers, as its WGSL does (and as `local_name` expects),
/// whatever names a trace shows.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SymbolNames::tailor().show(|| self.write(f))
    }
}

impl Schedule {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernels ({}):", self.kernels.len())?;
        for kernel in &self.kernels {
            write_kernel(f, self, kernel)?;
        }
        writeln!(f, "memory plan:")?;
        for (id, buffer) in self.buffers.iter().enumerate() {
            let holds = match &buffer.role {
                Role::Input(n) => format!("input {n}"),
                Role::Param(_) => "parameter".to_string(),
                Role::Output(n) => format!("output {n}"),
                Role::Temp => "temporary".to_string(),
            };
            writeln!(
                f,
                "  {:<24} {:<10} {} elements",
                buffer.name, holds, buffer.len_elems
            )?;
            for placement in self.placements.iter().filter(|p| p.buffer.index() == id) {
                let until = placement
                    .last_kernel
                    .map_or("the caller".to_string(), |k| format!("k{k}"));
                writeln!(
                    f,
                    "      holds %{} from k{} until {until}",
                    placement.node_name, placement.first_kernel
                )?;
            }
        }
        if !self.notes.is_empty() {
            writeln!(f, "notes:")?;
            for note in &self.notes {
                writeln!(f, "  {note}")?;
            }
        }
        Ok(())
    }
}

fn write_kernel(f: &mut fmt::Formatter<'_>, schedule: &Schedule, kernel: &Kernel) -> fmt::Result {
    let p = Printer { schedule, kernel };
    writeln!(f, "  {}: {}", kernel.name, kernel.node_names.join(" + "))?;
    for size in &kernel.sizes {
        writeln!(f, "    let {} = {}", size.name, size.value)?;
    }
    let out = &schedule.buffer(kernel.output).name;
    match &kernel.body {
        Body::Map { len, value, store } => {
            writeln!(f, "    map over gid < {}", p.expr(len))?;
            writeln!(f, "    {out}[{}] = {}", p.expr(store), p.value(value))?;
        }
        Body::Gemm(gemm) => {
            writeln!(
                f,
                "    gemm ({:?}) batch {}, m {}, n {}, k {}",
                gemm.strategy,
                p.expr(&gemm.batch),
                p.expr(&gemm.m),
                p.expr(&gemm.n),
                p.expr(&gemm.k)
            )?;
            writeln!(f, "    a = {}", p.value(&gemm.a))?;
            writeln!(f, "    b = {}", p.value(&gemm.b))?;
            writeln!(
                f,
                "    {out}[{}] = {}   (acc = sum over kk of a * b)",
                p.expr(&gemm.store),
                p.value(&gemm.epilogue)
            )?;
        }
        Body::Rows(rows) => {
            writeln!(
                f,
                "    {} over e < {} for each row < {}",
                rows.op.name(),
                p.expr(&rows.len),
                p.expr(&rows.rows)
            )?;
            writeln!(f, "    x = {}", p.value(&rows.input))?;
            let acc = match rows.op {
                RowOp::Sum => "sum of x".to_string(),
                RowOp::Mean => "mean of x".to_string(),
                RowOp::Max => "max of x".to_string(),
                RowOp::Softmax => "exp(x - max) / sum exp(x - max)".to_string(),
                RowOp::LogSoftmax => "x - max - log(sum exp(x - max))".to_string(),
                RowOp::LayerNorm { eps } => format!("(x - mean) / sqrt(var + {eps:?})"),
            };
            writeln!(
                f,
                "    {out}[{}] = {}   (acc = {acc})",
                p.expr(&rows.store),
                p.value(&rows.epilogue)
            )?;
        }
        Body::Pool(pool) => {
            let kind = match pool.kind {
                PoolKind::Max => "max",
                PoolKind::Avg => "avg",
            };
            writeln!(
                f,
                "    {kind} pool {}x{} over gid < {}",
                pool.window[0],
                pool.window[1],
                p.expr(&pool.len)
            )?;
            let mut inside = String::new();
            for bound in &pool.inside {
                let _ = write!(
                    inside,
                    ", 0 <= {} < {}",
                    p.expr(&bound.expr),
                    p.expr(&bound.limit)
                );
            }
            writeln!(f, "    x = {}{inside}", p.value(&pool.value))?;
            writeln!(
                f,
                "    {out}[{}] = {}",
                p.expr(&pool.store),
                p.value(&pool.epilogue)
            )?;
        }
    }
    writeln!(
        f,
        "    dispatch {} workgroups x {} threads",
        kernel.workgroups, kernel.workgroup_size
    )
}

struct Printer<'a> {
    schedule: &'a Schedule,
    kernel: &'a Kernel,
}

impl Printer<'_> {
    /// The maths form with index variables by name.
    fn expr(&self, expr: &Expr) -> String {
        rename_syms(&expr.to_string(), &|n| self.kernel.local_name(Sym(n)))
    }

    fn load(&self, load: &Load) -> String {
        let mut text = format!(
            "{}[{}]",
            self.schedule.buffer(load.buffer).name,
            self.expr(&load.offset_elems)
        );
        if !load.mask.is_empty() {
            let conditions: Vec<String> = load
                .mask
                .iter()
                .map(|b| format!("0 <= {} < {}", self.expr(&b.expr), self.expr(&b.limit)))
                .collect();
            text = format!("({text} if {} else 0)", conditions.join(" and "));
        }
        text
    }

    fn value(&self, value: &Value) -> String {
        match value {
            Value::Acc => "acc".to_string(),
            Value::Literal(v) => format!("{v:?}"),
            Value::Size(expr) => format!("float({})", self.expr(expr)),
            Value::Load(load) => self.load(load),
            Value::Embed {
                index,
                table,
                rows,
                width,
                col,
            } => format!(
                "{}[(int(|{}|) % {}) * {} + {}]",
                self.schedule.buffer(*table).name,
                self.value(index),
                self.expr(rows),
                self.expr(width),
                self.expr(col)
            ),
            Value::Random { kind, seed, index } => {
                let name = match kind {
                    RandomKind::Unit => "rand",
                    RandomKind::Normal => "randn",
                };
                format!("{name}(seed={seed}, {})", self.expr(index))
            }
            Value::Unary(UnaryOp::Neg, inner) => format!("-{}", self.operand(inner)),
            Value::Unary(op, inner) => format!("{}({})", op.name(), self.value(inner)),
            Value::Binary(op, lhs, rhs) if op.is_function() => {
                format!("{}({}, {})", op.symbol(), self.value(lhs), self.value(rhs))
            }
            Value::Binary(op, lhs, rhs) => {
                format!(
                    "{} {} {}",
                    self.operand(lhs),
                    op.symbol(),
                    self.operand(rhs)
                )
            }
            Value::Select {
                cond,
                then,
                otherwise,
            } => format!(
                "where({}, {}, {})",
                self.value(cond),
                self.value(then),
                self.value(otherwise)
            ),
        }
    }

    /// A value as an operand: parenthesised when it is itself a binary operation.
    fn operand(&self, value: &Value) -> String {
        match value {
            Value::Binary(..) => format!("({})", self.value(value)),
            _ => self.value(value),
        }
    }
}
