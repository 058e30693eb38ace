//! The simplification driver: polynomial arithmetic on canonical forms plus the loop that
//! applies the named atom rules of `rules.rs`.
//!
//! In: canonical operands and an operation (or a whole expression to re-simplify under
//! ranges). Out: the canonical result, optionally with a log of the named rules that fired.
//!
//! Invariant: every method returns a canonical `Expr`. Polynomial operations keep the
//! sum-of-products form by construction; atom operations try the rules in order and build a
//! rule's result through this same driver, so each rewrite is itself fully reduced and the
//! process stops at a fixed point (each rule makes its atom strictly smaller).

use std::collections::BTreeMap;

use super::print;
use super::range::{self, Interval};
use super::{Atom, AtomKind, AtomView, Expr, Factor, Rewrite, Sym, Term, ValueRange};

/// How many whole-tree passes `simplify_fixpoint` makes before giving up. One pass already
/// reaches the fixed point (see the invariant); the second only confirms it, so the cap is a
/// guard against a future rule that grows its input, not a tuning knob.
const MAX_PASSES: usize = 8;

/// The rules the polynomial operations and the rebuild log, besides the atom rules.
pub(super) const POLYNOMIAL_RULES: &[&str] = &[
    // x + 0 = x (also x - 0).
    "add-zero",
    // c1 op c2 evaluated, e.g. (x + 2) + 3 = x + 5, 2*3 = 6.
    "fold-constants",
    // a*m + b*m = (a + b)*m for the same monomial m.
    "collect-like-terms",
    // x * 0 = 0.
    "mul-zero",
    // x * 1 = x.
    "mul-one",
    // a*(b + c) = a*b + a*c, and (a + b)**n expanded.
    "distribute",
    // x**a * x**b = x**(a + b).
    "collect-powers",
    // x**0 = 1 (Python agrees for x = 0).
    "pow-zero",
    // x**1 = x.
    "pow-one",
    // s = v when the range of s is [v, v] (only under `simplify_in`).
    "sym-singleton",
];

/// A rule: its kebab-case name and the function that tries it.
pub(super) struct NamedRule {
    pub(super) name: &'static str,
    pub(super) apply: fn(&mut Simplifier<'_>, &Expr, &Expr) -> Option<Expr>,
}

/// Runs simplification with optional symbol ranges and an optional rewrite log, over the
/// atom rules its constructors (`rules.rs`: `plain`, `with_ranges`) give it: the rules are
/// data the engine is handed, so this file never names the table.
pub(super) struct Simplifier<'a> {
    pub(super) ranges: Option<&'a dyn Fn(Sym) -> ValueRange>,
    pub(super) log: Option<&'a mut Vec<Rewrite>>,
    /// The rules of each atom kind, in the order they are tried.
    pub(super) rules: fn(AtomKind) -> &'static [NamedRule],
}

impl<'a> Simplifier<'a> {
    pub(super) fn logging(self, log: &'a mut Vec<Rewrite>) -> Self {
        Simplifier {
            ranges: self.ranges,
            log: Some(log),
            rules: self.rules,
        }
    }

    pub(super) fn range_of(&self, sym: Sym) -> ValueRange {
        self.ranges
            .map_or_else(ValueRange::unbounded, |ranges| ranges(sym))
    }

    /// Interval bounds of `expr` under this simplifier's ranges.
    pub(super) fn bounds(&self, expr: &Expr) -> Interval {
        range::expr_bounds(expr, &|sym| self.range_of(sym))
    }

    fn is_logging(&self) -> bool {
        self.log.is_some()
    }

    /// Appends a rewrite to the log; `before` is only printed when logging.
    pub(super) fn record(
        &mut self,
        rule: &'static str,
        before: impl FnOnce() -> String,
        after: &Expr,
    ) {
        if let Some(log) = self.log.as_deref_mut() {
            log.push(Rewrite {
                rule,
                before: before(),
                after: after.to_string(),
            });
        }
    }

    /// `a + b`. Logs `add-zero`, `fold-constants` and `collect-like-terms`.
    pub(super) fn add(&mut self, a: &Expr, b: &Expr) -> Expr {
        let sum = add_poly(a, b);
        if self.is_logging() {
            self.log_sum(a, b, &sum, || print::binary_maths(a, "+", b));
        }
        sum
    }

    /// `a - b`, logged like `add`.
    pub(super) fn sub(&mut self, a: &Expr, b: &Expr) -> Expr {
        let difference = add_poly(a, &scale_poly(b, -1));
        if self.is_logging() {
            self.log_sum(a, b, &difference, || print::binary_maths(a, "-", b));
        }
        difference
    }

    fn log_sum(&mut self, a: &Expr, b: &Expr, result: &Expr, before: impl Fn() -> String) {
        if a.is_zero() || b.is_zero() {
            self.record("add-zero", &before, result);
            return;
        }
        if a.constant != 0 && b.constant != 0 {
            self.record("fold-constants", &before, result);
        }
        if shares_monomial(a, b) {
            self.record("collect-like-terms", &before, result);
        }
    }

    /// `-a`.
    pub(super) fn neg(&mut self, a: &Expr) -> Expr {
        scale_poly(a, -1)
    }

    /// `a * b`, expanded. Logs `mul-zero`, `mul-one`, `fold-constants`, `distribute` and
    /// `collect-powers`.
    pub(super) fn mul(&mut self, a: &Expr, b: &Expr) -> Expr {
        let product = mul_poly(a, b);
        if self.is_logging() {
            let before = || print::binary_maths(a, "*", b);
            if a.is_zero() || b.is_zero() {
                self.record("mul-zero", before, &product);
            } else if a.as_int() == Some(1) || b.as_int() == Some(1) {
                self.record("mul-one", before, &product);
            } else {
                if a.as_int().is_some() && b.as_int().is_some() {
                    self.record("fold-constants", before, &product);
                }
                if a.part_count() > 1 || b.part_count() > 1 {
                    self.record("distribute", before, &product);
                }
                if shares_atom(a, b) {
                    self.record("collect-powers", before, &product);
                }
            }
        }
        product
    }

    /// `a ** exp`, expanded. Logs `pow-zero`, `pow-one`, `fold-constants` and `distribute`.
    pub(super) fn pow(&mut self, a: &Expr, exp: u32) -> Expr {
        let power = pow_poly(a, exp);
        if self.is_logging() {
            let before = || print::power_maths(a, exp);
            match exp {
                0 => self.record("pow-zero", before, &power),
                1 => self.record("pow-one", before, &power),
                _ if a.as_int().is_some() => self.record("fold-constants", before, &power),
                _ if a.part_count() > 1 => self.record("distribute", before, &power),
                _ => {}
            }
        }
        power
    }

    /// `a // b`.
    pub(super) fn floor_div(&mut self, a: &Expr, b: &Expr) -> Expr {
        self.reduce(AtomKind::FloorDiv, a, b)
    }

    /// `a % b`.
    pub(super) fn modulo(&mut self, a: &Expr, b: &Expr) -> Expr {
        self.reduce(AtomKind::Mod, a, b)
    }

    /// `Min(a, b)`.
    pub(super) fn min(&mut self, a: &Expr, b: &Expr) -> Expr {
        self.reduce(AtomKind::Min, a, b)
    }

    /// `Max(a, b)`.
    pub(super) fn max(&mut self, a: &Expr, b: &Expr) -> Expr {
        self.reduce(AtomKind::Max, a, b)
    }

    /// The float32 bits of `a / b` (see `Atom::F32Ratio`).
    pub(super) fn f32_ratio(&mut self, a: &Expr, b: &Expr) -> Expr {
        self.reduce(AtomKind::F32Ratio, a, b)
    }

    /// `floor(f32(a) * f32::from_bits(b))` (see `Atom::F32FloorMul`).
    pub(super) fn f32_floor_mul(&mut self, a: &Expr, b: &Expr) -> Expr {
        self.reduce(AtomKind::F32FloorMul, a, b)
    }

    /// Builds the atom `kind(a, b)` from canonical arguments: the first rule (in the order of
    /// `self.rules`) that applies rewrites it, otherwise it stays an atom.
    fn reduce(&mut self, kind: AtomKind, a: &Expr, b: &Expr) -> Expr {
        if a.overflowed || b.overflowed {
            return Expr::overflow();
        }
        // Min and Max commute, so their arguments are kept sorted for a unique form.
        let (a, b) = match kind {
            AtomKind::Min | AtomKind::Max if b < a => (b, a),
            _ => (a, b),
        };
        for rule in (self.rules)(kind) {
            if let Some(result) = (rule.apply)(self, a, b) {
                // A rule whose rebuilt result overflowed is skipped: the atom form is still
                // correct, and overflow must only come from the expression itself.
                if result.overflowed {
                    continue;
                }
                self.record(rule.name, || print::atom_maths(kind, a, b), &result);
                return result;
            }
        }
        Expr::from_atom(kind.make(a.clone(), b.clone()))
    }

    /// Rebuilds `expr` bottom-up through the atom rules, replacing each symbol for which
    /// `replace` answers. Polynomial reassembly is not logged: it only restores the form.
    pub(super) fn rebuild(&mut self, expr: &Expr, replace: &dyn Fn(Sym) -> Option<Expr>) -> Expr {
        if expr.overflowed {
            return expr.clone();
        }
        let mut sum = Expr::int(expr.constant);
        for term in &expr.terms {
            let mut product = Expr::int(term.coeff);
            for factor in &term.monomial {
                let base = self.rebuild_atom(&factor.atom, replace);
                product = mul_poly(&product, &pow_poly(&base, factor.exp));
            }
            sum = add_poly(&sum, &product);
        }
        sum
    }

    fn rebuild_atom(&mut self, atom: &Atom, replace: &dyn Fn(Sym) -> Option<Expr>) -> Expr {
        let sym = match atom.view() {
            AtomView::Binary(kind, a, b) => {
                let a = self.rebuild(a, replace);
                let b = self.rebuild(b, replace);
                return self.reduce(kind, &a, &b);
            }
            AtomView::Sym(sym) => sym,
        };
        if let Some(value) = replace(sym) {
            return value;
        }
        let symbol = Expr::sym(sym);
        match self.range_of(sym).is_singleton() {
            Some(value) => {
                let constant = Expr::int(value);
                // A symbol whose range holds one value is that value.
                self.record("sym-singleton", || symbol.to_string(), &constant);
                constant
            }
            None => symbol,
        }
    }

    /// Rebuilds until nothing changes (at most `MAX_PASSES` passes).
    pub(super) fn simplify_fixpoint(&mut self, expr: &Expr) -> Expr {
        let mut current = expr.clone();
        for _ in 0..MAX_PASSES {
            let next = self.rebuild(&current, &|_| None);
            if next == current {
                break;
            }
            current = next;
        }
        current
    }
}

/// `a + b` on canonical forms: merges the sorted term lists, dropping cancelled terms.
pub(super) fn add_poly(a: &Expr, b: &Expr) -> Expr {
    if a.overflowed || b.overflowed {
        return Expr::overflow();
    }
    let Some(constant) = a.constant.checked_add(b.constant) else {
        return Expr::overflow();
    };
    let mut terms = Vec::with_capacity(a.terms.len() + b.terms.len());
    let (mut left, mut right) = (a.terms.iter().peekable(), b.terms.iter().peekable());
    loop {
        let next = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => left.next().cloned(),
            (None, Some(_)) => right.next().cloned(),
            (Some(x), Some(y)) => match x.monomial.cmp(&y.monomial) {
                std::cmp::Ordering::Less => left.next().cloned(),
                std::cmp::Ordering::Greater => right.next().cloned(),
                std::cmp::Ordering::Equal => {
                    let Some(coeff) = x.coeff.checked_add(y.coeff) else {
                        return Expr::overflow();
                    };
                    let monomial = x.monomial.clone();
                    left.next();
                    right.next();
                    (coeff != 0).then_some(Term { monomial, coeff })
                }
            },
        };
        terms.extend(next);
    }
    Expr {
        terms,
        constant,
        overflowed: false,
    }
}

/// `k * a`.
pub(super) fn scale_poly(a: &Expr, k: i64) -> Expr {
    if a.overflowed {
        return Expr::overflow();
    }
    if k == 0 {
        return Expr::int(0);
    }
    let Some(constant) = a.constant.checked_mul(k) else {
        return Expr::overflow();
    };
    let mut terms = Vec::with_capacity(a.terms.len());
    for term in &a.terms {
        let Some(coeff) = term.coeff.checked_mul(k) else {
            return Expr::overflow();
        };
        terms.push(Term {
            monomial: term.monomial.clone(),
            coeff,
        });
    }
    Expr {
        terms,
        constant,
        overflowed: false,
    }
}

/// `a * b`, fully distributed and collected.
pub(super) fn mul_poly(a: &Expr, b: &Expr) -> Expr {
    if a.overflowed || b.overflowed {
        return Expr::overflow();
    }
    if let Some(k) = a.as_int() {
        return scale_poly(b, k);
    }
    if let Some(k) = b.as_int() {
        return scale_poly(a, k);
    }
    let mut collected: BTreeMap<Vec<Factor>, i64> = BTreeMap::new();
    let mut constant = 0i64;
    for (x_monomial, x_coeff) in parts(a) {
        for (y_monomial, y_coeff) in parts(b) {
            let Some(coeff) = x_coeff.checked_mul(y_coeff) else {
                return Expr::overflow();
            };
            let Some(monomial) = merge_monomials(x_monomial, y_monomial) else {
                return Expr::overflow();
            };
            let slot = if monomial.is_empty() {
                &mut constant
            } else {
                collected.entry(monomial).or_insert(0)
            };
            let Some(total) = slot.checked_add(coeff) else {
                return Expr::overflow();
            };
            *slot = total;
        }
    }
    let terms = collected
        .into_iter()
        .filter(|(_, coeff)| *coeff != 0)
        .map(|(monomial, coeff)| Term { monomial, coeff })
        .collect();
    Expr {
        terms,
        constant,
        overflowed: false,
    }
}

/// `a ** exp` by repeated multiplication (exponents in shape formulas are small).
pub(super) fn pow_poly(a: &Expr, exp: u32) -> Expr {
    if a.overflowed {
        return Expr::overflow();
    }
    if exp == 0 {
        // Python agrees that 0 ** 0 == 1.
        return Expr::int(1);
    }
    if let Some(value) = a.as_int() {
        return value
            .checked_pow(exp)
            .map_or_else(Expr::overflow, Expr::int);
    }
    if let ([term], 0) = (a.terms.as_slice(), a.constant) {
        // A single term raises its coefficient and multiplies each exponent: no expansion.
        let coeff = term.coeff.checked_pow(exp);
        let monomial: Option<Vec<Factor>> = term
            .monomial
            .iter()
            .map(|factor| {
                Some(Factor {
                    atom: factor.atom.clone(),
                    exp: factor.exp.checked_mul(exp)?,
                })
            })
            .collect();
        return match (coeff, monomial) {
            (Some(coeff), Some(monomial)) => Expr {
                terms: vec![Term { monomial, coeff }],
                constant: 0,
                overflowed: false,
            },
            _ => Expr::overflow(),
        };
    }
    let mut power = Expr::int(1);
    for _ in 0..exp {
        power = mul_poly(&power, a);
        if power.overflowed {
            break;
        }
    }
    power
}

/// The summands of `expr` as (monomial, coefficient), the constant as the empty monomial.
pub(super) fn parts(expr: &Expr) -> impl Iterator<Item = (&[Factor], i64)> {
    let constant = (expr.constant != 0).then_some((&[][..], expr.constant));
    expr.terms
        .iter()
        .map(|term| (term.monomial.as_slice(), term.coeff))
        .chain(constant)
}

/// Builds a canonical expression from summands that may repeat monomials.
pub(super) fn from_parts<'p>(summands: impl IntoIterator<Item = (&'p [Factor], i64)>) -> Expr {
    summands
        .into_iter()
        .map(|(monomial, coeff)| term_expr(monomial, coeff))
        .fold(Expr::int(0), |sum, term| add_poly(&sum, &term))
}

/// The single summand `coeff * monomial` as an expression.
pub(super) fn term_expr(monomial: &[Factor], coeff: i64) -> Expr {
    if monomial.is_empty() || coeff == 0 {
        return Expr::int(coeff);
    }
    Expr {
        terms: vec![Term {
            monomial: monomial.to_vec(),
            coeff,
        }],
        constant: 0,
        overflowed: false,
    }
}

/// The product of two sorted monomials, adding exponents of shared atoms.
fn merge_monomials(x: &[Factor], y: &[Factor]) -> Option<Vec<Factor>> {
    let mut merged: Vec<Factor> = Vec::with_capacity(x.len() + y.len());
    let (mut i, mut j) = (0, 0);
    loop {
        let factor = match (x.get(i), y.get(j)) {
            (None, None) => break,
            (Some(p), Some(q)) if p.atom == q.atom => {
                i += 1;
                j += 1;
                Factor {
                    atom: p.atom.clone(),
                    exp: p.exp.checked_add(q.exp)?,
                }
            }
            (Some(p), Some(q)) if p.atom < q.atom => {
                i += 1;
                p.clone()
            }
            (Some(p), None) => {
                i += 1;
                p.clone()
            }
            (_, Some(q)) => {
                j += 1;
                q.clone()
            }
        };
        merged.push(factor);
    }
    Some(merged)
}

fn shares_monomial(a: &Expr, b: &Expr) -> bool {
    a.terms
        .iter()
        .any(|x| b.terms.iter().any(|y| x.monomial == y.monomial))
}

fn shares_atom(a: &Expr, b: &Expr) -> bool {
    let atoms = |e: &Expr| -> Vec<Atom> {
        e.terms
            .iter()
            .flat_map(|t| t.monomial.iter().map(|f| f.atom.clone()))
            .collect()
    };
    let left = atoms(a);
    atoms(b).iter().any(|atom| left.contains(atom))
}
