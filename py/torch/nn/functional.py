"""torch.nn.functional: stateless layers, each one call into `_tailor`."""

import _tailor
from torch._tensor import _missing_names
from torch._tensor import _dims
from torch._tensor import _log_softmax


def relu(input, inplace=False):
    return _tailor.unary("relu", input)


def gelu(input, approximate="none"):
    return _tailor.unary("gelu", input)


def silu(input, inplace=False):
    return _tailor.unary("silu", input)


def sigmoid(input):
    return _tailor.unary("sigmoid", input)


def tanh(input):
    return _tailor.unary("tanh", input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _tailor.where_(input > 0, input, input * negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return input.clamp(min_val, max_val)


def relu6(input, inplace=False):
    return input.clamp(0.0, 6.0)


def hardsigmoid(input, inplace=False):
    return relu6(input + 3.0) / 6.0


def hardswish(input, inplace=False):
    return input * relu6(input + 3.0) / 6.0


def dropout(input, p=0.5, training=False, inplace=False):
    return input


def softmax(input, dim=None, dtype=None):
    if dim is None:
        raise TypeError("softmax() needs dim")
    return _tailor.softmax(input, _dims(dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        # PyTorch's implicit dim (deprecated, with a warning there): 0 for 0-D, 1-D and
        # 3-D inputs, else 1.
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _log_softmax(input, dim, dtype)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """PyTorch's math reference for it (its documentation's Python): softmax of the scaled
    scores, future positions masked with -inf under `is_causal`, times the values."""
    if attn_mask is not None:
        _tailor.unsupported("scaled_dot_product_attention with attn_mask",
                            "every Tailor tensor is float32, so a bool mask cannot be told from an additive one; use is_causal or masked_fill")
    if dropout_p != 0.0:
        _tailor.unsupported("scaled_dot_product_attention with dropout_p > 0",
                            "dropout is the identity in inference; pass dropout_p=0.0")
    if enable_gqa:
        _tailor.unsupported("scaled_dot_product_attention with enable_gqa", "")
    import math
    import torch
    target, source = query.size(-2), key.size(-2)
    factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        causal = torch.ones(target, source).tril(0)
        scores = scores.masked_fill(causal == 0, float("-inf"))
    return softmax(scores, dim=-1) @ value


def linear(input, weight, bias=None):
    return _tailor.linear(input, weight, bias)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if not isinstance(normalized_shape, (tuple, list)):
        normalized_shape = [normalized_shape]
    return _tailor.layer_norm(input, list(normalized_shape), weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    return _tailor.batch_norm(input, [running_mean, running_var, weight, bias],
                              running_mean.shape[0], eps)


def _tuple(value, n):
    return list(value) if isinstance(value, (tuple, list)) else [value] * n


def _conv(input, weight, bias, stride, padding, dilation, groups, n):
    return _tailor.conv(input, weight, bias, _tuple(stride, n), _tuple(padding, n),
                        _tuple(dilation, n), groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def max_pool2d(input, kernel_size, stride=None, padding=0):
    kernel = _tuple(kernel_size, 2)
    stride = kernel if stride is None else _tuple(stride, 2)
    return _tailor.pool("max", input, kernel, stride, _tuple(padding, 2))


def avg_pool2d(input, kernel_size, stride=None, padding=0):
    kernel = _tuple(kernel_size, 2)
    stride = kernel if stride is None else _tuple(stride, 2)
    return _tailor.pool("avg", input, kernel, stride, _tuple(padding, 2))


def adaptive_avg_pool2d(input, output_size):
    """Only to 1 or (1, 1), what ResNets use: the mean over the last two dims, kept as size
    1, which is what that pool computes; so the graph shows a mean, not a pool."""
    if _tuple(output_size, 2) != [1, 1]:
        _tailor.unsupported("adaptive_avg_pool2d to a size other than 1",
                            "use output size 1 or (1, 1), or avg_pool2d with a fixed kernel")
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {input.dim()}D"
        )
    return _tailor.reduce("mean", input, [-2, -1], True)


def embedding(input, weight):
    return _tailor.embedding(input, weight)


__getattr__ = _missing_names("torch.nn.functional")
