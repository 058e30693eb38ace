//! One inference rule per op: output shape from input shapes, with constraint propagation.
//!
//! Input: operand shapes (symbolic) and the op's attributes. Output: the result's shape, or
//! a `ShapeError` naming the op, its source position and both shapes. Every size the rule
//! needs to compare goes through `ShapeEnv::expect_equal` / `evaluate`, which records the
//! guard (PyTorch's meta kernels do the same through `ShapeEnv.evaluate_expr`).

use super::{Asker, Origin, ShapeEnv, ShapeError, layout};
use crate::graph::{ReduceKind, Shape, Span, shape_to_string};
use crate::symbolic::{CmpOp, Expr, Rel};
pub use layout::numel;

/// Who is asking: the op's display name and where it was called.
#[derive(Clone, Debug)]
pub struct OpCtx {
    /// `linear 'linear_1'`-style description.
    pub what: String,
    /// Source position of the call.
    pub span: Span,
}

impl OpCtx {
    /// The origin of the guards this op records.
    pub fn origin(&self) -> Origin {
        Origin {
            what: Asker::Op(self.what.clone()),
            span: Some(self.span),
        }
    }

    fn mismatch(&self, detail: String, lhs: &[Expr], rhs: &[Expr]) -> ShapeError {
        ShapeError::Mismatch {
            op: self.what.clone(),
            span: self.span,
            detail,
            lhs: shape_to_string(lhs),
            rhs: shape_to_string(rhs),
        }
    }

    /// An error that is not a two-shape mismatch.
    pub fn invalid(&self, detail: impl Into<String>) -> ShapeError {
        ShapeError::Invalid {
            op: self.what.clone(),
            span: self.span,
            detail: detail.into(),
        }
    }
}

/// Normalises a possibly negative dimension index against `rank`.
pub fn normalize_dim(ctx: &OpCtx, dim: i64, rank: usize) -> Result<usize, ShapeError> {
    // A 0-d tensor has one dim to name, as PyTorch wraps a scalar: 0 or -1.
    let rank_i = rank as i64;
    let fixed = if dim < 0 { dim + rank_i.max(1) } else { dim };
    if (0..rank_i.max(1)).contains(&fixed) {
        Ok(fixed as usize)
    } else {
        Err(ctx.invalid(format!(
            "dimension out of range (expected to be in range of [{}, {}], but got {dim})",
            -rank_i.max(1),
            rank_i.max(1) - 1
        )))
    }
}

/// Whether `size` is 1 for these inputs; a symbolic size that is 1 now gets a guard.
fn is_one(env: &mut ShapeEnv, size: &Expr, origin: &Origin) -> bool {
    match env.replace(size).as_int() {
        Some(value) => value == 1,
        None => env.evaluate(&Rel::new(size.clone(), CmpOp::Eq, Expr::int(1)), origin),
    }
}

/// Whether `x.squeeze(d)` drops a dim of `size`: PyTorch asks whether it is 1; a size
/// symbol's range (from 2) answers no without a guard, anything the ranges leave open is
/// answered for these sizes and guarded.
pub fn squeezes(env: &mut ShapeEnv, ctx: &OpCtx, size: &Expr) -> bool {
    is_one(env, size, &ctx.origin())
}

/// An elementwise op on one tensor (a function of it, or it with a Python number): PyTorch
/// broadcasts it on its own (`_broadcast_shapes`, or `infer_size` against the number as a
/// 0-d tensor), which asks of every dim whether it is 1. A size symbol's range answers no
/// without a guard; a derived size that may be 1 (`s1 - 1` of `x[:, 1:]`) is answered for
/// these sizes and guarded (`s1 - 1 != 1`, measured on PyTorch 2.15 for relu, exp, `x * 2`,
/// `1 + x`, comparisons, where, layer_norm; not for softmax or sum).
pub fn pointwise(env: &mut ShapeEnv, ctx: &OpCtx, x: &[Expr]) -> Shape {
    let origin = ctx.origin();
    for dim in x {
        is_one(env, dim, &origin);
    }
    x.iter().map(|dim| env.replace(dim)).collect()
}

/// The sizes of a tensor an op creates (`torch.ones(n)`, `torch.arange(n)`): each must be
/// non-negative, which a size made from an int argument is not by its range alone, so the
/// check is a guard (PyTorch's `s >= 0` when it builds the fake tensor); a negative one is
/// PyTorch's error.
pub fn created(env: &mut ShapeEnv, ctx: &OpCtx, shape: Shape) -> Result<Shape, ShapeError> {
    let origin = ctx.origin();
    let mut checked = Vec::with_capacity(shape.len());
    for size in shape {
        let non_negative = Rel::new(size.clone(), CmpOp::Ge, Expr::int(0));
        if !env.evaluate(&non_negative, &origin) {
            let value = env.replace(&size);
            return Err(ctx.invalid(format!(
                "Trying to create tensor with negative dimension {value}"
            )));
        }
        checked.push(env.replace(&size));
    }
    Ok(checked)
}

/// A fresh (not a view) tensor whose element count depends on an int argument: PyTorch's
/// `is_contiguous` asks whether it has fewer than 2 elements, which an int's range does not
/// decide (a size's range does: sizes start at 2), so the answer becomes a guard
/// (`x[:n] + 1` at n = 3 gives `2 <= n`, at n = 1 `n == 1`).
pub fn fresh(env: &mut ShapeEnv, ctx: &OpCtx, shape: &[Expr]) {
    let numel = shape.iter().fold(Expr::int(1), |acc, d| &acc * d);
    let numel = env.replace(&numel);
    if numel
        .free_syms()
        .iter()
        .any(|&sym| env.is_int_argument(sym))
    {
        env.evaluate(&Rel::new(numel, CmpOp::Ge, Expr::int(2)), &ctx.origin());
    }
}

/// NumPy-style broadcasting of two shapes (elementwise ops, matmul batch dims).
pub fn broadcast(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    lhs: &[Expr],
    rhs: &[Expr],
) -> Result<Shape, ShapeError> {
    let rank = lhs.len().max(rhs.len());
    let origin = ctx.origin();
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let pick = |shape: &[Expr]| {
            (i + shape.len())
                .checked_sub(rank)
                .map(|d| shape[d].clone())
        };
        // PyTorch's `infer_size` takes a missing dim as 1 and asks first whether the left
        // one is 1: a missing right dim asks it of the left one, a missing left one nothing.
        let dim = match (pick(lhs), pick(rhs)) {
            (Some(a), None) => {
                is_one(env, &a, &origin);
                a
            }
            (None, Some(b)) => b,
            (Some(a), Some(b)) => {
                if is_one(env, &a, &origin) {
                    b
                } else if is_one(env, &b, &origin) || env.expect_equal(&a, &b, &origin) {
                    a
                } else {
                    let detail = format!(
                        "the size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {i}",
                        env.hint(&a).unwrap_or_default(),
                        env.hint(&b).unwrap_or_default()
                    );
                    return Err(ctx.mismatch(detail, lhs, rhs));
                }
            }
            (None, None) => unreachable!("i < rank means one operand has the dimension"),
        };
        out.push(env.replace(&dim));
    }
    Ok(out)
}

/// `x.expand(target)`: new leading dims take the target's size; an existing dim keeps its
/// size (`-1`, here `None`, or an equal size, guarded when symbolic) or, when it is 1,
/// takes the target's.
pub fn expand(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    target: &[Option<Expr>],
) -> Result<Shape, ShapeError> {
    let target_text = || {
        let items: Vec<String> = target
            .iter()
            .map(|size| size.as_ref().map_or("-1".into(), |s| s.to_string()))
            .collect();
        format!("[{}]", items.join(", "))
    };
    let Some(new_dims) = target.len().checked_sub(x.len()) else {
        return Err(ctx.invalid(format!(
            "the number of sizes provided ({}) must be greater or equal to the number of \
             dimensions in the tensor ({})",
            target.len(),
            x.len()
        )));
    };
    let origin = ctx.origin();
    let mut out = Vec::with_capacity(target.len());
    for (d, size) in target.iter().enumerate() {
        let existing = d.checked_sub(new_dims).map(|i| &x[i]);
        let dim = match (existing, size) {
            (None, None) => {
                return Err(ctx.invalid(format!(
                    "the expanded size of the tensor (-1) isn't allowed in a leading, \
                     non-existing dimension {d}"
                )));
            }
            (None, Some(size)) => size.clone(),
            (Some(existing), None) => existing.clone(),
            (Some(existing), Some(size)) => {
                if env.expect_equal(existing, size, &origin) {
                    existing.clone()
                } else if is_one(env, existing, &origin) {
                    size.clone()
                } else {
                    // PyTorch's wording under torch.compile (its fake tensors'), with
                    // where: eager PyTorch words it as "The expanded size … must match".
                    return Err(ctx.invalid(format!(
                        "expand: attempting to expand a dimension of length {} -> {}! \
                         (dimension {d}, target sizes {}, tensor sizes {})",
                        env.hint(existing).unwrap_or_default(),
                        env.hint(size).unwrap_or_default(),
                        target_text(),
                        shape_to_string(x)
                    )));
                }
            }
        };
        out.push(env.replace(&dim));
    }
    Ok(out)
}

/// `scaled_dot_product_attention(q, k, v, mask?)`: the scores `q @ kᵀ` as `matmul` has
/// them (its guards: the head sizes equal, the batch dims broadcast), the mask broadcast to
/// them, then `scores @ v`. The scale is a number, never a guard on the head size.
pub fn attention(env: &mut ShapeEnv, ctx: &OpCtx, shapes: &[Shape]) -> Result<Shape, ShapeError> {
    let (q, k, v) = (&shapes[0], &shapes[1], &shapes[2]);
    if q.len() < 2 || k.len() < 2 || v.len() < 2 {
        return Err(ctx.invalid(
            "scaled_dot_product_attention needs query, key and value of at least 2 dims",
        ));
    }
    let mut key_t = k.clone();
    let rank = key_t.len();
    key_t.swap(rank - 2, rank - 1);
    let scores = matmul(env, ctx, q, &key_t)?;
    let scores = match shapes.get(3) {
        Some(mask) => broadcast(env, ctx, &scores, mask)?,
        None => scores,
    };
    matmul(env, ctx, &scores, v)
}

/// `torch.matmul`: contraction `a[-1] == b[-2]`, batch dims broadcast, 1-d operands promoted.
pub fn matmul(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    a: &[Expr],
    b: &[Expr],
) -> Result<Shape, ShapeError> {
    if a.is_empty() || b.is_empty() {
        return Err(ctx.invalid("both arguments to matmul need to be at least 1D"));
    }
    let k_a = &a[a.len() - 1];
    let k_b = if b.len() == 1 { &b[0] } else { &b[b.len() - 2] };
    if !env.expect_equal(k_a, k_b, &ctx.origin()) {
        let detail = format!(
            "contraction sizes differ: a.size(-1) = {} but b.size({}) = {}",
            env.hint(k_a).unwrap_or_default(),
            if b.len() == 1 { -1 } else { -2 },
            env.hint(k_b).unwrap_or_default()
        );
        return Err(ctx.mismatch(detail, a, b));
    }
    let a_batch = if a.len() > 2 {
        &a[..a.len() - 2]
    } else {
        &[][..]
    };
    let b_batch = if b.len() > 2 {
        &b[..b.len() - 2]
    } else {
        &[][..]
    };
    let mut out = broadcast(env, ctx, a_batch, b_batch)?;
    if a.len() >= 2 {
        out.push(a[a.len() - 2].clone());
    }
    if b.len() >= 2 {
        out.push(b[b.len() - 1].clone());
    }
    Ok(out.iter().map(|d| env.replace(d)).collect())
}

/// `nn.Linear`: `x[..., in] @ W[out, in].T`; the last input dim must equal `in_features`.
pub fn linear(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    weight: &[Expr],
) -> Result<Shape, ShapeError> {
    let Some(last) = x.last() else {
        return Err(ctx.invalid("linear needs an input with at least one dimension"));
    };
    if !env.expect_equal(last, &weight[1], &ctx.origin()) {
        let detail = format!(
            "mat1 and mat2 shapes cannot be multiplied: input's last dimension is {} but in_features is {}",
            env.hint(last).unwrap_or_default(),
            env.hint(&weight[1]).unwrap_or_default()
        );
        return Err(ctx.mismatch(detail, x, weight));
    }
    let mut out: Shape = x[..x.len() - 1].iter().map(|d| env.replace(d)).collect();
    out.push(weight[0].clone());
    Ok(out)
}

/// Output length of a sliding window: `⌊(L + 2p − d(k−1) − 1)/s⌋ + 1`.
///
/// Records `L + 2p >= d(k-1) + 1` (the input must cover one window).
pub fn window_output(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    length: &Expr,
    kernel: i64,
    stride: i64,
    padding: i64,
    dilation: i64,
) -> Result<Expr, ShapeError> {
    let origin = ctx.origin();
    let padded = length + &Expr::int(2 * padding);
    let window = dilation * (kernel - 1) + 1;
    if !env.evaluate(
        &Rel::new(padded.clone(), CmpOp::Ge, Expr::int(window)),
        &origin,
    ) {
        return Err(ctx.invalid(format!(
            "input length {} with padding {padding} is smaller than the kernel's extent {window}",
            env.hint(length).unwrap_or_default()
        )));
    }
    let out = (&padded - &Expr::int(window)).floor_div(&Expr::int(stride)) + 1;
    Ok(env.replace(&out))
}

/// A convolution's symbolic output length becomes 1 when it is 1 now, and is guarded `!= 1`
/// otherwise: the 0/1 specialisation PyTorch's convolution applies to the sizes it derives
/// (pooling asks no such question).
fn specialize_one(env: &mut ShapeEnv, ctx: &OpCtx, out: Expr) -> Expr {
    if out.as_int().is_none()
        && env.evaluate(
            &Rel::new(out.clone(), CmpOp::Eq, Expr::int(1)),
            &ctx.origin(),
        )
    {
        return Expr::int(1);
    }
    out
}

/// `nn.ConvTranspose1d/2d`: `x[N, C, *L]`, `w[C, O / groups, *k]`; each output length is
/// `(L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1`.
pub fn conv_transpose(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    weight: &[Expr],
    window: &ConvWindow,
    output_padding: &[i64],
) -> Result<Shape, ShapeError> {
    let ConvWindow {
        stride,
        padding,
        dilation,
        groups,
    } = window;
    let spatial = stride.len();
    check_conv_input(ctx, x, spatial)?;
    for d in 0..spatial {
        if output_padding[d] >= stride[d] && output_padding[d] >= dilation[d] {
            return Err(ctx.invalid(format!(
                "output padding must be smaller than either stride or dilation, but got \
                 output_padding {} with stride {} and dilation {} in spatial dimension {d}",
                output_padding[d], stride[d], dilation[d]
            )));
        }
    }
    if !env.expect_equal(&x[1], &weight[0], &ctx.origin()) {
        let detail = format!(
            "expected input to have {} channels, but got {} channels instead",
            env.hint(&weight[0]).unwrap_or_default(),
            env.hint(&x[1]).unwrap_or_default()
        );
        return Err(ctx.mismatch(detail, x, weight));
    }
    let mut out = vec![env.replace(&x[0]), &weight[1] * *groups];
    for d in 0..spatial {
        let kernel = weight_size(env, ctx, &weight[2 + d])?;
        let extent = dilation[d] * (kernel - 1) + output_padding[d] + 1 - 2 * padding[d];
        let length = (&x[2 + d] - &Expr::int(1)) * stride[d] + Expr::int(extent);
        let length = env.replace(&length);
        if !env.evaluate(
            &Rel::new(length.clone(), CmpOp::Ge, Expr::int(1)),
            &ctx.origin(),
        ) {
            return Err(ctx.invalid(format!(
                "the output length {} in spatial dimension {d} is not positive",
                env.hint(&length).unwrap_or_default()
            )));
        }
        out.push(length);
    }
    Ok(out)
}

/// A convolution's input is (batch, channels, *spatial).
fn check_conv_input(ctx: &OpCtx, x: &[Expr], spatial: usize) -> Result<(), ShapeError> {
    if x.len() == spatial + 2 {
        return Ok(());
    }
    Err(ctx.invalid(format!(
        "expected a {}-d input (batch, channels, {} spatial) but got {}-d input of shape {}",
        spatial + 2,
        spatial,
        x.len(),
        shape_to_string(x)
    )))
}

/// A weight size the window arithmetic needs as a number: a symbolic one (a weight passed
/// as an input under `dynamic=True`) is specialised to its value, with the guard.
fn weight_size(env: &mut ShapeEnv, ctx: &OpCtx, size: &Expr) -> Result<i64, ShapeError> {
    if let Some(value) = env.replace(size).as_int() {
        return Ok(value);
    }
    let value = env
        .hint(size)
        .ok_or_else(|| ctx.invalid(format!("the weight size {size} has no value")))?;
    env.expect_equal(size, &Expr::int(value), &ctx.origin());
    Ok(value)
}

/// A convolution's window and channel grouping, one entry per spatial dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvWindow {
    /// Step between windows.
    pub stride: Vec<i64>,
    /// Zero padding on both sides.
    pub padding: Vec<i64>,
    /// Step between window taps.
    pub dilation: Vec<i64>,
    /// Channel groups (1: every output channel reads every input channel).
    pub groups: i64,
}

/// `nn.Conv1d/2d/3d`: `x[N, C, *L]`, `w[O, C / groups, *k]`; the channel dim must match the
/// weight's times the groups.
pub fn conv(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    weight: &[Expr],
    window: &ConvWindow,
) -> Result<Shape, ShapeError> {
    let ConvWindow {
        stride,
        padding,
        dilation,
        groups,
    } = window;
    let spatial = stride.len();
    check_conv_input(ctx, x, spatial)?;
    let out_channels = weight_size(env, ctx, &weight[0])?;
    if *groups < 1 || out_channels % groups != 0 {
        return Err(ctx.invalid(format!(
            "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, \
             but got weight of size {}",
            shape_to_string(weight)
        )));
    }
    let channels = &weight[1] * *groups;
    if !env.expect_equal(&x[1], &channels, &ctx.origin()) {
        let detail = format!(
            "expected input to have {} channels, but got {} channels instead",
            env.hint(&channels).unwrap_or_default(),
            env.hint(&x[1]).unwrap_or_default()
        );
        return Err(ctx.mismatch(detail, x, weight));
    }
    let mut out = vec![env.replace(&x[0]), weight[0].clone()];
    for d in 0..spatial {
        let kernel = weight_size(env, ctx, &weight[2 + d])?;
        let length = window_output(
            env,
            ctx,
            &x[2 + d],
            kernel,
            stride[d],
            padding[d],
            dilation[d],
        )?;
        // PyTorch's 3-d convolution derives its lengths without the 0/1 specialisation
        // (measured on 2.15: `volumes.eager.txt`).
        out.push(if spatial < 3 {
            specialize_one(env, ctx, length)
        } else {
            length
        });
    }
    Ok(out)
}

/// `nn.MaxPool2d/AvgPool2d` over the last two dims of a 3-d or 4-d input.
pub fn pool2d(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
) -> Result<Shape, ShapeError> {
    if x.len() < 3 {
        return Err(ctx.invalid(format!(
            "expected a 3-d or 4-d input, got shape {}",
            shape_to_string(x)
        )));
    }
    let rank = x.len();
    let mut out: Shape = x[..rank - 2].iter().map(|d| env.replace(d)).collect();
    for d in 0..2 {
        out.push(window_output(
            env,
            ctx,
            &x[rank - 2 + d],
            kernel[d],
            stride[d],
            padding[d],
            1,
        )?);
    }
    Ok(out)
}

/// Channel check for BatchNorm: `x[N, C, …]` with `C == num_features`.
pub fn batch_norm(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    features: i64,
) -> Result<Shape, ShapeError> {
    if x.len() < 2 {
        return Err(ctx.invalid(format!(
            "expected at least a 2-d input, got shape {}",
            shape_to_string(x)
        )));
    }
    if !env.expect_equal(&x[1], &Expr::int(features), &ctx.origin()) {
        let detail = format!(
            "running_mean should contain {} elements not {features}",
            env.hint(&x[1]).unwrap_or_default()
        );
        return Err(ctx.mismatch(detail, x, &[Expr::int(features)]));
    }
    Ok(x.iter().map(|d| env.replace(d)).collect())
}

/// LayerNorm: the trailing dims must equal `normalized_shape`.
pub fn layer_norm(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    normalized: &[Expr],
) -> Result<Shape, ShapeError> {
    let expected: Shape = normalized.to_vec();
    if x.len() < normalized.len() {
        return Err(ctx.mismatch(
            "input has fewer dimensions than normalized_shape".into(),
            x,
            &expected,
        ));
    }
    // Normalising broadcasts the input against its statistics, which asks each dim whether
    // it is 1 (see `pointwise`).
    let x = pointwise(env, ctx, x);
    let tail = &x[x.len() - normalized.len()..];
    for (dim, want) in tail.iter().zip(&expected) {
        if !env.expect_equal(dim, want, &ctx.origin()) {
            let detail = format!(
                "expected trailing dims {} (normalized_shape)",
                shape_to_string(&expected)
            );
            return Err(ctx.mismatch(detail, &x, &expected));
        }
    }
    Ok(x.iter().map(|d| env.replace(d)).collect())
}

/// `view`/`reshape` with at most one `-1` (given as `None`).
///
/// Without `-1` the element counts must be equal (a guard when symbolic). With `-1` the
/// inferred size is `numel // known`, and `numel % known == 0` is guarded, as PyTorch does.
pub fn reshape(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    target: &[Option<Expr>],
) -> Result<Shape, ShapeError> {
    let origin = ctx.origin();
    let total = env.replace(&numel(x));
    let known = env.replace(&numel(
        &target.iter().flatten().cloned().collect::<Vec<_>>(),
    ));
    let inferred = target.iter().filter(|d| d.is_none()).count();
    let shown = || {
        let dims: Vec<String> = target
            .iter()
            .map(|d| d.as_ref().map_or("-1".to_string(), ToString::to_string))
            .collect();
        format!("[{}]", dims.join(", "))
    };
    if inferred > 1 {
        return Err(ctx.invalid("only one dimension can be inferred (-1)"));
    }
    if inferred == 0 {
        if !env.expect_equal(&total, &known, &origin) {
            return Err(ctx.invalid(format!(
                "shape '{}' is invalid for input of size {}",
                shown(),
                env.hint(&total).unwrap_or_default()
            )));
        }
        return Ok(target.iter().flatten().map(|d| env.replace(d)).collect());
    }
    let known_now = env.hint(&known).unwrap_or_default();
    if known_now == 0 {
        return Err(ctx.invalid(format!(
            "cannot reshape tensor of 0 elements into shape {} (the -1 is ambiguous)",
            shown()
        )));
    }
    let remainder = env.replace(&total.modulo(&known));
    let divides = match remainder.as_int() {
        Some(r) => r == 0,
        None => env.evaluate(&Rel::new(remainder, CmpOp::Eq, Expr::int(0)), &origin),
    };
    if !divides {
        return Err(ctx.invalid(format!(
            "shape '{}' is invalid for input of size {}",
            shown(),
            env.hint(&total).unwrap_or_default()
        )));
    }
    let rest = env.replace(&total.floor_div(&known));
    Ok(target
        .iter()
        .map(|d| d.as_ref().map_or(rest.clone(), |d| env.replace(d)))
        .collect())
}

/// How a reshape chooses between a view and a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReshapeKind {
    /// `x.reshape(...)` and `flatten` (ATen's `reshape`): a view where the memory allows
    /// one, else a copy.
    Reshape,
    /// `x.view(...)`: a view, or PyTorch's error.
    View,
}

/// `x.reshape(target)` or `x.view(target)` of a tensor of shape `x` laid out as `strides`:
/// the result's shape and strides, deciding view or copy as PyTorch 2.15 does (the
/// questions are `layout`'s).
///
/// ATen's `reshape` of a contiguous tensor is its `view`, which under `torch.compile` is
/// `torch._refs`' `_reshape_view_helper` after `infer_size`; of any other tensor it is
/// ATen's `infer_size`, then `computeStride`, then a view or `_unsafe_view` of a contiguous
/// copy (the helper again, on the copy).
pub fn reshape_strided(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    x: &[Expr],
    strides: &[Expr],
    target: &[Option<Expr>],
    kind: ReshapeKind,
) -> Result<(Shape, Shape), ShapeError> {
    let origin = ctx.origin();
    if kind == ReshapeKind::View || layout::is_contiguous(env, &origin, x, strides) {
        let shape = reshape(env, ctx, x, target)?;
        let known = numel(&target.iter().flatten().cloned().collect::<Vec<_>>());
        let total = numel(x);
        let exact = target.contains(&None).then_some((&total, &known));
        return match layout::view(env, &origin, x, strides, &shape, exact) {
            Some(view_strides) => Ok((shape, view_strides)),
            None => Err(ShapeError::NotViewable {
                op: "view".into(),
                span: ctx.span,
                shape: x.iter().map(|d| env.replace(d)).collect(),
                strides: strides.iter().map(|s| env.replace(s)).collect(),
                target: shape,
            }),
        };
    }
    // ATen's `infer_size` asks `numel == k or numel % k == 0` as one guard; Tailor records
    // the equivalent `numel % k == 0` (k > 0: the first implies the second).
    let shape = reshape(env, ctx, x, target)?;
    if let Some(view_strides) = layout::compute_stride(env, &origin, x, strides, &shape) {
        return Ok((shape, view_strides));
    }
    // The copy is viewed as `shape` by the helper, whose `infer_size` now sees no `-1` and
    // asks for the element count again (`s0*s1 == 4*((s0*s1)//4)`).
    env.expect_equal(&numel(x), &numel(&shape), &origin);
    let fresh = layout::contiguous(x);
    layout::view(env, &origin, x, &fresh, &shape, None);
    let strides = layout::contiguous(&shape);
    Ok((shape, strides))
}

/// `torch.cat`: all dims but `dim` must agree; `dim` adds up.
pub fn cat(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    parts: &[Shape],
    dim: usize,
) -> Result<Shape, ShapeError> {
    let first = &parts[0];
    let mut out = first.clone();
    for part in &parts[1..] {
        if part.len() != first.len() {
            return Err(ctx.mismatch(
                "tensors must have the same number of dimensions".into(),
                first,
                part,
            ));
        }
        for d in 0..first.len() {
            if d == dim {
                out[d] = &out[d] + &part[d];
            } else if !env.expect_equal(&first[d], &part[d], &ctx.origin()) {
                let detail = format!(
                    "sizes of tensors must match except in dimension {dim}; they differ in dimension {d}"
                );
                return Err(ctx.mismatch(detail, first, part));
            }
        }
    }
    Ok(out.iter().map(|d| env.replace(d)).collect())
}

/// Reduction: drops (or keeps as 1) the reduced dims.
pub fn reduce(
    ctx: &OpCtx,
    kind: ReduceKind,
    x: &[Expr],
    dims: &[usize],
    keepdim: bool,
) -> Result<Shape, ShapeError> {
    // A maximum has no identity to start from: over an empty dim it is PyTorch's error. (A
    // size 0 is always a constant: 0/1 specialisation.)
    if !kind.has_identity() && dims.iter().any(|&d| x[d].as_int() == Some(0)) {
        return Err(ctx.invalid(
            "reducing over zero-size dimension for reduction operation without identity",
        ));
    }
    Ok(x.iter()
        .enumerate()
        .filter_map(|(d, size)| match (dims.contains(&d), keepdim) {
            (false, _) => Some(size.clone()),
            (true, true) => Some(Expr::int(1)),
            (true, false) => None,
        })
        .collect())
}

/// A Python slice bound: clamps `index` into `[0, size]` with Python's rules, recording the
/// comparisons it needs. Negative literals count from the end.
fn clamp_bound(env: &mut ShapeEnv, origin: &Origin, index: &Expr, size: &Expr) -> Expr {
    let from_end = index.as_int().is_some_and(|v| v < 0);
    let raw = if from_end {
        size + index
    } else {
        index.clone()
    };
    let raw = env.replace(&raw);
    if env.evaluate(&Rel::new(raw.clone(), CmpOp::Lt, Expr::int(0)), origin) {
        return Expr::int(0);
    }
    if env.evaluate(&Rel::new(raw.clone(), CmpOp::Gt, size.clone()), origin) {
        return env.replace(size);
    }
    raw
}

/// `x[..., start:stop:step]` along `dim`: returns the clamped start and the new length.
pub fn slice(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    size: &Expr,
    start: Option<&Expr>,
    stop: Option<&Expr>,
    step: i64,
) -> Result<(Expr, Expr), ShapeError> {
    if step <= 0 {
        return Err(ctx.invalid("slice step must be positive"));
    }
    let origin = ctx.origin();
    let start = start.map_or(Expr::int(0), |s| clamp_bound(env, &origin, s, size));
    let stop = stop.map_or(env.replace(size), |s| clamp_bound(env, &origin, s, size));
    let span = env.replace(&(&stop - &start));
    if env.evaluate(&Rel::new(span.clone(), CmpOp::Le, Expr::int(0)), &origin) {
        return Ok((start, Expr::int(0)));
    }
    let length = env.replace(&(&span + &Expr::int(step - 1)).floor_div(&Expr::int(step)));
    Ok((start, length))
}

/// `F.pad` in constant mode along `dim` of `size`: the padded size `size + before + after`,
/// which must not be negative (guarded when symbolic, as PyTorch's `constant_pad_nd` guards
/// it; the pads' signs are not asked).
pub fn constant_pad(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    dim: usize,
    size: &Expr,
    before: &Expr,
    after: &Expr,
) -> Result<Expr, ShapeError> {
    let padded = env.replace(&(size + before + after));
    if !env.evaluate(
        &Rel::new(padded.clone(), CmpOp::Ge, Expr::int(0)),
        &ctx.origin(),
    ) {
        return Err(ctx.invalid(format!(
            "narrow(): length must be non-negative. (dimension {dim} of size {} padded by {} \
             and {})",
            env.hint(size).unwrap_or_default(),
            env.hint(before).unwrap_or_default(),
            env.hint(after).unwrap_or_default()
        )));
    }
    Ok(padded)
}

/// `F.interpolate` to `output` positions along a dim: PyTorch refuses an empty input or
/// output.
pub fn resized(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    input: &Expr,
    output: &Expr,
) -> Result<Expr, ShapeError> {
    let origin = ctx.origin();
    let positive = |env: &mut ShapeEnv, size: &Expr| {
        env.evaluate(&Rel::new(size.clone(), CmpOp::Gt, Expr::int(0)), &origin)
    };
    if !positive(env, input) || !positive(env, output) {
        return Err(ctx.invalid(format!(
            "Input and output sizes should be greater than 0, but got input (W: {}) and \
             output (W: {})",
            env.hint(input).unwrap_or_default(),
            env.hint(output).unwrap_or_default()
        )));
    }
    Ok(env.replace(output))
}

/// `x[..., index]` along a dim of `size`: checks bounds and returns the non-negative index.
pub fn select(
    env: &mut ShapeEnv,
    ctx: &OpCtx,
    size: &Expr,
    index: &Expr,
) -> Result<Expr, ShapeError> {
    let origin = ctx.origin();
    let negative = index.as_int().is_some_and(|v| v < 0);
    let fixed = env.replace(&if negative {
        size + index
    } else {
        index.clone()
    });
    let in_bounds = env.evaluate(&Rel::new(fixed.clone(), CmpOp::Ge, Expr::int(0)), &origin)
        && env.evaluate(&Rel::new(fixed.clone(), CmpOp::Lt, size.clone()), &origin);
    if !in_bounds {
        return Err(ctx.invalid(format!(
            "index {} is out of bounds for dimension with size {}",
            env.hint(index).unwrap_or_default(),
            env.hint(size).unwrap_or_default()
        )));
    }
    Ok(fixed)
}
