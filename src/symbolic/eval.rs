//! Evaluation of canonical expressions under concrete symbol values.
//!
//! In: an expression and a value per symbol ([`Bindings`] or a lookup). Out: `Some(value)`,
//! or `None` for an unbound symbol, division or modulo by zero, or any overflow.
//!
//! Invariant: Python integer semantics exactly where the result fits `i64` — `//` rounds
//! toward negative infinity and `%` takes the divisor's sign — and never a panic: every
//! operation is checked.

use std::collections::BTreeMap;

use super::{Atom, Expr, Sym};

/// Concrete values for symbols, e.g. the sizes of one call's inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bindings {
    values: BTreeMap<Sym, i64>,
}

impl Bindings {
    /// No symbol bound.
    pub fn new() -> Self {
        Bindings::default()
    }

    /// Binds `sym` to `value`, replacing any earlier value.
    pub fn set(&mut self, sym: Sym, value: i64) {
        self.values.insert(sym, value);
    }

    /// The value bound to `sym`.
    pub fn get(&self, sym: Sym) -> Option<i64> {
        self.values.get(&sym).copied()
    }

    /// Every binding, in symbol order.
    pub fn iter(&self) -> impl Iterator<Item = (Sym, i64)> + '_ {
        self.values.iter().map(|(sym, value)| (*sym, *value))
    }
}

impl FromIterator<(Sym, i64)> for Bindings {
    fn from_iter<I: IntoIterator<Item = (Sym, i64)>>(pairs: I) -> Self {
        Bindings {
            values: pairs.into_iter().collect(),
        }
    }
}

/// Python `a // b`: `None` when `b == 0` or the quotient overflows (`i64::MIN // -1`).
pub(super) fn py_floor_div(a: i64, b: i64) -> Option<i64> {
    let quotient = a.checked_div(b)?;
    // Truncation rounded toward zero; step down once when the exact quotient was negative
    // and not whole.
    if a % b != 0 && ((a < 0) != (b < 0)) {
        quotient.checked_sub(1)
    } else {
        Some(quotient)
    }
}

/// Python `a % b`: `None` when `b == 0`.
/// The bits of `f32(a) / f32(b)`, the quotient rounded to float32 (`None` for `b == 0`).
/// WGSL's `tailor_ratio_bits` computes the same bits by long division.
pub(super) fn f32_ratio_bits(a: i64, b: i64) -> Option<i64> {
    (b != 0).then(|| i64::from(((a as f32) / (b as f32)).to_bits()))
}

/// `floor(f32(a) * f32::from_bits(bits))`, the product rounded to float32 before the floor;
/// `None` where `bits` is not a float's bits or the result is not finite.
pub(super) fn f32_floor_mul(a: i64, bits: i64) -> Option<i64> {
    let scale = f32::from_bits(u32::try_from(bits).ok()?);
    let product = ((a as f32) * scale).floor();
    product.is_finite().then_some(product as i64)
}

pub(super) fn py_mod(a: i64, b: i64) -> Option<i64> {
    if b == -1 {
        // Always 0; also avoids the overflowing `i64::MIN % -1` in Rust.
        return Some(0);
    }
    let remainder = a.checked_rem(b)?;
    // Truncated remainder has the dividend's sign; Python's has the divisor's.
    if remainder != 0 && ((remainder < 0) != (b < 0)) {
        remainder.checked_add(b)
    } else {
        Some(remainder)
    }
}

/// Greatest common divisor (`gcd(0, 0) == 0`), for the common-factor rules.
pub(super) fn gcd(mut x: u64, mut y: u64) -> u64 {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

impl Expr {
    /// Evaluates with `lookup` giving each symbol's value.
    pub(super) fn eval_with(&self, lookup: &dyn Fn(Sym) -> Option<i64>) -> Option<i64> {
        if self.overflowed {
            return None;
        }
        let mut total = self.constant;
        for term in &self.terms {
            let mut product = term.coeff;
            for factor in &term.monomial {
                let base = factor.atom.eval_with(lookup)?;
                product = product.checked_mul(base.checked_pow(factor.exp)?)?;
            }
            total = total.checked_add(product)?;
        }
        Some(total)
    }
}

impl Atom {
    fn eval_with(&self, lookup: &dyn Fn(Sym) -> Option<i64>) -> Option<i64> {
        let both = |a: &Expr, b: &Expr| Some((a.eval_with(lookup)?, b.eval_with(lookup)?));
        match self {
            Atom::Sym(sym) => lookup(*sym),
            Atom::FloorDiv(a, b) => {
                let (a, b) = both(a, b)?;
                py_floor_div(a, b)
            }
            Atom::Mod(a, b) => {
                let (a, b) = both(a, b)?;
                py_mod(a, b)
            }
            Atom::Min(a, b) => {
                let (a, b) = both(a, b)?;
                Some(a.min(b))
            }
            Atom::Max(a, b) => {
                let (a, b) = both(a, b)?;
                Some(a.max(b))
            }
            Atom::F32Ratio(a, b) => {
                let (a, b) = both(a, b)?;
                f32_ratio_bits(a, b)
            }
            Atom::F32FloorMul(a, b) => {
                let (a, b) = both(a, b)?;
                f32_floor_mul(a, b)
            }
        }
    }
}
