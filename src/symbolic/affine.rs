//! Affine views of an index formula: `expr = coeff * sym + rest` over a symbol's range, and
//! the periods that make a floor-divided index affine piece by piece.
//!
//! In: a canonical expression, one symbol and the ranges of every symbol. Out: the constant
//! `coeff` and the expression `rest`, which does not mention the symbol, or `None` when no
//! such form is valid over the whole range. The CPU runtime uses it to turn per-element
//! index arithmetic into a start offset and a stride. Invariant: whenever `affine_in`
//! answers, `expr` and `coeff * sym + rest` have the same value at every binding inside the
//! ranges where `expr` is defined; the floor-division steps carry their proof in comments.

use super::simplify::term_expr;
use super::{Atom, AtomView, Expr, Sym, ValueRange};
use std::collections::BTreeSet;

impl Expr {
    /// `self` as `coeff * sym + rest`, with `coeff` a constant and `rest` free of `sym`,
    /// valid for every value of `sym` (and of the other symbols) inside `ranges`.
    ///
    /// `sym`'s range must start at 0 or above and be finite for a floor division of it to
    /// count as affine: `(c*sym + r) // d` is `r // d` only while `c*sym + r % d < d`.
    pub fn affine_in(&self, sym: Sym, ranges: &dyn Fn(Sym) -> ValueRange) -> Option<(i64, Expr)> {
        Affine { sym, ranges }.split(self)
    }

    /// The positive constant divisors of every `//` and `%` whose numerator mentions `sym`:
    /// the candidate lengths of the runs over which an unravelled index is affine in `sym`.
    pub fn periods_of(&self, sym: Sym) -> BTreeSet<i64> {
        let mut periods = BTreeSet::new();
        self.collect_periods(sym, &mut periods);
        periods
    }

    /// Every symbol for which `value` answers replaced by that answer; the result is
    /// simplified (binding all shape symbols of an index formula at once).
    pub fn substitute_with(&self, value: &dyn Fn(Sym) -> Option<Expr>) -> Expr {
        let mut simplifier = super::simplify::Simplifier::plain();
        simplifier.rebuild(self, value)
    }

    /// Whether `sym` occurs anywhere in the expression, inside atoms included.
    pub fn mentions(&self, sym: Sym) -> bool {
        self.terms
            .iter()
            .flat_map(|term| &term.monomial)
            .any(|factor| factor.atom.mentions(sym))
    }

    fn collect_periods(&self, sym: Sym, periods: &mut BTreeSet<i64>) {
        for factor in self.terms.iter().flat_map(|term| &term.monomial) {
            if let Atom::FloorDiv(a, b) | Atom::Mod(a, b) = &factor.atom
                && let Some(d) = b.as_int().filter(|d| *d > 0 && a.mentions(sym))
            {
                periods.insert(d);
            }
            if let AtomView::Binary(_, a, b) = factor.atom.view() {
                a.collect_periods(sym, periods);
                b.collect_periods(sym, periods);
            }
        }
    }
}

impl Atom {
    pub(super) fn mentions(&self, sym: Sym) -> bool {
        match self.view() {
            AtomView::Sym(s) => s == sym,
            AtomView::Binary(_, a, b) => a.mentions(sym) || b.mentions(sym),
        }
    }
}

/// The decomposition of expressions in one symbol over fixed ranges.
struct Affine<'a> {
    sym: Sym,
    ranges: &'a dyn Fn(Sym) -> ValueRange,
}

impl Affine<'_> {
    fn split(&self, expr: &Expr) -> Option<(i64, Expr)> {
        if expr.is_overflow() {
            return None;
        }
        if !expr.mentions(self.sym) {
            return Some((0, expr.clone()));
        }
        let mut coeff = 0i64;
        let mut rest = Expr::int(expr.constant);
        for term in &expr.terms {
            let (with, without): (Vec<_>, Vec<_>) = term
                .monomial
                .iter()
                .partition(|factor| factor.atom.mentions(self.sym));
            let others: Vec<_> = without.into_iter().cloned().collect();
            let others = term_expr(&others, term.coeff);
            if with.is_empty() {
                rest = rest + others;
                continue;
            }
            let [factor] = with.as_slice() else {
                return None;
            };
            if factor.exp != 1 {
                return None;
            }
            let (atom_coeff, atom_rest) = self.split_atom(&factor.atom)?;
            if atom_coeff != 0 {
                // A stride must be one number: the factors beside `sym` must be constants.
                coeff = coeff.checked_add(others.as_int()?.checked_mul(atom_coeff)?)?;
            }
            rest = rest + others * atom_rest;
        }
        (!rest.is_overflow()).then_some((coeff, rest))
    }

    fn split_atom(&self, atom: &Atom) -> Option<(i64, Expr)> {
        let (numerator, divisor) = match atom {
            Atom::Sym(_) => return Some((1, Expr::int(0))),
            Atom::FloorDiv(a, b) | Atom::Mod(a, b) => (a, b),
            Atom::Min(..) | Atom::Max(..) | Atom::F32Ratio(..) | Atom::F32FloorMul(..) => {
                return None;
            }
        };
        let d = divisor.as_int().filter(|d| *d > 0)?;
        let (c, r) = self.split(numerator)?;
        // c = q*d + c2 with 0 <= c2 < d, so (c*x + r) // d = q*x + (c2*x + r) // d.
        let (q, c2) = (c.div_euclid(d), c.rem_euclid(d));
        if c2 != 0 && !self.stays_in_one_step(c2, &r, d) {
            return None;
        }
        // Now (c2*x + r) // d = r // d: with r = d*(r // d) + r % d, the remaining quotient
        // (c2*x + r % d) // d is 0 because 0 <= c2*x + r % d < d.
        Some(match atom {
            Atom::FloorDiv(..) => (q, r.floor_div(divisor)),
            // a % d = a - d*(a // d) = c*x + r - d*(q*x + r // d) = c2*x + r % d.
            _ => (c2, r.modulo(divisor)),
        })
    }

    /// Whether `0 <= c2*x + r % d < d` for every `x` in the symbol's range (`c2 > 0`).
    fn stays_in_one_step(&self, c2: i64, r: &Expr, d: i64) -> bool {
        let range = (self.ranges)(self.sym);
        let (Some(lo), Some(hi)) = (range.lo, range.hi) else {
            return false;
        };
        let remainder = r.modulo(&Expr::int(d)).bounds(self.ranges);
        match (lo >= 0, remainder.hi) {
            (true, Some(r_hi)) => c2
                .checked_mul(hi)
                .and_then(|step| step.checked_add(r_hi))
                .is_some_and(|top| top < d),
            _ => false,
        }
    }
}
