//! Flat evaluators: an expression compiled once into a postfix program over symbol slots,
//! then run per call (guard checks on every invocation of a compiled graph).
//!
//! In: a canonical expression or relation; later, a slice of values indexed by
//! [`Sym::index`]. Out: the same result as `Expr::eval` / `Rel::eval` with those bindings.
//!
//! Invariant: `eval` never allocates when the program's stack depth is at most
//! `INLINE_STACK` — the depth is computed at compile time and the stack is a local array —
//! and never panics: every operation is checked and a missing slot is `None`.

use super::eval::{f32_floor_mul, f32_ratio_bits, py_floor_div, py_mod};
use super::{Atom, AtomKind, AtomView, CmpOp, Expr, Rel};

/// Stack slots kept on the machine stack during `eval`. The depth of a program grows by
/// about two per nesting level of `//`, `%`, `Min`, `Max` (the pending left operand plus
/// the running sum/product), so 32 covers fifteen levels of nesting, far beyond any shape
/// formula (a conv chain is one level per layer, and each layer's size is its own symbol
/// or a sum of short terms). Deeper programs fall back to one `Vec` per call.
const INLINE_STACK: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// Push a constant.
    Const(i64),
    /// Push `values[slot]`.
    Load(usize),
    /// Pop two, push the sum.
    Add,
    /// Pop two, push the product.
    Mul,
    /// Replace the top with its `n`th power.
    Pow(u32),
    /// Pop `b`, pop `a`, push `a // b`.
    FloorDiv,
    /// Pop `b`, pop `a`, push `a % b`.
    Mod,
    /// Pop two, push the smaller.
    Min,
    /// Pop two, push the larger.
    Max,
    /// Pop `b`, pop `a`, push the bits of `f32(a) / f32(b)`.
    F32Ratio,
    /// Pop `b`, pop `a`, push `floor(f32(a) * f32::from_bits(b))`.
    F32FloorMul,
    /// Fail: the expression overflowed while being built.
    Fail,
}

/// An expression compiled for repeated, allocation-free evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledExpr {
    program: Vec<Op>,
    max_depth: usize,
}

impl CompiledExpr {
    /// Compiles `expr` into a postfix program.
    pub fn new(expr: &Expr) -> Self {
        let mut program = Vec::new();
        emit_expr(expr, &mut program);
        let max_depth = stack_depth(&program);
        CompiledExpr { program, max_depth }
    }

    /// The value with `values[i]` bound to symbol `si`; `None` when a slot is missing, on
    /// division or modulo by zero, or on overflow — exactly as [`Expr::eval`].
    pub fn eval(&self, values: &[i64]) -> Option<i64> {
        if self.max_depth <= INLINE_STACK {
            let mut stack = [0i64; INLINE_STACK];
            self.run(values, &mut stack)
        } else {
            let mut stack = vec![0i64; self.max_depth];
            self.run(values, &mut stack)
        }
    }

    /// The largest number of values the program keeps on its stack at once.
    pub fn stack_depth(&self) -> usize {
        self.max_depth
    }

    fn run(&self, values: &[i64], stack: &mut [i64]) -> Option<i64> {
        let mut top = 0usize;
        for op in &self.program {
            match *op {
                Op::Const(value) => {
                    stack[top] = value;
                    top += 1;
                }
                Op::Load(slot) => {
                    stack[top] = *values.get(slot)?;
                    top += 1;
                }
                Op::Pow(exp) => stack[top - 1] = stack[top - 1].checked_pow(exp)?,
                Op::Fail => return None,
                binary => {
                    let (a, b) = (stack[top - 2], stack[top - 1]);
                    top -= 1;
                    stack[top - 1] = match binary {
                        Op::Add => a.checked_add(b)?,
                        Op::Mul => a.checked_mul(b)?,
                        Op::FloorDiv => py_floor_div(a, b)?,
                        Op::Mod => py_mod(a, b)?,
                        Op::Min => a.min(b),
                        Op::F32Ratio => f32_ratio_bits(a, b)?,
                        Op::F32FloorMul => f32_floor_mul(a, b)?,
                        _ => a.max(b),
                    };
                }
            }
        }
        Some(stack[0])
    }
}

/// Emits code leaving the value of `expr` on the stack, adding in `Expr::eval`'s order
/// (constant first, then each term) so both overflow at exactly the same bindings.
fn emit_expr(expr: &Expr, program: &mut Vec<Op>) {
    if expr.overflowed {
        program.push(Op::Fail);
        return;
    }
    // A zero constant is skipped: `0 + t` never overflows, and it saves a stack slot.
    let mut has_value = expr.constant != 0 || expr.terms.is_empty();
    if has_value {
        program.push(Op::Const(expr.constant));
    }
    for term in &expr.terms {
        // Multiplying in `Expr::eval`'s order too: coefficient first, then each factor.
        let mut has_product = term.coeff != 1;
        if has_product {
            program.push(Op::Const(term.coeff));
        }
        for factor in &term.monomial {
            emit_atom(&factor.atom, program);
            if factor.exp != 1 {
                program.push(Op::Pow(factor.exp));
            }
            if has_product {
                program.push(Op::Mul);
            }
            has_product = true;
        }
        if has_value {
            program.push(Op::Add);
        }
        has_value = true;
    }
}

fn emit_atom(atom: &Atom, program: &mut Vec<Op>) {
    match atom.view() {
        AtomView::Sym(sym) => program.push(Op::Load(sym.index())),
        AtomView::Binary(kind, a, b) => {
            emit_expr(a, program);
            emit_expr(b, program);
            program.push(match kind {
                AtomKind::FloorDiv => Op::FloorDiv,
                AtomKind::Mod => Op::Mod,
                AtomKind::Min => Op::Min,
                AtomKind::Max => Op::Max,
                AtomKind::F32Ratio => Op::F32Ratio,
                AtomKind::F32FloorMul => Op::F32FloorMul,
            });
        }
    }
}

/// Simulates the stack height over the program and returns its maximum.
fn stack_depth(program: &[Op]) -> usize {
    let (mut height, mut deepest) = (0usize, 0usize);
    for op in program {
        match op {
            Op::Const(_) | Op::Load(_) => height += 1,
            Op::Pow(_) | Op::Fail => {}
            _ => height -= 1,
        }
        deepest = deepest.max(height);
    }
    deepest.max(1)
}

/// A relation compiled for repeated, allocation-free evaluation (e.g. a guard).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledRel {
    lhs: CompiledExpr,
    op: CmpOp,
    rhs: CompiledExpr,
}

impl CompiledRel {
    /// Compiles both sides of `rel`. The sides stay separate rather than becoming
    /// `lhs - rhs`, so a comparison is never lost to an overflowing subtraction.
    pub fn new(rel: &Rel) -> Self {
        CompiledRel {
            lhs: CompiledExpr::new(&rel.lhs),
            op: rel.op,
            rhs: CompiledExpr::new(&rel.rhs),
        }
    }

    /// The truth value with `values[i]` bound to symbol `si`, exactly as [`Rel::eval`].
    pub fn eval(&self, values: &[i64]) -> Option<bool> {
        Some(
            self.op
                .holds(self.lhs.eval(values)?, self.rhs.eval(values)?),
        )
    }
}
