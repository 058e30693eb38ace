//! Matrix-product kernels: `linear` and `matmul` (with broadcast batches and vector
//! operands) as one tiled `Gemm`, and the bias and dispatch every product shares with
//! convolution (`conv.rs`).
//!
//! In: a group rooted at a linear or matmul. Out: one `Body::Gemm` kernel over index
//! variables `bat`, `row`, `col`, `kk`. Invariant: `acc` is the dot product over `kk` of the
//! `a` and `b` loads at (`bat`, `row`, `col`); the bias and the fused chain are applied to it
//! in the epilogue, once per output element.

use crate::graph::{BinaryOp, NodeId};
use crate::lower::LowerError;
use crate::lower::builder::Builder;
use crate::lower::fuse::Group;
use crate::lower::index::{Index, numel, unravel};
use crate::lower::kernel::{Body, Gemm, GemmStrategy, Value};
use crate::symbolic::Expr;

impl Builder<'_> {
    /// The accumulator plus the bias node (if any) read at output column `col`, through any
    /// view it is (a chunk of a packed bias, say).
    pub(super) fn plus_bias(
        &mut self,
        bias: Option<NodeId>,
        col: &Expr,
    ) -> Result<Value, LowerError> {
        let bias = match bias {
            Some(bias) => {
                let shape = self.shape(bias);
                Some(self.load(bias, &Index::multi(&shape, vec![col.clone()]))?)
            }
            None => None,
        };
        Ok(acc_plus(bias))
    }

    pub(super) fn build_linear(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let (x, weight, bias) = (root.inputs[0], root.inputs[1], root.inputs.get(2).copied());
        self.begin_kernel();
        let x_shape = self.shape(x);
        let w_shape = self.shape(weight);
        let out_shape = self.shape(root.id);
        let lead = &x_shape[..x_shape.len() - 1];
        let (m, n, k) = (
            numel(lead),
            w_shape[0].clone(),
            x_shape[x_shape.len() - 1].clone(),
        );
        self.set_extents(&[Expr::int(1), m.clone(), n.clone(), k.clone()]);
        let (row, col, kk) = (self.var(1), self.var(2), self.var(3));
        let a = self.load(x, &Index::flat(&x_shape, &row * &k + &kk))?;
        let b = self.load(weight, &Index::multi(&w_shape, vec![col.clone(), kk]))?;
        let mut out_multi = unravel(&row, lead);
        out_multi.push(col.clone());
        let flat = &row * &n + &col;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let acc = self.plus_bias(bias, &col)?;
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&flat);
        self.finish_gemm(group, Expr::int(1), m, n, k, a, b, epilogue, store, false);
        Ok(())
    }

    #[expect(clippy::too_many_arguments, reason = "the fields of one Gemm, named")]
    pub(super) fn finish_gemm(
        &mut self,
        group: &Group,
        batch: Expr,
        m: Expr,
        n: Expr,
        k: Expr,
        a: Value,
        b: Value,
        epilogue: Value,
        store: Expr,
        gathers_windows: bool,
    ) {
        let gemm = Gemm {
            strategy: GemmStrategy::Tiled,
            tile_n: Gemm::tile_columns(&n),
            batch,
            m,
            n,
            k,
            a,
            b,
            epilogue,
            store,
            gathers_windows,
        };
        let workgroups = gemm.tiled_workgroups();
        self.finish(group, "", Body::Gemm(Box::new(gemm)), workgroups);
    }

    pub(super) fn build_matmul(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let (a_node, b_node) = (root.inputs[0], root.inputs[1]);
        self.begin_kernel();
        let a_shape = self.shape(a_node);
        let b_shape = self.shape(b_node);
        let out_shape = self.shape(root.id);
        let (a_vec, b_vec) = (a_shape.len() == 1, b_shape.len() == 1);
        let a_rank = if a_vec { 2 } else { a_shape.len() };
        let b_rank = if b_vec { 2 } else { b_shape.len() };
        let batch_shape = out_shape[..a_rank.max(b_rank) - 2].to_vec();
        let m = if a_vec {
            Expr::int(1)
        } else {
            a_shape[a_shape.len() - 2].clone()
        };
        let k = a_shape[a_shape.len() - 1].clone();
        let n = if b_vec {
            Expr::int(1)
        } else {
            b_shape[b_shape.len() - 1].clone()
        };
        let batch = numel(&batch_shape);
        self.set_extents(&[batch.clone(), m.clone(), n.clone(), k.clone()]);
        let (bat, row, col, kk) = (self.var(0), self.var(1), self.var(2), self.var(3));
        let bat_index = Index::flat(&batch_shape, bat.clone());
        let batch_part =
            |shape: &[Expr]| bat_index.broadcast_to(&shape[..shape.len() - 2]).to_multi();
        let a_index = if a_vec {
            Index::multi(&a_shape, vec![kk.clone()])
        } else {
            let mut multi = batch_part(&a_shape);
            multi.extend([row.clone(), kk.clone()]);
            Index::multi(&a_shape, multi)
        };
        let b_index = if b_vec {
            Index::multi(&b_shape, vec![kk.clone()])
        } else {
            let mut multi = batch_part(&b_shape);
            multi.extend([kk.clone(), col.clone()]);
            Index::multi(&b_shape, multi)
        };
        let a = self.load(a_node, &a_index)?;
        let b = self.load(b_node, &b_index)?;
        let mut out_multi = bat_index.to_multi();
        if !a_vec {
            out_multi.push(row.clone());
        }
        if !b_vec {
            out_multi.push(col.clone());
        }
        let flat = (&bat * &m + &row) * &n + &col;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let epilogue = self.epilogue(group, &out_index)?;
        let store = self.simplify(&flat);
        self.finish_gemm(group, batch, m, n, k, a, b, epilogue, store, false);
        Ok(())
    }
}

/// The accumulator plus `bias`, if there is one.
pub(super) fn acc_plus(bias: Option<Value>) -> Value {
    match bias {
        Some(bias) => Value::Binary(BinaryOp::Add, Box::new(Value::Acc), Box::new(bias)),
        None => Value::Acc,
    }
}
