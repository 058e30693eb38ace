//! Printing expressions: the maths form (`Display`, sympy-like, what the page shows) and the
//! PyTorch guard source form (`to_source`, as `torch._dynamo` guard logs spell it).
//!
//! In: canonical expressions (and, for rewrite logs, an operation over canonical operands).
//! Out: text.
//!
//! Invariant: the maths form parses back (`str::parse::<Expr>`) to an equal `Expr` — it
//! parenthesizes exactly where Python precedence needs it — and the source form is valid
//! Python with the same value; both are deterministic.

use std::fmt;

use super::{Atom, AtomKind, CmpOp, Expr, Factor, Sym, Term};

/// Python precedence levels, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Prec {
    /// `a + b`, `a - b`.
    Sum,
    /// `a*b`, `a//b`, `a % b` (left-associative, one level).
    Product,
    /// `-a`.
    Unary,
    /// `a**b`.
    Power,
    /// Names, non-negative numbers, calls, parenthesized text.
    Atom,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&maths(self).0)
    }
}

/// `text`, parenthesized when its precedence is below `min`.
fn wrap((text, prec): (String, Prec), min: Prec) -> String {
    if prec < min {
        format!("({text})")
    } else {
        text
    }
}

/// Terms in display order, as sympy prints: higher total degree first, then graded
/// lexicographic (`s0**2 + 2*s0*s1 + s1**2`).
pub(super) fn display_order(terms: &[Term]) -> Vec<&Term> {
    let degree = |term: &Term| term.monomial.iter().map(|f| u64::from(f.exp)).sum::<u64>();
    let mut ordered: Vec<&Term> = terms.iter().collect();
    ordered.sort_by(|a, b| {
        degree(b)
            .cmp(&degree(a))
            .then_with(|| lexicographic(&a.monomial, &b.monomial))
            .then_with(|| a.cmp(b))
    });
    ordered
}

/// Compares exponent vectors over the sorted atoms, larger exponent of the earliest atom
/// first; a factor missing from one side counts as exponent 0.
fn lexicographic(a: &[Factor], b: &[Factor]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = if x.atom != y.atom {
            // The side holding the smaller atom has it at a positive exponent, the other at 0.
            x.atom.cmp(&y.atom)
        } else {
            y.exp.cmp(&x.exp)
        };
        if order.is_ne() {
            return order;
        }
    }
    b.len().cmp(&a.len())
}

/// The maths form of `expr` and its precedence.
pub(super) fn maths(expr: &Expr) -> (String, Prec) {
    if expr.overflowed {
        return ("overflow".to_string(), Prec::Atom);
    }
    if expr.terms.is_empty() {
        let prec = if expr.constant < 0 {
            Prec::Unary
        } else {
            Prec::Atom
        };
        return (expr.constant.to_string(), prec);
    }
    let terms = display_order(&expr.terms);
    if let ([term], 0) = (terms.as_slice(), expr.constant) {
        return signed_term_maths(term);
    }
    let mut out = String::new();
    for (index, term) in terms.iter().enumerate() {
        let body = unsigned_term_maths(term);
        match (index, term.coeff < 0) {
            (0, false) => out.push_str(&body.text),
            (0, true) => {
                let (text, _) = negate(body);
                out.push_str(&text);
            }
            (_, false) => {
                out.push_str(" + ");
                out.push_str(&body.text);
            }
            // `- 9223372036854775808` would not parse back (the literal alone exceeds i64),
            // so that one coefficient is added as a parenthesized negative instead.
            (_, true) if term.coeff == i64::MIN => out.push_str(&format!(" + (-{})", body.text)),
            (_, true) => {
                out.push_str(" - ");
                out.push_str(&body.text);
            }
        }
    }
    if expr.constant > 0 {
        out.push_str(&format!(" + {}", expr.constant));
    } else if expr.constant == i64::MIN {
        out.push_str(&format!(" + ({})", expr.constant));
    } else if expr.constant < 0 {
        out.push_str(&format!(" - {}", expr.constant.unsigned_abs()));
    }
    (out, Prec::Sum)
}

/// `|coeff| * monomial` as text, with whether it is a bare `a//b` or `a % b` (which a unary
/// minus in front would capture: `-a//b` is `(-a)//b` in Python).
struct TermText {
    text: String,
    prec: Prec,
    bare_division: bool,
}

fn unsigned_term_maths(term: &Term) -> TermText {
    let magnitude = term.coeff.unsigned_abs();
    if let ([factor], 1) = (term.monomial.as_slice(), magnitude) {
        let (text, prec) = factor_maths(factor);
        return TermText {
            text,
            prec,
            bare_division: prec == Prec::Product,
        };
    }
    let mut pieces = Vec::with_capacity(term.monomial.len() + 1);
    if magnitude != 1 {
        pieces.push(magnitude.to_string());
    }
    // A `//` or `%` factor after `*` needs parentheses: `s1*s0//2` means `(s1*s0)//2`.
    pieces.extend(
        term.monomial
            .iter()
            .map(|factor| wrap(factor_maths(factor), Prec::Unary)),
    );
    TermText {
        text: pieces.join("*"),
        prec: Prec::Product,
        bare_division: false,
    }
}

fn negate(body: TermText) -> (String, Prec) {
    if body.bare_division {
        (format!("-({})", body.text), Prec::Unary)
    } else {
        let prec = body.prec.min(Prec::Unary);
        (format!("-{}", body.text), prec)
    }
}

fn signed_term_maths(term: &Term) -> (String, Prec) {
    let body = unsigned_term_maths(term);
    if term.coeff < 0 {
        negate(body)
    } else {
        (body.text, body.prec)
    }
}

fn factor_maths(factor: &Factor) -> (String, Prec) {
    let base = atom_text(&factor.atom);
    if factor.exp == 1 {
        base
    } else {
        (
            format!("{}**{}", wrap(base, Prec::Atom), factor.exp),
            Prec::Power,
        )
    }
}

fn atom_text(atom: &Atom) -> (String, Prec) {
    match atom {
        Atom::Sym(sym) => (sym.to_string(), Prec::Atom),
        Atom::FloorDiv(a, b) => (format!("{}//{}", operand(a), operand(b)), Prec::Product),
        Atom::Mod(a, b) => (format!("{} % {}", operand(a), operand(b)), Prec::Product),
        Atom::Min(a, b) => {
            // Number-line order: an upper clamp reads `Min(s0, 512)`.
            let (first, second) = if a.as_int().is_some() { (b, a) } else { (a, b) };
            (format!("Min({first}, {second})"), Prec::Atom)
        }
        Atom::Max(a, b) => (format!("Max({a}, {b})"), Prec::Atom),
        Atom::F32Ratio(a, b) => (format!("F32Ratio({a}, {b})"), Prec::Atom),
        Atom::F32FloorMul(a, b) => (format!("F32FloorMul({a}, {b})"), Prec::Atom),
    }
}

/// An operand of `//` or `%`: parenthesized unless a name, number, call or power.
fn operand(expr: &Expr) -> String {
    wrap(maths(expr), Prec::Power)
}

/// `a op b` over canonical operands, for the "before" side of a logged rewrite.
pub(super) fn binary_maths(a: &Expr, op: &str, b: &Expr) -> String {
    let (left, right) = (maths(a), maths(b));
    let right_min = if op == "*" {
        Prec::Power
    } else {
        Prec::Product
    };
    let left_min = if op == "*" { Prec::Product } else { Prec::Sum };
    let right = if right.0.starts_with('-') {
        format!("({})", right.0)
    } else {
        wrap(right, right_min)
    };
    let left = wrap(left, left_min);
    if op == "*" {
        format!("{left}*{right}")
    } else {
        format!("{left} {op} {right}")
    }
}

/// `a**exp`, for the "before" side of a logged rewrite.
pub(super) fn power_maths(a: &Expr, exp: u32) -> String {
    format!("{}**{exp}", wrap(maths(a), Prec::Atom))
}

/// The atom `kind(a, b)` before any rule, for the "before" side of a logged rewrite.
pub(super) fn atom_maths(kind: AtomKind, a: &Expr, b: &Expr) -> String {
    atom_text(&kind.make(a.clone(), b.clone())).0
}

/// The PyTorch guard source form (see [`Expr::to_source`]).
pub(super) fn to_source(expr: &Expr, name: &dyn Fn(Sym) -> String) -> String {
    if expr.overflowed {
        return "overflow".to_string();
    }
    match (expr.terms.as_slice(), expr.constant) {
        ([], constant) => constant.to_string(),
        ([term], 0) => term_source(term, name),
        (terms, constant) => {
            // PyTorch's printer puts the constant first and parenthesizes every sum.
            let mut pieces = Vec::with_capacity(terms.len() + 1);
            if constant != 0 {
                pieces.push(constant_source(constant));
            }
            pieces.extend(
                display_order(terms)
                    .into_iter()
                    .map(|t| term_source(t, name)),
            );
            format!("({})", pieces.join(" + "))
        }
    }
}

/// Negative constants are parenthesized, as sympy does inside sums and products.
fn constant_source(value: i64) -> String {
    if value < 0 {
        format!("({value})")
    } else {
        value.to_string()
    }
}

/// The largest power the source form writes as a repeated product.
const MAX_REPEATED_POWER: u32 = 16;

fn term_source(term: &Term, name: &dyn Fn(Sym) -> String) -> String {
    let mut pieces = Vec::with_capacity(term.monomial.len() + 1);
    if term.coeff != 1 {
        pieces.push(constant_source(term.coeff));
    }
    // A power is its base repeated, as PyTorch's `PythonPrinter._print_Pow` writes it
    // (`s0*s0`, never `s0**2`). Sizes give small powers; a typed answer may hold any, whose
    // repetition could fill memory, so past `MAX_REPEATED_POWER` it stays `**`.
    for factor in &term.monomial {
        let base = atom_source(&factor.atom, name);
        if factor.exp <= MAX_REPEATED_POWER {
            pieces.extend(std::iter::repeat_n(base, factor.exp as usize));
        } else {
            pieces.push(format!("{base}**{}", factor.exp));
        }
    }
    pieces.join("*")
}

fn atom_source(atom: &Atom, name: &dyn Fn(Sym) -> String) -> String {
    let operator = |symbol: &str, a: &Expr, b: &Expr| {
        format!(
            "({} {symbol} {})",
            source_operand(a, name),
            source_operand(b, name)
        )
    };
    let call = |function: &str, a: &Expr, b: &Expr| {
        format!("{function}({}, {})", to_source(a, name), to_source(b, name))
    };
    match atom {
        Atom::Sym(sym) => name(*sym),
        Atom::FloorDiv(a, b) => operator("//", a, b),
        Atom::Mod(a, b) => operator("%", a, b),
        Atom::Min(a, b) => call("min", a, b),
        Atom::Max(a, b) => call("max", a, b),
        Atom::F32Ratio(a, b) => call("f32_ratio_bits", a, b),
        Atom::F32FloorMul(a, b) => call("f32_floor_mul", a, b),
    }
}

/// A side of a relation `op` in source form, as PyTorch's printer writes it: beside `==` or
/// `!=` a product is parenthesized (`(4*(s0 // 4)) != s0`) and sums and atoms bring their
/// own parentheses; beside an inequality, which binds looser than both, neither is
/// (`(-2) + 2*(s0 // 2) < s0`, `2*(((-1) + s0) // 2) < s0`).
pub(super) fn relation_side(expr: &Expr, op: CmpOp, name: &dyn Fn(Sym) -> String) -> String {
    let text = to_source(expr, name);
    let product = expr.constant == 0 && expr.terms.len() == 1 && expr.as_atom().is_none();
    let sum = !expr.terms.is_empty() && (expr.terms.len() > 1 || expr.constant != 0);
    match op {
        CmpOp::Eq | CmpOp::Ne if product => format!("({text})"),
        CmpOp::Eq | CmpOp::Ne => text,
        _ if sum => text[1..text.len() - 1].to_string(),
        _ => text,
    }
}

/// An operand of `//` or `%` in source form: sums and atoms bring their own parentheses;
/// products, powers and negative numbers get them here so precedence can't regroup them.
fn source_operand(expr: &Expr, name: &dyn Fn(Sym) -> String) -> String {
    let text = to_source(expr, name);
    let self_contained =
        expr.as_atom().is_some() || expr.as_int().is_some_and(|v| v >= 0) || expr.part_count() > 1;
    if self_contained {
        text
    } else {
        format!("({text})")
    }
}

/// Replaces each symbol token `sN` of `text` for which `name(N)` gives a name.
pub(crate) fn rename_syms(text: &str, name: &dyn Fn(u32) -> Option<String>) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let starts_token =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts_token && bytes[i] == b's' {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let end = i + 1 + digits;
            let ends_token =
                end >= bytes.len() || !(bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_');
            if digits > 0 && ends_token {
                if let Some(replacement) = text[i + 1..end].parse().ok().and_then(name) {
                    out.push_str(&replacement);
                    i = end;
                    continue;
                }
            }
        }
        let ch = text[i..].chars().next().expect("i is on a char boundary");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}
