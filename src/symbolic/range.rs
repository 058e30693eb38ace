//! Value ranges and the interval arithmetic that bounds expressions.
//!
//! In: a range for each symbol (PyTorch's `ValueRanges`, e.g. sizes in `[2, int_oo]`) and a
//! canonical expression. Out: an interval containing every value the expression takes inside
//! those ranges, used by the range-aware rules, relation decisions and WGSL codegen.
//!
//! Invariant: soundness — for every binding inside the symbol ranges at which the expression
//! evaluates to `Some(v)`, `v` lies in the computed interval. Intermediate endpoints are kept
//! in `i128` and any endpoint beyond `i64` widens to infinity, which stays sound because a
//! value beyond `i64` makes evaluation return `None`.

use std::fmt;

use super::{Atom, Expr, Sym};

/// An integer interval with optional ends (`None` is -infinity for `lo`, +infinity for `hi`).
///
/// Prints like PyTorch: `[2, int_oo]`, `[2, 512]`, `[-int_oo, 5]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ValueRange {
    /// Smallest value, or `None` for no lower bound.
    pub lo: Option<i64>,
    /// Largest value, or `None` for no upper bound.
    pub hi: Option<i64>,
}

impl ValueRange {
    /// The range `[lo, hi]` as given (not checked for emptiness).
    pub fn new(lo: Option<i64>, hi: Option<i64>) -> Self {
        ValueRange { lo, hi }
    }

    /// The single value `v`.
    pub fn exact(v: i64) -> Self {
        ValueRange::new(Some(v), Some(v))
    }

    /// All integers.
    pub fn unbounded() -> Self {
        ValueRange::new(None, None)
    }

    /// `[lo, +infinity]`, e.g. `at_least(2)` for a dynamic size.
    pub fn at_least(lo: i64) -> Self {
        ValueRange::new(Some(lo), None)
    }

    /// `[-infinity, hi]`.
    pub fn at_most(hi: i64) -> Self {
        ValueRange::new(None, Some(hi))
    }

    /// Whether `v` lies in the range.
    pub fn contains(&self, v: i64) -> bool {
        self.lo.is_none_or(|lo| lo <= v) && self.hi.is_none_or(|hi| v <= hi)
    }

    /// The common part of two ranges, `None` when they do not overlap.
    pub fn intersect(&self, other: &ValueRange) -> Option<ValueRange> {
        let lo = match (self.lo, other.lo) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let hi = match (self.hi, other.hi) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo > hi => None,
            _ => Some(ValueRange { lo, hi }),
        }
    }

    /// The value when the range holds exactly one.
    pub fn is_singleton(&self) -> Option<i64> {
        match (self.lo, self.hi) {
            (Some(lo), Some(hi)) if lo == hi => Some(lo),
            _ => None,
        }
    }
}

impl fmt::Display for ValueRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.lo {
            Some(lo) => write!(f, "[{lo}, ")?,
            None => write!(f, "[-int_oo, ")?,
        }
        match self.hi {
            Some(hi) => write!(f, "{hi}]"),
            None => write!(f, "int_oo]"),
        }
    }
}

/// An interval endpoint: an `i128` or an infinity. The derived order puts `NegInf` below
/// every `Fin` and `PosInf` above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ext {
    NegInf,
    Fin(i128),
    PosInf,
}

impl Ext {
    /// Widens a finite endpoint outside `i64` to the infinity on its side.
    fn saturate(self) -> Ext {
        match self {
            Ext::Fin(v) if v > i128::from(i64::MAX) => Ext::PosInf,
            Ext::Fin(v) if v < i128::from(i64::MIN) => Ext::NegInf,
            other => other,
        }
    }

    fn neg(self) -> Ext {
        match self {
            Ext::NegInf => Ext::PosInf,
            Ext::PosInf => Ext::NegInf,
            Ext::Fin(v) => Ext::Fin(-v).saturate(),
        }
    }

    fn signum(self) -> i128 {
        match self {
            Ext::NegInf => -1,
            Ext::PosInf => 1,
            Ext::Fin(v) => v.signum(),
        }
    }

    /// The product of two endpoints; `0 * inf = 0`, which is right for interval ends.
    fn mul(self, other: Ext) -> Ext {
        match (self, other) {
            (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a * b).saturate(),
            _ => match self.signum() * other.signum() {
                0 => Ext::Fin(0),
                1 => Ext::PosInf,
                _ => Ext::NegInf,
            },
        }
    }

    /// The sum for a lower end: -inf absorbs everything.
    fn add_lo(self, other: Ext) -> Ext {
        match (self, other) {
            (Ext::NegInf, _) | (_, Ext::NegInf) => Ext::NegInf,
            (Ext::PosInf, _) | (_, Ext::PosInf) => Ext::PosInf,
            (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a + b).saturate(),
        }
    }

    /// The sum for an upper end: +inf absorbs everything.
    fn add_hi(self, other: Ext) -> Ext {
        match (self, other) {
            (Ext::PosInf, _) | (_, Ext::PosInf) => Ext::PosInf,
            (Ext::NegInf, _) | (_, Ext::NegInf) => Ext::NegInf,
            (Ext::Fin(a), Ext::Fin(b)) => Ext::Fin(a + b).saturate(),
        }
    }

    fn pow(self, exp: u32) -> Ext {
        if exp == 0 {
            return Ext::Fin(1);
        }
        let negative_result = self.signum() < 0 && exp % 2 == 1;
        if let Ext::Fin(v @ -1..=1) = self {
            return Ext::Fin(if negative_result { -1 } else { v.abs() });
        }
        // |self| >= 2 from here, so the loop saturates within 64 steps even for huge `exp`.
        let mut power = Ext::Fin(1);
        for _ in 0..exp {
            power = power.mul(self);
            if !matches!(power, Ext::Fin(_)) {
                return if negative_result {
                    Ext::NegInf
                } else {
                    Ext::PosInf
                };
            }
        }
        power
    }

    /// `floor(self / divisor)` for a divisor >= 1 (possibly +inf).
    fn floor_div_by_positive(self, divisor: Ext) -> Ext {
        match (self, divisor) {
            (Ext::Fin(n), Ext::Fin(d)) => Ext::Fin(n.div_euclid(d)),
            (Ext::Fin(n), _) => Ext::Fin(if n >= 0 { 0 } else { -1 }),
            (infinite, _) => infinite,
        }
    }

    fn finite_i64(self) -> Option<i64> {
        match self {
            Ext::Fin(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// An interval with extended endpoints, the working form of [`ValueRange`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Interval {
    lo: Ext,
    hi: Ext,
}

impl Interval {
    fn new(lo: Ext, hi: Ext) -> Interval {
        Interval { lo, hi }
    }

    fn exact(v: i64) -> Interval {
        Interval::new(Ext::Fin(v.into()), Ext::Fin(v.into()))
    }

    fn unbounded() -> Interval {
        Interval::new(Ext::NegInf, Ext::PosInf)
    }

    pub(super) fn from_value_range(range: ValueRange) -> Interval {
        Interval::new(
            range.lo.map_or(Ext::NegInf, |lo| Ext::Fin(lo.into())),
            range.hi.map_or(Ext::PosInf, |hi| Ext::Fin(hi.into())),
        )
    }

    pub(super) fn to_value_range(self) -> ValueRange {
        let lo = match self.lo {
            Ext::NegInf => None,
            Ext::Fin(v) => Some(i64::try_from(v).unwrap_or(i64::MAX)),
            Ext::PosInf => Some(i64::MAX),
        };
        let hi = match self.hi {
            Ext::PosInf => None,
            Ext::Fin(v) => Some(i64::try_from(v).unwrap_or(i64::MIN)),
            Ext::NegInf => Some(i64::MIN),
        };
        ValueRange { lo, hi }
    }

    /// The value when the interval holds exactly one.
    pub(super) fn singleton(self) -> Option<i64> {
        (self.lo == self.hi).then(|| self.lo.finite_i64()).flatten()
    }

    pub(super) fn lo_at_least(self, v: i64) -> bool {
        self.lo >= Ext::Fin(v.into())
    }

    pub(super) fn hi_at_most(self, v: i64) -> bool {
        self.hi <= Ext::Fin(v.into())
    }

    pub(super) fn hi_below(self, v: i64) -> bool {
        self.hi < Ext::Fin(v.into())
    }

    pub(super) fn lo_finite(self) -> Option<i64> {
        self.lo.finite_i64()
    }

    pub(super) fn hi_finite(self) -> Option<i64> {
        self.hi.finite_i64()
    }

    fn add(self, other: Interval) -> Interval {
        Interval::new(self.lo.add_lo(other.lo), self.hi.add_hi(other.hi))
    }

    fn neg(self) -> Interval {
        Interval::new(self.hi.neg(), self.lo.neg())
    }

    fn mul(self, other: Interval) -> Interval {
        let corners = [
            self.lo.mul(other.lo),
            self.lo.mul(other.hi),
            self.hi.mul(other.lo),
            self.hi.mul(other.hi),
        ];
        let lo = corners.iter().copied().min().unwrap_or(Ext::NegInf);
        let hi = corners.iter().copied().max().unwrap_or(Ext::PosInf);
        Interval::new(lo, hi)
    }

    fn pow(self, exp: u32) -> Interval {
        if exp == 0 {
            return Interval::exact(1);
        }
        let (lo, hi) = (self.lo.pow(exp), self.hi.pow(exp));
        if exp % 2 == 1 {
            // Odd powers are monotone.
            return Interval::new(lo, hi);
        }
        if self.lo >= Ext::Fin(0) {
            Interval::new(lo, hi)
        } else if self.hi <= Ext::Fin(0) {
            Interval::new(hi, lo)
        } else {
            Interval::new(Ext::Fin(0), lo.max(hi))
        }
    }

    fn min(self, other: Interval) -> Interval {
        Interval::new(self.lo.min(other.lo), self.hi.min(other.hi))
    }

    fn max(self, other: Interval) -> Interval {
        Interval::new(self.lo.max(other.lo), self.hi.max(other.hi))
    }

    fn union(self, other: Interval) -> Interval {
        Interval::new(self.lo.min(other.lo), self.hi.max(other.hi))
    }

    /// The part at or above 1, if any.
    fn positive_part(self) -> Option<Interval> {
        (self.hi >= Ext::Fin(1)).then(|| Interval::new(self.lo.max(Ext::Fin(1)), self.hi))
    }

    /// The part at or below -1, if any.
    fn negative_part(self) -> Option<Interval> {
        (self.lo <= Ext::Fin(-1)).then(|| Interval::new(self.lo, self.hi.min(Ext::Fin(-1))))
    }
}

/// Splits a divisor interval into its positive and negative parts (zero divides nothing),
/// applies `positive` to the numerator and each part (the negative part through `negative`),
/// and joins the results. A divisor that can only be 0 gives no information.
fn by_divisor_sign(
    numerator: Interval,
    divisor: Interval,
    positive: fn(Interval, Interval) -> Interval,
    negative: fn(Interval, Interval) -> Interval,
) -> Interval {
    let from_positive = divisor.positive_part().map(|d| positive(numerator, d));
    let from_negative = divisor.negative_part().map(|d| negative(numerator, d));
    match (from_positive, from_negative) {
        (Some(p), Some(n)) => p.union(n),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => Interval::unbounded(),
    }
}

/// Bounds of `x // y` for `x` in `numerator`, `y` in `divisor` (y != 0).
pub(super) fn floor_div_interval(numerator: Interval, divisor: Interval) -> Interval {
    // floor(x / y) = floor((-x) / (-y)) turns a negative divisor into a positive one.
    by_divisor_sign(numerator, divisor, floor_div_positive, |x, y| {
        floor_div_positive(x.neg(), y.neg())
    })
}

/// Bounds of `x // y` for a divisor interval inside `[1, +inf]`: floor division is monotone
/// in `x`, and moves toward 0 (toward -1 for negative `x`) as `y` grows.
fn floor_div_positive(x: Interval, y: Interval) -> Interval {
    if x.lo >= Ext::Fin(0) {
        Interval::new(
            x.lo.floor_div_by_positive(y.hi),
            x.hi.floor_div_by_positive(y.lo),
        )
    } else if x.hi < Ext::Fin(0) {
        Interval::new(
            x.lo.floor_div_by_positive(y.lo),
            x.hi.floor_div_by_positive(y.hi),
        )
    } else {
        Interval::new(
            x.lo.floor_div_by_positive(y.lo),
            x.hi.floor_div_by_positive(y.lo),
        )
    }
}

/// Bounds of `x % y` for `x` in `numerator`, `y` in `divisor` (y != 0).
pub(super) fn mod_interval(numerator: Interval, divisor: Interval) -> Interval {
    // x % y = -((-x) % (-y)) turns a negative divisor into a positive one.
    by_divisor_sign(numerator, divisor, mod_positive, |x, y| {
        mod_positive(x.neg(), y.neg()).neg()
    })
}

/// Bounds of `x % y` for a divisor interval inside `[1, +inf]`: the result lies in
/// `[0, y - 1]`, equals `x` when `0 <= x < y`, and for a constant divisor is exact when the
/// numerator interval does not cross a multiple of it.
fn mod_positive(x: Interval, y: Interval) -> Interval {
    if let (Some(c), Some(lo), Some(hi)) = (
        y.singleton(),
        x.lo_finite().map(i128::from),
        x.hi_finite().map(i128::from),
    ) {
        let c = i128::from(c);
        if lo.div_euclid(c) == hi.div_euclid(c) {
            return Interval::new(Ext::Fin(lo.rem_euclid(c)), Ext::Fin(hi.rem_euclid(c)));
        }
    }
    if x.lo >= Ext::Fin(0) && x.hi < y.lo {
        return x;
    }
    let mut hi = y.hi.add_hi(Ext::Fin(-1));
    if x.lo >= Ext::Fin(0) {
        hi = hi.min(x.hi);
    }
    Interval::new(Ext::Fin(0), hi)
}

/// Bounds of a canonical expression given each symbol's range.
pub(super) fn expr_bounds(expr: &Expr, ranges: &dyn Fn(Sym) -> ValueRange) -> Interval {
    if expr.overflowed {
        return Interval::unbounded();
    }
    let mut total = Interval::exact(expr.constant);
    for term in &expr.terms {
        let mut product = Interval::exact(term.coeff);
        for factor in &term.monomial {
            product = product.mul(atom_bounds(&factor.atom, ranges).pow(factor.exp));
        }
        total = total.add(product);
    }
    total
}

fn atom_bounds(atom: &Atom, ranges: &dyn Fn(Sym) -> ValueRange) -> Interval {
    let both = |a: &Expr, b: &Expr| (expr_bounds(a, ranges), expr_bounds(b, ranges));
    match atom {
        Atom::Sym(sym) => Interval::from_value_range(ranges(*sym)),
        Atom::FloorDiv(a, b) => {
            let (a, b) = both(a, b);
            floor_div_interval(a, b)
        }
        Atom::Mod(a, b) => {
            let (a, b) = both(a, b);
            mod_interval(a, b)
        }
        Atom::Min(a, b) => {
            let (a, b) = both(a, b);
            a.min(b)
        }
        Atom::Max(a, b) => {
            let (a, b) = both(a, b);
            a.max(b)
        }
        // The bits of a non-negative float are non-negative; and a non-negative position
        // times a non-negative scale floors to a non-negative index.
        Atom::F32Ratio(a, b) | Atom::F32FloorMul(a, b) => {
            let (a, b) = both(a, b);
            if a.lo_at_least(0) && b.lo_at_least(0) {
                Interval::new(Ext::Fin(0), Ext::PosInf)
            } else {
                Interval::unbounded()
            }
        }
    }
}
