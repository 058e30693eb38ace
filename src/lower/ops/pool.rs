//! Pooling kernels: one thread per output element, looping over a 2-d window.
//!
//! In: a group rooted at a 2-d pooling op. Out: one `Body::Pool` kernel over `gid` and the
//! window taps `ky`, `kx`. Invariant: taps that fall in the padding are masked out, not read.

use crate::graph::Op;
use crate::lower::LowerError;
use crate::lower::builder::Builder;
use crate::lower::fuse::Group;
use crate::lower::index::{Index, ceil_div, numel};
use crate::lower::kernel::{Body, Bound, MAP_WORKGROUP, Pool};
use crate::symbolic::Expr;

impl Builder<'_> {
    pub(super) fn build_pool(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let Op::Pool {
            kind,
            kernel,
            stride,
            padding,
        } = &root.op
        else {
            unreachable!("build_pool is called for pooling")
        };
        if kernel.len() != 2 {
            return Err(self.node_error(root.id, "only 2-d pooling is supported"));
        }
        let x = root.inputs[0];
        self.begin_kernel();
        let x_shape = self.shape(x);
        let out_shape = self.shape(root.id);
        let rank = x_shape.len();
        let (h, w) = (x_shape[rank - 2].clone(), x_shape[rank - 1].clone());
        let (oh, ow) = (out_shape[rank - 2].clone(), out_shape[rank - 1].clone());
        let len = numel(&out_shape);
        self.set_extents(&[len.clone(), Expr::int(kernel[0]), Expr::int(kernel[1])]);
        let (gid, ky, kx) = (self.var(0), self.var(1), self.var(2));
        let plane_size = &oh * &ow;
        let plane = gid.floor_div(&plane_size);
        let within = gid.modulo(&plane_size);
        let y = within.floor_div(&ow) * stride[0] - padding[0] + &ky;
        let xx = within.modulo(&ow) * stride[1] - padding[1] + &kx;
        let flat = (plane * &h + &y) * &w + &xx;
        let value = self.load(x, &Index::flat(&x_shape, flat))?;
        let inside = if padding.iter().any(|&p| p > 0) {
            vec![
                Bound {
                    expr: self.simplify(&y),
                    limit: h,
                },
                Bound {
                    expr: self.simplify(&xx),
                    limit: w,
                },
            ]
        } else {
            Vec::new()
        };
        let out_index = Index::flat(&out_shape, gid.clone());
        let epilogue = self.epilogue(group, &out_index)?;
        let workgroups = ceil_div(&len, i64::from(MAP_WORKGROUP));
        let pool = Pool {
            kind: *kind,
            len,
            window: [kernel[0], kernel[1]],
            value,
            inside,
            epilogue,
            store: gid,
        };
        self.finish(group, "", Body::Pool(pool), workgroups);
        Ok(())
    }
}
