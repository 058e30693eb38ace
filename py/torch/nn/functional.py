"""torch.nn.functional: stateless layers, each one call into `_tailor`."""

import _tailor
from torch._missing import _missing_names
from torch._tensor import _define_aliases
from torch._tensor import _dims
from torch._tensor import _log_softmax

# F.sigmoid, F.tanh: from the op table.
_define_aliases("F.", globals())


def relu(input, inplace=False):
    return _tailor.op("relu", input)


def gelu(input, approximate="none"):
    if approximate == "tanh":
        # PyTorch's tanh approximation (GPT-2's "new GELU").
        inner = (input + input * input * input * 0.044715) * 0.7978845608028654
        return input * 0.5 * (inner.tanh() + 1.0)
    if approximate != "none":
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _tailor.op("gelu", input)


def silu(input, inplace=False):
    return _tailor.op("silu", input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _tailor.op("where", input > 0, input, input * negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return input.clamp(min_val, max_val)


def relu6(input, inplace=False):
    return input.clamp(0.0, 6.0)


def hardsigmoid(input, inplace=False):
    return relu6(input + 3.0) / 6.0


def hardswish(input, inplace=False):
    return input * relu6(input + 3.0) / 6.0


# ---- activations PyTorch decomposes (torch/_decomp, torch/_refs), over elementwise ops --


def softplus(input, beta=1.0, threshold=20.0):
    scaled = input * beta
    return _tailor.op("where", scaled > threshold, input, (scaled.exp() + 1.0).log() / beta)


def logsigmoid(input):
    return -softplus(-input)


def elu(input, alpha=1.0, inplace=False):
    return _tailor.op("where", input > 0, input, (input.exp() - 1.0) * alpha)


def celu(input, alpha=1.0, inplace=False):
    return _tailor.op("where", input > 0, input, ((input / alpha).exp() - 1.0) * alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return elu(input, _SELU_ALPHA) * _SELU_SCALE


def mish(input, inplace=False):
    return input * softplus(input).tanh()


def softsign(input):
    return input / (input.abs() + 1.0)


def tanhshrink(input):
    return input - input.tanh()


def glu(input, dim=-1):
    if input.size(dim) % 2 != 0:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.size(dim)}")
    first, second = input.chunk(2, dim)
    return first * second.sigmoid()


def prelu(input, weight):
    if weight.numel() != 1:
        shape = [1] * input.dim()
        shape[1 if input.dim() > 1 else 0] = weight.numel()
        weight = weight.reshape(shape)
    return _tailor.op("where", input > 0, input, input * weight)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability `p` and scales the rest by 1/(1-p) in training;
    the identity in eval. The mask is a seeded draw (`rand_like`), the same on every call."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    import torch
    keep = torch.rand_like(input) >= p
    return input * keep * (1.0 / (1.0 - p))


def softmax(input, dim=None, dtype=None):
    if dim is None:
        raise TypeError("softmax() needs dim")
    return _tailor.op("softmax", input, _dims(dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        # PyTorch's implicit dim (deprecated, with a warning there): 0 for 0-D, 1-D and
        # 3-D inputs, else 1.
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _log_softmax(input, dim, dtype)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """One node, as Dynamo's graph keeps it (lowering rewrites it into its products and
    softmax): softmax of the scaled scores, future positions masked with -inf under
    `is_causal`, a bool `attn_mask`'s False positions masked with -inf and a float one added,
    times the values. With dropout (training), PyTorch's math reference for it, op by op."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa:
        _tailor.unsupported("scaled_dot_product_attention with enable_gqa", "")
    if dropout_p == 0.0:
        return _tailor.op("scaled_dot_product_attention", query, key, value, attn_mask,
                          is_causal, scale)
    import math
    import torch
    target, source = query.size(-2), key.size(-2)
    factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        causal = torch.ones(target, source).tril(0)
        scores = scores.masked_fill(causal == 0, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype is torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """PyTorch's, sequence first (L, N, E): the packed (`in_proj_weight`) or separate input
    projections, heads folded into the batch, softmax of the scaled scores plus the masks
    (dropped out in training), the output projection; the attention weights averaged over
    the heads unless asked per head, or None without `need_weights`. PyTorch's path without
    weights calls scaled_dot_product_attention, the same values in another order of sums."""
    if bias_k is not None or bias_v is not None or add_zero_attn:
        _tailor.unsupported("multi_head_attention_forward with bias_k, bias_v or "
                            "add_zero_attn", "leave them None and False")
    if static_k is not None or static_v is not None:
        _tailor.unsupported("multi_head_attention_forward with static_k or static_v",
                            "pass the keys and values as key and value")
    if query.dim() == 2:
        # Unbatched (L, E): a batch of one, as PyTorch's `_mha_shape_check` allows.
        out, weights = multi_head_attention_forward(
            query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1), embed_dim_to_check,
            num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
            dropout_p, out_proj_weight, out_proj_bias, training,
            None if key_padding_mask is None else key_padding_mask.unsqueeze(0),
            need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight,
            v_proj_weight, static_k, static_v, average_attn_weights, is_causal)
        return out.squeeze(1), (None if weights is None else weights.squeeze(0))
    if query.dim() != 3:
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                             f"received {query.dim()}-D query tensor")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                           "the Transformer module method `generate_square_subsequent_mask`"
                           " to create this mask.")
    target, batch, embed = query.shape
    source = key.shape[0]
    if embed != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed}")
    head_dim = embed // num_heads
    if head_dim * num_heads != embed:
        raise AssertionError(f"embed_dim {embed} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if any(w is None for w in (q_proj_weight, k_proj_weight, v_proj_weight)):
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    q = linear(query, w_q, b_q).reshape(target, batch * num_heads, head_dim).transpose(0, 1)
    k = linear(key, w_k, b_k).reshape(source, batch * num_heads, head_dim).transpose(0, 1)
    v = linear(value, w_v, b_v).reshape(source, batch * num_heads, head_dim).transpose(0, 1)
    scores = (q * (1.0 / head_dim) ** 0.5) @ k.transpose(-2, -1)
    # A bool mask's True positions are not attended (-inf), a float one is added; the key
    # padding mask per batch row.
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)
        scores = scores + _additive_mask(attn_mask)
    if key_padding_mask is not None:
        padding = _additive_mask(key_padding_mask).reshape(batch, 1, 1, source)
        padding = padding.expand(batch, num_heads, 1, source)
        scores = scores + padding.reshape(batch * num_heads, 1, source)
    weights = softmax(scores, dim=-1)
    if training and dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    out = (weights @ v).transpose(0, 1).reshape(target * batch, embed)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(target, batch, out.size(1))
    if not need_weights:
        return out, None
    weights = weights.reshape(batch, num_heads, target, source)
    return out, (weights.mean(dim=1) if average_attn_weights else weights)


def _additive_mask(mask):
    """A mask as multi-head attention adds it: -inf where a bool mask is True, a float mask
    as it is."""
    import torch
    if mask.dtype is torch.bool:
        return torch.where(mask, float("-inf"), 0.0)
    return mask


def _none_or_dtype(input):
    import torch
    if input is None:
        return None
    if isinstance(input, torch.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """PyTorch's mask canonicalisation for the transformer modules: a bool mask becomes the
    additive float mask (-inf where True), a float one stays; other dtypes are refused."""
    if mask is None:
        return None
    if mask.dtype is not _torch_bool() and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        import warnings
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      f"Use same type for both instead.")
    return _additive_mask(mask)


def _torch_bool():
    import torch
    return torch.bool


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def linear(input, weight, bias=None):
    return _tailor.op("linear", input, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """`x / sqrt(mean(x**2) + eps) * weight` over the last dims; `eps` defaults to the
    dtype's machine epsilon, as PyTorch's."""
    import torch
    dims = list(range(-len(_tuple(normalized_shape, 1)), 0))
    if eps is None:
        eps = torch.finfo(input.dtype).eps
    out = input * torch.rsqrt(input.pow(2).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * weight


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduced((input - target).abs(), reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduced((input - target).pow(2), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    diff = (input - target).abs()
    if beta == 0:
        return _reduced(diff, reduction)
    return _reduced(torch_where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta),
                    reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    # PyTorch clamps each log at -100, so a 0 or 1 probability gives a finite loss.
    loss = -(target * input.log().clamp(min=-100)
             + (1 - target) * (1 - input).log().clamp(min=-100))
    return _reduced(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    # log(1 + exp(-x)) as PyTorch computes it, stable for both signs.
    softplus_neg = (-input.abs()).exp().log1p() + (-input).clamp(min=0)
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * softplus_neg
    return _reduced(loss if weight is None else loss * weight, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    return _nll(log_softmax(input, 1), target, weight, ignore_index, reduction,
                label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _nll(input, target, weight, ignore_index, reduction, 0.0)


def _nll(logp, target, weight, ignore_index, reduction, smoothing):
    """The negative log-likelihood of class indices (dim 1 of `logp` holds the classes) or
    of class probabilities, as PyTorch weighs, ignores, smooths and averages it."""
    import torch
    classes = logp.size(1)
    weights = torch.ones(classes) if weight is None else weight
    shape = [1] * logp.dim()
    shape[1] = classes
    weights = weights.view(shape)
    if target.dtype.is_floating_point:
        if smoothing:
            target = target * (1 - smoothing) + smoothing / classes
        return _reduced(-(logp * target * weights).sum(1), reduction)
    valid = target != ignore_index
    index = torch.where(valid, target, 0).unsqueeze(1)
    picked = -(logp * weights).gather(1, index).squeeze(1)
    kept = torch.where(valid, weights.view(-1).index_select(0, index.reshape(-1)).view(index.squeeze(1).shape), 0.0)
    loss = torch.where(valid, picked, 0.0)
    if smoothing:
        uniform = -(logp * weights).sum(1) / classes
        loss = loss * (1 - smoothing) + torch.where(valid, uniform, 0.0) * smoothing
    if reduction == "mean":
        return loss.sum() / kept.sum()
    return _reduced(loss, reduction)


def torch_where(condition, input, other):
    return _tailor.op("where", condition, input, other)


def _reduced(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if not isinstance(normalized_shape, (tuple, list)):
        normalized_shape = [normalized_shape]
    return _tailor.op("layer_norm", input, list(normalized_shape), weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """In eval, the running statistics; in training, the batch's (over every dim but the
    channels, variance biased), as PyTorch normalises. Training does not update the running
    statistics: a compiled call has no side effects in Tailor."""
    if training:
        _verify_batch_size(input.shape)
        dims = [0] + list(range(2, input.dim()))
        return _affine(_normalize(input, dims, eps), weight, bias)
    if running_mean is None or running_var is None:
        raise ValueError("running_mean and running_var must be defined in evaluation mode")
    if weight is None or bias is None:
        shape = [1, input.size(1)] + [1] * (input.dim() - 2)
        normalized = (input - running_mean.reshape(shape)) * \
            (running_var.reshape(shape) + eps).rsqrt()
        return _affine(normalized, weight, bias)
    return _tailor.op("batch_norm", input, [running_mean, running_var, weight, bias],
                      running_mean.shape[0], eps)


def _verify_batch_size(size):
    # PyTorch's check, in its words; on symbolic sizes it records what PyTorch records.
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _tuple(value, n):
    return list(value) if isinstance(value, (tuple, list)) else [value] * n


def _same_sides(kernel, dilation):
    """Per spatial dim, the (before, after) padding of `padding='same'` at stride 1:
    dilation * (k - 1) in all, the extra one after, as PyTorch's convolution pads."""
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    return [(total // 2, total - total // 2) for total in totals]


def _conv(input, weight, bias, stride, padding, dilation, groups, n):
    if isinstance(padding, str):
        # 'valid' is none; 'same' keeps the length at stride 1, an uneven extra one on the
        # right padded explicitly.
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             f"{{'valid', 'same'}}")
        if padding == "same" and _tuple(stride, n) != [1] * n:
            raise ValueError("padding='same' is not supported for strided convolutions")
        sides = (_same_sides(list(weight.shape[2:]), _tuple(dilation, n))
                 if padding == "same" else [(0, 0)] * n)
        padding = [before for before, _ in sides]
        if any(before != after for before, after in sides):
            amounts = []
            for before, after in reversed(sides):
                amounts += [0, after - before]
            input = pad(input, amounts)
    window = [_tuple(stride, n), _tuple(padding, n), _tuple(dilation, n)]
    if input.dim() == n + 1:
        # Unbatched: a batch of one.
        return _tailor.op("conv", input.unsqueeze(0), weight, bias, *window, groups).squeeze(0)
    return _tailor.op("conv", input, weight, bias, *window, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    n):
    window = [_tuple(stride, n), _tuple(padding, n), _tuple(output_padding, n),
              _tuple(dilation, n)]
    return _tailor.op("conv_transpose", input, weight, bias, *window, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


# The lowest float32: what a max pool's ceil-mode overhang is padded with, so it never wins
# (an infinity would not survive every backend's constants).
_LOWEST = -3.4028234663852886e38


def _ceil_overhang(size, kernel, stride, padding):
    """How far the last window of a ceil-mode pool reaches past the padded input, by
    PyTorch's rule: one more window where the division leaves a rest, unless that window
    would start in the right padding."""
    span = size + 2 * padding - kernel
    windows = (span + stride - 1) // stride + 1
    if (windows - 1) * stride >= size + padding:
        windows = windows - 1
    return (windows - 1) * stride + kernel - (size + 2 * padding)


def _may_be_positive(size):
    """Whether a size computed from the input's may be above 0: a symbolic one is taken to
    be, so no guard asks (padding by 0 changes nothing)."""
    return size > 0 if isinstance(size, int) else True


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    # A size given as the window (`kernel_size=x.shape[2:]`) is read as an int, which
    # specialises it, as PyTorch's pool does.
    kernel = [int(k) for k in _tuple(kernel_size, 2)]
    stride = kernel if stride is None or stride == [] else [int(s) for s in _tuple(stride, 2)]
    padding = _tuple(padding, 2)
    if _tuple(dilation, 2) != [1, 1]:
        _tailor.unsupported("max_pool2d with dilation", "use dilation=1")
    if return_indices:
        _tailor.unsupported("max_pool2d with return_indices=True",
                            "the indices are not computed; use return_indices=False")
    if ceil_mode:
        # Ceil mode is floor mode over an input padded on the right by the last window's
        # overhang, with values no element loses to.
        for dim, (k, s, p) in ((-2, (kernel[0], stride[0], padding[0])),
                               (-1, (kernel[1], stride[1], padding[1]))):
            extra = _ceil_overhang(input.size(dim), k, s, p)
            if _may_be_positive(extra):
                input = _tailor.op("constant_pad", input, input.dim() + dim, 0, extra, _LOWEST)
    return _tailor.op("max_pool2d", input, kernel, stride, padding)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    # A size given as the window (`kernel_size=x.shape[2:]`) is read as an int, which
    # specialises it, as PyTorch's pool does.
    kernel = [int(k) for k in _tuple(kernel_size, 2)]
    stride = kernel if stride is None or stride == [] else [int(s) for s in _tuple(stride, 2)]
    padding = _tuple(padding, 2)
    if divisor_override is not None:
        _tailor.unsupported("avg_pool2d with divisor_override", "divide the pool's sum yourself")
    if not count_include_pad and padding != [0, 0]:
        return _avg_pool2d_over_inside(input, kernel, stride, padding, ceil_mode)
    if ceil_mode:
        extra = [_ceil_overhang(input.size(d), k, s, p) for d, k, s, p in
                 ((-2, kernel[0], stride[0], padding[0]), (-1, kernel[1], stride[1], padding[1]))]
        if _may_be_positive(extra[0]) or _may_be_positive(extra[1]):
            return _overhanging_avg_pool2d(input, kernel, stride, padding, extra)
    return _tailor.op("avg_pool2d", input, kernel, stride, padding)


def _avg_pool2d_over_inside(input, kernel, stride, padding, ceil_mode):
    """`count_include_pad=False` with padding: each window's sum over the input padded with
    zeros, divided by how many of its elements lie inside the input, the same pool of a map
    of ones padded with zeros (Inception's and NASNet's pools). As for the ceil mode below,
    the division asks PyTorch's `!= 1` of symbolic pooled sizes, which its pool does not."""
    import torch
    extra = ([_ceil_overhang(input.size(d), k, s, p) for d, k, s, p in
              ((-2, kernel[0], stride[0], padding[0]), (-1, kernel[1], stride[1], padding[1]))]
             if ceil_mode else [0, 0])
    sums, ones = input, torch.ones(input.size(-2), input.size(-1))
    for axis, (p, e) in enumerate(zip(padding, extra)):
        sums = _tailor.op("constant_pad", sums, input.dim() - 2 + axis, p, p + e, 0.0)
        ones = _tailor.op("constant_pad", ones, axis, p, p + e, 0.0)
    pooled = _tailor.op("avg_pool2d", sums, kernel, stride, [0, 0])
    counts = _tailor.op("avg_pool2d", ones.unsqueeze(0), kernel, stride, [0, 0])
    return pooled / counts


def _overhanging_avg_pool2d(input, kernel, stride, padding, extra):
    """A ceil-mode average pool whose last windows overhang the padded input: PyTorch
    divides each window's sum by the elements it covers inside the padded input. Both are
    floor-mode pools over the input padded by the padding and the overhang (zeros): the
    sums of the input, and the counts of a map of ones over the padded input. (The division
    is an elementwise op: where the pooled sizes are symbolic it asks PyTorch's `!= 1` of
    them, which PyTorch's own pool does not.)"""
    import torch
    area = kernel[0] * kernel[1]
    sums, ones = input, torch.ones(input.size(-2) + 2 * padding[0],
                                   input.size(-1) + 2 * padding[1])
    for axis, (p, e) in enumerate(zip(padding, extra)):
        sums = _tailor.op("constant_pad", sums, input.dim() - 2 + axis, p, p + e, 0.0)
        ones = _tailor.op("constant_pad", ones, axis, 0, e, 0.0)
    pooled = _tailor.op("avg_pool2d", sums, kernel, stride, [0, 0])
    counts = _tailor.op("avg_pool2d", ones.unsqueeze(0), kernel, stride, [0, 0])
    return pooled * area / (counts * area)


def adaptive_avg_pool2d(input, output_size):
    """To 1 or (1, 1), what ResNets use: the mean over the last two dims, kept as size 1,
    which is what that pool computes; so the graph shows a mean. To other sizes, the pool
    over each output's window (`_adaptive_pool`)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {input.dim()}D"
        )
    if _tuple(output_size, 2) != [1, 1]:
        return _adaptive_pool(input, _tuple(output_size, 2), "avg")
    return _tailor.op("mean", input, [-2, -1], True)


def _adaptive_to_one(name, reduction, input, output_size, spatial):
    """An adaptive pool over the last `spatial` dims: to output size 1 in each, the reduction
    over them, kept as size 1; to other sizes, the pool over each output's window."""
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but "
                           f"got {input.dim()}D")
    if _tuple(output_size, spatial) != [1] * spatial:
        return _adaptive_pool(input, _tuple(output_size, spatial),
                              "max" if reduction == "amax" else "avg")
    return _tailor.op(reduction, input, list(range(-spatial, 0)), True)


def _adaptive_pool(input, output_size, kind):
    """An adaptive pool of the last len(output_size) dims to `output_size` (None keeps a
    dim). With whole sizes that the outputs divide, it is the plain pool of kernel and
    stride size // output. Otherwise one dim at a time (both pools are separable), output i
    reading the window [floor(i * n / out), ceil((i + 1) * n / out)) as PyTorch's kernel
    does (`_adaptive_along`). Nothing asks about a symbolic size, so, as in PyTorch, the
    pool adds no guard."""
    spatial = len(output_size)
    sizes = list(input.shape[-spatial:])
    if spatial == 2 and all(isinstance(n, int) and o is not None and n % o == 0
                            for n, o in zip(sizes, output_size)):
        kernel = [n // o for n, o in zip(sizes, output_size)]
        pool = avg_pool2d if kind == "avg" else max_pool2d
        return pool(input, kernel, kernel)
    out = input
    for axis, (n, o) in enumerate(zip(sizes, output_size)):
        if o is None:
            continue
        dim = axis - spatial
        if dim < -2:
            # A volume's depth: pooled as the height, moved there and back.
            out = _adaptive_along(out.movedim(dim, -2), -2, n, o, kind).movedim(-2, dim)
        else:
            out = _adaptive_along(out, dim, n, o, kind)
    return out


def _adaptive_along(input, dim, size, out_size, kind):
    """The adaptive pool of dim -1 or -2 (`dim`) of `size` elements to `out_size`. Output i
    reads [start_i, end_i); an average is a product with the (out_size, size) weights
    1/length where start_i <= p < end_i, a max the amax of the input masked per window
    (out_size copies of the input: adaptive max pools to sizes other than 1 are small in
    practice).

    PyTorch's pool is one node that asks nothing of the sizes. Here every elementwise op
    asks whether each size of its operands is 1 (a guard where a symbolic size may be 1),
    except of the right operand of a broadcast whose left size there is a literal 1. So the
    weights are built only by such broadcasts, an (out_size, 1) column on the left of the
    positions' arange, and their two sides are told apart by a product rather than by an
    elementwise op: [I, -I] @ [from_start; from_end] is from_start - from_end. The average
    thus asks nothing; the max's mask meets the input's own dim of that size, and asks."""
    import torch
    outputs = torch.arange(out_size)
    start = (outputs * size // out_size).unsqueeze(1)
    end = (((outputs + 1) * size + out_size - 1) // out_size).unsqueeze(1)
    position = torch.arange(size)
    if kind == "avg":
        scale = 1.0 / (end - start)
        from_start = scale * (start <= position)
        from_end = scale * (end <= position)
        eye = torch.eye(out_size)
        weights = torch.cat([eye, -eye], 1) @ torch.cat([from_start, from_end], 0)
        return input @ weights.t() if dim == -1 else weights @ input
    inside = (start <= position) & (end > position)
    if dim == -2:
        inside = inside.unsqueeze(-1)
    return torch.where(inside, input.unsqueeze(dim - 1), float("-inf")).amax(dim)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        _tailor.unsupported("adaptive_max_pool2d with return_indices", "")
    return _adaptive_to_one("adaptive_max_pool2d", "amax", input, output_size, 2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """A 2-d pool over a height of 1. Without indices, PyTorch's CPU kernel reads the length
    as a plain int, so torch.compile specialises it (a guard on its value, a recompile per
    length, measured on 2.15); with indices it goes through max_pool1d_with_indices, which
    keeps the length symbolic."""
    if not return_indices:
        int(input.shape[-1])
    kernel = _tuple(kernel_size, 1)[0]
    stride = kernel if stride is None or stride == [] else _tuple(stride, 1)[0]
    pooled = max_pool2d(input.unsqueeze(-2), (1, kernel), (1, stride), (0, _tuple(padding, 1)[0]),
                        (1, _tuple(dilation, 1)[0]), ceil_mode, return_indices)
    return pooled.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """A 2-d pool over a height of 1."""
    kernel = _tuple(kernel_size, 1)[0]
    stride = kernel if stride is None or stride == [] else _tuple(stride, 1)[0]
    pooled = avg_pool2d(input.unsqueeze(-2), (1, kernel), (1, stride), (0, _tuple(padding, 1)[0]),
                        ceil_mode, count_include_pad)
    return pooled.squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_to_one("adaptive_avg_pool1d", "mean", input, output_size, 1)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if return_indices:
        _tailor.unsupported("adaptive_max_pool1d with return_indices", "")
    return _adaptive_to_one("adaptive_max_pool1d", "amax", input, output_size, 1)


def _window3d(kernel_size, stride, padding):
    # The window's sizes are read as ints (a size given as the window specialises), as
    # PyTorch's pools read them.
    kernel = [int(k) for k in _tuple(kernel_size, 3)]
    stride = kernel if stride is None or stride == [] else [int(s) for s in _tuple(stride, 3)]
    return kernel, stride, _tuple(padding, 3)


def _pool3d_by_planes(name, input, kernel, stride, padding, ceil_mode, pool2d, fill, reduce):
    """A 3-d pool as 2-d pools of the depth taps' planes, reduced over the taps: tap k
    reads planes k, k + stride, … of the input padded in depth with `fill` (and, in ceil
    mode, by the last window's overhang); a 2-d pool pools the last two dims whatever
    leads them, and the taps are stacked and reduced, so no elementwise op meets the
    derived sizes and nothing is asked of them that PyTorch's pool does not ask."""
    import torch
    if input.dim() not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D tensor for input, but got "
                           f"{input.dim()}D")
    taps, step, before = kernel[0], stride[0], padding[0]
    after = before
    if ceil_mode:
        extra = _ceil_overhang(input.size(-3), taps, step, before)
        if _may_be_positive(extra):
            after = after + extra
    if before or not isinstance(after, int) or after:
        input = _tailor.op("constant_pad", input, input.dim() - 3, before, after, fill)
    span = input.size(-3) - (taps - 1)
    parts = []
    for k in range(taps):
        planes = input.narrow(-3, k, span)
        if step != 1:
            planes = planes[..., ::step, :, :]
        parts.append(pool2d(planes))
    return reduce(torch.stack(parts), 0)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    kernel, stride, padding = _window3d(kernel_size, stride, padding)
    if _tuple(dilation, 3) != [1, 1, 1]:
        _tailor.unsupported("max_pool3d with dilation", "use dilation=1")
    if return_indices:
        _tailor.unsupported("max_pool3d with return_indices=True",
                            "the indices are not computed; use return_indices=False")
    return _pool3d_by_planes(
        "max_pool3d", input, kernel, stride, padding, ceil_mode,
        lambda planes: max_pool2d(planes, kernel[1:], stride[1:], padding[1:], 1, ceil_mode),
        _LOWEST, lambda taps, dim: taps.amax(dim))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Every window's mean over kernel elements, the padding counted (PyTorch's default);
    the mean over the depth's taps of their 2-d means."""
    kernel, stride, padding = _window3d(kernel_size, stride, padding)
    if divisor_override is not None:
        _tailor.unsupported("avg_pool3d with divisor_override", "divide the pool's sum yourself")
    if ceil_mode or (not count_include_pad and padding != [0, 0, 0]):
        _tailor.unsupported("avg_pool3d with ceil_mode or count_include_pad=False",
                            "pad the input yourself and pool without them")
    return _pool3d_by_planes(
        "avg_pool3d", input, kernel, stride, padding, False,
        lambda planes: avg_pool2d(planes, kernel[1:], stride[1:], padding[1:]), 0.0,
        lambda taps, dim: taps.mean(dim))


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_to_one("adaptive_avg_pool3d", "mean", input, output_size, 3)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    if return_indices:
        _tailor.unsupported("adaptive_max_pool3d with return_indices", "")
    return _adaptive_to_one("adaptive_max_pool3d", "amax", input, output_size, 3)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    # padding_idx only keeps the row's gradient at zero: the lookup is the same.
    if max_norm is not None:
        _tailor.unsupported("F.embedding with max_norm",
                            "it renormalises the looked-up rows of the weight in place")
    return _tailor.op("embedding", input, weight)


# ---- reshuffles, resampling and padding: views, expands and cats, as PyTorch decomposes ----


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, "
                           f"but got input with {input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r != 0 or w % r != 0:
        raise RuntimeError("pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got {h} and {w} for {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def _integer_scales(input, size, scale_factor):
    spatial = input.dim() - 2
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = _tuple(scale_factor, spatial)
    for s in scales:
        if s != int(s) or s < 1:
            _tailor.unsupported("interpolate with a scale_factor that is not a whole number",
                                "use an integer scale_factor such as 2")
    return [int(s) for s in scales]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if input.dim() not in (3, 4):
        _tailor.unsupported(f"interpolate of a {input.dim()}-d input",
                            "inputs are (N, C, L) or (N, C, H, W)")
    if mode in _LINEAR_MODES:
        return _interpolate_linear(input, size, scale_factor, mode, align_corners)
    if mode not in ("nearest", "nearest-exact"):
        _tailor.unsupported(f"interpolate mode='{mode}'",
                            "use mode='nearest', 'linear' or 'bilinear'")
    if align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if size is not None:
        return _interpolate_nearest_to(input, size, scale_factor, mode)
    scales = _integer_scales(input, size, scale_factor)
    # Nearest with a whole factor s: output index i reads i // s, i.e. each element
    # repeated s times along its dim.
    lead = list(input.shape[:2])
    sizes = list(input.shape[2:])
    paired, expanded = list(lead), list(lead)
    for size, s in zip(sizes, scales):
        paired += [size, 1]
        expanded += [size, s]
    out = lead + [size * s for size, s in zip(sizes, scales)]
    return input.reshape(paired).expand(expanded).reshape(out)


def _interpolate_nearest_to(input, size, scale_factor, mode):
    """Nearest to a `size=`: one resize per spatial dim, each reading input position
    floor(i * float32(in / out)) as PyTorch's kernels do (`_tailor` op `upsample_nearest`)."""
    if scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if mode == "nearest-exact":
        _tailor.unsupported("interpolate mode='nearest-exact' to a size=",
                            "use mode='nearest', or an integer scale_factor")
    spatial = input.dim() - 2
    sizes = _tuple(size, spatial)
    if len(sizes) != spatial:
        raise ValueError("Input and output must have the same number of spatial dimensions, "
                         f"but got input with spatial dimensions of {list(input.shape[2:])} "
                         f"and output size of {list(sizes)}. Please provide input tensor in "
                         "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                         "format.")
    out = input
    for d in range(spatial):
        out = _tailor.op("upsample_nearest", out, 2 + d, sizes[d])
    return out


# The linear modes and the spatial dims each resizes.
_LINEAR_MODES = {"linear": 1, "bilinear": 2}


def _interpolate_linear(input, size, scale_factor, mode, align_corners):
    spatial = input.dim() - 2
    if _LINEAR_MODES[mode] != spatial:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input")
    if size is not None:
        if scale_factor is not None:
            raise ValueError("only one of size or scale_factor should be defined")
        sizes = _tuple(size, spatial)
    else:
        scales = _integer_scales(input, None, scale_factor)
        sizes = [input.size(2 + d) * s for d, s in enumerate(scales)]
    # One linear resize per dim, the last first: its mixes are then weighted by the earlier
    # dims' weights, as PyTorch's bilinear kernel nests them.
    out = input
    for d in reversed(range(spatial)):
        out = _tailor.op("upsample_linear", out, 2 + d, sizes[d], bool(align_corners))
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def _narrow(x, dim, start, length):
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def pad(input, pad, mode="constant", value=None):
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        out = _pad_dim(out, dim, before, after, mode, 0.0 if value is None else value)
    return out


def _pad_dim(x, dim, before, after, mode, value):
    size = x.size(dim)
    if mode == "constant":
        # One op whose pads may be symbolic and of either sign (a negative pad crops): as
        # PyTorch's constant_pad_nd, it asks nothing of their values.
        if isinstance(before, int) and isinstance(after, int) and before == after == 0:
            _tailor.record_call()
            return x
        return _tailor.op("constant_pad", x, dim, before, after, value)
    if before < 0 or after < 0:
        _tailor.unsupported(f"negative padding in mode '{mode}'", "pad by 0 or more")
    if mode == "reflect" and (before >= size or after >= size):
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
            f"{list(x.shape)}"
        )
    if mode == "reflect":
        left = [_narrow(x, dim, i, 1) for i in range(before, 0, -1)]
        right = [_narrow(x, dim, size - 2 - i, 1) for i in range(after)]
    elif mode == "replicate":
        left = [_narrow(x, dim, 0, 1)] * before
        right = [_narrow(x, dim, size - 1, 1)] * after
    else:
        left = [_narrow(x, dim, size - before, before)] if before else []
        right = [_narrow(x, dim, 0, after)] if after else []
    if not left and not right:
        return x
    return _tailor.op("cat", left + [x] + right, dim)


# ---- sliding blocks: im2col and col2im as a convolution with one-hot kernels ----------------


def _block_kernels(kernel):
    """The (kh*kw, 1, kh, kw) kernels whose k-th picks position k of a block, in PyTorch's
    order (row by row): a convolution with them reads every block's values (unfold), and
    the transposed convolution sums them back where they came from (fold)."""
    n = kernel[0] * kernel[1]
    # Stored values, not ops: a convolution's weights are a stored tensor.
    values = [1.0 if i == j else 0.0 for i in range(n) for j in range(n)]
    return _tailor.from_values([n, 1, kernel[0], kernel[1]], values, "float32")


def _blocks(size, kernel, dilation, padding, stride):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """PyTorch's im2col: (N, C, H, W) to (N, C*kh*kw, L), each column one block. The
    channels are folded into the batch, so one convolution with one-hot kernels (exact:
    each output sums one value and zeros) does it for any number of channels. It is exact for finite values (each output
    sums one value and zeros); an infinity in a block would make its neighbours' sums NaN."""
    window = [_tuple(v, 2) for v in (kernel_size, dilation, padding, stride)]
    kernel, dilation, padding, stride = window
    if input.dim() not in (3, 4):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    batched = input if input.dim() == 4 else input.unsqueeze(0)
    n, c, h, w = batched.shape
    rows, cols = (_blocks(size, *args) for size, args in zip(
        (h, w), zip(kernel, dilation, padding, stride)))
    if isinstance(rows, int) and isinstance(cols, int) and (rows < 1 or cols < 1):
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size="
                           f"{tuple(kernel)}, dilation={tuple(dilation)}, padding="
                           f"{tuple(padding)}, calculated shape of the array of sliding "
                           f"blocks as ({rows}, {cols}), but its components must be at "
                           "least one.")
    blocks = conv2d(batched.reshape(n * c, 1, h, w), _block_kernels(kernel), None, stride,
                    padding, dilation)
    out = blocks.reshape(n, c * kernel[0] * kernel[1], blocks.size(2) * blocks.size(3))
    return out if input.dim() == 4 else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """PyTorch's col2im, unfold's adjoint: (N, C*kh*kw, L) to (N, C, H, W), overlapping
    blocks summed; the transposed convolution with unfold's one-hot kernels, its output
    padding reaching the rows and columns no block covers."""
    window = [_tuple(v, 2) for v in (output_size, kernel_size, dilation, padding, stride)]
    size, kernel, dilation, padding, stride = window
    if input.dim() not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                           "and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    batched = input if input.dim() == 3 else input.unsqueeze(0)
    n, ckk, length = batched.shape
    per_block = kernel[0] * kernel[1]
    if ckk % per_block != 0:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={ckk} and "
                           f"kernel_size={tuple(kernel)}")
    rows, cols = (_blocks(s, *args) for s, args in zip(
        size, zip(kernel, dilation, padding, stride)))
    if length != rows * cols:
        raise RuntimeError(f"Given output_size={tuple(size)}, kernel_size={tuple(kernel)}, "
                           f"dilation={tuple(dilation)}, padding={tuple(padding)}, stride="
                           f"{tuple(stride)}, expected size of input's dimension 2 to match "
                           f"the calculated number of sliding blocks {rows} * {cols} = "
                           f"{rows * cols}, but got input.size(2)={length}.")
    reach = [(b - 1) * st - 2 * p + d * (k - 1) + 1
             for b, st, p, d, k in zip((rows, cols), stride, padding, dilation, kernel)]
    extra = [s - r for s, r in zip(size, reach)]
    c = ckk // per_block
    blocks = batched.reshape(n * c, per_block, rows, cols)
    out = conv_transpose2d(blocks, _block_kernels(kernel), None, stride, padding, extra, 1,
                           dilation)
    out = out.reshape(n, c, size[0], size[1])
    return out if input.dim() == 3 else out.squeeze(0)


# ---- normalisations over instances and groups: means and variances, as PyTorch decomposes --


def _normalize(x, dims, eps):
    mean = x.mean(dims, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(dims, keepdim=True)
    return centred * (var + eps).rsqrt()


def _affine(x, weight, bias):
    shape = [1, x.size(1)] + [1] * (x.dim() - 2)
    if weight is not None:
        x = x * weight.reshape(shape)
    if bias is not None:
        x = x + bias.reshape(shape)
    return x


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    dims = list(range(2, input.dim()))
    return _affine(_normalize(input, dims, eps), weight, bias)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    rest = list(input.shape[2:])
    grouped = input.reshape([n, num_groups, c // num_groups] + rest)
    dims = list(range(2, grouped.dim()))
    normalized = _normalize(grouped, dims, eps).reshape(list(input.shape))
    return _affine(normalized, weight, bias)


# ---- more of F as PyTorch writes it (torch/nn/functional.py, torch/_refs/nn/functional),
# over the ops above; each checked against PyTorch by tests/data/scripts/functional_more.py --


def threshold(input, threshold, value, inplace=False):
    return _tailor.op("where", input > threshold, input, value)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim)


def softshrink(input, lambd=0.5):
    return _tailor.op("where", input > lambd, input - lambd,
                      _tailor.op("where", input < -lambd, input + lambd, 0.0))


def hardshrink(input, lambd=0.5):
    return _tailor.op("where", input.abs() > lambd, input, 0.0)


def _in_place_of(function):
    """`F.relu_` and its kin: the function's result written into the input (functionalized
    as every in-place op is)."""

    def in_place(input, *args, **kwargs):
        from torch._tensor import _in_place
        return _in_place(input, function(input, *args, **kwargs), function.__name__ + "_")

    in_place.__name__ = function.__name__ + "_"
    return in_place


relu_ = _in_place_of(relu)
elu_ = _in_place_of(elu)
celu_ = _in_place_of(celu)
selu_ = _in_place_of(selu)
leaky_relu_ = _in_place_of(leaky_relu)
hardtanh_ = _in_place_of(hardtanh)
threshold_ = _in_place_of(threshold)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """ATen's: each side divided by its norm clamped at eps, then the sum of products."""
    x1_norm = x1.norm(2, dim, keepdim=True).clamp_min(eps)
    x2_norm = x2.norm(2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """ATen's: the p-norm of `x1 - x2 + eps` over the last dim of the broadcast pair."""
    innermost = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, innermost, keepdim=keepdim)


def _feature_dropout(name, input, p, training, spatial):
    """Dropout of whole channels: in eval the identity; in training one seeded draw per
    (batch, channel), broadcast over the `spatial` trailing dims."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
                           f"received a {input.dim()}D input")
    if not training or p == 0.0:
        return input
    import torch
    shape = list(input.shape[:input.dim() - spatial]) + [1] * spatial
    keep = torch.rand(shape) >= p
    return input * keep * (1.0 / (1.0 - p)) if p < 1.0 else input * 0.0


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout1d", input, p, training, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout2d", input, p, training, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout3d", input, p, training, 3)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    if training and p > 0.0:
        _tailor.unsupported("alpha_dropout in training", "call model.eval() first")
    return input


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    if training and p > 0.0:
        _tailor.unsupported("feature_alpha_dropout in training", "call model.eval() first")
    return input


def one_hot(tensor, num_classes=-1):
    """int64 ones where the last dim's index equals the value. With num_classes=-1 the
    count is the largest value plus one, read from the data (a graph break under
    torch.compile, where it is data-dependent)."""
    import torch
    if tensor.dtype is not torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    return (tensor.unsqueeze(-1) == torch.arange(num_classes)).long()


def channel_shuffle(input, groups):
    """ShuffleNet's: channels viewed as (groups, C / groups), transposed, flattened back."""
    n, c = input.shape[0], input.shape[1]
    rest = list(input.shape[2:])
    grouped = input.reshape([n, groups, c // groups] + rest)
    return grouped.transpose(1, 2).reshape([n, c] + rest)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """PyTorch's: the squares averaged over a window of `size` channels (zero-padded),
    then `input / (k + alpha * avg) ** beta`. The window runs over channels only, so a 4-d
    input pools as (N, 1, C, H*W), which is PyTorch's 3-d pool over (C, H, W)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input * input
    sizes = list(input.shape)
    div = div.reshape([sizes[0], 1, sizes[1], -1])
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k).pow(beta)


def bilinear(input1, input2, weight, bias=None):
    import torch
    out = torch.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    diff = (input - target).abs()
    loss = torch_where(diff < delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
    return _reduced(loss if weight is None else loss * weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy(target, target) - target * input: 0 where the target is 0.
        loss = torch_where(target == 0, 0.0, target * target.log()) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduced(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduced((-input * target).exp().log1p(), reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    return _reduced((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = torch_where(target != 1, margin_clamp, 0.0)
    output_self = torch_where(target != -1, input, 0.0)
    return _reduced(output_margin + output_self, reduction)


__getattr__ = _missing_names("torch.nn.functional")
