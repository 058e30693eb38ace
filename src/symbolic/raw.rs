//! Unsimplified expression trees: an expression exactly as written or built, before any rule.
//!
//! In: parsed text or nodes built by hand (or an `Expr` expanded back into a tree). Out: the
//! canonical `Expr`, optionally with the log of named rules that produced it, and a direct
//! evaluation that applies no rule — the reference the simplifier is tested against.
//!
//! Invariant: `RawExpr::eval` follows the tree literally with Python semantics, and whenever
//! it is defined, `simplify().eval` gives the same value (simplification may only make an
//! expression defined where the tree was not, e.g. `(1 // s0) * 0` at `s0 = 0`).

use std::fmt;

use super::eval::{f32_floor_mul, f32_ratio_bits, py_floor_div, py_mod};
use super::simplify::Simplifier;
use super::{Atom, Bindings, Expr, Rewrite, Sym};

/// An expression tree as written, with no simplification applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RawExpr {
    /// An integer literal.
    Int(i64),
    /// A symbol.
    Sym(Sym),
    /// `a + b`.
    Add(Box<RawExpr>, Box<RawExpr>),
    /// `a - b`.
    Sub(Box<RawExpr>, Box<RawExpr>),
    /// `a * b`.
    Mul(Box<RawExpr>, Box<RawExpr>),
    /// `-a`.
    Neg(Box<RawExpr>),
    /// `a // b` (floor division).
    FloorDiv(Box<RawExpr>, Box<RawExpr>),
    /// `a % b` (Python modulo).
    Mod(Box<RawExpr>, Box<RawExpr>),
    /// `a ** n`.
    Pow(Box<RawExpr>, u32),
    /// `Min(a, b)`.
    Min(Box<RawExpr>, Box<RawExpr>),
    /// `F32Ratio(a, b)`: the bits of `f32(a) / f32(b)` rounded to float32.
    F32Ratio(Box<RawExpr>, Box<RawExpr>),
    /// `F32FloorMul(a, b)`: `floor(f32(a) * f32::from_bits(b))`.
    F32FloorMul(Box<RawExpr>, Box<RawExpr>),
    /// `Max(a, b)`.
    Max(Box<RawExpr>, Box<RawExpr>),
}

impl RawExpr {
    /// Evaluates the tree node by node with no rewriting; `None` for an unbound symbol,
    /// division or modulo by zero, or overflow.
    pub fn eval(&self, bindings: &Bindings) -> Option<i64> {
        let both = |a: &RawExpr, b: &RawExpr| Some((a.eval(bindings)?, b.eval(bindings)?));
        match self {
            RawExpr::Int(value) => Some(*value),
            RawExpr::Sym(sym) => bindings.get(*sym),
            RawExpr::Add(a, b) => both(a, b).and_then(|(a, b)| a.checked_add(b)),
            RawExpr::Sub(a, b) => both(a, b).and_then(|(a, b)| a.checked_sub(b)),
            RawExpr::Mul(a, b) => both(a, b).and_then(|(a, b)| a.checked_mul(b)),
            RawExpr::Neg(a) => a.eval(bindings)?.checked_neg(),
            RawExpr::FloorDiv(a, b) => both(a, b).and_then(|(a, b)| py_floor_div(a, b)),
            RawExpr::Mod(a, b) => both(a, b).and_then(|(a, b)| py_mod(a, b)),
            RawExpr::Pow(a, exp) => a.eval(bindings)?.checked_pow(*exp),
            RawExpr::Min(a, b) => both(a, b).map(|(a, b)| a.min(b)),
            RawExpr::Max(a, b) => both(a, b).map(|(a, b)| a.max(b)),
            RawExpr::F32Ratio(a, b) => both(a, b).and_then(|(a, b)| f32_ratio_bits(a, b)),
            RawExpr::F32FloorMul(a, b) => both(a, b).and_then(|(a, b)| f32_floor_mul(a, b)),
        }
    }

    /// The canonical form.
    pub fn simplify(&self) -> Expr {
        Simplifier::plain().normalize(self)
    }

    /// The canonical form and, in order, every named rule that fired on the way, e.g.
    /// `floordiv-split` for `(2*s0 + 3)//2 -> s0 + 1`.
    pub fn simplify_with_log(&self) -> (Expr, Vec<Rewrite>) {
        let mut log = Vec::new();
        let simplified = Simplifier::plain().logging(&mut log).normalize(self);
        (simplified, log)
    }

    /// The node `self // rhs`.
    pub fn floor_div(self, rhs: RawExpr) -> RawExpr {
        RawExpr::binary(RawExpr::FloorDiv, self, rhs)
    }

    /// The node `self % rhs`.
    pub fn modulo(self, rhs: RawExpr) -> RawExpr {
        RawExpr::binary(RawExpr::Mod, self, rhs)
    }

    /// The node `Min(self, rhs)`.
    pub fn min(self, rhs: RawExpr) -> RawExpr {
        RawExpr::binary(RawExpr::Min, self, rhs)
    }

    /// The node `Max(self, rhs)`.
    pub fn max(self, rhs: RawExpr) -> RawExpr {
        RawExpr::binary(RawExpr::Max, self, rhs)
    }

    /// The node `self ** exp`.
    pub fn pow(self, exp: u32) -> RawExpr {
        RawExpr::Pow(Box::new(self), exp)
    }

    fn binary(make: fn(Box<RawExpr>, Box<RawExpr>) -> RawExpr, a: RawExpr, b: RawExpr) -> RawExpr {
        make(Box::new(a), Box::new(b))
    }
}

impl Simplifier<'_> {
    /// Builds the canonical form bottom-up through the logging operations.
    fn normalize(&mut self, raw: &RawExpr) -> Expr {
        match raw {
            RawExpr::Int(value) => Expr::int(*value),
            RawExpr::Sym(sym) => Expr::sym(*sym),
            RawExpr::Neg(a) => {
                let a = self.normalize(a);
                self.neg(&a)
            }
            RawExpr::Pow(a, exp) => {
                let a = self.normalize(a);
                self.pow(&a, *exp)
            }
            RawExpr::Add(a, b)
            | RawExpr::Sub(a, b)
            | RawExpr::Mul(a, b)
            | RawExpr::FloorDiv(a, b)
            | RawExpr::Mod(a, b)
            | RawExpr::Min(a, b)
            | RawExpr::Max(a, b)
            | RawExpr::F32Ratio(a, b)
            | RawExpr::F32FloorMul(a, b) => {
                let (a, b) = (self.normalize(a), self.normalize(b));
                match raw {
                    RawExpr::Add(..) => self.add(&a, &b),
                    RawExpr::Sub(..) => self.sub(&a, &b),
                    RawExpr::Mul(..) => self.mul(&a, &b),
                    RawExpr::FloorDiv(..) => self.floor_div(&a, &b),
                    RawExpr::Mod(..) => self.modulo(&a, &b),
                    RawExpr::Min(..) => self.min(&a, &b),
                    RawExpr::F32Ratio(..) => self.f32_ratio(&a, &b),
                    RawExpr::F32FloorMul(..) => self.f32_floor_mul(&a, &b),
                    _ => self.max(&a, &b),
                }
            }
        }
    }
}

impl From<&Expr> for RawExpr {
    /// Expands a canonical form into a tree: `c + t1 + t2 …` with each term
    /// `coeff * a1**e1 * …`. Simplifying it gives the same `Expr` back. The overflow marker
    /// has no tree form and becomes `i64::MAX * 2`, which overflows again.
    fn from(expr: &Expr) -> RawExpr {
        if expr.overflowed {
            return RawExpr::binary(RawExpr::Mul, RawExpr::Int(i64::MAX), RawExpr::Int(2));
        }
        let mut tree = RawExpr::Int(expr.constant);
        for term in &expr.terms {
            let mut product = RawExpr::Int(term.coeff);
            for factor in &term.monomial {
                let base = match &factor.atom {
                    Atom::Sym(sym) => RawExpr::Sym(*sym),
                    Atom::FloorDiv(a, b) => {
                        RawExpr::binary(RawExpr::FloorDiv, (&**a).into(), (&**b).into())
                    }
                    Atom::Mod(a, b) => RawExpr::binary(RawExpr::Mod, (&**a).into(), (&**b).into()),
                    Atom::Min(a, b) => RawExpr::binary(RawExpr::Min, (&**a).into(), (&**b).into()),
                    Atom::Max(a, b) => RawExpr::binary(RawExpr::Max, (&**a).into(), (&**b).into()),
                    Atom::F32Ratio(a, b) => {
                        RawExpr::binary(RawExpr::F32Ratio, (&**a).into(), (&**b).into())
                    }
                    Atom::F32FloorMul(a, b) => {
                        RawExpr::binary(RawExpr::F32FloorMul, (&**a).into(), (&**b).into())
                    }
                };
                let power = if factor.exp == 1 {
                    base
                } else {
                    RawExpr::Pow(Box::new(base), factor.exp)
                };
                product = RawExpr::binary(RawExpr::Mul, product, power);
            }
            tree = RawExpr::binary(RawExpr::Add, tree, product);
        }
        tree
    }
}

/// `a + b` etc. on trees build nodes without simplifying, so shape code can record a
/// formula as written and show its derivation with [`RawExpr::simplify_with_log`].
macro_rules! raw_operator {
    ($trait:ident, $method:ident, $variant:ident) => {
        impl std::ops::$trait for RawExpr {
            type Output = RawExpr;
            fn $method(self, rhs: RawExpr) -> RawExpr {
                RawExpr::binary(RawExpr::$variant, self, rhs)
            }
        }
        impl std::ops::$trait<i64> for RawExpr {
            type Output = RawExpr;
            fn $method(self, rhs: i64) -> RawExpr {
                RawExpr::binary(RawExpr::$variant, self, RawExpr::Int(rhs))
            }
        }
    };
}

raw_operator!(Add, add, Add);
raw_operator!(Sub, sub, Sub);
raw_operator!(Mul, mul, Mul);

impl std::ops::Neg for RawExpr {
    type Output = RawExpr;
    fn neg(self) -> RawExpr {
        RawExpr::Neg(Box::new(self))
    }
}

impl From<i64> for RawExpr {
    fn from(value: i64) -> RawExpr {
        RawExpr::Int(value)
    }
}

impl From<Sym> for RawExpr {
    fn from(sym: Sym) -> RawExpr {
        RawExpr::Sym(sym)
    }
}

/// Precedence of a tree node, lowest first, as in Python.
fn prec(raw: &RawExpr) -> u8 {
    match raw {
        RawExpr::Add(..) | RawExpr::Sub(..) => 1,
        RawExpr::Mul(..) | RawExpr::FloorDiv(..) | RawExpr::Mod(..) => 2,
        RawExpr::Neg(..) => 3,
        RawExpr::Int(value) if *value < 0 => 3,
        RawExpr::Pow(..) => 4,
        RawExpr::Int(_)
        | RawExpr::Sym(_)
        | RawExpr::Min(..)
        | RawExpr::Max(..)
        | RawExpr::F32Ratio(..)
        | RawExpr::F32FloorMul(..) => 5,
    }
}

/// Prints the tree as written, parenthesizing only where Python precedence needs it, so the
/// text parses back to the same tree.
impl fmt::Display for RawExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let child = |node: &RawExpr, min: u8| {
            if prec(node) < min {
                format!("({node})")
            } else {
                node.to_string()
            }
        };
        let own = prec(self);
        match self {
            RawExpr::Int(value) => write!(f, "{value}"),
            RawExpr::Sym(sym) => write!(f, "{sym}"),
            // Left-associative: the right operand needs a strictly higher level.
            RawExpr::Add(a, b) => write!(f, "{} + {}", child(a, own), child(b, own + 1)),
            RawExpr::Sub(a, b) => write!(f, "{} - {}", child(a, own), child(b, own + 1)),
            RawExpr::Mul(a, b) => write!(f, "{}*{}", child(a, own), child(b, own + 1)),
            RawExpr::FloorDiv(a, b) => write!(f, "{}//{}", child(a, own), child(b, own + 1)),
            RawExpr::Mod(a, b) => write!(f, "{} % {}", child(a, own), child(b, own + 1)),
            // `-x**2` is `-(x**2)`, so a power operand needs no parentheses; a negative
            // literal does, or `--3` would read as a double negation of a positive literal.
            RawExpr::Neg(a) => write!(f, "-{}", child(a, own + 1)),
            // `**` binds to the left operand tighter than unary minus: `(-2)**2`.
            RawExpr::Pow(a, exp) => write!(f, "{}**{exp}", child(a, own + 1)),
            RawExpr::Min(a, b) => write!(f, "Min({a}, {b})"),
            RawExpr::Max(a, b) => write!(f, "Max({a}, {b})"),
            RawExpr::F32Ratio(a, b) => write!(f, "F32Ratio({a}, {b})"),
            RawExpr::F32FloorMul(a, b) => write!(f, "F32FloorMul({a}, {b})"),
        }
    }
}
