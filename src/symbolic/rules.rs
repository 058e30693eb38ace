//! The named rewrite rules for `FloorDiv`, `Mod`, `Min` and `Max` atoms, and the constant
//! folding of the float32 atoms `F32Ratio` and `F32FloorMul` (their only rules: they follow
//! float32 rounding, not integer identities).
//!
//! In: the two canonical arguments of an atom and the driver (for ranges and for building
//! results). Out: `Some(replacement)` when the rule applies, else `None`; the driver in
//! `simplify.rs` tries each kind's rules in the listed order and logs the first that fires.
//!
//! Invariant: every rule is an identity of Python integer semantics (floor division rounds
//! toward negative infinity, `%` takes the divisor's sign), or of float32 arithmetic for the
//! float32 atoms, for all integer values of the symbols, including negative ones, wherever
//! the original is defined; and every rule's result is strictly smaller than its input, so
//! the driver terminates. The maths of each rule is in the comment above it.

use super::eval::{f32_floor_mul, f32_ratio_bits, gcd, py_floor_div, py_mod};
use super::range;
use super::simplify::{NamedRule, Simplifier, add_poly, from_parts, parts, scale_poly, term_expr};
use super::{Atom, AtomKind, AtomView, Expr, Factor, Sym, ValueRange};

impl<'a> Simplifier<'a> {
    /// No ranges (every symbol unbounded) and no log: what the constructors use.
    pub(super) fn plain() -> Self {
        Simplifier {
            ranges: None,
            log: None,
            rules: rules_for,
        }
    }

    /// Symbols ranged by `ranges`, no log.
    pub(super) fn with_ranges(ranges: &'a dyn Fn(Sym) -> ValueRange) -> Self {
        Simplifier {
            ranges: Some(ranges),
            log: None,
            rules: rules_for,
        }
    }
}

const fn rule(
    name: &'static str,
    apply: fn(&mut Simplifier<'_>, &Expr, &Expr) -> Option<Expr>,
) -> NamedRule {
    NamedRule { name, apply }
}

const FLOORDIV_RULES: &[NamedRule] = &[
    rule("floordiv-const", floordiv_const),
    rule("floordiv-one", floordiv_one),
    rule("floordiv-neg-divisor", floordiv_neg_divisor),
    rule("floordiv-exact", floordiv_exact),
    rule("floordiv-bounded", floordiv_bounded),
    rule("floordiv-nested", floordiv_nested),
    rule("floordiv-split", floordiv_split),
    rule("floordiv-gcd", floordiv_gcd),
];

const MOD_RULES: &[NamedRule] = &[
    rule("mod-const", mod_const),
    rule("mod-one", mod_one),
    rule("mod-neg-divisor", mod_neg_divisor),
    rule("mod-of-multiple", mod_of_multiple),
    rule("mod-bounded", mod_bounded),
    rule("mod-nested", mod_nested),
    rule("mod-split", mod_split),
    rule("mod-gcd", mod_gcd),
];

const MIN_RULES: &[NamedRule] = &[
    rule("min-const", min_const),
    rule("min-same", same),
    rule("min-by-range", min_by_range),
    rule("min-absorb", min_absorb),
];

const F32_RATIO_RULES: &[NamedRule] = &[rule("f32ratio-const", f32_ratio_const)];

const F32_FLOOR_MUL_RULES: &[NamedRule] = &[rule("f32floormul-const", f32_floor_mul_const)];

const MAX_RULES: &[NamedRule] = &[
    rule("max-const", max_const),
    rule("max-same", same),
    rule("max-by-range", max_by_range),
    rule("max-absorb", max_absorb),
];

/// The rules for `kind`, in the order the driver tries them.
pub(super) fn rules_for(kind: AtomKind) -> &'static [NamedRule] {
    match kind {
        AtomKind::FloorDiv => FLOORDIV_RULES,
        AtomKind::Mod => MOD_RULES,
        AtomKind::Min => MIN_RULES,
        AtomKind::Max => MAX_RULES,
        AtomKind::F32Ratio => F32_RATIO_RULES,
        AtomKind::F32FloorMul => F32_FLOOR_MUL_RULES,
    }
}

/// The atom rule names, in the driver's order per kind.
pub(super) fn atom_rule_names() -> impl Iterator<Item = &'static str> {
    [
        FLOORDIV_RULES,
        MOD_RULES,
        MIN_RULES,
        MAX_RULES,
        F32_RATIO_RULES,
        F32_FLOOR_MUL_RULES,
    ]
    .into_iter()
    .flatten()
    .map(|rule| rule.name)
}

// a // b with both constants, b != 0: evaluate.
fn floordiv_const(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    py_floor_div(a.as_int()?, b.as_int()?).map(Expr::int)
}

// x // 1 = x.
fn floordiv_one(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    (b.as_int() == Some(1)).then(|| a.clone())
}

// x // (-c) = (-x) // c, since x / (-c) = (-x) / c.
fn floordiv_neg_divisor(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let c = b.as_int().filter(|c| *c < 0)?.checked_neg()?;
    let negated = s.neg(a);
    Some(s.floor_div(&negated, &Expr::int(c)))
}

// (b*q) // b = q whenever b divides the numerator exactly (b != 0 where it is defined).
fn floordiv_exact(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    divide_exact(a, b)
}

// x // b = k when interval arithmetic pins x // b to the single value k (e.g. 0 <= x < c).
fn floordiv_bounded(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let quotient = range::floor_div_interval(s.bounds(a), s.bounds(b));
    quotient.singleton().map(Expr::int)
}

// (x // d) // b = x // (d*b) for d, b >= 1: floor(floor(x/d)/b) = floor(x/(d*b)).
fn floordiv_nested(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let Some(Atom::FloorDiv(x, d)) = a.as_atom() else {
        return None;
    };
    if !(s.bounds(d).lo_at_least(1) && s.bounds(b).lo_at_least(1)) {
        return None;
    }
    let divisor = s.mul(d, b);
    Some(s.floor_div(x, &divisor))
}

// (b*q + r) // b = q + r // b for integer q: the summands b divides move out (b a nonzero
// constant or a single term; any sign, since floor(q + r/b) = q + floor(r/b)).
fn floordiv_split(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let (quotient, rest) = split_divisible(a, b)?;
    let rest_quotient = s.floor_div(&rest, b);
    Some(s.add(&quotient, &rest_quotient))
}

// (f*x) // (f*y) = x // y for a common factor f != 0 (a constant gcd and/or shared atoms):
// the same rational number, so the same floor (f = 0 only where the original is undefined).
fn floordiv_gcd(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let (x, y, _) = divide_common_factor(a, b)?;
    Some(s.floor_div(&x, &y))
}

// a % b with both constants, b != 0: evaluate.
fn mod_const(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    py_mod(a.as_int()?, b.as_int()?).map(Expr::int)
}

// x % 1 = x % (-1) = 0.
fn mod_one(_: &mut Simplifier<'_>, _: &Expr, b: &Expr) -> Option<Expr> {
    matches!(b.as_int(), Some(1 | -1)).then(|| Expr::int(0))
}

// x % (-c) = -((-x) % c): x - (-c)*floor(x/(-c)) = -((-x) - c*floor((-x)/c)).
fn mod_neg_divisor(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let c = b.as_int().filter(|c| *c < 0)?.checked_neg()?;
    let negated = s.neg(a);
    let remainder = s.modulo(&negated, &Expr::int(c));
    Some(s.neg(&remainder))
}

// (b*q) % b = 0 whenever b divides the numerator exactly.
fn mod_of_multiple(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    divide_exact(a, b).map(|_| Expr::int(0))
}

// x % b = x when 0 <= x < b (b's lower bound); x % b = k when the interval pins it to k.
fn mod_bounded(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let (numerator, divisor) = (s.bounds(a), s.bounds(b));
    if numerator.lo_at_least(0)
        && divisor.lo_at_least(1)
        && numerator.hi_below(divisor.lo_finite()?)
    {
        return Some(a.clone());
    }
    range::mod_interval(numerator, divisor)
        .singleton()
        .map(Expr::int)
}

// (x % d) % c = x % c for constants d, c >= 1 with c dividing d: x % d differs from x by a
// multiple of d, hence of c.
fn mod_nested(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let Some(Atom::Mod(x, d)) = a.as_atom() else {
        return None;
    };
    let (d, c) = (d.as_int()?, b.as_int()?);
    if d < 1 || c < 1 || d % c != 0 {
        return None;
    }
    Some(s.modulo(x, b))
}

// (b*q + r) % b = r % b: drop the summands b divides; for a constant c also shrink each
// remaining coefficient (and the constant) to its truncated remainder mod c, which changes
// the numerator by a multiple of c.
fn mod_split(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let reduced = match b.as_int() {
        Some(c) => {
            let shrunk: Option<Vec<(&[Factor], i64)>> = parts(a)
                .map(|(monomial, coeff)| Some((monomial, coeff.checked_rem(c)?)))
                .collect();
            from_parts(shrunk?)
        }
        None => split_divisible(a, b)?.1,
    };
    (reduced != *a).then(|| s.modulo(&reduced, b))
}

// (f*x) % (f*y) = f * (x % y) for a common factor f != 0: f*x - f*y*floor(x/y).
fn mod_gcd(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let (x, y, factor) = divide_common_factor(a, b)?;
    let remainder = s.modulo(&x, &y);
    Some(s.mul(&factor, &remainder))
}

// Min(a, b) with both constants: the smaller.
fn min_const(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    Some(Expr::int(a.as_int()?.min(b.as_int()?)))
}

// Max(a, b) with both constants: the larger.
fn max_const(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    Some(Expr::int(a.as_int()?.max(b.as_int()?)))
}

// F32Ratio(a, b) with both constants: the float32 quotient's bits.
fn f32_ratio_const(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    f32_ratio_bits(a.as_int()?, b.as_int()?).map(Expr::int)
}

// F32FloorMul(a, b) with both constants: the floored float32 product.
fn f32_floor_mul_const(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    f32_floor_mul(a.as_int()?, b.as_int()?).map(Expr::int)
}

// Min(x, x) = Max(x, x) = x.
fn same(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    (a == b).then(|| a.clone())
}

// Min(a, b) = a when a - b <= 0 over the ranges, = b when a - b >= 0.
fn min_by_range(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let difference = s.bounds(&add_poly(a, &scale_poly(b, -1)));
    if difference.hi_at_most(0) {
        Some(a.clone())
    } else if difference.lo_at_least(0) {
        Some(b.clone())
    } else {
        None
    }
}

// Max(a, b) = a when a - b >= 0 over the ranges, = b when a - b <= 0.
fn max_by_range(s: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    let difference = s.bounds(&add_poly(a, &scale_poly(b, -1)));
    if difference.lo_at_least(0) {
        Some(a.clone())
    } else if difference.hi_at_most(0) {
        Some(b.clone())
    } else {
        None
    }
}

// Min(x, Min(x, y)) = Min(x, y) and Min(x, Max(x, y)) = x (lattice absorption).
fn min_absorb(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    absorb(a, b, AtomKind::Min).or_else(|| absorb(b, a, AtomKind::Min))
}

// Max(x, Max(x, y)) = Max(x, y) and Max(x, Min(x, y)) = x (lattice absorption).
fn max_absorb(_: &mut Simplifier<'_>, a: &Expr, b: &Expr) -> Option<Expr> {
    absorb(a, b, AtomKind::Max).or_else(|| absorb(b, a, AtomKind::Max))
}

/// For `outer(x, inner)`: when `inner` is the same operation over `x`, `inner` already is the
/// answer; when it is the dual operation over `x`, `x` is.
fn absorb(x: &Expr, inner: &Expr, outer: AtomKind) -> Option<Expr> {
    let AtomView::Binary(kind, p, q) = inner.as_atom()?.view() else {
        return None;
    };
    if p != x && q != x {
        return None;
    }
    if kind == outer {
        Some(inner.clone())
    } else if matches!(
        (kind, outer),
        (AtomKind::Min, AtomKind::Max) | (AtomKind::Max, AtomKind::Min)
    ) {
        Some(x.clone())
    } else {
        None
    }
}

/// A divisor the split and exact rules can test summands against.
enum Divisor<'e> {
    /// A nonzero constant.
    Const(i64),
    /// A single term `coeff * monomial` without constant.
    Term(&'e [Factor], i64),
}

fn divisor_of(b: &Expr) -> Option<Divisor<'_>> {
    if let Some(c) = b.as_int() {
        return (c != 0).then_some(Divisor::Const(c));
    }
    match (b.constant, b.terms.as_slice()) {
        (0, [term]) => Some(Divisor::Term(&term.monomial, term.coeff)),
        _ => None,
    }
}

/// `coeff * monomial / divisor` when it is an exact polynomial quotient.
fn divide_part(
    monomial: &[Factor],
    coeff: i64,
    divisor: &Divisor<'_>,
) -> Option<(Vec<Factor>, i64)> {
    let (divisor_monomial, divisor_coeff) = match divisor {
        Divisor::Const(c) => (&[][..], *c),
        Divisor::Term(m, c) => (*m, *c),
    };
    if coeff.checked_rem(divisor_coeff)? != 0 {
        return None;
    }
    let quotient_coeff = coeff.checked_div(divisor_coeff)?;
    let mut quotient: Vec<Factor> = monomial.to_vec();
    for factor in divisor_monomial {
        let position = quotient.iter().position(|q| q.atom == factor.atom)?;
        let remaining = quotient[position].exp.checked_sub(factor.exp)?;
        if remaining == 0 {
            quotient.remove(position);
        } else {
            quotient[position].exp = remaining;
        }
    }
    Some((quotient, quotient_coeff))
}

/// `a / b` when `b` divides `a` exactly as polynomials (always `Some(0)` for `a == 0` and a
/// nonzero `b`).
pub(super) fn divide_exact(a: &Expr, b: &Expr) -> Option<Expr> {
    if b.is_zero() {
        return None;
    }
    if a.is_zero() {
        return Some(Expr::int(0));
    }
    match divisor_of(b) {
        Some(divisor) => {
            let quotients: Option<Vec<(Vec<Factor>, i64)>> = parts(a)
                .map(|(monomial, coeff)| divide_part(monomial, coeff, &divisor))
                .collect();
            let quotients = quotients?;
            Some(from_parts(
                quotients.iter().map(|(m, c)| (m.as_slice(), *c)),
            ))
        }
        // A sum divisor: long division (`(A + 1)**2` by `A + 1`, as PyTorch's `FloorDiv`
        // cancels a common factor).
        None => divide_polynomial(a, b),
    }
}

/// `a / b` by long division when `b` divides `a` exactly as polynomials over the atoms,
/// a divisor of several terms included (`(s0 + 1)*(s1 + 1)` by `s1 + 1` is `s0 + 1`):
/// each step divides the remainder's leading term by the divisor's, graded-lex over the
/// atoms' order (a monomial order, so the leading terms strictly decrease and the
/// division ends); `None` when a step does not divide or the steps run out.
pub(super) fn divide_polynomial(a: &Expr, b: &Expr) -> Option<Expr> {
    if b.is_zero() || a.is_overflow() || b.is_overflow() {
        return None;
    }
    let lead = |e: &Expr| -> Option<(Vec<Factor>, i64)> {
        parts(e)
            .max_by(|x, y| graded_lex(x.0, y.0))
            .map(|(monomial, coeff)| (monomial.to_vec(), coeff))
    };
    let (divisor_monomial, divisor_coeff) = lead(b)?;
    let divisor = Divisor::Term(&divisor_monomial, divisor_coeff);
    let mut rest = a.clone();
    let mut quotient = Expr::int(0);
    for _ in 0..64 {
        if rest.is_zero() {
            return Some(quotient);
        }
        let (monomial, coeff) = lead(&rest)?;
        let (part_monomial, part_coeff) = divide_part(&monomial, coeff, &divisor)?;
        let part = term_expr(&part_monomial, part_coeff);
        quotient = add_poly(&quotient, &part);
        rest = &rest - &(&part * b);
        if rest.is_overflow() {
            return None;
        }
    }
    None
}

/// Graded-lex order of monomials: total degree, then exponents atom by atom in the atoms'
/// order.
fn graded_lex(a: &[Factor], b: &[Factor]) -> std::cmp::Ordering {
    let degree = |m: &[Factor]| m.iter().map(|f| u64::from(f.exp)).sum::<u64>();
    degree(a).cmp(&degree(b)).then_with(|| {
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let atom = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.atom.clone().min(y.atom.clone()),
                (Some(x), None) => x.atom.clone(),
                (None, Some(y)) => y.atom.clone(),
                (None, None) => break,
            };
            let exp_a = a.get(i).filter(|f| f.atom == atom).map_or(0, |f| f.exp);
            let exp_b = b.get(j).filter(|f| f.atom == atom).map_or(0, |f| f.exp);
            if exp_a != exp_b {
                return exp_a.cmp(&exp_b);
            }
            i += usize::from(a.get(i).is_some_and(|f| f.atom == atom));
            j += usize::from(b.get(j).is_some_and(|f| f.atom == atom));
        }
        std::cmp::Ordering::Equal
    })
}

/// Splits `a` into (the exact quotient by `b` of the summands `b` divides, the other
/// summands); `None` unless both groups are non-empty.
fn split_divisible(a: &Expr, b: &Expr) -> Option<(Expr, Expr)> {
    let divisor = divisor_of(b)?;
    let mut quotient = Vec::new();
    let mut rest = Vec::new();
    for (monomial, coeff) in parts(a) {
        match divide_part(monomial, coeff, &divisor) {
            Some(part) => quotient.push(part),
            None => rest.push((monomial, coeff)),
        }
    }
    if quotient.is_empty() || rest.is_empty() {
        return None;
    }
    let quotient = from_parts(quotient.iter().map(|(m, c)| (m.as_slice(), *c)));
    Some((quotient, from_parts(rest)))
}

/// The greatest common factor `g * monomial` of every summand of `a` and `b`: `g` the gcd
/// of the coefficients (and constants), `monomial` the atoms every summand shares at their
/// smallest exponent. `None` when it is just 1 (or `b` is 0).
fn common_factor(a: &Expr, b: &Expr) -> Option<(i64, Vec<Factor>)> {
    if b.is_zero() {
        return None;
    }
    let g = parts(a)
        .chain(parts(b))
        .fold(0u64, |g, (_, coeff)| gcd(g, coeff.unsigned_abs()));
    let g = i64::try_from(g).ok()?;
    let mut shared: Option<Vec<Factor>> = None;
    for (monomial, _) in parts(a).chain(parts(b)) {
        shared = Some(match shared {
            None => monomial.to_vec(),
            Some(common) => common
                .into_iter()
                .filter_map(|factor| {
                    let other = monomial.iter().find(|f| f.atom == factor.atom)?;
                    Some(Factor {
                        exp: factor.exp.min(other.exp),
                        atom: factor.atom,
                    })
                })
                .collect(),
        });
    }
    let shared = shared.unwrap_or_default();
    (g > 1 || !shared.is_empty()).then_some((g, shared))
}

/// `(a / f, b / f)` for the common factor `f` of `a` and `b`, and `f` itself.
fn divide_common_factor(a: &Expr, b: &Expr) -> Option<(Expr, Expr, Expr)> {
    let (g, monomial) = common_factor(a, b)?;
    let divisor = Divisor::Term(&monomial, g);
    let divide = |e: &Expr| -> Option<Expr> {
        let quotients: Option<Vec<(Vec<Factor>, i64)>> =
            parts(e).map(|(m, c)| divide_part(m, c, &divisor)).collect();
        Some(from_parts(
            quotients?.iter().map(|(m, c)| (m.as_slice(), *c)),
        ))
    };
    Some((divide(a)?, divide(b)?, term_expr(&monomial, g)))
}
