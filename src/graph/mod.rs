//! The captured graph: the FX-like IR that capture produces and every later stage reads.
//!
//! Input: nodes appended by `frontend::capture` in program order. Output: a `Graph` whose
//! nodes each carry their symbolic `Shape`. Invariant: a node's inputs come before it
//! (the arena order is a topological order), and every shape is already simplified under
//! the `ShapeEnv` replacements in force when capture finished.
//!
//! The ops are `op.rs` (each op's scalar maths with it: `UnaryOp::apply`, `BinaryOp::apply`,
//! a reduction's identity, step and finish) and `numerics.rs` (the row normalisations, the
//! embedding index rule, random values): the CPU reference (`eval`) and the CPU backend
//! (`runtime::cpu`) both call these, so the two can differ only in how lowering and fusion
//! arrange the work, never in the maths. `saved.rs` says which inputs autograd would save
//! for backward (what AOTAutograd stamps dynamic dims on).

mod budget;
pub mod dtype;
mod eval;
mod holder;
mod numerics;
mod op;
mod print;
mod saved;
mod serial;

pub use budget::{
    DEFAULT_MEMORY_BUDGET, bytes_of, human_bytes, max_elements, memory_budget, parse_bytes,
    set_memory_budget,
};
pub use dtype::{DType, DTypeError};
pub use holder::Holder;
pub use numerics::{
    embedding_row, layer_norm_row, log_softmax_row, nearest_source, pcg_hash, random_value,
    softmax_row,
};
pub use op::{
    AttentionMask, BinaryOp, Init, Op, PoolKind, RandomKind, ReduceKind, Scalar, UnaryOp,
};
pub use saved::{RequiresGrad, saved_inputs};

pub use eval::{
    EvalError, Tensor, check_embedding_ids, element_count, eval, numel, random_inputs, seed_of,
};

use crate::symbolic::{Bindings, Expr};
use serde::Serialize;

/// A source position, 1-based, as editors and Python tracebacks show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    /// Line number, starting at 1.
    pub line: u32,
    /// Column (in characters), starting at 1.
    pub col: u32,
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, col {}", self.line, self.col)
    }
}

/// The symbolic sizes of a tensor, outermost dimension first.
pub type Shape = Vec<Expr>;

/// Formats a shape as `[s0, 64]`.
pub fn shape_to_string(shape: &[Expr]) -> String {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// Index of a node in its `Graph`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The position of the node in the graph's arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One step of the program.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Node {
    /// Its id (position in the arena).
    pub id: NodeId,
    /// A readable unique name (`linear`, `linear_1`, `x`), FX style.
    pub name: String,
    /// What it computes.
    pub op: Op,
    /// Operand tensors.
    pub inputs: Vec<NodeId>,
    /// Symbolic output shape (empty for `Output`).
    #[serde(serialize_with = "crate::graph::serial::serialize_shape")]
    pub shape: Shape,
    /// Element type (`float32` for `Output`).
    pub dtype: DType,
    /// Where in the source the op was called; `None` for inputs and parameters.
    pub span: Option<Span>,
}

/// Binds each dim of `shape` that is a plain symbol to its size in `sizes`.
pub fn bind_sizes(shape: &[Expr], sizes: &[i64], bindings: &mut Bindings) {
    for (dim, &size) in shape.iter().zip(sizes) {
        if let Some(sym) = dim.as_sym() {
            bindings.set(sym, size);
        }
    }
}

/// A captured program: a topologically ordered arena of nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Graph {
    /// All nodes; inputs of a node always precede it.
    pub nodes: Vec<Node>,
    /// The `Input` nodes, in the function's parameter order.
    pub inputs: Vec<NodeId>,
    /// The int arguments, in parameter order, each as the size expression it was traced
    /// as (a symbol under automatic dynamic, else a constant): what a call binds them from.
    pub int_inputs: Vec<(String, Expr)>,
    /// The `Output` node, once capture finished.
    pub output: Option<NodeId>,
    /// How `forward`'s return value is made of the outputs.
    pub returned: Returned,
    /// The tensors the function read without receiving them, in the order it met them.
    pub lifted: Vec<Lifted>,
    /// The node names in use, and per name hint the next suffix to try: naming a node is
    /// constant time, so a graph of N nodes is built in time linear in N.
    #[serde(skip)]
    names: NameTable,
}

/// The names a graph's nodes use, for FX-style unique names (`linear`, `linear_1`, …).
#[derive(Clone, Debug, Default, PartialEq)]
struct NameTable {
    taken: std::collections::HashSet<String>,
    next_suffix: std::collections::HashMap<String, usize>,
}

impl NameTable {
    /// `hint` if unused, else `hint_i` for the smallest unused `i >= 1` (names are never
    /// freed, so the smallest is at or after the last one given for this hint).
    fn unique(&mut self, hint: &str) -> String {
        if self.taken.insert(hint.to_string()) {
            return hint.to_string();
        }
        let next = self.next_suffix.entry(hint.to_string()).or_insert(1);
        loop {
            let name = format!("{hint}_{next}");
            *next += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// A tensor a function reads without receiving it (a module-level tensor, a module's plain
/// tensor attribute), which Dynamo lifts into the graph as an input of its own. Tailor keeps
/// it a `Constant` node, whose values it takes at capture, so its sizes never change; under
/// `dynamic=True` the node's shape is symbolic all the same (`G['W'].size()[1]` is a symbol of
/// its own, or duck-sized to an earlier one), and a call binds those symbols from `sizes`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lifted {
    /// Its `Constant` node.
    pub node: NodeId,
    /// Where it is read from.
    pub holder: Holder,
    /// Its sizes.
    pub sizes: Vec<i64>,
}

/// An argument as a function was traced with: a tensor of a symbolic shape, an int (a
/// constant, or a symbol when it is dynamic), or a bool (always a constant).
#[derive(Clone, Debug, PartialEq)]
pub enum TracedArg {
    /// A tensor of this shape and dtype.
    Tensor(Shape, DType),
    /// A Python `int`.
    Int(Expr),
    /// A Python `bool`.
    Bool(bool),
    /// A Python `float` seen as `value`: a constant, or `symbolic` (the graph then has a
    /// 0-dimensional input of its name, which each call fills with its value).
    Float {
        /// The value traced.
        value: f64,
        /// Whether it is a symbol.
        symbolic: bool,
    },
}

/// The shape of what `forward` returned: one tensor, or a structure of tuples, lists and
/// dicts whose leaves are outputs (by position in the `Output` node) or `None` (nanoGPT's
/// `return logits, None`; an LSTM's `out, (h, c)`; a backbone's dict of feature maps), the
/// pytree Dynamo flattens into the graph's outputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub enum Returned {
    /// A single tensor, the one output.
    #[default]
    Tensor,
    /// A structure holding the outputs.
    Tree(ReturnedItem),
}

/// One item of a returned structure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ReturnedItem {
    /// Output number `n`.
    Output(usize),
    /// `None`.
    None,
    /// A tuple of items.
    Tuple(Vec<ReturnedItem>),
    /// A list of items.
    List(Vec<ReturnedItem>),
    /// A dict of items by string key, in insertion order.
    Dict(Vec<(String, ReturnedItem)>),
}

impl Graph {
    /// Binds the symbols of the lifted tensors' shapes to their sizes, which every call
    /// binds besides its arguments' (the values of duck-sized ones agree: guards check it).
    pub fn bind_lifted(&self, bindings: &mut Bindings) {
        for lifted in &self.lifted {
            bind_sizes(self.shape(lifted.node), &lifted.sizes, bindings);
        }
    }

    /// The sizes of `node` when it is a lifted tensor.
    pub fn lifted_sizes(&self, node: NodeId) -> Option<&[i64]> {
        self.lifted
            .iter()
            .find(|lifted| lifted.node == node)
            .map(|lifted| lifted.sizes.as_slice())
    }

    /// Appends a node and returns its id; `name_hint` gets a `_N` suffix if taken.
    pub fn push(
        &mut self,
        name_hint: &str,
        op: Op,
        inputs: Vec<NodeId>,
        shape: Shape,
        span: Option<Span>,
    ) -> NodeId {
        let operands: Vec<DType> = inputs.iter().map(|&i| self.node(i).dtype).collect();
        // An op whose operands PyTorch would refuse is refused by the frontend before it is
        // pushed (`dtype::result` there, with the call's span); a graph built by hand that
        // still mixes them computes in float32.
        let dtype = dtype::result(&op, &operands).unwrap_or_default();
        self.push_typed(name_hint, op, inputs, shape, span, dtype)
    }

    /// `push` with the node's dtype given: inputs, and what Python chose (`arange`'s
    /// integers, a `dtype=` argument, a float scalar making an integer tensor float).
    pub fn push_typed(
        &mut self,
        name_hint: &str,
        op: Op,
        inputs: Vec<NodeId>,
        shape: Shape,
        span: Option<Span>,
        dtype: DType,
    ) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        let name = self.names.unique(name_hint);
        if matches!(op, Op::Input { .. }) {
            self.inputs.push(id);
        }
        if matches!(op, Op::Output) {
            self.output = Some(id);
        }
        self.nodes.push(Node {
            id,
            name,
            op,
            inputs,
            shape,
            span,
            dtype,
        });
        id
    }

    /// The dotted paths of the parameters and buffers the graph reads, in node order.
    pub fn param_paths(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|node| match &node.op {
                Op::Param { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect()
    }

    /// The dtypes of the returned tensors, in order.
    pub fn output_dtypes(&self) -> Vec<DType> {
        self.output
            .map(|id| {
                let output = self.node(id);
                output.inputs.iter().map(|&i| self.node(i).dtype).collect()
            })
            .unwrap_or_default()
    }

    /// The node with this id.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The shape of a node.
    pub fn shape(&self, id: NodeId) -> &Shape {
        &self.nodes[id.index()].shape
    }

    /// The returned tensors, in order.
    pub fn outputs(&self) -> &[NodeId] {
        self.output.map_or(&[], |id| &self.nodes[id.index()].inputs)
    }

    /// Rewrites every size in the graph with `f` (used to apply final replacements).
    pub fn map_exprs(&mut self, f: impl Fn(&Expr) -> Expr) {
        for node in &mut self.nodes {
            for dim in &mut node.shape {
                *dim = f(dim);
            }
            match &mut node.op {
                Op::Slice { start, .. } => *start = f(start),
                Op::Select { index, .. } => *index = f(index),
                Op::Scalar {
                    scalar: Scalar::Size(expr),
                    ..
                } => *expr = f(expr),
                _ => {}
            }
        }
        for (_, expr) in &mut self.int_inputs {
            *expr = f(expr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unary_ops_match_known_values() {
        let cases = [
            (UnaryOp::Relu, -1.0, 0.0),
            (UnaryOp::Relu, 2.5, 2.5),
            (UnaryOp::Gelu, 0.0, 0.0),
            (UnaryOp::Gelu, 1.0, 0.841_344_7),
            (UnaryOp::Silu, 0.0, 0.0),
            (UnaryOp::Sigmoid, 0.0, 0.5),
            (UnaryOp::Tanh, 0.0, 0.0),
            (UnaryOp::Neg, 3.0, -3.0),
            (UnaryOp::Exp, 0.0, 1.0),
            (UnaryOp::Sqrt, 9.0, 3.0),
        ];
        for (op, v, expected) in cases {
            let got = op.apply(v);
            assert!(
                (got - expected).abs() < 1e-6,
                "{}({v}) = {got}, expected {expected}",
                op.name()
            );
        }
    }

    #[test]
    fn reductions_fold_from_their_identity() {
        let fold = |kind: ReduceKind, xs: &[f32]| {
            let acc = xs
                .iter()
                .fold(kind.identity(), |acc, &x| kind.combine(acc, x));
            kind.finish(acc, xs.len())
        };
        assert_eq!(fold(ReduceKind::Sum, &[1.0, 2.0, 3.0]), 6.0);
        assert_eq!(fold(ReduceKind::Mean, &[1.0, 2.0, 3.0]), 2.0);
        assert_eq!(fold(ReduceKind::Amax, &[1.0, -2.0, 3.0]), 3.0);
        assert_eq!(PoolKind::Max.reduction(), ReduceKind::Amax);
        assert_eq!(PoolKind::Avg.reduction(), ReduceKind::Mean);
    }

    #[test]
    fn row_normalisations() {
        let mut row = [1.0, 1.0];
        softmax_row(&mut row);
        assert_eq!(row, [0.5, 0.5]);
        let mut row = [1.0, 1.0];
        log_softmax_row(&mut row);
        assert_eq!(row, [-std::f32::consts::LN_2; 2]);
        // Far below the maximum: softmax underflows to 0, log-softmax stays finite.
        let mut row = [0.0, -200.0];
        log_softmax_row(&mut row);
        assert_eq!(row, [0.0, -200.0]);
        let mut row = [1.0, 3.0];
        layer_norm_row(&mut row, 0.0);
        assert_eq!(row, [-1.0, 1.0]);
        assert_eq!(embedding_row(-4.7, 3), 1);
    }
}
