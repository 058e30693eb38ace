//! Tensor operations as graph nodes: what the native module's calls do to the graph.
//!
//! Input: operands (graph nodes, or constants made outside `forward`) and the op's
//! attributes, already read from the caller's arguments. Output: the new node, appended to
//! the `Graph` with the shape its rule in `shape::rules` computed (recording guards in the
//! `ShapeEnv`). Invariant: a constant gets its node on first use, inputs are resolved in
//! argument order, and `ShapeEnv::node_cursor` names the node being built whenever a rule
//! runs; so the same calls build the same graph and the same events.

use super::errors::FrontendError;
use crate::graph::Holder;
use crate::graph::{
    AttentionMask, BinaryOp, Graph, Init, Lifted, NodeId, Op, PoolKind, ReduceKind, Scalar, Shape,
    Span,
};
use crate::graph::{DType, RandomKind, Tensor, UnaryOp, dtype, seed_of, shape_to_string};
use crate::shape::layout;
use crate::shape::rules::{self, OpCtx, ReshapeKind};
use crate::shape::{ShapeEnv, ShapeError};
use crate::symbolic::Expr;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

type Result<T> = std::result::Result<T, FrontendError>;

/// A tensor operand: a node of the graph being built, or a constant that gets its node
/// when an op first uses it.
#[derive(Clone, Debug)]
pub enum TensorRef {
    /// A node of the graph under construction.
    Node(NodeId),
    /// A parameter, buffer or module-level constant (static shape).
    Const(Rc<ConstTensor>),
    /// A tensor a script computed, with its values: a compiled call's output or the result
    /// of an op run eagerly outside `forward` (script mode only), and its dtype.
    Value(Rc<Tensor>, DType),
}

/// One item of a tensor subscript `x[...]`, as read from the index expression.
#[derive(Clone, Debug)]
pub enum IndexItem {
    /// `...`: as many full slices as the other items leave.
    Ellipsis,
    /// `None`: a new dim of size 1.
    NewAxis,
    /// `a:b:c`, bounds absent or sizes, the step a constant.
    Slice {
        /// Start, `None` for the beginning.
        lower: Option<Expr>,
        /// Stop, `None` for the end.
        upper: Option<Expr>,
        /// Step.
        step: i64,
    },
    /// An integer index: selects one position and drops the dim.
    Select(Expr),
}

/// The state a capture builds: the graph, the shape environment and the nodes already
/// given to constants.
pub struct Tracing<'a> {
    /// The graph under construction.
    pub graph: &'a mut Graph,
    /// Symbols, guards and events.
    pub env: &'a mut ShapeEnv,
    /// The node of each constant used so far, by constant id.
    pub const_nodes: &'a mut BTreeMap<usize, NodeId>,
    /// Where the trace read constants that are modules' plain tensor attributes, by id.
    pub holders: &'a BTreeMap<usize, Holder>,
    /// The strides of the views whose memory is not laid out contiguously; every other
    /// tensor (an input, a parameter, an op's fresh result) is contiguous.
    pub strides: &'a mut BTreeMap<NodeId, Shape>,
    /// In an op run eagerly, the computed tensors it is fed as inputs (in input order);
    /// `None` in a capture, where they cannot be operands.
    pub fed: Option<&'a mut Vec<(NodeId, Rc<Tensor>)>>,
}

/// The largest integer exponent `x ** n` multiplies out (by squaring: at most 8 products);
/// a larger one is a `pow`.
const MAX_MULTIPLIED_EXPONENT: f64 = 16.0;

/// The tensor operations, inside `forward` (with a `Tracing`) or outside it (only shape
/// queries work there; appending a node is an error naming the place).
pub struct Ops<'a> {
    tracing: Option<Tracing<'a>>,
}

/// An `Unsupported` error.
pub(crate) fn unsupported(
    span: Span,
    construct: impl Into<String>,
    note: impl Into<String>,
) -> FrontendError {
    FrontendError::Unsupported {
        span,
        construct: construct.into(),
        note: note.into(),
    }
}

/// A `Type` error (Python's TypeError / ValueError / IndexError).
pub(crate) fn type_error(span: Span, message: impl Into<String>) -> FrontendError {
    FrontendError::Type {
        span,
        message: message.into(),
    }
}

/// The most nodes one capture's graph may hold: a large model's forward has a few thousand
/// (nanoGPT's 12 layers, about 600); a loop that traces without end reaches this in seconds
/// rather than at the step budget.
pub const MAX_GRAPH_NODES: usize = 20_000;

fn op_ctx(what: &str, span: Span) -> OpCtx {
    OpCtx {
        what: what.to_string(),
        span,
    }
}

impl<'a> Ops<'a> {
    /// Operations on a capture in progress, or (`None`) outside `forward`.
    pub fn new(tracing: Option<Tracing<'a>>) -> Ops<'a> {
        Ops { tracing }
    }

    /// The shape of an operand.
    pub fn shape_of(&self, tensor: &TensorRef) -> Shape {
        match tensor {
            TensorRef::Const(c) => match self
                .tracing
                .as_ref()
                .and_then(|tracing| tracing.const_nodes.get(&c.id))
            {
                // Lifted under dynamic=True, its sizes may be symbols.
                Some(&id) => self.shape_of(&TensorRef::Node(id)),
                None => c.shape.iter().map(|&d| Expr::int(d)).collect(),
            },
            TensorRef::Value(v, _) => v.shape.iter().map(|&d| Expr::int(d as i64)).collect(),
            TensorRef::Node(id) => match &self.tracing {
                Some(tracing) => tracing.graph.shape(*id).clone(),
                None => unreachable!("graph tensors exist only while capturing"),
            },
        }
    }

    /// The strides of an operand: a view's as recorded, else those of a fresh tensor.
    pub fn strides_of(&self, tensor: &TensorRef) -> Shape {
        let recorded = match (tensor, &self.tracing) {
            (TensorRef::Node(id), Some(tracing)) => tracing.strides.get(id).cloned(),
            _ => None,
        };
        recorded.unwrap_or_else(|| layout::contiguous(&self.shape_of(tensor)))
    }

    /// Records the strides of a view just made (nothing when they are contiguous).
    fn set_strides(&mut self, tensor: &TensorRef, strides: &[Expr]) {
        if let (TensorRef::Node(id), Some(tracing)) = (tensor, &mut self.tracing) {
            let strides: Shape = strides.iter().map(|s| tracing.env.replace(s)).collect();
            if strides != layout::contiguous(tracing.graph.shape(*id)) {
                tracing.strides.insert(*id, strides);
            }
        }
    }

    /// Whether an operand's memory is laid out contiguously, as PyTorch's `is_contiguous`
    /// asks (a guard where ranges leave it open).
    fn is_contiguous(&mut self, tensor: &TensorRef, span: Span) -> bool {
        let (shape, strides) = (self.shape_of(tensor), self.strides_of(tensor));
        match &mut self.tracing {
            Some(tracing) => {
                let origin = op_ctx("contiguous", span).origin();
                layout::is_contiguous(tracing.env, &origin, &shape, &strides)
            }
            None => true,
        }
    }

    /// The dtype of an operand.
    pub fn dtype_of(&self, tensor: &TensorRef) -> DType {
        match tensor {
            TensorRef::Const(c) => c.dtype,
            TensorRef::Value(_, dtype) => *dtype,
            TensorRef::Node(id) => match &self.tracing {
                Some(tracing) => tracing.graph.node(*id).dtype,
                None => unreachable!("graph tensors exist only while capturing"),
            },
        }
    }

    /// Gives a node the dtype Python chose for it (`arange`'s integers, `dtype=`, a float
    /// scalar making an integer tensor float).
    pub fn retype(&mut self, tensor: &TensorRef, dtype: DType) {
        if let (TensorRef::Node(id), Some(tracing)) = (tensor, &mut self.tracing) {
            tracing.graph.nodes[id.index()].dtype = dtype;
        }
    }

    /// Notes that the trace looked at `tensor`: an argument of the traced call is realised,
    /// a tensor the capture lifts gets its node (and under `dynamic=True` its symbols) when
    /// first touched, as Dynamo wraps it then, even if only its sizes are read.
    pub fn realise(&mut self, tensor: &TensorRef, span: Span) -> Result<()> {
        match (tensor, &mut self.tracing) {
            (TensorRef::Node(id), Some(tracing)) => {
                if let Op::Input { name } = &tracing.graph.node(*id).op {
                    tracing.env.realise(name);
                }
            }
            (TensorRef::Const(c), Some(tracing)) if !c.is_param && tracing.fed.is_none() => {
                self.node_of(tensor, span)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The node of an operand, adding a node for a parameter or constant on first use.
    pub fn node_of(&mut self, tensor: &TensorRef, span: Span) -> Result<NodeId> {
        let c = match tensor {
            TensorRef::Node(id) => return Ok(*id),
            TensorRef::Const(c) => c,
            TensorRef::Value(value, dtype) => return self.value_node(value, *dtype, span),
        };
        let Some(tracing) = &mut self.tracing else {
            return Err(FrontendError::Unsupported {
                span,
                construct: "a tensor operation outside forward".into(),
                note: "module-level code may only create parameters and constants".into(),
            });
        };
        if let Some(&id) = tracing.const_nodes.get(&c.id) {
            return Ok(id);
        }
        if tracing.fed.is_some() {
            // Read eagerly before a capture names it: its values are fixed now, so the
            // capture (which seeds by the module path) computes with the same numbers.
            c.fix_values();
        }
        tracing.env.node_cursor = tracing.graph.nodes.len();
        let label = c.label();
        // A tensor that is neither an argument nor a parameter or buffer is lifted, as Dynamo
        // lifts it: a plain tensor attribute where the trace read one, else a module-level
        // tensor (a constant the capture found under a name).
        // A factory's tensor made in forward is the graph's own constant, not lifted.
        let holder = (!c.is_param && c.made_in == 0 && tracing.fed.is_none()).then(|| {
            tracing
                .holders
                .get(&c.id)
                .cloned()
                .unwrap_or_else(|| Holder::Global(label.clone()))
        });
        let shape: Shape = match &holder {
            Some(holder) => tracing.env.add_lifted(holder, &c.shape),
            None => c.shape.iter().map(|&d| Expr::int(d)).collect(),
        };
        let op = if c.is_param {
            Op::Param {
                path: label.clone(),
                init: c.init.borrow().clone(),
            }
        } else {
            Op::Constant {
                name: label.clone(),
                init: c.init.borrow().clone(),
            }
        };
        let id =
            tracing
                .graph
                .push_typed(&label.replace('.', "_"), op, vec![], shape, None, c.dtype);
        tracing.const_nodes.insert(c.id, id);
        if let Some(holder) = holder {
            tracing.graph.lifted.push(Lifted {
                node: id,
                holder,
                sizes: c.shape.clone(),
            });
        }
        Ok(id)
    }

    /// The input node that feeds a computed tensor into an op run eagerly (one per tensor).
    /// In a capture it is an error: Dynamo would make such a global an input guarded on its
    /// identity, which Tailor does not model, and baking its values in would go stale when
    /// the script rebinds it. (Module state made from one, `register_buffer`, is a constant.)
    fn value_node(&mut self, value: &Rc<Tensor>, dtype: DType, span: Span) -> Result<NodeId> {
        let fed = self.tracing.as_mut().and_then(|tracing| {
            let graph = &mut *tracing.graph;
            tracing.fed.as_deref_mut().map(|fed| (fed, graph))
        });
        let Some((fed, graph)) = fed else {
            return Err(unsupported(
                span,
                "a tensor computed outside forward (by ops at module level or in a script)",
                "inside forward use the inputs, the module's parameters and buffers (register_buffer keeps a computed tensor), and constants made with torch.randn/zeros/ones",
            ));
        };
        if let Some((id, _)) = fed.iter().find(|(_, v)| Rc::ptr_eq(v, value)) {
            return Ok(*id);
        }
        let name = format!("value{}", fed.len());
        let shape: Shape = value.shape.iter().map(|&d| Expr::int(d as i64)).collect();
        let input = Op::Input { name: name.clone() };
        let id = graph.push_typed(&name, input, vec![], shape, None, dtype);
        fed.push((id, value.clone()));
        Ok(id)
    }

    /// Appends an op node whose shape comes from `rule` (run against the shape environment).
    pub fn push(
        &mut self,
        op: Op,
        inputs: &[TensorRef],
        span: Span,
        rule: impl FnOnce(&mut ShapeEnv, &OpCtx, &[Shape]) -> std::result::Result<Shape, ShapeError>,
    ) -> Result<TensorRef> {
        let name = op.name();
        self.push_as(&name, op, inputs, span, rule)
    }

    /// `push`, the node named (and its shape rule asking) as `name` rather than as its op:
    /// a `view` or `contiguous` that is a `Reshape` node.
    fn push_as(
        &mut self,
        name: &str,
        op: Op,
        inputs: &[TensorRef],
        span: Span,
        rule: impl FnOnce(&mut ShapeEnv, &OpCtx, &[Shape]) -> std::result::Result<Shape, ShapeError>,
    ) -> Result<TensorRef> {
        let mut ids = Vec::with_capacity(inputs.len());
        let mut shapes = Vec::with_capacity(inputs.len());
        let mut dtypes = Vec::with_capacity(inputs.len());
        for input in inputs {
            self.realise(input, span)?;
            ids.push(self.node_of(input, span)?);
            shapes.push(self.shape_of(input));
            dtypes.push(self.dtype_of(input));
        }
        let dtype =
            dtype::result(&op, &dtypes).map_err(|error| FrontendError::DType { span, error })?;
        let Some(tracing) = &mut self.tracing else {
            return Err(FrontendError::Unsupported {
                span,
                construct: format!("{name} outside forward"),
                note: "module-level code may only create parameters and constants".into(),
            });
        };
        if tracing.graph.nodes.len() >= MAX_GRAPH_NODES {
            return Err(FrontendError::GraphTooLarge {
                span,
                limit: MAX_GRAPH_NODES,
            });
        }
        tracing.env.node_cursor = tracing.graph.nodes.len();
        let ctx = op_ctx(name, span);
        let shape = rule(tracing.env, &ctx, &shapes)?;
        if !op.is_view() {
            rules::fresh(tracing.env, &ctx, &shape);
        }
        Ok(TensorRef::Node(tracing.graph.push_typed(
            name,
            op,
            ids,
            shape,
            Some(span),
            dtype,
        )))
    }

    /// Sets an op attribute that the shape rule computed (a slice's clamped start).
    fn set_op(&mut self, tensor: &TensorRef, op: Op) {
        if let (TensorRef::Node(id), Some(tracing)) = (tensor, &mut self.tracing) {
            tracing.graph.nodes[id.index()].op = op;
        }
    }

    /// Normalised dims of a reduction or softmax: `raw` ints, or every dim when `None`.
    pub fn dims(
        &self,
        what: &str,
        raw: Option<Vec<i64>>,
        rank: usize,
        span: Span,
    ) -> Result<Vec<usize>> {
        let raw = raw.unwrap_or_else(|| (0..rank as i64).collect());
        let ctx = op_ctx(what, span);
        let mut dims = raw
            .iter()
            .map(|&d| rules::normalize_dim(&ctx, d, rank))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        dims.sort_unstable();
        dims.dedup();
        Ok(dims)
    }

    /// An elementwise function of a tensor.
    /// `x.to(dtype)`: same shape, no guard. A range or fill just made whose values `to`
    /// holds exactly (`torch.arange(T, dtype=torch.long)`) takes the dtype itself, as
    /// PyTorch's one `arange(..., dtype=...)` node does.
    pub fn cast(&mut self, to: DType, x: TensorRef, span: Span) -> Result<TensorRef> {
        if let (TensorRef::Node(id), Some(tracing)) = (&x, &mut self.tracing) {
            let newest = id.index() + 1 == tracing.graph.nodes.len();
            let node = &mut tracing.graph.nodes[id.index()];
            let holds = match node.op {
                Op::Arange { start, step } => to.carries(start) && to.carries(step),
                Op::Full { value } => to.carries(value),
                _ => false,
            };
            if holds && newest {
                node.dtype = to;
                return Ok(x);
            }
        }
        self.push(Op::Cast { to }, &[x], span, |env, ctx, shapes| {
            Ok(rules::pointwise(env, ctx, &shapes[0]))
        })
    }

    pub fn unary(&mut self, op: UnaryOp, x: TensorRef, span: Span) -> Result<TensorRef> {
        self.push(Op::Unary(op), &[x], span, |env, ctx, shapes| {
            Ok(rules::pointwise(env, ctx, &shapes[0]))
        })
    }

    /// `softmax(x, dim)`, or `log_softmax(x, dim)` when `log`; `dim` as the caller read it
    /// (`None`: every dim, the first kept). Both keep the shape and record no guard.
    pub fn softmax(
        &mut self,
        log: bool,
        x: TensorRef,
        dim: Option<Vec<i64>>,
        span: Span,
    ) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        let what = if log { "log_softmax" } else { "softmax" };
        if rank == 0 {
            // A 0-d tensor is its own only row (dim 0 or -1, as PyTorch wraps it): the
            // one-element vector's softmax, back to 0-d.
            self.dims(what, dim, rank, span)?;
            let row = self.reshape(x, vec![Some(Expr::int(1))], ReshapeKind::Reshape, span)?;
            let normalised = self.softmax(log, row, Some(vec![0]), span)?;
            return self.reshape(normalised, Vec::new(), ReshapeKind::Reshape, span);
        }
        let dims = self.dims(what, dim, rank, span)?;
        let dim = dims[0];
        let op = if log {
            Op::LogSoftmax { dim }
        } else {
            Op::Softmax { dim }
        };
        self.push(op, &[x], span, |_, _, shapes| Ok(shapes[0].clone()))
    }

    /// `scaled_dot_product_attention(q, k, v, mask?)`: one node whose shape is that of the
    /// two products it stands for (`rules::attention`).
    pub fn attention(
        &mut self,
        inputs: &[TensorRef],
        causal: bool,
        scale: Option<f64>,
        mask: AttentionMask,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::Attention {
            causal,
            scale,
            mask,
        };
        self.push(op, inputs, span, |env, ctx, shapes| {
            rules::attention(env, ctx, shapes)
        })
    }

    /// `x.sum/mean/amax(dim, keepdim)`; `what` is the method name for errors.
    pub fn reduce(
        &mut self,
        kind: ReduceKind,
        what: &str,
        x: TensorRef,
        dim: Option<Vec<i64>>,
        keepdim: bool,
        span: Span,
    ) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        if rank == 0 {
            // PyTorch reduces a 0-d tensor over dim 0 or -1 (or all of its none) to 0-d,
            // keepdim or not: the one-element vector's reduction.
            self.dims(what, dim, rank, span)?;
            let row = self.reshape(x, vec![Some(Expr::int(1))], ReshapeKind::Reshape, span)?;
            return self.reduce(kind, what, row, Some(vec![0]), false, span);
        }
        let dims = self.dims(what, dim, rank, span)?;
        let op = Op::Reduce {
            kind,
            dims: dims.clone(),
            keepdim,
        };
        self.push(op, &[x], span, move |_, ctx, shapes| {
            rules::reduce(ctx, kind, &shapes[0], &dims, keepdim)
        })
    }

    /// `a @ b`.
    pub fn matmul(&mut self, a: TensorRef, b: TensorRef, span: Span) -> Result<TensorRef> {
        self.push(Op::Matmul, &[a, b], span, |env, ctx, shapes| {
            rules::matmul(env, ctx, &shapes[0], &shapes[1])
        })
    }

    /// `x @ weight.T + bias`; with `check_weight`, a weight that is not 2-d is an error
    /// (`F.linear`; `nn.Linear` makes its weight 2-d).
    pub fn linear(
        &mut self,
        x: TensorRef,
        weight: TensorRef,
        bias: Option<TensorRef>,
        check_weight: bool,
        span: Span,
    ) -> Result<TensorRef> {
        if check_weight {
            let weight_shape = self.shape_of(&weight);
            if weight_shape.len() != 2 {
                return Err(type_error(
                    span,
                    format!(
                        "F.linear needs a 2-d weight, got {}",
                        shape_to_string(&weight_shape)
                    ),
                ));
            }
        }
        let inputs: Vec<TensorRef> = [x, weight].into_iter().chain(bias).collect();
        self.push(Op::Linear, &inputs, span, |env, ctx, shapes| {
            rules::linear(env, ctx, &shapes[0], &shapes[1])
        })
    }

    /// A 1-d, 2-d or 3-d convolution (`inputs`: x, weight and the bias if any), its channels in
    /// `groups` groups.
    pub fn conv(
        &mut self,
        inputs: &[TensorRef],
        window: rules::ConvWindow,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::Conv {
            stride: window.stride.clone(),
            padding: window.padding.clone(),
            dilation: window.dilation.clone(),
            groups: window.groups,
        };
        self.push(op, inputs, span, |env, ctx, shapes| {
            rules::conv(env, ctx, &shapes[0], &shapes[1], &window)
        })
    }

    /// A 1-d or 2-d transposed convolution (`inputs`: x, weight and the bias if any).
    pub fn conv_transpose(
        &mut self,
        inputs: &[TensorRef],
        window: rules::ConvWindow,
        output_padding: Vec<i64>,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::ConvTranspose {
            stride: window.stride.clone(),
            padding: window.padding.clone(),
            output_padding: output_padding.clone(),
            dilation: window.dilation.clone(),
            groups: window.groups,
        };
        self.push(op, inputs, span, |env, ctx, shapes| {
            rules::conv_transpose(env, ctx, &shapes[0], &shapes[1], &window, &output_padding)
        })
    }

    /// Eval-mode batch norm (`inputs`: x, running mean, running var, weight, bias).
    pub fn batch_norm(
        &mut self,
        inputs: &[TensorRef],
        features: i64,
        eps: f64,
        span: Span,
    ) -> Result<TensorRef> {
        self.push(Op::BatchNorm { eps }, inputs, span, |env, ctx, shapes| {
            rules::batch_norm(env, ctx, &shapes[0], features)
        })
    }

    /// Layer norm over the trailing `normalized` sizes (`inputs`: x, then weight and bias
    /// or neither).
    pub fn layer_norm(
        &mut self,
        inputs: &[TensorRef],
        normalized: Vec<Expr>,
        eps: f64,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::LayerNorm {
            normalized_dims: normalized.len(),
            eps,
        };
        self.push(op, inputs, span, |env, ctx, shapes| {
            rules::layer_norm(env, ctx, &shapes[0], &normalized)
        })
    }

    /// 2-d max or average pooling.
    pub fn pool(
        &mut self,
        kind: PoolKind,
        x: TensorRef,
        kernel: Vec<i64>,
        stride: Vec<i64>,
        padding: Vec<i64>,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::Pool {
            kind,
            kernel: kernel.clone(),
            stride: stride.clone(),
            padding: padding.clone(),
        };
        self.push(op, &[x], span, |env, ctx, shapes| {
            rules::pool2d(env, ctx, &shapes[0], &kernel, &stride, &padding)
        })
    }

    /// Rows of `weight` picked by the indices in `x`.
    pub fn embedding(&mut self, x: TensorRef, weight: TensorRef, span: Span) -> Result<TensorRef> {
        self.push(Op::Embedding, &[x, weight], span, |_, _, shapes| {
            let mut shape = shapes[0].clone();
            shape.push(shapes[1][1].clone());
            Ok(shape)
        })
    }

    /// `x.reshape(target)` or `x.view(target)` (`kind`); `None` is the inferred `-1` size.
    /// The node is a `Reshape` either way (lowering reads any layout); its strides are the
    /// view's, or contiguous when PyTorch copies.
    pub fn reshape(
        &mut self,
        x: TensorRef,
        target: Vec<Option<Expr>>,
        kind: ReshapeKind,
        span: Span,
    ) -> Result<TensorRef> {
        let strides = self.strides_of(&x);
        let mut result_strides = Vec::new();
        let result = self.push(Op::Reshape, &[x], span, |env, ctx, shapes| {
            let (shape, strides) =
                rules::reshape_strided(env, ctx, &shapes[0], &strides, &target, kind)?;
            result_strides = strides;
            Ok(shape)
        })?;
        self.set_strides(&result, &result_strides);
        Ok(result)
    }

    /// A view that only adds or drops dims of size 1 (`unsqueeze`, `squeeze`, `x[None]`):
    /// PyTorch computes its strides directly, asking nothing.
    fn restride(
        &mut self,
        x: TensorRef,
        shape: Shape,
        strides: Shape,
        span: Span,
    ) -> Result<TensorRef> {
        let target: Vec<Option<Expr>> = shape.into_iter().map(Some).collect();
        let result = self.push(Op::Reshape, &[x], span, |env, ctx, shapes| {
            rules::reshape(env, ctx, &shapes[0], &target)
        })?;
        self.set_strides(&result, &strides);
        Ok(result)
    }

    /// `x.contiguous()`: the tensor itself when its memory is contiguous, else a copy
    /// (PyTorch's `clone`), which is.
    pub fn contiguous(&mut self, x: TensorRef, span: Span) -> Result<TensorRef> {
        if self.is_contiguous(&x, span) {
            return Ok(x);
        }
        self.push_as("contiguous", Op::Reshape, &[x], span, |_, _, shapes| {
            Ok(shapes[0].clone())
        })
    }

    /// `x.expand(target)`; `None` is `-1` (the size kept).
    pub fn expand(
        &mut self,
        x: TensorRef,
        target: Vec<Option<Expr>>,
        span: Span,
    ) -> Result<TensorRef> {
        let (shape, strides) = (self.shape_of(&x), self.strides_of(&x));
        let result = self.push(Op::Expand, &[x], span, |env, ctx, shapes| {
            rules::expand(env, ctx, &shapes[0], &target)
        })?;
        // A new leading dim, or a dim of 1 broadcast to more, repeats memory: stride 0.
        let out = self.shape_of(&result);
        let new_dims = out.len() - shape.len();
        let expanded: Shape = (0..out.len())
            .map(|d| match d.checked_sub(new_dims) {
                Some(i) if shape[i] == out[d] => strides[i].clone(),
                _ => Expr::int(0),
            })
            .collect();
        self.set_strides(&result, &expanded);
        Ok(result)
    }

    /// `x.flatten(start, end)`.
    pub fn flatten(&mut self, x: TensorRef, start: i64, end: i64, span: Span) -> Result<TensorRef> {
        let shape = self.shape_of(&x);
        let ctx = op_ctx("flatten", span);
        let (start, end) = (
            rules::normalize_dim(&ctx, start, shape.len())?,
            rules::normalize_dim(&ctx, end, shape.len())?,
        );
        if start > end {
            return Err(type_error(
                span,
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        let mut target: Vec<Option<Expr>> = shape[..start].iter().cloned().map(Some).collect();
        target.push(Some(rules::numel(&shape[start..=end])));
        target.extend(shape[end + 1..].iter().cloned().map(Some));
        // ATen's flatten is its reshape.
        self.reshape(x, target, ReshapeKind::Reshape, span)
    }

    /// `x.unsqueeze(dim)`.
    pub fn unsqueeze(&mut self, x: TensorRef, dim: i64, span: Span) -> Result<TensorRef> {
        let shape = self.shape_of(&x);
        let d = rules::normalize_dim(&op_ctx("unsqueeze", span), dim, shape.len() + 1)?;
        self.unsqueezed(x, d, span)
    }

    /// A new dim of size 1 at `d`, strided as ATen's `inferUnsqueezeGeometry` strides it.
    fn unsqueezed(&mut self, x: TensorRef, d: usize, span: Span) -> Result<TensorRef> {
        let (mut shape, mut strides) = (self.shape_of(&x), self.strides_of(&x));
        let stride = match shape.get(d) {
            Some(size) => size * &strides[d],
            None => Expr::int(1),
        };
        shape.insert(d, Expr::int(1));
        strides.insert(d, stride);
        self.restride(x, shape, strides, span)
    }

    /// `x.squeeze(dim)`: drops the dim when it is 1 (for a symbolic dim, as its range or a
    /// guard says: `rules::squeezes`).
    pub fn squeeze(&mut self, x: TensorRef, dim: i64, span: Span) -> Result<TensorRef> {
        let shape = self.shape_of(&x);
        let ctx = op_ctx("squeeze", span);
        let d = rules::normalize_dim(&ctx, dim, shape.len())?;
        let drops = match (shape[d].as_int(), &mut self.tracing) {
            (Some(size), _) => size == 1,
            (None, Some(tracing)) => rules::squeezes(tracing.env, &ctx, &shape[d]),
            (None, None) => unreachable!("a symbolic size exists only while capturing"),
        };
        let (mut shape, mut strides) = (shape, self.strides_of(&x));
        if drops {
            shape.remove(d);
            strides.remove(d);
        }
        self.restride(x, shape, strides, span)
    }

    /// `x.permute(perm)`; `perm` must be a permutation of the dims.
    pub fn permute(&mut self, x: TensorRef, perm: Vec<usize>, span: Span) -> Result<TensorRef> {
        let shape = self.shape_of(&x);
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        if sorted != (0..shape.len()).collect::<Vec<_>>() {
            return Err(type_error(
                span,
                format!(
                    "permute: {perm:?} is not a permutation of the {} dims",
                    shape.len()
                ),
            ));
        }
        let strides = self.strides_of(&x);
        let permuted: Shape = perm.iter().map(|&p| strides[p].clone()).collect();
        let result = self.push(
            Op::Permute { perm: perm.clone() },
            &[x],
            span,
            move |_, _, shapes| Ok(perm.iter().map(|&p| shapes[0][p].clone()).collect()),
        )?;
        self.set_strides(&result, &permuted);
        Ok(result)
    }

    /// `x.permute(dims)` with dims as the caller wrote them (negative counts from the end).
    pub fn permute_dims(&mut self, x: TensorRef, dims: &[i64], span: Span) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        let ctx = op_ctx("permute", span);
        let perm = dims
            .iter()
            .map(|&d| rules::normalize_dim(&ctx, d, rank))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        self.permute(x, perm, span)
    }

    /// `x.transpose(a, b)`.
    pub fn transpose(&mut self, x: TensorRef, a: i64, b: i64, span: Span) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        let ctx = op_ctx("transpose", span);
        let a = rules::normalize_dim(&ctx, a, rank)?;
        let b = rules::normalize_dim(&ctx, b, rank)?;
        let mut perm: Vec<usize> = (0..rank).collect();
        perm.swap(a, b);
        self.permute(x, perm, span)
    }

    /// `x.t()`: a 2-d transpose (0-d and 1-d tensors are returned as they are).
    pub fn t(&mut self, x: TensorRef, span: Span) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        if rank > 2 {
            return Err(type_error(
                span,
                "t() expects a tensor with <= 2 dimensions",
            ));
        }
        self.permute(x, (0..rank).rev().collect(), span)
    }

    /// `x.T` (every dim reversed) or `x.mT` (the last two swapped, when `matrix`).
    pub fn transposed(&mut self, x: TensorRef, matrix: bool, span: Span) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        if rank < 2 {
            return Ok(x);
        }
        let mut perm: Vec<usize> = (0..rank).collect();
        if matrix {
            perm.swap(rank - 2, rank - 1);
        } else {
            perm.reverse();
        }
        self.permute(x, perm, span)
    }

    /// `a op b` for two tensors (broadcasting).
    pub fn binary(
        &mut self,
        op: BinaryOp,
        lhs: TensorRef,
        rhs: TensorRef,
        span: Span,
    ) -> Result<TensorRef> {
        let logical_or = op == BinaryOp::Add
            && self.dtype_of(&lhs) == DType::Bool
            && self.dtype_of(&rhs) == DType::Bool;
        let result = self.push(Op::Binary(op), &[lhs, rhs], span, |env, ctx, shapes| {
            rules::broadcast(env, ctx, &shapes[0], &shapes[1])
        })?;
        if logical_or {
            // PyTorch adds two bool tensors as a logical or; the carrier's sum (0, 1 or 2)
            // is cast back to bool (`!= 0`), fused into the same kernel.
            return self.cast(DType::Bool, result, span);
        }
        Ok(result)
    }

    /// `torch.where(cond, a, b)`: the three broadcast together (a 0/1 `cond`).
    pub fn where_(
        &mut self,
        cond: TensorRef,
        then: TensorRef,
        otherwise: TensorRef,
        span: Span,
    ) -> Result<TensorRef> {
        self.push(
            Op::Where,
            &[cond, then, otherwise],
            span,
            |env, ctx, shapes| {
                let values = rules::broadcast(env, ctx, &shapes[1], &shapes[2])?;
                rules::broadcast(env, ctx, &shapes[0], &values)
            },
        )
    }

    /// `torch.tril(x, diagonal)` or (`upper`) `torch.triu`: the shape of `x`, which needs
    /// two dimensions at least.
    pub fn triangle(
        &mut self,
        upper: bool,
        x: TensorRef,
        diagonal: i64,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::Triangle { upper, diagonal };
        self.push(op, &[x], span, |_, ctx, shapes| {
            if shapes[0].len() < 2 {
                return Err(ShapeError::Invalid {
                    op: ctx.what.clone(),
                    span: ctx.span,
                    detail: format!(
                        "the input needs at least 2 dimensions, got {}",
                        shape_to_string(&shapes[0])
                    ),
                });
            }
            Ok(shapes[0].clone())
        })
    }

    /// `torch.arange(start, end, step)` whose length is the size `len` (symbolic or not).
    pub fn arange(&mut self, start: f64, step: f64, len: Expr, span: Span) -> Result<TensorRef> {
        self.push(Op::Arange { start, step }, &[], span, |env, ctx, _| {
            rules::created(env, ctx, vec![len])
        })
    }

    /// `torch.full(shape, value)` (`zeros`, `ones`) of sizes known only as symbols.
    pub fn full(&mut self, value: f64, shape: Shape, span: Span) -> Result<TensorRef> {
        self.push(Op::Full { value }, &[], span, |env, ctx, _| {
            rules::created(env, ctx, shape)
        })
    }

    /// `torch.randn(shape)` / `rand` in forward (`randn_like`): a random op with the next
    /// stream of the graph (its random ops so far, hashed), so two draws differ.
    pub fn random(&mut self, kind: RandomKind, shape: Shape, span: Span) -> Result<TensorRef> {
        let drawn = self.tracing.as_ref().map_or(0, |tracing| {
            let graph = &tracing.graph;
            graph
                .nodes
                .iter()
                .filter(|node| matches!(node.op, Op::Random { .. }))
                .count()
        });
        let seed = seed_of(&format!("random{drawn}")) as u32;
        self.push(Op::Random { kind, seed }, &[], span, |env, ctx, _| {
            rules::created(env, ctx, shape)
        })
    }

    /// `tensor op scalar` (or `scalar op tensor` when not `tensor_on_left`).
    pub fn scalar(
        &mut self,
        op: BinaryOp,
        tensor: TensorRef,
        scalar: Scalar,
        tensor_on_left: bool,
        span: Span,
    ) -> Result<TensorRef> {
        let op = Op::Scalar {
            op,
            scalar,
            tensor_on_left,
        };
        self.push(op, &[tensor], span, |env, ctx, shapes| {
            Ok(rules::pointwise(env, ctx, &shapes[0]))
        })
    }

    /// `x ** exponent` for a number: a small integer exponent is multiplications (by
    /// squaring; a negative one divides 1 by them), `0.5` a square root, any other a `pow`.
    /// Only a float tensor's negative powers and an integer one's positive powers are
    /// multiplied out: a bool tensor's power is int64, and an integer tensor's negative
    /// power is refused, as the `pow` node's dtype rule says.
    pub fn pow(&mut self, x: TensorRef, exponent: Scalar, span: Span) -> Result<TensorRef> {
        let dtype = self.dtype_of(&x);
        let multiplied = |e: f64| {
            e.fract() == 0.0
                && (1.0..=MAX_MULTIPLIED_EXPONENT).contains(&e.abs())
                && (dtype.is_floating() || dtype != DType::Bool && e > 0.0)
        };
        match exponent {
            Scalar::Number(0.5) => self.unary(UnaryOp::Sqrt, x, span),
            Scalar::Number(e) if multiplied(e) => {
                let mut n = e.abs() as u32;
                let (mut square, mut product) = (x, None::<TensorRef>);
                loop {
                    if n & 1 == 1 {
                        product = Some(match product {
                            None => square.clone(),
                            Some(p) => self.binary(BinaryOp::Mul, p, square.clone(), span)?,
                        });
                    }
                    n >>= 1;
                    if n == 0 {
                        break;
                    }
                    square = self.binary(BinaryOp::Mul, square.clone(), square, span)?;
                }
                let product = product.expect("the exponent is at least 1");
                if e > 0.0 {
                    Ok(product)
                } else {
                    self.scalar(BinaryOp::Div, product, Scalar::Number(1.0), false, span)
                }
            }
            other => self.scalar(BinaryOp::Pow, x, other, true, span),
        }
    }

    /// `torch.cat(parts, dim)`.
    pub fn cat(&mut self, parts: Vec<TensorRef>, dim: i64, span: Span) -> Result<TensorRef> {
        if parts.is_empty() {
            return Err(type_error(span, "torch.cat needs at least one tensor"));
        }
        // PyTorch skips a 1-d tensor of size 0 among others (its legacy empty tensor:
        // Emformer's `torch.cat([mems, right_context, utterance])` with no memory yet).
        let legacy_empty = |shape: &Shape| shape.len() == 1 && shape[0].as_int() == Some(0);
        let kept: Vec<TensorRef> = parts
            .iter()
            .filter(|part| !legacy_empty(&self.shape_of(part)))
            .cloned()
            .collect();
        let parts = match kept.len() {
            0 => return Ok(parts[0].clone()),
            1 => return Ok(kept[0].clone()),
            _ => kept,
        };
        let rank = self.shape_of(&parts[0]).len();
        let dim = rules::normalize_dim(&op_ctx("cat", span), dim, rank)?;
        self.push(Op::Cat { dim }, &parts, span, |env, ctx, shapes| {
            rules::cat(env, ctx, shapes, dim)
        })
    }

    /// `x[items]` with ints, slices, `...` and `None`; an item the caller could not read is
    /// reported when the walk reaches it, after the checks on the whole index.
    pub fn index(
        &mut self,
        tensor: TensorRef,
        items: Vec<Result<IndexItem>>,
        span: Span,
    ) -> Result<TensorRef> {
        let rank = self.shape_of(&tensor).len();
        let consuming = items
            .iter()
            .filter(|item| !matches!(item, Ok(IndexItem::NewAxis | IndexItem::Ellipsis)))
            .count();
        if consuming > rank {
            return Err(type_error(
                span,
                format!("IndexError: too many indices for tensor of dimension {rank}"),
            ));
        }
        if items
            .iter()
            .filter(|item| matches!(item, Ok(IndexItem::Ellipsis)))
            .count()
            > 1
        {
            return Err(type_error(
                span,
                "IndexError: an index can only have a single ellipsis",
            ));
        }
        let mut current = tensor;
        let mut dim = 0;
        for item in items {
            match item? {
                IndexItem::Ellipsis => dim += rank - consuming,
                IndexItem::NewAxis => {
                    current = self.unsqueezed(current, dim, span)?;
                    dim += 1;
                }
                IndexItem::Slice { lower, upper, step } => {
                    if lower.is_none() && upper.is_none() && step == 1 {
                        dim += 1;
                        continue;
                    }
                    current = self.slice(current, dim, lower, upper, step, span)?;
                    dim += 1;
                }
                IndexItem::Select(index) => current = self.select(current, dim, index, span)?,
            }
        }
        Ok(current)
    }

    fn slice(
        &mut self,
        x: TensorRef,
        d: usize,
        lower: Option<Expr>,
        upper: Option<Expr>,
        step: i64,
        span: Span,
    ) -> Result<TensorRef> {
        let mut strides = self.strides_of(&x);
        strides[d] = &strides[d] * step;
        let mut start_out = Expr::int(0);
        let op = Op::Slice {
            dim: d,
            start: Expr::int(0),
            step,
        };
        let sliced = self.push(op, &[x], span, |env, ctx, shapes| {
            let (start, length) = rules::slice(
                env,
                ctx,
                &shapes[0][d],
                lower.as_ref(),
                upper.as_ref(),
                step,
            )?;
            start_out = start;
            let mut shape = shapes[0].clone();
            shape[d] = length;
            Ok(shape)
        })?;
        let op = Op::Slice {
            dim: d,
            start: start_out,
            step,
        };
        self.set_op(&sliced, op);
        self.set_strides(&sliced, &strides);
        Ok(sliced)
    }

    /// `F.pad(x, [before, after], value=value)` along `dim` (constant mode; negative pads
    /// crop).
    pub fn constant_pad(
        &mut self,
        x: TensorRef,
        dim: i64,
        before: Expr,
        after: Expr,
        value: f64,
        span: Span,
    ) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        let dim = rules::normalize_dim(&op_ctx("pad", span), dim, rank)?;
        let op = Op::Pad {
            dim,
            before: before.clone(),
            after: after.clone(),
            value,
        };
        self.push(op, &[x], span, |env, ctx, shapes| {
            let mut shape = shapes[0].clone();
            shape[dim] = rules::constant_pad(env, ctx, dim, &shapes[0][dim], &before, &after)?;
            Ok(shape)
        })
    }

    /// `F.interpolate` along `dim` to `size` positions: the resize `op` makes for the
    /// normalised dim (`UpsampleLinear`, `UpsampleNearest`).
    pub fn resize(
        &mut self,
        x: TensorRef,
        dim: i64,
        size: Expr,
        op: impl FnOnce(usize) -> Op,
        span: Span,
    ) -> Result<TensorRef> {
        let rank = self.shape_of(&x).len();
        let dim = rules::normalize_dim(&op_ctx("interpolate", span), dim, rank)?;
        self.push(op(dim), &[x], span, |env, ctx, shapes| {
            let mut shape = shapes[0].clone();
            shape[dim] = rules::resized(env, ctx, &shapes[0][dim], &size)?;
            Ok(shape)
        })
    }

    fn select(&mut self, x: TensorRef, d: usize, index: Expr, span: Span) -> Result<TensorRef> {
        let mut strides = self.strides_of(&x);
        strides.remove(d);
        let mut fixed = Expr::int(0);
        let op = Op::Select {
            dim: d,
            index: Expr::int(0),
        };
        let selected = self.push(op, &[x], span, |env, ctx, shapes| {
            fixed = rules::select(env, ctx, &shapes[0][d], &index)?;
            let mut shape = shapes[0].clone();
            shape.remove(d);
            Ok(shape)
        })?;
        let op = Op::Select {
            dim: d,
            index: fixed,
        };
        self.set_op(&selected, op);
        self.set_strides(&selected, &strides);
        Ok(selected)
    }
}

/// A tensor created outside `forward`: a parameter, buffer or module-level constant.
#[derive(Debug)]
pub struct ConstTensor {
    /// Unique id, used to give each constant one graph node.
    pub id: usize,
    /// Static shape.
    pub shape: Vec<i64>,
    /// How its values are made; `nn.init.*_` sets it in place before the capture reads it.
    pub init: RefCell<Init>,
    /// Name or dotted path, set when the module tree is named (parameters) or at assignment
    /// (globals).
    pub name: RefCell<String>,
    /// True for module parameters and buffers, false for module-level globals.
    pub is_param: bool,
    /// Its element type (parameters are float32; a buffer keeps its tensor's).
    pub dtype: DType,
    /// The capture whose `forward` made it (a factory's tensor of this call, which an
    /// in-place op may write), 0 outside `forward`.
    pub made_in: u64,
}

impl ConstTensor {
    /// The name its node gets: its name, or `const{id}` before it has one.
    pub fn label(&self) -> String {
        let name = self.name.borrow();
        if name.is_empty() {
            format!("const{}", self.id)
        } else {
            name.clone()
        }
    }

    /// Makes a seeded random fill its values, kept as `Init::Data` (a fill or data stays).
    pub fn fix_values(&self) {
        let random = matches!(
            *self.init.borrow(),
            Init::Uniform { .. } | Init::Normal { .. } | Init::Unit | Init::Orthogonal { .. }
        );
        if random {
            let values = self.values().data.into();
            *self.init.borrow_mut() = Init::Data(values);
        }
    }

    /// Its values as a script reads them (printed, passed to a compiled call, `.item()`):
    /// fixed from now on, so that the same tensor never shows other values (scaling it by
    /// a number then computes on these values instead of drawing a scaled sample, as
    /// module-level `torch.randn(n, m) * 0.02` does for a tensor nobody has read).
    pub fn observed(&self) -> Tensor {
        self.fix_values();
        self.values()
    }

    /// Its values, as every backend makes them (seeded by its label).
    pub fn values(&self) -> Tensor {
        let shape = self.shape.iter().map(|&d| d as usize).collect();
        Tensor::init(
            shape,
            self.init.borrow().clone(),
            crate::graph::seed_of(&self.label()),
        )
    }
}
