//! Row kernels: reductions (sum, mean, amax), softmax, log-softmax and layer norm, one
//! workgroup per row of the input with a tree in workgroup memory.
//!
//! In: a group rooted at a reduction, a (log-)softmax or a layer norm. Out: one `Body::Rows`
//! kernel over `row` and the element `e` within it. Invariant: a row is the set of elements
//! the op combines — the reduced dims, the softmax dim, the normalised trailing dims —
//! addressed through the input's own layout, so no transpose is materialised.

use crate::graph::{self, BinaryOp, Op};
use crate::lower::LowerError;
use crate::lower::builder::Builder;
use crate::lower::fuse::Group;
use crate::lower::index::{Index, numel, unravel};
use crate::lower::kernel::{Body, RowOp, Rows, Value};
use crate::symbolic::Expr;

impl Builder<'_> {
    /// Reductions, softmax, log-softmax and layer norm: one workgroup per row.
    pub(super) fn build_rows(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let x = root.inputs[0];
        self.begin_kernel();
        let x_shape = self.shape(x);
        let out_shape = self.shape(root.id);
        let (op, rows, len) = row_extents(&root.op, &x_shape);
        self.set_extents(&[rows.clone(), len.clone()]);
        let (row, e) = (self.var(0), self.var(1));
        let in_index = row_index(&root.op, &x_shape, &row, &e, &len);
        let input = self.load(x, &in_index)?;
        let out_index = if op.is_reduction() {
            Index::flat(&out_shape, row.clone())
        } else {
            in_index.clone()
        };
        let mut acc = Value::Acc;
        if let (Op::LayerNorm { .. }, [_, weight, bias]) = (&root.op, root.inputs.as_slice()) {
            let w_shape = self.shape(*weight);
            let b_shape = self.shape(*bias);
            let w = self.load(*weight, &Index::flat(&w_shape, e.clone()))?;
            let b = self.load(*bias, &Index::flat(&b_shape, e.clone()))?;
            acc = Value::Binary(
                BinaryOp::Add,
                Box::new(Value::Binary(BinaryOp::Mul, Box::new(acc), Box::new(w))),
                Box::new(b),
            );
        }
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&out_index.to_flat());
        let body = Body::Rows(Rows {
            op,
            rows: rows.clone(),
            len,
            input,
            epilogue,
            store,
        });
        self.finish(group, "", body, rows);
        Ok(())
    }
}

/// What a row op computes, its number of rows and the elements per row.
fn row_extents(op: &Op, x_shape: &[Expr]) -> (RowOp, Expr, Expr) {
    let rank = x_shape.len();
    match op {
        Op::Reduce { kind, dims, .. } => {
            let (kept, reduced) = split_dims(x_shape, dims);
            let op = match kind {
                graph::ReduceKind::Sum => RowOp::Sum,
                graph::ReduceKind::Mean => RowOp::Mean,
                graph::ReduceKind::Amax => RowOp::Max,
            };
            (op, numel(&kept), numel(&reduced))
        }
        Op::Softmax { dim } | Op::LogSoftmax { dim } => {
            let rows = numel(&x_shape[..*dim]) * numel(&x_shape[dim + 1..]);
            let op = if matches!(op, Op::Softmax { .. }) {
                RowOp::Softmax
            } else {
                RowOp::LogSoftmax
            };
            (op, rows, x_shape[*dim].clone())
        }
        Op::LayerNorm {
            normalized_dims,
            eps,
        } => {
            let split = rank - normalized_dims;
            let op = RowOp::LayerNorm { eps: *eps as f32 };
            (op, numel(&x_shape[..split]), numel(&x_shape[split..]))
        }
        _ => unreachable!("row ops only"),
    }
}

/// The input position of element `e` of row `row`.
fn row_index(op: &Op, x_shape: &[Expr], row: &Expr, e: &Expr, len: &Expr) -> Index {
    let rank = x_shape.len();
    match op {
        Op::Reduce { dims, .. } => {
            let trailing = dims
                .iter()
                .enumerate()
                .all(|(i, &d)| d == rank - dims.len() + i);
            if trailing {
                return Index::flat(x_shape, row * len + e);
            }
            let (kept, reduced) = split_dims(x_shape, dims);
            let mut kept_idx = unravel(row, &kept).into_iter();
            let mut red_idx = unravel(e, &reduced).into_iter();
            let multi = (0..rank)
                .map(|d| {
                    let source = if dims.contains(&d) {
                        &mut red_idx
                    } else {
                        &mut kept_idx
                    };
                    source.next().expect("one index per dimension")
                })
                .collect();
            Index::multi(x_shape, multi)
        }
        Op::Softmax { dim } | Op::LogSoftmax { dim } => {
            let inner = numel(&x_shape[dim + 1..]);
            let flat = (row.floor_div(&inner) * len + e) * &inner + row.modulo(&inner);
            Index::flat(x_shape, flat)
        }
        _ => Index::flat(x_shape, row * len + e),
    }
}

/// The sizes of the kept and of the reduced dimensions.
fn split_dims(shape: &[Expr], dims: &[usize]) -> (Vec<Expr>, Vec<Expr>) {
    let kept = (0..shape.len())
        .filter(|d| !dims.contains(d))
        .map(|d| shape[d].clone())
        .collect();
    let reduced = dims.iter().map(|&d| shape[d].clone()).collect();
    (kept, reduced)
}
