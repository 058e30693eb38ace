//! Index arithmetic: how a logical element position turns into a buffer offset.
//!
//! In: a position in a tensor of symbolic shape, given as a flat (row-major) number, as one
//! index per dimension, or both. Out: the other form on demand (`ravel`/`unravel`), and the
//! position in a broadcast operand. Invariant: every conversion is exact integer arithmetic
//! valid for any position inside the shape; views therefore never need copies, they only
//! rewrite positions.

use crate::symbolic::Expr;

/// A position in a tensor of shape `shape`, kept in whichever forms are at hand.
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    /// The tensor's sizes.
    pub shape: Vec<Expr>,
    flat: Option<Expr>,
    multi: Option<Vec<Expr>>,
}

impl Index {
    /// The position `flat` in row-major order.
    pub fn flat(shape: &[Expr], flat: Expr) -> Index {
        Index {
            shape: shape.to_vec(),
            flat: Some(flat),
            multi: None,
        }
    }

    /// The position with one index per dimension.
    pub fn multi(shape: &[Expr], multi: Vec<Expr>) -> Index {
        debug_assert_eq!(shape.len(), multi.len(), "one index per dimension");
        Index {
            shape: shape.to_vec(),
            flat: None,
            multi: Some(multi),
        }
    }

    /// A position known in both forms (the caller guarantees they agree).
    pub fn both(shape: &[Expr], flat: Expr, multi: Vec<Expr>) -> Index {
        debug_assert_eq!(shape.len(), multi.len(), "one index per dimension");
        Index {
            shape: shape.to_vec(),
            flat: Some(flat),
            multi: Some(multi),
        }
    }

    /// The row-major position.
    pub fn to_flat(&self) -> Expr {
        match (&self.flat, &self.multi) {
            (Some(flat), _) => flat.clone(),
            (None, Some(multi)) => ravel(multi, &self.shape),
            (None, None) => unreachable!("an index holds at least one form"),
        }
    }

    /// One index per dimension.
    pub fn to_multi(&self) -> Vec<Expr> {
        match (&self.multi, &self.flat) {
            (Some(multi), _) => multi.clone(),
            (None, Some(flat)) => unravel(flat, &self.shape),
            (None, None) => unreachable!("an index holds at least one form"),
        }
    }

    /// The same element seen through a reshape to `shape` (row-major order is kept).
    pub fn reshaped(&self, shape: &[Expr]) -> Index {
        Index::flat(shape, self.to_flat())
    }

    /// The position read from an operand of shape `operand` when this position is in the
    /// broadcast result: dimensions are aligned on the right, size-1 dimensions read index 0.
    pub fn broadcast_to(&self, operand: &[Expr]) -> Index {
        if operand == self.shape.as_slice() {
            return self.clone();
        }
        let multi = self.to_multi();
        let skip = multi.len() - operand.len();
        let indices = operand
            .iter()
            .enumerate()
            .map(|(d, size)| {
                if size.as_int() == Some(1) {
                    Expr::int(0)
                } else {
                    multi[skip + d].clone()
                }
            })
            .collect();
        Index::multi(operand, indices)
    }
}

/// Row-major position of `multi` in `shape`: `((i0*n1 + i1)*n2 + i2)…`.
pub fn ravel(multi: &[Expr], shape: &[Expr]) -> Expr {
    multi
        .iter()
        .zip(shape)
        .fold(Expr::int(0), |acc, (index, size)| {
            acc * size.clone() + index.clone()
        })
}

/// Indices of row-major position `flat` in `shape`. The outermost index is `flat // rest`
/// without a modulo, because `flat` is inside the shape.
pub fn unravel(flat: &Expr, shape: &[Expr]) -> Vec<Expr> {
    let mut indices = vec![Expr::int(0); shape.len()];
    let mut rest = flat.clone();
    for d in (0..shape.len()).rev() {
        if d == 0 {
            indices[0] = rest.clone();
        } else {
            indices[d] = rest.modulo(&shape[d]);
            rest = rest.floor_div(&shape[d]);
        }
    }
    indices
}

/// The number of elements of `shape`.
pub fn numel(shape: &[Expr]) -> Expr {
    shape
        .iter()
        .fold(Expr::int(1), |acc, size| acc * size.clone())
}

/// `ceil(len / per)` for a positive constant `per`.
pub fn ceil_div(len: &Expr, per: i64) -> Expr {
    (len.clone() + (per - 1)).floor_div(&Expr::int(per))
}
