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
use serde::Serialize;

/// How lowering turns an op's node into kernels: the family of its builder. The op table
/// (`frontend::table`) names each op's family, and the page lists it beside the op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Lowering {
    /// Elementwise: joins the kernel of the op that produces its input as an epilogue, or
    /// starts a map kernel of its own (`map.rs`); an embedding is a map that gathers rows.
    Map,
    /// A view: index arithmetic in the loads of the kernels that read it, no kernel.
    View,
    /// A matrix product (`gemm.rs`): tiled, register-blocked or naive, chosen per call.
    Gemm,
    /// A convolution as one product over channels × window (`conv.rs`).
    Conv,
    /// A reduction over a window per output (`pool.rs`).
    Pool,
    /// One workgroup per row with a tree in workgroup memory (`rows.rs`).
    Rows,
    /// One copy kernel per joined tensor (`cat`).
    Copy,
    /// Rewritten into the ops it stands for before fusion (`decompose.rs`): attention's two
    /// products, its scale and mask, and its row softmax.
    Decomposed,
}

impl Lowering {
    /// The family of `op`'s builder; `None` for what no kernel computes (inputs,
    /// parameters, constants, the output).
    pub fn of(op: &Op) -> Option<Lowering> {
        Some(match op {
            Op::Input { .. } | Op::Param { .. } | Op::Constant { .. } | Op::Output => return None,
            op if op.is_view() => Lowering::View,
            Op::Linear | Op::Matmul => Lowering::Gemm,
            Op::Conv { .. } | Op::ConvTranspose { .. } => Lowering::Conv,
            Op::Pool { .. } => Lowering::Pool,
            Op::Reduce { .. }
            | Op::Softmax { .. }
            | Op::LogSoftmax { .. }
            | Op::LayerNorm { .. } => Lowering::Rows,
            Op::Cat { .. } => Lowering::Copy,
            Op::Attention { .. } => Lowering::Decomposed,
            _ => Lowering::Map,
        })
    }

    /// The family's name as the page and `tailor supported` print it.
    pub fn name(self) -> &'static str {
        match self {
            Lowering::Map => "map (fused elementwise)",
            Lowering::View => "view (no kernel)",
            Lowering::Gemm => "matrix product",
            Lowering::Conv => "convolution",
            Lowering::Pool => "pooling",
            Lowering::Rows => "row reduction",
            Lowering::Copy => "copy",
            Lowering::Decomposed => "decomposed (products and a row softmax)",
        }
    }
}

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
        match Lowering::of(&root.op) {
            Some(Lowering::Gemm) if matches!(root.op, Op::Linear) => self.build_linear(group),
            Some(Lowering::Gemm) => self.build_matmul(group),
            Some(Lowering::Conv) if matches!(root.op, Op::ConvTranspose { .. }) => {
                self.build_conv_transpose(group)
            }
            Some(Lowering::Conv) => self.build_conv(group),
            Some(Lowering::Pool) => self.build_pool(group),
            Some(Lowering::Rows) => self.build_rows(group),
            Some(Lowering::Copy) => match root.op {
                Op::Cat { dim } => self.build_cat(group, dim),
                _ => self.build_map(group),
            },
            Some(Lowering::Map | Lowering::View) | None => self.build_map(group),
            Some(Lowering::Decomposed) => Err(LowerError::Unsupported {
                id: root.id,
                node: root.name.clone(),
                op: root.op.name(),
                reason: "it is rewritten into its ops before fusion (decompose.rs)".into(),
            }),
        }
    }
}
