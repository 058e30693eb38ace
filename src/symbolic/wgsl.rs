//! WGSL code generation for expressions, for shaders that compute shapes and indices.
//!
//! In: a canonical expression, a WGSL name per symbol (an `i32` value in scope) and the
//! symbols' ranges. Out: a WGSL `i32` expression, calling [`WGSL_HELPERS`] where needed.
//!
//! Invariant: the WGSL value equals Python semantics whenever every intermediate fits `i32`.
//! WGSL `/` and `%` truncate toward zero, which matches floor semantics only for a
//! non-negative numerator and positive divisor; so plain operators are emitted only when
//! the ranges prove that, and the floor helpers otherwise. Literals carry the `i` suffix so
//! every subexpression is concretely `i32`.

use super::print::{Prec, display_order};
use super::range::expr_bounds;
use super::{Atom, Expr, Factor, Sym, Term, ValueRange};

/// WGSL source of the `i32` helpers [`Expr::to_wgsl`] may call: floor division and floor
/// modulo for possibly-negative operands, and integer power for large exponents. Include it
/// once per shader.
pub const WGSL_HELPERS: &str = "\
// Python-style floor division: rounds toward negative infinity (WGSL `/` truncates).
fn floor_div_i32(a: i32, b: i32) -> i32 {
    let q = a / b;
    if (a % b != 0i) && ((a < 0i) != (b < 0i)) {
        return q - 1i;
    }
    return q;
}

// Python-style modulo: the result takes the divisor's sign (WGSL `%` takes the dividend's).
fn floor_mod_i32(a: i32, b: i32) -> i32 {
    let r = a % b;
    if (r != 0i) && ((r < 0i) != (b < 0i)) {
        return r + b;
    }
    return r;
}

// Integer power by repeated multiplication (WGSL has no integer `pow`).
fn pow_i32(base: i32, exp: u32) -> i32 {
    var result = 1i;
    for (var i = 0u; i < exp; i++) {
        result *= base;
    }
    return result;
}
";

/// WGSL source of `tailor_ratio_bits`, which [`Expr::to_wgsl`] calls for PyTorch's nearest
/// scale (`Expr::nearest_source`). Include it once per shader that calls it.
pub const WGSL_RATIO_HELPER: &str = "\
// The bits of f32(a) / f32(b) rounded to nearest-even float32, by long division: WGSL's `/`
// on f32 is only within 2.5 ULP, and PyTorch's index needs the correctly rounded scale.
// Exact for 0 <= a and 0 < b below 2^24; other operands fall back to `/`.
fn tailor_ratio_bits(a: i32, b: i32) -> i32 {
    if (a < 0i || b <= 0i || a >= 0x1000000i || b >= 0x1000000i) {
        return bitcast<i32>(f32(a) / f32(b));
    }
    let d = u32(b);
    // m / 2^shift is the quotient so far and r the remainder: long division until m has
    // 24 significant bits.
    var m = u32(a) / d;
    var r = u32(a) % d;
    var shift = 0i;
    if (m == 0u && r == 0u) {
        return 0i;
    }
    loop {
        if (m >= 0x800000u || shift >= 64i) {
            break;
        }
        r = r * 2u;
        m = m * 2u;
        if (r >= d) {
            m = m + 1u;
            r = r - d;
        }
        shift = shift + 1i;
    }
    // Round half to even on the remainder (m may reach 2^24, still exact in f32).
    let twice = r * 2u;
    if (twice > d || (twice == d && (m & 1u) == 1u)) {
        m = m + 1u;
    }
    return bitcast<i32>(ldexp(f32(m), -shift));
}
";

/// Powers up to this are written out as products; larger ones (which overflow `i32` for any
/// base but 0 and ±1) call `pow_i32` so the text stays small.
const MAX_EXPANDED_POWER: u32 = 4;

/// WGSL precedence is Python's without `**`, so the same levels apply; `Prec::Power` is
/// unused here.
struct Printer<'a> {
    name: &'a dyn Fn(Sym) -> String,
    ranges: &'a dyn Fn(Sym) -> ValueRange,
    /// The loop variables and the hook of [`Expr::to_wgsl_hoisting`].
    hoist: Option<Hoist<'a>>,
}

/// Loop variables, and what names a value that depends on none of them.
type Hoist<'a> = (&'a [Sym], &'a dyn Fn(&str) -> Option<String>);

/// See [`Expr::to_wgsl`] and [`Expr::to_wgsl_hoisting`].
pub(super) fn to_wgsl(
    expr: &Expr,
    name: &dyn Fn(Sym) -> String,
    ranges: &dyn Fn(Sym) -> ValueRange,
    hoist: Option<Hoist<'_>>,
) -> String {
    Printer {
        name,
        ranges,
        hoist,
    }
    .expr(expr)
    .0
}

fn wrap((text, prec): (String, Prec), min: Prec) -> String {
    if prec < min {
        format!("({text})")
    } else {
        text
    }
}

fn literal(value: u64) -> String {
    format!("{value}i")
}

impl Printer<'_> {
    fn expr(&self, expr: &Expr) -> (String, Prec) {
        if expr.overflowed {
            // Not valid WGSL on purpose: an overflowed formula must not compile silently.
            return ("overflow".to_string(), Prec::Atom);
        }
        if expr.terms.is_empty() {
            return self.constant(expr.constant);
        }
        if let ([term], 0) = (expr.terms.as_slice(), expr.constant) {
            return self.signed_term(term);
        }
        let mut out = String::new();
        for (index, term) in display_order(&expr.terms).into_iter().enumerate() {
            let body = self.unsigned_term(term);
            match (index, term.coeff < 0) {
                (0, false) => out.push_str(&body.0),
                (0, true) => out.push_str(&format!("-{}", wrap(body, Prec::Atom))),
                (_, negative) => {
                    out.push_str(if negative { " - " } else { " + " });
                    out.push_str(&wrap(body, Prec::Product));
                }
            }
        }
        if expr.constant != 0 {
            out.push_str(if expr.constant < 0 { " - " } else { " + " });
            out.push_str(&literal(expr.constant.unsigned_abs()));
        }
        (out, Prec::Sum)
    }

    fn constant(&self, value: i64) -> (String, Prec) {
        if value < 0 {
            (format!("-{}", literal(value.unsigned_abs())), Prec::Unary)
        } else {
            (literal(value.unsigned_abs()), Prec::Atom)
        }
    }

    fn signed_term(&self, term: &Term) -> (String, Prec) {
        let body = self.unsigned_term(term);
        if term.coeff < 0 {
            // `-a / 4i` would negate before truncating; keep the negation outside.
            (format!("-{}", wrap(body, Prec::Atom)), Prec::Unary)
        } else {
            body
        }
    }

    fn unsigned_term(&self, term: &Term) -> (String, Prec) {
        let magnitude = term.coeff.unsigned_abs();
        if let ([factor], 1) = (term.monomial.as_slice(), magnitude) {
            return self.factor(factor);
        }
        let mut pieces = Vec::with_capacity(term.monomial.len() + 1);
        if magnitude != 1 {
            pieces.push(literal(magnitude));
        }
        pieces.extend(
            term.monomial
                .iter()
                .map(|factor| wrap(self.factor(factor), Prec::Atom)),
        );
        (pieces.join(" * "), Prec::Product)
    }

    /// WGSL has no integer power: `a**n` becomes `a * a * …` up to `MAX_EXPANDED_POWER`
    /// factors and a call to `pow_i32` beyond.
    fn factor(&self, factor: &Factor) -> (String, Prec) {
        let base = self.atom(&factor.atom);
        if factor.exp == 1 {
            return base;
        }
        if factor.exp > MAX_EXPANDED_POWER {
            return (format!("pow_i32({}, {}u)", base.0, factor.exp), Prec::Atom);
        }
        let base = wrap(base, Prec::Atom);
        let copies: Vec<&str> = (0..factor.exp).map(|_| base.as_str()).collect();
        (copies.join(" * "), Prec::Product)
    }

    fn atom(&self, atom: &Atom) -> (String, Prec) {
        let printed = self.atom_in_place(atom);
        match self.hoist {
            Some((loop_vars, hoist))
                if !matches!(atom, Atom::Sym(_))
                    && !loop_vars.iter().any(|&v| atom.mentions(v)) =>
            {
                match hoist(&printed.0) {
                    Some(name) => (name, Prec::Atom),
                    None => printed,
                }
            }
            _ => printed,
        }
    }

    fn atom_in_place(&self, atom: &Atom) -> (String, Prec) {
        match atom {
            Atom::Sym(sym) => ((self.name)(*sym), Prec::Atom),
            Atom::FloorDiv(a, b) => self.division(a, b, "/", "floor_div_i32"),
            Atom::Mod(a, b) => self.division(a, b, "%", "floor_mod_i32"),
            Atom::Min(a, b) => self.call("min", a, b),
            Atom::Max(a, b) => self.call("max", a, b),
            Atom::F32Ratio(a, b) => self.call("tailor_ratio_bits", a, b),
            Atom::F32FloorMul(a, b) => (
                format!(
                    "i32(floor(f32({}) * bitcast<f32>({})))",
                    self.expr(a).0,
                    self.expr(b).0
                ),
                Prec::Atom,
            ),
        }
    }

    fn division(&self, a: &Expr, b: &Expr, operator: &str, helper: &str) -> (String, Prec) {
        // A size symbol's range (at least 2 for a symbol) proves a symbolic divisor positive
        // as well as a literal one: dynamic code divides by `dims.s1` without the helper.
        let positive_divisor = expr_bounds(b, self.ranges).lo_at_least(1);
        let numerator_non_negative = expr_bounds(a, self.ranges).lo_at_least(0);
        if positive_divisor && numerator_non_negative {
            let text = format!(
                "{} {operator} {}",
                wrap(self.expr(a), Prec::Atom),
                wrap(self.expr(b), Prec::Atom)
            );
            (text, Prec::Product)
        } else {
            self.call(helper, a, b)
        }
    }

    fn call(&self, function: &str, a: &Expr, b: &Expr) -> (String, Prec) {
        let text = format!("{function}({}, {})", self.expr(a).0, self.expr(b).0);
        (text, Prec::Atom)
    }
}
