//! The arithmetic operators on [`Expr`], so shape code can write `(&len - 3) * 2 + 1`.
//!
//! In: expressions (owned or borrowed) and `i64` constants on either side. Out: canonical
//! expressions.
//!
//! Invariant: each operator is the polynomial operation of the simplifier, so results are
//! canonical, and overflowing coefficients give the overflow marker instead of panicking.

use std::ops::{Add, Mul, Neg, Sub};

use super::Expr;
use super::simplify::{add_poly, mul_poly, scale_poly};

fn sub_poly(a: &Expr, b: &Expr) -> Expr {
    add_poly(a, &scale_poly(b, -1))
}

/// Implements `$trait` for every owned/borrowed pairing of `Expr`, and with an `i64` on
/// either side (`2 * &len`, `len - 1`), all delegating to `$poly(&Expr, &Expr)`.
macro_rules! binary_operator {
    ($trait:ident, $method:ident, $poly:ident) => {
        impl $trait<&Expr> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                $poly(self, rhs)
            }
        }
        impl $trait<Expr> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                $poly(self, &rhs)
            }
        }
        impl $trait<&Expr> for Expr {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                $poly(&self, rhs)
            }
        }
        impl $trait<Expr> for Expr {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                $poly(&self, &rhs)
            }
        }
        impl $trait<i64> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: i64) -> Expr {
                $poly(self, &Expr::int(rhs))
            }
        }
        impl $trait<i64> for Expr {
            type Output = Expr;
            fn $method(self, rhs: i64) -> Expr {
                $poly(&self, &Expr::int(rhs))
            }
        }
        impl $trait<Expr> for i64 {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                $poly(&Expr::int(self), &rhs)
            }
        }
        impl $trait<&Expr> for i64 {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                $poly(&Expr::int(self), rhs)
            }
        }
    };
}

binary_operator!(Add, add, add_poly);
binary_operator!(Sub, sub, sub_poly);
binary_operator!(Mul, mul, mul_poly);

impl Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        scale_poly(self, -1)
    }
}

impl Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        scale_poly(&self, -1)
    }
}
