//! Symbolic integer expressions: the shape formulas of the pipeline.
//!
//! Sits between graph capture, which builds sizes such as `(s0 - 3)//2 + 1` from the shape
//! symbols `s0, s1, …`, and guards/codegen, which print, compare, bound and evaluate them.
//! In: symbols, integers and the operations `+ - * // % ** Min Max` (as method calls, operators
//! or parsed text), and the two float32 steps of PyTorch's nearest-neighbour index
//! (`F32Ratio`, `F32FloorMul`: [`Expr::nearest_source`]). Out: canonical [`Expr`] values, their value ranges, printed forms (maths,
//! PyTorch guard source, WGSL), relations between them and allocation-free evaluators.
//!
//! Invariant: every `Expr` value is canonical — a constant plus a sorted list of
//! `coeff * monomial` terms with no zero coefficient and no repeated monomial, where every
//! `FloorDiv`/`Mod`/`Min`/`Max`/`F32Ratio`/`F32FloorMul` atom has canonical arguments and no named rule of
//! `rules.rs` applies to it — so equal canonical forms mean equal expressions. The only
//! exception is the overflow marker: when a coefficient leaves `i64` while building, the
//! result is [`Expr::is_overflow`] and evaluates to `None` everywhere.

mod affine;
mod compiled;
mod equiv;
mod eval;
mod names;
mod ops;
mod parse;
mod print;
mod range;
mod raw;
mod rel;
mod rules;
mod simplify;
mod wgsl;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;

pub use compiled::{CompiledExpr, CompiledRel};
pub use eval::Bindings;
pub use names::{SymbolNames, SymbolNaming};
pub use parse::ParseError;
pub(crate) use print::rename_syms;
pub use range::ValueRange;
pub use raw::RawExpr;
pub use rel::{CmpOp, Rel};
pub use wgsl::{WGSL_HELPERS, WGSL_RATIO_HELPER};

use simplify::Simplifier;

/// A shape symbol, as PyTorch's ShapeEnv allocates them: `s0`, `s1`, …
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Sym(pub u32);

impl Sym {
    /// The symbol's number, usable as a slot index (`s3` is slot 3).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", names::shown_number(*self))
    }
}

/// A canonical symbolic integer expression (see the module invariant).
///
/// Build it with [`Expr::int`], [`Expr::sym`], the operators `+ - *` (also with `i64`),
/// [`Expr::floor_div`], [`Expr::modulo`], [`Expr::min`], [`Expr::max`], [`Expr::pow`], or
/// by parsing text. Every result is already simplified.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Expr {
    /// Sorted by monomial; no zero coefficient, no repeated monomial.
    terms: Vec<Term>,
    constant: i64,
    /// Set when a coefficient overflowed `i64` while building; then `terms` is empty and
    /// `constant` is 0.
    overflowed: bool,
}

/// `coeff * monomial`; the monomial is never empty (constants live in `Expr::constant`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Term {
    monomial: Vec<Factor>,
    coeff: i64,
}

/// `atom ** exp` with `exp >= 1`; a monomial holds each atom at most once, sorted by atom.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Factor {
    atom: Atom,
    exp: u32,
}

/// An indivisible operand of a monomial. `Min`/`Max` keep their arguments sorted because
/// they commute.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Atom {
    Sym(Sym),
    FloorDiv(Box<Expr>, Box<Expr>),
    Mod(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    /// The bits of `f32(a) / f32(b)` rounded to float32 (PyTorch's nearest scale).
    F32Ratio(Box<Expr>, Box<Expr>),
    /// `floor(f32(a) * f32::from_bits(b))`, rounding the product to float32 first.
    F32FloorMul(Box<Expr>, Box<Expr>),
}

/// The binary operations that become atoms, used to dispatch rules and printing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AtomKind {
    FloorDiv,
    Mod,
    Min,
    Max,
    F32Ratio,
    F32FloorMul,
}

impl AtomKind {
    fn make(self, lhs: Expr, rhs: Expr) -> Atom {
        let (lhs, rhs) = (Box::new(lhs), Box::new(rhs));
        match self {
            AtomKind::FloorDiv => Atom::FloorDiv(lhs, rhs),
            AtomKind::Mod => Atom::Mod(lhs, rhs),
            AtomKind::Min => Atom::Min(lhs, rhs),
            AtomKind::Max => Atom::Max(lhs, rhs),
            AtomKind::F32Ratio => Atom::F32Ratio(lhs, rhs),
            AtomKind::F32FloorMul => Atom::F32FloorMul(lhs, rhs),
        }
    }
}

/// An atom seen as either a symbol or an operation over two arguments, so code that treats
/// all its operations alike needs one match arm for them.
enum AtomView<'a> {
    Sym(Sym),
    Binary(AtomKind, &'a Expr, &'a Expr),
}

impl Atom {
    fn view(&self) -> AtomView<'_> {
        match self {
            Atom::Sym(sym) => AtomView::Sym(*sym),
            Atom::FloorDiv(a, b) => AtomView::Binary(AtomKind::FloorDiv, a, b),
            Atom::Mod(a, b) => AtomView::Binary(AtomKind::Mod, a, b),
            Atom::Min(a, b) => AtomView::Binary(AtomKind::Min, a, b),
            Atom::Max(a, b) => AtomView::Binary(AtomKind::Max, a, b),
            Atom::F32Ratio(a, b) => AtomView::Binary(AtomKind::F32Ratio, a, b),
            Atom::F32FloorMul(a, b) => AtomView::Binary(AtomKind::F32FloorMul, a, b),
        }
    }
}

/// One named rule firing during simplification, for showing a derivation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// The rule's kebab-case name, e.g. `floordiv-split`.
    pub rule: &'static str,
    /// The node before the rule, in maths form.
    pub before: String,
    /// What the rule turned it into, in maths form.
    pub after: String,
}

impl Expr {
    /// The integer constant `value`.
    pub fn int(value: i64) -> Expr {
        Expr {
            terms: Vec::new(),
            constant: value,
            overflowed: false,
        }
    }

    /// The symbol `sym` on its own.
    pub fn sym(sym: Sym) -> Expr {
        Expr::from_atom(Atom::Sym(sym))
    }

    /// The marker for "a coefficient left i64"; it evaluates to `None`.
    fn overflow() -> Expr {
        Expr {
            terms: Vec::new(),
            constant: 0,
            overflowed: true,
        }
    }

    /// A single atom with coefficient 1; the caller guarantees the atom is irreducible.
    fn from_atom(atom: Atom) -> Expr {
        Expr {
            terms: vec![Term {
                monomial: vec![Factor { atom, exp: 1 }],
                coeff: 1,
            }],
            constant: 0,
            overflowed: false,
        }
    }

    /// Whether building this expression overflowed `i64` in a coefficient. Such an
    /// expression evaluates to `None` and prints as `overflow`.
    pub fn is_overflow(&self) -> bool {
        self.overflowed
    }

    /// Python floor division `self // rhs` (rounds toward negative infinity).
    pub fn floor_div(&self, rhs: &Expr) -> Expr {
        Simplifier::plain().floor_div(self, rhs)
    }

    /// Python modulo `self % rhs` (the result has the sign of the divisor).
    pub fn modulo(&self, rhs: &Expr) -> Expr {
        Simplifier::plain().modulo(self, rhs)
    }

    /// `Min(self, rhs)`.
    ///
    /// Call it on a reference (`(&a).min(&b)` or `Expr::min(&a, &b)`): on an owned
    /// receiver, method resolution picks `Ord::min` (`Expr` is `Ord` for sorting).
    pub fn min(&self, rhs: &Expr) -> Expr {
        Simplifier::plain().min(self, rhs)
    }

    /// PyTorch's nearest-neighbour source index of output position `self` when `input`
    /// positions are resized to `output`: `floor(f32(self) * (f32(input) / f32(output)))`
    /// with both the quotient and the product rounded to float32, as its CPU and CUDA
    /// kernels compute it (`nearest_idx`), clamped to `input - 1`. Exact integer arithmetic
    /// would differ (2 positions to 82 reads position 1 at output 41, not 0 as PyTorch).
    pub fn nearest_source(&self, input: &Expr, output: &Expr) -> Expr {
        let mut simplifier = Simplifier::plain();
        let scale = simplifier.f32_ratio(input, output);
        let source = simplifier.f32_floor_mul(self, &scale);
        simplifier.min(&source, &(input - 1))
    }

    /// `Max(self, rhs)`.
    ///
    /// Call it on a reference, as for [`Expr::min`] (owned receivers pick `Ord::max`).
    pub fn max(&self, rhs: &Expr) -> Expr {
        Simplifier::plain().max(self, rhs)
    }

    /// `self ** exp`, expanded into the canonical sum of products.
    pub fn pow(&self, exp: u32) -> Expr {
        Simplifier::plain().pow(self, exp)
    }

    /// The value when the expression is a constant.
    pub fn as_int(&self) -> Option<i64> {
        (self.terms.is_empty() && !self.overflowed).then_some(self.constant)
    }

    /// The symbol when the expression is exactly one symbol with coefficient 1.
    pub fn as_sym(&self) -> Option<Sym> {
        match (self.constant, self.terms.as_slice()) {
            (0, [term]) if term.coeff == 1 => match term.monomial.as_slice() {
                [
                    Factor {
                        atom: Atom::Sym(sym),
                        exp: 1,
                    },
                ] => Some(*sym),
                _ => None,
            },
            _ => None,
        }
    }

    /// `(coeff, sym, offset, divisor, constant)` when the expression is `constant` plus
    /// `coeff * ((sym + offset) // divisor)` (a symbol alone is offset 0, divisor 1) with a
    /// positive constant divisor: the form whose comparisons with 0 bound `sym` (a pooled
    /// size `(s0 - 1)//2 + 1 >= 4` gives `s0 >= 7`).
    pub fn as_scaled_floor_div(&self) -> Option<(i64, Sym, i64, i64, i64)> {
        if self.overflowed {
            return None;
        }
        let [term] = self.terms.as_slice() else {
            return None;
        };
        let [Factor { atom, exp: 1 }] = term.monomial.as_slice() else {
            return None;
        };
        let (sym, offset, divisor) = match atom {
            Atom::Sym(sym) => (*sym, 0, 1),
            Atom::FloorDiv(lhs, rhs) => (
                (&**lhs - lhs.constant).as_sym()?,
                lhs.constant,
                rhs.as_int().filter(|&d| d > 0)?,
            ),
            _ => return None,
        };
        Some((term.coeff, sym, offset, divisor, self.constant))
    }

    /// `self / divisor` when `divisor` divides it exactly as polynomials
    /// (`s0*s1 - 2*s1` by `s1` is `s0 - 2`).
    pub fn divide_exact(&self, divisor: &Expr) -> Option<Expr> {
        rules::divide_exact(self, divisor)
    }

    /// `self / divisor` when `divisor` divides it exactly as polynomials, a divisor of
    /// several terms included (`(s0 + 1)*(s1 + 1)` by `s1 + 1` is `s0 + 1`).
    pub fn divide_polynomial(&self, divisor: &Expr) -> Option<Expr> {
        rules::divide_polynomial(self, divisor)
    }

    /// Every symbol the expression mentions, including inside atoms.
    pub fn free_syms(&self) -> BTreeSet<Sym> {
        let mut syms = BTreeSet::new();
        self.collect_syms(&mut syms);
        syms
    }

    fn collect_syms(&self, syms: &mut BTreeSet<Sym>) {
        for factor in self.terms.iter().flat_map(|term| &term.monomial) {
            match factor.atom.view() {
                AtomView::Sym(sym) => {
                    syms.insert(sym);
                }
                AtomView::Binary(_, a, b) => {
                    a.collect_syms(syms);
                    b.collect_syms(syms);
                }
            }
        }
    }

    /// Replaces every occurrence of `sym` by `value`; the result is simplified.
    pub fn substitute(&self, sym: Sym, value: &Expr) -> Expr {
        let replace = |candidate: Sym| (candidate == sym).then(|| value.clone());
        Simplifier::plain().rebuild(self, &replace)
    }

    /// The value under `bindings`; `None` when a symbol is unbound, on division or modulo by
    /// zero, or when any intermediate result overflows `i64`.
    pub fn eval(&self, bindings: &Bindings) -> Option<i64> {
        self.eval_with(&|sym| bindings.get(sym))
    }

    /// An interval that contains the value for every binding inside `ranges` (where the value
    /// is defined). Interval arithmetic, so it may be wider than the exact range.
    pub fn bounds(&self, ranges: &dyn Fn(Sym) -> ValueRange) -> ValueRange {
        range::expr_bounds(self, ranges).to_value_range()
    }

    /// Simplifies again knowing each symbol's range, which unlocks range-aware rules such as
    /// `x//c -> 0` when `0 <= x < c`, `Max(1, e) -> e` when `e >= 1` and `x % c -> x` when
    /// `0 <= x < c`. A symbol whose range is a single value becomes that value.
    pub fn simplify_in(&self, ranges: &dyn Fn(Sym) -> ValueRange) -> Expr {
        Simplifier::with_ranges(ranges).simplify_fixpoint(self)
    }

    /// [`Expr::simplify_in`], also returning which named rules fired.
    pub fn simplify_in_with_log(&self, ranges: &dyn Fn(Sym) -> ValueRange) -> (Expr, Vec<Rewrite>) {
        let mut log = Vec::new();
        let simplified = Simplifier::with_ranges(ranges)
            .logging(&mut log)
            .simplify_fixpoint(self);
        (simplified, log)
    }

    /// Runs the rule driver over this expression and returns which named rules fired.
    ///
    /// An `Expr` is canonical from construction, so the log is empty unless ranges are
    /// involved; to show how a formula was derived, build a [`RawExpr`] (or parse one) and
    /// call [`RawExpr::simplify_with_log`], or use [`Expr::simplify_in_with_log`].
    pub fn simplify_with_log(&self) -> (Expr, Vec<Rewrite>) {
        let mut log = Vec::new();
        let simplified = Simplifier::plain()
            .logging(&mut log)
            .simplify_fixpoint(self);
        (simplified, log)
    }

    /// PyTorch guard source form, e.g. `(1 + (((-3) + L['x'].size()[2]) // 2))`, naming each
    /// symbol with `name`.
    pub fn to_source(&self, name: &dyn Fn(Sym) -> String) -> String {
        print::to_source(self, name)
    }

    /// A WGSL `i32` expression; plain `/` and `%` where the numerator is known non-negative
    /// and the divisor positive under `ranges`, otherwise calls to the helpers
    /// in [`WGSL_HELPERS`]. Values are assumed to fit `i32`.
    pub fn to_wgsl(
        &self,
        name: &dyn Fn(Sym) -> String,
        ranges: &dyn Fn(Sym) -> ValueRange,
    ) -> String {
        wgsl::to_wgsl(self, name, ranges, None)
    }

    /// [`Expr::to_wgsl`] for code inside loops over `loop_vars`: every division, modulo,
    /// minimum, maximum or float32 step that mentions none of them is offered to
    /// `hoist` with its WGSL text, inner ones first, and prints as the name `hoist` returns
    /// (a `let` the caller declares before the loop), or in place where it returns `None`.
    pub fn to_wgsl_hoisting(
        &self,
        name: &dyn Fn(Sym) -> String,
        ranges: &dyn Fn(Sym) -> ValueRange,
        loop_vars: &[Sym],
        hoist: &dyn Fn(&str) -> Option<String>,
    ) -> String {
        wgsl::to_wgsl(self, name, ranges, Some((loop_vars, hoist)))
    }

    /// Whether `self` and `other` are the same function of the symbols within `ranges`.
    ///
    /// True at once when the canonical forms (also after range-aware simplification) are
    /// equal. Otherwise this is **sampling-based**: both are evaluated at a deterministic set
    /// of bindings drawn from the ranges (range ends, small values, a spread of larger ones;
    /// the full grid for up to four symbols, a fixed pseudo-random selection beyond) and
    /// they count as equivalent only if they agree at every sample, including on being
    /// undefined. So `false` is always backed by a counterexample, while `true` beyond the
    /// canonical check is strong evidence rather than proof.
    pub fn is_equivalent(&self, other: &Expr, ranges: &dyn Fn(Sym) -> ValueRange) -> bool {
        equiv::is_equivalent(self, other, ranges)
    }

    /// Whether this is the constant 0.
    fn is_zero(&self) -> bool {
        self.as_int() == Some(0)
    }

    /// The number of summands: terms plus the constant when non-zero.
    fn part_count(&self) -> usize {
        self.terms.len() + usize::from(self.constant != 0)
    }

    /// The single atom when the expression is exactly `1 * atom ** 1`.
    fn as_atom(&self) -> Option<&Atom> {
        match (self.constant, self.terms.as_slice()) {
            (0, [term]) if term.coeff == 1 => match term.monomial.as_slice() {
                [Factor { atom, exp: 1 }] => Some(atom),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Every rule name that can appear in a [`Rewrite`] log: the polynomial rules, then the
/// `FloorDiv`, `Mod`, `Min` and `Max` rules in the order the driver tries them.
pub fn rule_names() -> Vec<&'static str> {
    simplify::POLYNOMIAL_RULES
        .iter()
        .copied()
        .chain(rules::atom_rule_names())
        .collect()
}

/// Serialized as its maths-form text (`"(s0 - 3)//2 + 1"`), which parses back to the same
/// canonical form; the overflow marker serializes as `"overflow"` and does not deserialize.
impl serde::Serialize for Expr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Expr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl From<i64> for Expr {
    fn from(value: i64) -> Expr {
        Expr::int(value)
    }
}

impl From<Sym> for Expr {
    fn from(sym: Sym) -> Expr {
        Expr::sym(sym)
    }
}
