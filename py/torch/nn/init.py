"""torch.nn.init: the initialisers models call at construction, as fills of the constant.

A parameter's values are not stored: each constant carries how they are made (a fill,
uniform in +-bound, normal with mean 0 and a std), seeded by its name. An initialiser here
sets that fill in place (`_tailor.set_init`), with the bound or std PyTorch computes, so
`kaiming_normal_(w, mode="fan_out", nonlinearity="relu")` makes `w` normal with std
`sqrt(2) / sqrt(fan_out)`; the numbers themselves differ from PyTorch's (another random
generator), their distribution does not. What no fill can describe (a normal with a
nonzero mean, a uniform over an interval not symmetric about 0 other than [0, 1), a normal
truncated where it could draw) is an unsupported error rather than a silently different
tensor.
"""

import _tailor
from torch._missing import _missing_names


def calculate_gain(nonlinearity, param=None):
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return 2.0 ** 0.5
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return (2.0 / (1 + negative_slope ** 2)) ** 0.5
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    shape = tensor.shape
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field_size = 1
    for s in shape[2:]:
        receptive_field_size = receptive_field_size * s
    return shape[1] * receptive_field_size, shape[0] * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor):
    return 0 in tensor.shape


def constant_(tensor, val):
    return _tailor.set_init(tensor, "fill", val)


def zeros_(tensor):
    return _tailor.set_init(tensor, "fill", 0.0)


def ones_(tensor):
    return _tailor.set_init(tensor, "fill", 1.0)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Normal with `std`; a nonzero `mean` is unsupported (fills have mean 0)."""
    if mean != 0:
        _tailor.unsupported("nn.init.normal_ with a nonzero mean",
                            "parameters are filled with mean 0")
    return _tailor.set_init(tensor, "normal", std)


# The normal fill is Box–Muller over a 53-bit uniform (`graph::eval`): no draw is farther
# than sqrt(-2 ln 2^-1022) < 38 std from 0.
_NORMAL_REACH_STD = 38


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal with `std`, truncated to [a, b]: where both bounds are beyond the normal fill's
    reach, that fill is a sample of it (`trunc_normal_(w, std=0.02)`, whose default bounds
    are 100 std away); nearer bounds, which would cut draws, are unsupported."""
    if mean != 0:
        _tailor.unsupported("nn.init.trunc_normal_ with a nonzero mean",
                            "parameters are filled with mean 0")
    if a > -_NORMAL_REACH_STD * std or b < _NORMAL_REACH_STD * std:
        _tailor.unsupported(
            f"nn.init.trunc_normal_ truncated at {_NORMAL_REACH_STD} std or nearer",
            "the normal fill is not truncated; bounds farther out cut no draw")
    return _tailor.set_init(tensor, "normal", std)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Uniform in [a, b) where that is [0, 1) or symmetric about 0; others are unsupported."""
    if a == 0 and b == 1:
        return _tailor.set_init(tensor, "unit", 0.0)
    if a == -b:
        return _tailor.set_init(tensor, "bounded", b)
    _tailor.unsupported("nn.init.uniform_ over this interval",
                        "only [0, 1) and intervals symmetric about 0 are fills")


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * (6.0 / (fan_in + fan_out)) ** 0.5
    return _tailor.set_init(tensor, "bounded", bound)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return _tailor.set_init(tensor, "normal", gain * (2.0 / (fan_in + fan_out)) ** 0.5)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = calculate_gain(nonlinearity, a) * (3.0 / fan) ** 0.5
    return _tailor.set_init(tensor, "bounded", bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _is_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / fan ** 0.5
    return _tailor.set_init(tensor, "normal", std)


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    return _tailor.set_init(tensor, "orthogonal", gain)


__getattr__ = _missing_names("torch.nn.init")
