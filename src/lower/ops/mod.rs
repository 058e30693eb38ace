//! Per-op kernel builders: one file per family of compute ops, each an `impl Builder`
//! block that turns a fusion group rooted at such an op into its kernel.
//!
//! In: a `Group` — the root op, the elementwise chain fused after it, a folded BatchNorm.
//! Out: one kernel pushed onto the builder (for `cat`, one per joined tensor) whose
//! epilogue applies the chain before the single store of the group's tail.
//! Invariant: a builder reads only what `Builder::load` reaches (stored buffers and views
//! over them) and writes only the group's result buffer.

mod conv;
mod gemm;
mod map;
mod pool;
mod rows;

use super::LowerError;
use super::builder::Builder;
use super::fuse::Group;
use crate::graph::Op;

impl Builder<'_> {
    pub(super) fn build_group(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        if group.members.len() > 1 {
            let names: Vec<&str> = group.members[1..]
                .iter()
                .map(|&n| self.graph.node(n).name.as_str())
                .collect();
            self.notes
                .push(format!("fused {} into {}", names.join(", "), root.name));
        }
        match &root.op {
            Op::Linear => self.build_linear(group),
            Op::Matmul => self.build_matmul(group),
            Op::Conv { .. } => self.build_conv(group),
            Op::ConvTranspose { .. } => self.build_conv_transpose(group),
            Op::Pool { .. } => self.build_pool(group),
            Op::Reduce { .. }
            | Op::Softmax { .. }
            | Op::LogSoftmax { .. }
            | Op::LayerNorm { .. } => self.build_rows(group),
            Op::Cat { dim } => self.build_cat(group, *dim),
            _ => self.build_map(group),
        }
    }
}
