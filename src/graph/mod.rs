//! The captured graph: the FX-like IR that capture produces and every later stage reads.
//!
//! Input: nodes appended by `frontend::capture` in program order. Output: a `Graph` whose
//! nodes each carry their symbolic `Shape`. Invariant: a node's inputs come before it
//! (the arena order is a topological order), and every shape is already simplified under
//! the `ShapeEnv` replacements in force when capture finished.
//!
//! It also holds each op's scalar maths (`UnaryOp::apply`, `BinaryOp::apply`, a reduction's
//! identity, step and finish, the row normalisations, the embedding index rule): the CPU
//! reference (`eval`) and the CPU backend (`runtime::cpu`) both call these, so the
//! two can differ only in how lowering and fusion arrange the work, never in the maths.

pub mod dtype;
mod eval;
mod holder;
mod numerics;
mod print;

pub use dtype::{DType, DTypeError};
pub use holder::Holder;
use numerics::erf;
pub use numerics::{
    embedding_row, layer_norm_row, log_softmax_row, nearest_source, pcg_hash, random_value,
    softmax_row,
};

pub use eval::{
    EvalError, MAX_ELEMENTS, Tensor, check_embedding_ids, element_count, eval, numel,
    random_inputs, seed_of,
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

/// Elementwise functions of one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UnaryOp {
    /// `max(x, 0)`.
    Relu,
    /// Gaussian error linear unit, the exact (erf) form that `nn.GELU()` defaults to.
    Gelu,
    /// `x * sigmoid(x)`.
    Silu,
    /// `1 / (1 + exp(-x))`.
    Sigmoid,
    /// Hyperbolic tangent.
    Tanh,
    /// `-x`.
    Neg,
    /// `exp(x)`.
    Exp,
    /// Square root.
    Sqrt,
    /// Natural logarithm.
    Log,
    /// `|x|`.
    Abs,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// The error function (`torch.erf`, in hand-written GELUs).
    Erf,
    /// Round down.
    Floor,
    /// Round up.
    Ceil,
    /// Round to the nearest integer, halves to even (as `torch.round`).
    Round,
    /// Round towards zero.
    Trunc,
    /// -1, 0 or 1 (`torch.sign`).
    Sign,
}

impl UnaryOp {
    /// Every function, for lookups by name.
    pub const ALL: [UnaryOp; 18] = [
        UnaryOp::Relu,
        UnaryOp::Gelu,
        UnaryOp::Silu,
        UnaryOp::Sigmoid,
        UnaryOp::Tanh,
        UnaryOp::Neg,
        UnaryOp::Exp,
        UnaryOp::Sqrt,
        UnaryOp::Log,
        UnaryOp::Abs,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Erf,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Round,
        UnaryOp::Trunc,
        UnaryOp::Sign,
    ];

    /// The function named `name` (`relu`, `log`, …).
    pub fn named(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The name used in the graph's text form (`relu`, `gelu`, …).
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Relu => "relu",
            UnaryOp::Gelu => "gelu",
            UnaryOp::Silu => "silu",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Neg => "neg",
            UnaryOp::Exp => "exp",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Log => "log",
            UnaryOp::Abs => "abs",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Erf => "erf",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Round => "round",
            UnaryOp::Trunc => "trunc",
            UnaryOp::Sign => "sign",
        }
    }

    /// Applies the function to one float.
    pub fn apply(self, v: f32) -> f32 {
        match self {
            UnaryOp::Relu => v.max(0.0),
            UnaryOp::Gelu => 0.5 * v * (1.0 + erf(v / std::f32::consts::SQRT_2)),
            UnaryOp::Silu => v / (1.0 + (-v).exp()),
            UnaryOp::Sigmoid => 1.0 / (1.0 + (-v).exp()),
            UnaryOp::Tanh => v.tanh(),
            UnaryOp::Neg => -v,
            UnaryOp::Exp => v.exp(),
            UnaryOp::Sqrt => v.sqrt(),
            UnaryOp::Log => v.ln(),
            UnaryOp::Abs => v.abs(),
            UnaryOp::Sin => v.sin(),
            UnaryOp::Cos => v.cos(),
            UnaryOp::Erf => erf(v),
            UnaryOp::Floor => v.floor(),
            UnaryOp::Ceil => v.ceil(),
            UnaryOp::Round => v.round_ties_even(),
            UnaryOp::Trunc => v.trunc(),
            // PyTorch's sign keeps 0 (and NaN); f32::signum would give ±1 for ±0.
            UnaryOp::Sign if v == 0.0 || v.is_nan() => v,
            UnaryOp::Sign => v.signum(),
        }
    }
}

/// The distribution of an [`Op::Random`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RandomKind {
    /// Uniform in [0, 1) (`rand_like`).
    Unit,
    /// Standard normal (`randn_like`), by the Box–Muller transform.
    Normal,
}

/// Elementwise arithmetic of two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (true division).
    Div,
    /// `a == b`, as 1.0 or 0.0 (Tailor's tensors are float32: a bool tensor is 0/1).
    Eq,
    /// `a != b`, as 1.0 or 0.0.
    Ne,
    /// `a < b`, as 1.0 or 0.0.
    Lt,
    /// `a <= b`, as 1.0 or 0.0.
    Le,
    /// `a > b`, as 1.0 or 0.0.
    Gt,
    /// `a >= b`, as 1.0 or 0.0.
    Ge,
    /// The larger (`torch.maximum`, `clamp`'s lower bound).
    Maximum,
    /// The smaller (`torch.minimum`, `clamp`'s upper bound).
    Minimum,
    /// `a ** b` (`torch.pow`) for an exponent that is not a small integer or `0.5`; those
    /// become multiplications or a square root, as Inductor decomposes them.
    Pow,
}

impl BinaryOp {
    /// Every operation, for lookups by name.
    pub const ALL: [BinaryOp; 13] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Pow,
    ];

    /// The operation named `name` (`add`, `eq`, `maximum`, …).
    pub fn named(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The name used in the graph's text form.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Pow => "pow",
        }
    }

    /// Applies the operation to two floats.
    pub fn apply(self, lhs: f32, rhs: f32) -> f32 {
        match self {
            BinaryOp::Add => lhs + rhs,
            BinaryOp::Sub => lhs - rhs,
            BinaryOp::Mul => lhs * rhs,
            BinaryOp::Div => lhs / rhs,
            BinaryOp::Eq => f32::from(u8::from(lhs == rhs)),
            BinaryOp::Ne => f32::from(u8::from(lhs != rhs)),
            BinaryOp::Lt => f32::from(u8::from(lhs < rhs)),
            BinaryOp::Le => f32::from(u8::from(lhs <= rhs)),
            BinaryOp::Gt => f32::from(u8::from(lhs > rhs)),
            BinaryOp::Ge => f32::from(u8::from(lhs >= rhs)),
            BinaryOp::Maximum => lhs.max(rhs),
            BinaryOp::Minimum => lhs.min(rhs),
            BinaryOp::Pow => lhs.powf(rhs),
        }
    }

    /// The infix operator (`+`, `==`, …) of the schedule's text and of WGSL, or for
    /// `Maximum`/`Minimum`/`Pow` the function (`max`, `min`, `pow`: see `is_function`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Maximum => "max",
            BinaryOp::Minimum => "min",
            BinaryOp::Pow => "pow",
        }
    }

    /// Whether it is written as a function of its operands (`max(a, b)`), not infix.
    pub fn is_function(self) -> bool {
        matches!(self, BinaryOp::Maximum | BinaryOp::Minimum | BinaryOp::Pow)
    }

    /// Whether the result is a truth value (1.0 or 0.0).
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
}

/// A Python number combined with a tensor: a float literal or a (symbolic) size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Scalar {
    /// A float or int literal.
    Number(f64),
    /// A size expression such as `x.shape[1]`, known only at run time.
    Size(#[serde(serialize_with = "crate::graph::print::serialize_display")] Expr),
}

/// How the values of a parameter or constant tensor are made. Random fills are seeded by
/// the tensor's name, so every run of the same program sees the same numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Init {
    /// Uniform in `[-bound, bound]` (`nn.Linear`/`nn.Conv*` use `1/sqrt(fan_in)`).
    Uniform {
        /// Half-width of the interval.
        bound: f64,
    },
    /// Normal with mean 0 (`torch.randn` has `std` 1; `randn(…) * 0.02` scales it).
    Normal {
        /// Standard deviation.
        std: f64,
    },
    /// Uniform in `[0, 1)` (`torch.rand`).
    Unit,
    /// Every element equal (`torch.ones`, `torch.zeros`, BatchNorm's running statistics).
    Fill(f64),
    /// `start, start + step, …` (`torch.arange`).
    Arange {
        /// First value.
        start: f64,
        /// Increment.
        step: f64,
    },
    /// `nn.init.orthogonal_`: the tensor as a `shape[0] × rest` matrix whose rows (or
    /// columns, whichever are fewer) are orthonormal, times `gain`: a seeded normal
    /// matrix's Q factor with R's diagonal made positive, as PyTorch takes it.
    Orthogonal {
        /// Scale of the orthonormal matrix.
        gain: f64,
    },
    /// Values the program computed before the capture, row-major: a buffer made by ops
    /// (nanoGPT's causal mask, `torch.tril(torch.ones(n, n))`), or a script's tensor.
    Data(#[serde(serialize_with = "serialize_len")] std::sync::Arc<[f32]>),
}

/// `Init::Data` in JSON: how many values, not the values.
fn serialize_len<S: serde::Serializer>(
    values: &std::sync::Arc<[f32]>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(values.len() as u64)
}

/// Reductions over some dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ReduceKind {
    /// Sum.
    Sum,
    /// Arithmetic mean.
    Mean,
    /// Maximum.
    Amax,
}

impl ReduceKind {
    /// Whether the reduction has an identity, so that it is defined over an empty dim (a
    /// sum is 0, a mean NaN; a maximum is not).
    pub fn has_identity(self) -> bool {
        !matches!(self, ReduceKind::Amax)
    }

    /// The name used in the graph's text form.
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Mean => "mean",
            ReduceKind::Amax => "amax",
        }
    }

    /// The accumulator's starting value, the identity of `combine`. Sums start at `+0.0`,
    /// as the WGSL kernels do (Rust's `Iterator::sum` would start at `-0.0`).
    pub fn identity(self) -> f32 {
        match self {
            ReduceKind::Sum | ReduceKind::Mean => 0.0,
            ReduceKind::Amax => f32::NEG_INFINITY,
        }
    }

    /// Folds one more value into the accumulator.
    pub fn combine(self, acc: f32, v: f32) -> f32 {
        match self {
            ReduceKind::Sum | ReduceKind::Mean => acc + v,
            ReduceKind::Amax => acc.max(v),
        }
    }

    /// The result from the accumulator of `count` values: the mean divides, the rest keep it.
    pub fn finish(self, acc: f32, count: usize) -> f32 {
        match self {
            ReduceKind::Mean => acc / count as f32,
            ReduceKind::Sum | ReduceKind::Amax => acc,
        }
    }
}

/// Pooling flavours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PoolKind {
    /// Maximum over the window (padding counts as -inf).
    Max,
    /// Mean over the window (padding counts as 0 and is included, PyTorch's default).
    Avg,
}

impl PoolKind {
    /// The reduction over one window. Padded positions are skipped, which is the same as
    /// reading them as -inf for `Max` and as 0 for `Avg`; `Avg` then finishes with the whole
    /// window's size as the count.
    pub fn reduction(self) -> ReduceKind {
        match self {
            PoolKind::Max => ReduceKind::Amax,
            PoolKind::Avg => ReduceKind::Mean,
        }
    }
}

/// What a node computes. Operand tensors are the node's `inputs`, in the order listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Op {
    /// A tensor argument of the compiled function.
    Input {
        /// Parameter name in `forward` (or the function).
        name: String,
    },
    /// A module parameter or buffer (static shape), e.g. `layers.0.weight`.
    Param {
        /// Dotted attribute path from the root module.
        path: String,
        /// How its values are made (PyTorch's default initialisation, seeded).
        init: Init,
    },
    /// A module-level constant tensor such as `W = torch.randn(64, 32)`.
    Constant {
        /// The global's name.
        name: String,
        /// How its values are made.
        init: Init,
    },
    /// `x @ weight.T + bias`; inputs: x, weight, optional bias.
    Linear,
    /// `torch.matmul` with broadcasting batch dimensions; inputs: a, b.
    Matmul,
    /// N-d convolution (N = `stride.len()`); inputs: x, weight, optional bias.
    Conv {
        /// Stride per spatial dimension.
        stride: Vec<i64>,
        /// Zero padding per spatial dimension.
        padding: Vec<i64>,
        /// Dilation per spatial dimension.
        dilation: Vec<i64>,
        /// Channel groups: output channel `o` reads only the input channels of its group,
        /// `o / (out / groups)` (depthwise when `groups` is the channel count).
        groups: i64,
    },
    /// N-d transposed convolution (`nn.ConvTranspose*d`, the gradient of a convolution):
    /// input position `i` and tap `t` add to output position `i * stride - padding + t *
    /// dilation`; inputs: x, weight `[in, out / groups, *k]`, optional bias.
    ConvTranspose {
        /// Stride per spatial dimension.
        stride: Vec<i64>,
        /// Padding removed from both ends per spatial dimension.
        padding: Vec<i64>,
        /// Extra size added at the end per spatial dimension.
        output_padding: Vec<i64>,
        /// Dilation per spatial dimension.
        dilation: Vec<i64>,
        /// Channel groups, as for `Conv`.
        groups: i64,
    },
    /// Batch normalisation in eval mode; inputs: x, running_mean, running_var, weight, bias.
    BatchNorm {
        /// Added to the variance.
        eps: f64,
    },
    /// Layer normalisation over the last `normalized_dims` dimensions; inputs: x, optional
    /// weight and bias.
    LayerNorm {
        /// How many trailing dimensions are normalised.
        normalized_dims: usize,
        /// Added to the variance.
        eps: f64,
    },
    /// 2-d pooling over the last two dimensions.
    Pool {
        /// Max or average.
        kind: PoolKind,
        /// Window size.
        kernel: Vec<i64>,
        /// Window step.
        stride: Vec<i64>,
        /// Implicit padding.
        padding: Vec<i64>,
    },
    /// Elementwise function.
    Unary(UnaryOp),
    /// Elementwise arithmetic of two broadcast tensors.
    Binary(BinaryOp),
    /// Elementwise arithmetic of a tensor and a Python number.
    Scalar {
        /// The operation.
        op: BinaryOp,
        /// The number.
        scalar: Scalar,
        /// False for `2 - x` (the scalar is the left operand).
        tensor_on_left: bool,
    },
    /// `torch.where(cond, a, b)` (and `masked_fill`): `a` where `cond` is non-zero, else
    /// `b`; inputs: cond, a, b, broadcast together.
    Where,
    /// `torch.tril` / `torch.triu` over the last two dimensions: elements with
    /// `col - row <= diagonal` (tril) or `>= diagonal` (triu) kept, the others zero.
    Triangle {
        /// `triu` rather than `tril`.
        upper: bool,
        /// The diagonal's offset.
        diagonal: i64,
    },
    /// `torch.arange(start, start + n * step, step)` whose length `n` (the node's one size)
    /// may be symbolic; no inputs.
    Arange {
        /// First value.
        start: f64,
        /// Increment.
        step: f64,
    },
    /// `torch.randn_like` / `rand_like` (and `randn`/`rand` of symbolic sizes) in
    /// `forward`: element `i` is [`random_value`]`(kind, seed, i)`, a counter-based
    /// generator every backend computes alike; no inputs. Seeded: every call draws the same
    /// numbers, as if `torch.manual_seed` ran before it.
    Random {
        /// Uniform in [0, 1) or standard normal.
        kind: RandomKind,
        /// The stream, one per random op of the graph.
        seed: u32,
    },
    /// `torch.full(size, value)` (`zeros`, `ones`) whose sizes may be symbolic; no inputs.
    Full {
        /// Every element's value.
        value: f64,
    },
    /// Softmax along one dimension.
    Softmax {
        /// The normalised dimension.
        dim: usize,
    },
    /// Log-softmax along one dimension (`log_softmax`): `x - max - log(sum(exp(x - max)))`.
    LogSoftmax {
        /// The normalised dimension.
        dim: usize,
    },
    /// Sum, mean or max over dimensions.
    Reduce {
        /// Which reduction.
        kind: ReduceKind,
        /// Reduced dimensions, ascending.
        dims: Vec<usize>,
        /// Whether reduced dimensions stay as size 1.
        keepdim: bool,
    },
    /// `view`, `reshape` or `flatten`: same elements, the node's shape.
    Reshape,
    /// `expand` / `expand_as`: size-1 dims (and new leading dims) repeated to the node's
    /// shape without a copy, as broadcasting reads them.
    Expand,
    /// `permute` / `transpose`: output dim `i` is input dim `perm[i]`.
    Permute {
        /// The permutation.
        perm: Vec<usize>,
    },
    /// `x[..., start:start+len*step:step]` along one dimension (len is the node's size there).
    Slice {
        /// The sliced dimension.
        dim: usize,
        /// First index taken.
        #[serde(serialize_with = "crate::graph::print::serialize_display")]
        start: Expr,
        /// Step between taken indices (positive).
        step: i64,
    },
    /// `F.pad(x, [before, after], value=value)` along one dimension (constant mode): output
    /// position `i` reads input position `i - before` where that is inside the input and is
    /// `value` elsewhere; a negative `before` or `after` crops. The node's size there is the
    /// input's plus both; either may be symbolic and of either sign, with no guard on it.
    Pad {
        /// The padded dimension.
        dim: usize,
        /// Positions added before the first element (removed, when negative).
        #[serde(serialize_with = "crate::graph::print::serialize_display")]
        before: Expr,
        /// Positions added after the last element (removed, when negative).
        #[serde(serialize_with = "crate::graph::print::serialize_display")]
        after: Expr,
        /// The value of added positions.
        value: f64,
    },
    /// Linear interpolation along one dimension (`F.interpolate` in mode `linear`, and
    /// `bilinear` as one per spatial dim, the last first): output position `i` reads input
    /// position `src = (i + 0.5)·in/out − 0.5`, clamped to `[0, in − 1]` (with
    /// `align_corners`, `i·(in − 1)/(out − 1)`), mixing its two neighbours by the fraction;
    /// `out` is the node's size there.
    UpsampleLinear {
        /// The resized dimension.
        dim: usize,
        /// Whether the first and last positions of input and output align.
        align_corners: bool,
    },
    /// Nearest-neighbour resizing along one dimension (`F.interpolate` in mode `nearest`
    /// to a `size=`, one per spatial dim): output position `i` reads input position
    /// [`nearest_source`]`(i, in, out)`; `out` is the node's size there.
    UpsampleNearest {
        /// The resized dimension.
        dim: usize,
    },
    /// `x[..., index]`: removes dimension `dim`.
    Select {
        /// The removed dimension.
        dim: usize,
        /// The index taken (already non-negative).
        #[serde(serialize_with = "crate::graph::print::serialize_display")]
        index: Expr,
    },
    /// `torch.cat` along a dimension.
    Cat {
        /// The joined dimension.
        dim: usize,
    },
    /// `nn.Embedding`; inputs: indices (their values are truncated to integers and wrapped
    /// into the table), weight.
    Embedding,
    /// `x.to(dtype)` (`long()`, `float()`, `bool()`): a float made an integer rounds toward
    /// zero, anything made bool is whether it is non-zero; an integer or bool made a float
    /// keeps its value (the float32 carrier already holds it).
    Cast {
        /// The result's dtype.
        to: DType,
    },
    /// The function's result; inputs are the returned tensors in order.
    Output,
}

impl Op {
    /// The operation's name in the text form (`linear`, `conv2d`, …).
    pub fn name(&self) -> String {
        match self {
            Op::Input { .. } => "input".into(),
            Op::Param { .. } => "param".into(),
            Op::Constant { .. } => "constant".into(),
            Op::Linear => "linear".into(),
            Op::Matmul => "matmul".into(),
            Op::Conv { stride, .. } => format!("conv{}d", stride.len()),
            Op::ConvTranspose { stride, .. } => format!("conv_transpose{}d", stride.len()),
            Op::BatchNorm { .. } => "batch_norm".into(),
            Op::LayerNorm { .. } => "layer_norm".into(),
            Op::Pool {
                kind: PoolKind::Max,
                ..
            } => "max_pool2d".into(),
            Op::Pool {
                kind: PoolKind::Avg,
                ..
            } => "avg_pool2d".into(),
            Op::Unary(op) => op.name().into(),
            Op::Binary(op) | Op::Scalar { op, .. } => op.name().into(),
            Op::Where => "where".into(),
            Op::Triangle { upper: false, .. } => "tril".into(),
            Op::Triangle { upper: true, .. } => "triu".into(),
            Op::Arange { .. } => "arange".into(),
            Op::Full { .. } => "full".into(),
            Op::Random {
                kind: RandomKind::Unit,
                ..
            } => "rand".into(),
            Op::Random {
                kind: RandomKind::Normal,
                ..
            } => "randn".into(),
            Op::Softmax { .. } => "softmax".into(),
            Op::LogSoftmax { .. } => "log_softmax".into(),
            Op::Reduce { kind, .. } => kind.name().into(),
            Op::Reshape => "reshape".into(),
            Op::Expand => "expand".into(),
            Op::Permute { .. } => "permute".into(),
            Op::Slice { .. } => "slice".into(),
            Op::Pad { .. } => "pad".into(),
            Op::UpsampleLinear { .. } => "upsample_linear".into(),
            Op::UpsampleNearest { .. } => "upsample_nearest".into(),
            Op::Select { .. } => "select".into(),
            Op::Cat { .. } => "cat".into(),
            Op::Embedding => "embedding".into(),
            Op::Cast { to } => format!("to_{}", to.name()),
            Op::Output => "output".into(),
        }
    }

    /// Whether the op is a view: its value at a position is read from its input through
    /// index arithmetic (a mask, a mix of neighbours), wherever it is used, with no kernel
    /// of its own.
    pub fn is_view(&self) -> bool {
        matches!(
            self,
            Op::Reshape
                | Op::Expand
                | Op::Permute { .. }
                | Op::Slice { .. }
                | Op::Select { .. }
                | Op::Pad { .. }
                | Op::UpsampleLinear { .. }
                | Op::UpsampleNearest { .. }
        )
    }

    /// Whether the op applies the same function to every element independently.
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Op::Unary(_)
                | Op::Binary(_)
                | Op::Scalar { .. }
                | Op::Where
                | Op::Triangle { .. }
                | Op::Arange { .. }
                | Op::Full { .. }
                | Op::Random { .. }
                | Op::Cast { .. }
        )
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
    #[serde(serialize_with = "crate::graph::print::serialize_shape")]
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
        let name = self.unique_name(name_hint);
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

    fn unique_name(&self, hint: &str) -> String {
        let taken = |name: &str| self.nodes.iter().any(|n| n.name == name);
        if !taken(hint) {
            return hint.to_string();
        }
        (1..)
            .map(|i| format!("{hint}_{i}"))
            .find(|name| !taken(name))
            .expect("an unused suffix exists")
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
