//! The ops of the graph: what each node computes (`Op`), the elementwise and reduction
//! kinds with their scalar maths, and how state is initialised (`Init`).
//!
//! In: nothing but sizes (`symbolic`) and dtypes. Out: the op types every floor above
//! matches on. Invariant: an op's scalar maths lives with its kind here (or in
//! `numerics.rs`), and both the CPU reference and the CPU backend call it, never a copy.

use super::DType;
use super::numerics::erf;
use crate::symbolic::Expr;
use serde::Serialize;

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
    Size(#[serde(serialize_with = "crate::graph::serial::serialize_display")] Expr),
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

/// How `scaled_dot_product_attention`'s `attn_mask` acts on the scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AttentionMask {
    /// No mask.
    None,
    /// A bool mask: a score where it is False is `-inf` (no weight).
    Keep,
    /// A float mask, added to the scores.
    Add,
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
    /// `F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal=, scale=)`, one node as
    /// Dynamo's graph keeps it: `softmax(q @ kᵀ · scale + mask) @ v`, the scale
    /// `1/sqrt(q.size(-1))` unless given; inputs: q, k, v, and the mask when there is one.
    /// Lowering rewrites it into its products and softmax (`lower::decompose`).
    Attention {
        /// `is_causal`: a key after the query's position is masked out.
        causal: bool,
        /// `scale=`, when given.
        scale: Option<f64>,
        /// How the fourth input, if any, masks the scores.
        mask: AttentionMask,
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
        #[serde(serialize_with = "crate::graph::serial::serialize_display")]
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
        #[serde(serialize_with = "crate::graph::serial::serialize_display")]
        before: Expr,
        /// Positions added after the last element (removed, when negative).
        #[serde(serialize_with = "crate::graph::serial::serialize_display")]
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
        #[serde(serialize_with = "crate::graph::serial::serialize_display")]
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
            Op::Attention { .. } => "scaled_dot_product_attention".into(),
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
