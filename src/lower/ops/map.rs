//! Map kernels, one thread per output element: elementwise roots (an op that could not
//! join a producer's kernel), embedding lookups, copies of returned views or leaves, and
//! `cat` (one copy kernel per joined tensor, each writing its slab of the output).
//!
//! In: a group whose root is none of the compute ops of the sibling files. Out: `Body::Map`
//! kernels. Invariant: thread `gid` computes and stores output element `gid` (for `cat`, the
//! `gid`-th element of its part, at that part's offset along the joined dimension).

use crate::graph::{NodeId, Op};
use crate::lower::LowerError;
use crate::lower::builder::Builder;
use crate::lower::fuse::Group;
use crate::lower::index::{Index, ceil_div, numel};
use crate::lower::kernel::{Body, MAP_WORKGROUP, Value};
use crate::symbolic::Expr;

impl Builder<'_> {
    /// Elementwise roots, embedding lookups and copies of returned views or leaves.
    pub(super) fn build_map(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = group.root();
        self.begin_kernel();
        let shape = self.shape(group.tail());
        let len = numel(&shape);
        self.set_extents(std::slice::from_ref(&len));
        let gid = self.var(0);
        let index = Index::flat(&shape, gid.clone());
        let this = self.graph.node(root);
        let acc = match &this.op {
            op if op.is_elementwise() || matches!(op, Op::BatchNorm { .. }) => {
                self.elementwise(root, &index, None)?
            }
            Op::Embedding => self.embedding(root, &gid)?,
            _ => self.load(root, &index)?,
        };
        let value = self.epilogue(group, &index)?.substitute_acc(&acc);
        let workgroups = ceil_div(&len, i64::from(MAP_WORKGROUP));
        let body = Body::Map {
            len,
            value,
            store: gid,
        };
        self.finish(group, "", body, workgroups);
        Ok(())
    }

    fn embedding(&mut self, node: NodeId, gid: &Expr) -> Result<Value, LowerError> {
        let this = self.graph.node(node);
        let (indices, table) = (this.inputs[0], this.inputs[1]);
        let table_shape = self.shape(table);
        if !matches!(
            self.graph.node(table).op,
            Op::Param { .. } | Op::Constant { .. }
        ) {
            return Err(self.node_error(node, "the embedding table must be a parameter"));
        }
        let width = table_shape[1].clone();
        let row = self.simplify(&gid.floor_div(&width));
        let col = self.simplify(&gid.modulo(&width));
        let indices_shape = self.shape(indices);
        let index = self.load(indices, &Index::flat(&indices_shape, row))?;
        Ok(Value::Embed {
            index: Box::new(index),
            table: self.leaf_buffer(table)?,
            rows: table_shape[0].clone(),
            width,
            col,
        })
    }

    pub(super) fn build_cat(&mut self, group: &Group, dim: usize) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let mut offset = Expr::int(0);
        for (part_idx, &part) in root.inputs.iter().enumerate() {
            self.begin_kernel();
            let out_shape = self.shape(root.id);
            let part_shape = self.shape(part);
            let len = numel(&part_shape);
            self.set_extents(std::slice::from_ref(&len));
            let gid = self.var(0);
            let part_index = Index::flat(&part_shape, gid);
            let mut out_multi = part_index.to_multi();
            out_multi[dim] = &out_multi[dim] + &offset;
            let out_index = Index::multi(&out_shape, out_multi);
            let acc = self.load(part, &part_index)?;
            let value = self.epilogue(group, &out_index)?.substitute_acc(&acc);
            let store = self.simplify(&out_index.to_flat());
            let workgroups = ceil_div(&len, i64::from(MAP_WORKGROUP));
            let body = Body::Map { len, value, store };
            self.finish(group, &format!("_part{part_idx}"), body, workgroups);
            // The graph's own size, not `part_shape`'s: that may name a derived size of this
            // kernel, which the next part's kernel does not have.
            offset = offset + &self.graph.shape(part)[dim];
        }
        Ok(())
    }
}
