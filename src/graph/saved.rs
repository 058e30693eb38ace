//! Which of a graph's tensors autograd saves for backward: what AOTAutograd's partitioner
//! keeps between the forward and the backward graph when a compiled call runs with
//! gradients enabled.
//!
//! In: a captured graph, which parameters and arguments require grad, and whether a
//! reshape to the tensor's own shape counts as the tensor (it does under Inductor, not
//! under `aot_eager`; both save a real view of an input as the view: measured in
//! `tests/data/scripts/propagated.py`). Out: the graph's `Input` nodes that are saved.
//! This matters to a learner because AOTAutograd's runtime wrapper stamps each saved input
//! with its dynamic dims (`_dynamo_propagated_dynamic_indices`), and the next compile that
//! sees the same tensor makes those dims dynamic, whatever its wrapper's `dynamic=`.
//! Invariant: an input is saved only when some gradient that is computed reads it: an
//! input that nothing requiring grad meets is never saved.

use super::{BinaryOp, Graph, NodeId, Op};
use std::collections::BTreeSet;

/// Which operand values an op's backward reads, each as (operand read, operand whose
/// gradient reads it). An op not in the table reads each operand for that operand's own
/// gradient only (`relu`'s mask, `exp`'s input): a tensor that requires no grad is then
/// never read.
fn backward_reads(op: &Op) -> &'static [(usize, usize)] {
    match op {
        // y = x·Wᵀ (or a convolution): dW reads x, dx reads W.
        Op::Linear | Op::Matmul | Op::Conv { .. } | Op::ConvTranspose { .. } => &[(0, 1), (1, 0)],
        Op::Binary(BinaryOp::Mul) => &[(0, 1), (1, 0)],
        // d(a/b)/da = 1/b; d(a/b)/db = -a/b².
        Op::Binary(BinaryOp::Div) => &[(1, 0), (0, 1), (1, 1)],
        Op::Binary(BinaryOp::Pow | BinaryOp::Maximum | BinaryOp::Minimum) => {
            &[(0, 0), (1, 0), (0, 1), (1, 1)]
        }
        Op::Binary(BinaryOp::Add | BinaryOp::Sub) => &[],
        // The condition picks which branch's gradient is the incoming one.
        Op::Where => &[(0, 1), (0, 2)],
        // The weight's gradient reads the normalised input; the input's reads the weight.
        Op::LayerNorm { .. } => &[(0, 0), (0, 1), (1, 0)],
        // Inputs: x, running_mean, running_var, weight, bias (eval mode: the statistics are
        // constants).
        Op::BatchNorm { .. } => &[(0, 3), (1, 3), (2, 3), (2, 0), (3, 0)],
        // The table's gradient scatters into the rows the indices name.
        Op::Embedding => &[(0, 1)],
        // Each of q, k and v's gradients reads the other two (and the weights it recomputes).
        Op::Attention { .. } => &[
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 0),
            (1, 1),
            (1, 2),
            (2, 0),
            (2, 1),
            (2, 2),
        ],
        _ => &[],
    }
}

/// Whether an op's result carries a gradient from its operands: comparisons, casts and
/// ops without operands do not.
fn differentiable(op: &Op) -> bool {
    !matches!(
        op,
        Op::Binary(
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        ) | Op::Cast { .. }
            | Op::Arange { .. }
            | Op::Full { .. }
            | Op::Random { .. }
    )
}

/// What requires grad in a call: parameters by dotted path, and arguments by name.
pub struct RequiresGrad<'a> {
    /// Parameter paths whose `requires_grad` is set (`layers.0.weight`).
    pub params: &'a [String],
    /// Tensor arguments whose `requires_grad` is set.
    pub args: &'a [String],
}

/// The `Input` nodes of `graph` that autograd saves for backward, in the graph's input
/// order: those a gradient reads directly, or, with `same_shape_reshape_is_input`, through
/// reshapes to their own shape.
pub fn saved_inputs(
    graph: &Graph,
    requires: &RequiresGrad<'_>,
    same_shape_reshape_is_input: bool,
) -> Vec<NodeId> {
    let mut requires_grad = vec![false; graph.nodes.len()];
    let mut saved = BTreeSet::new();
    for node in &graph.nodes {
        let at = node.id.index();
        requires_grad[at] = match &node.op {
            Op::Input { name } => requires.args.contains(name),
            Op::Param { path, .. } => requires.params.contains(path),
            Op::Constant { .. } | Op::Output => false,
            op => differentiable(op) && node.inputs.iter().any(|i| requires_grad[i.index()]),
        };
        for &(read, gradient_of) in backward_reads(&node.op) {
            if let (Some(read), Some(of)) = (node.inputs.get(read), node.inputs.get(gradient_of))
                && requires_grad[of.index()]
            {
                saved.insert(*read);
            }
        }
    }
    let mut inputs = BTreeSet::new();
    let same_shape_reshape_of = |id: NodeId| {
        let node = &graph.nodes[id.index()];
        node.inputs.first().copied().filter(|base| {
            same_shape_reshape_is_input
                && node.op == Op::Reshape
                && graph.nodes[base.index()].shape == node.shape
        })
    };
    for mut id in saved {
        while let Some(base) = same_shape_reshape_of(id) {
            id = base;
        }
        if matches!(graph.nodes[id.index()].op, Op::Input { .. }) {
            inputs.insert(id);
        }
    }
    graph
        .inputs
        .iter()
        .copied()
        .filter(|id| inputs.contains(id))
        .collect()
}
