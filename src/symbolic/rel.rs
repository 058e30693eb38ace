//! Relations between expressions: the guards and shape checks of the pipeline
//! (`s0 >= 2`, `s0 == 64`, `s1 != 1`).
//!
//! In: two expressions and a comparison. Out: the relation's value under bindings, a decision
//! from symbol ranges alone when they imply it, a canonical readable form, and printed forms.
//!
//! Invariant: `simplify` and `negate` preserve meaning exactly — `r.simplify().eval(b) ==
//! r.eval(b)` and `r.negate().eval(b) == r.eval(b).map(|v| !v)` wherever both sides are
//! defined — and `decide_by_ranges` answers only what holds at every binding in the ranges.

use std::collections::BTreeSet;
use std::fmt;

use super::eval::gcd;
use super::range::expr_bounds;
use super::simplify::{add_poly, from_parts, parts, scale_poly};
use super::{Bindings, Expr, Sym, ValueRange};

/// A comparison operator.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The Python spelling: `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The logical negation: `a op b` is false exactly when `a op.negate() b` is true.
    pub fn negate(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
        }
    }

    /// The operator with its sides swapped: `a op b` is `b op.swap() a`.
    pub fn swap(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            symmetric => symmetric,
        }
    }

    /// Whether `a op b` holds (for floats as Python compares them: NaN compares false,
    /// except with `!=`).
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// `lhs op rhs`, e.g. the guard `s0 >= 2`.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Rel {
    /// Left side.
    pub lhs: Expr,
    /// The comparison.
    pub op: CmpOp,
    /// Right side.
    pub rhs: Expr,
}

impl Rel {
    /// `lhs op rhs`, as given (see [`Rel::simplify`] for the canonical form).
    pub fn new(lhs: Expr, op: CmpOp, rhs: Expr) -> Rel {
        Rel { lhs, op, rhs }
    }

    /// The relation that holds exactly when this one does not.
    pub fn negate(&self) -> Rel {
        Rel::new(self.lhs.clone(), self.op.negate(), self.rhs.clone())
    }

    /// The truth value under `bindings`; `None` when either side is undefined.
    pub fn eval(&self, bindings: &Bindings) -> Option<bool> {
        Some(
            self.op
                .holds(self.lhs.eval(bindings)?, self.rhs.eval(bindings)?),
        )
    }

    /// Every symbol either side mentions.
    pub fn free_syms(&self) -> BTreeSet<Sym> {
        let mut syms = self.lhs.free_syms();
        syms.extend(self.rhs.free_syms());
        syms
    }

    /// `Some(truth)` when the symbol ranges alone imply it, e.g. `s0 >= 2` with `s0` in
    /// `[2, int_oo]` or `s0 == 1` with `s0` in `[2, int_oo]`. Decided from the bounds of
    /// `lhs - rhs` after range-aware simplification.
    pub fn decide_by_ranges(&self, ranges: &dyn Fn(Sym) -> ValueRange) -> Option<bool> {
        let difference = (&self.lhs - &self.rhs).simplify_in(ranges);
        if difference.is_overflow() {
            return None;
        }
        let bounds = expr_bounds(&difference, ranges);
        let (always, never) = match self.op {
            CmpOp::Eq => (
                bounds.singleton() == Some(0),
                !bounds.to_value_range().contains(0),
            ),
            CmpOp::Ne => (
                !bounds.to_value_range().contains(0),
                bounds.singleton() == Some(0),
            ),
            CmpOp::Lt => (bounds.hi_below(0), bounds.lo_at_least(0)),
            CmpOp::Le => (bounds.hi_at_most(0), bounds.lo_at_least(1)),
            CmpOp::Gt => (bounds.lo_at_least(1), bounds.hi_at_most(0)),
            CmpOp::Ge => (bounds.lo_at_least(0), bounds.hi_below(0)),
        };
        if always {
            Some(true)
        } else if never {
            Some(false)
        } else {
            None
        }
    }

    /// A canonical, readable form: terms with positive coefficients on the left, the rest
    /// and the constant on the right, common factors divided out (rounding the constant the
    /// way the inequality allows), e.g. `2*s0 - 4 >= 0` becomes `s0 >= 2` and
    /// `5 - s0 > 0` becomes `s0 < 5`. A relation between constants becomes `k op 0`.
    pub fn simplify(&self) -> Rel {
        let difference = &self.lhs - &self.rhs;
        if difference.is_overflow() {
            return self.clone();
        }
        let constant = difference.constant;
        if difference.terms.is_empty() {
            return Rel::new(Expr::int(constant), self.op, Expr::int(0));
        }
        // Now `variable op bound`, with `bound = -constant` (none for `i64::MIN`).
        let Some(bound) = constant.checked_neg() else {
            return self.clone();
        };
        let variable = add_poly(&difference, &Expr::int(bound));
        let (variable, op, bound) = divide_out(variable, self.op, bound);
        let positive = from_parts(parts(&variable).filter(|(_, coeff)| *coeff > 0));
        let negative = from_parts(parts(&variable).filter(|(_, coeff)| *coeff < 0));
        let negated = scale_poly(&negative, -1);
        if positive.terms.is_empty() {
            // Only negative terms: `-n op bound` is `n op.swap() -bound`.
            match bound.checked_neg() {
                Some(flipped) => Rel::new(negated, op.swap(), Expr::int(flipped)),
                None => Rel::new(positive, op, add_poly(&negated, &Expr::int(bound))),
            }
        } else {
            Rel::new(positive, op, add_poly(&negated, &Expr::int(bound)))
        }
    }

    /// The PyTorch guard source form, e.g. `L['x'].size()[0] >= 2`.
    pub fn to_source(&self, name: &dyn Fn(Sym) -> String) -> String {
        let side = |expr: &Expr| super::print::relation_side(expr, self.op, name);
        format!("{} {} {}", side(&self.lhs), self.op, side(&self.rhs))
    }
}

/// Divides `variable op bound` by the gcd `g > 1` of the variable part's coefficients. For
/// `==`/`!=` this is exact only when `g` divides `bound` (otherwise nothing changes); for
/// inequalities the bound is rounded: `g*x >= b` iff `x >= ceil(b/g)`, `g*x <= b` iff
/// `x <= floor(b/g)`, with strict forms first turned into non-strict ones (`> b` is `>= b+1`).
fn divide_out(variable: Expr, op: CmpOp, bound: i64) -> (Expr, CmpOp, i64) {
    let g = variable
        .terms
        .iter()
        .fold(0u64, |g, term| gcd(g, term.coeff.unsigned_abs()));
    let Ok(g) = i64::try_from(g) else {
        return (variable, op, bound);
    };
    if g <= 1 {
        return (variable, op, bound);
    }
    let divided = from_parts(parts(&variable).map(|(monomial, coeff)| (monomial, coeff / g)));
    let rounded = match op {
        CmpOp::Eq | CmpOp::Ne => (bound % g == 0).then(|| (op, bound / g)),
        CmpOp::Ge => Some((CmpOp::Ge, ceil_div(bound, g))),
        CmpOp::Gt => bound.checked_add(1).map(|b| (CmpOp::Ge, ceil_div(b, g))),
        CmpOp::Le => Some((CmpOp::Le, bound.div_euclid(g))),
        CmpOp::Lt => bound.checked_sub(1).map(|b| (CmpOp::Le, b.div_euclid(g))),
    };
    match rounded {
        Some((op, bound)) => (divided, op, bound),
        None => (variable, op, bound),
    }
}

/// `ceil(a / g)` for `g > 0`.
fn ceil_div(a: i64, g: i64) -> i64 {
    let quotient = a.div_euclid(g);
    if a.rem_euclid(g) == 0 {
        quotient
    } else {
        quotient + 1
    }
}

impl fmt::Display for Rel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.lhs, self.op, self.rhs)
    }
}
