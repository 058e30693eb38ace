"""`Rearrange` and `Reduce` as `nn.Module` layers (`nn.Sequential(Rearrange('b c h w -> b
(h w) c'), ...)`): the pattern is checked when the layer is built, and `forward` is the
function of the same name."""

from torch import nn

from einops import rearrange, reduce
from einops._recipe import plan


class Rearrange(nn.Module):
    """`rearrange(input, pattern, **axes_lengths)` as a layer."""

    def __init__(self, pattern, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.axes_lengths = axes_lengths
        plan(pattern, "rearrange", None, axes_lengths)

    def forward(self, input):
        return rearrange(input, self.pattern, **self.axes_lengths)

    def __repr__(self):
        given = "".join(f", {name}={length!r}" for name, length in self.axes_lengths.items())
        return f"{type(self).__name__}({self.pattern!r}{given})"


class Reduce(nn.Module):
    """`reduce(input, pattern, reduction, **axes_lengths)` as a layer."""

    def __init__(self, pattern, reduction, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.reduction = reduction
        self.axes_lengths = axes_lengths
        plan(pattern, "reduce", None, axes_lengths)

    def forward(self, input):
        return reduce(input, self.pattern, self.reduction, **self.axes_lengths)

    def __repr__(self):
        given = "".join(f", {name}={length!r}" for name, length in self.axes_lengths.items())
        return f"{type(self).__name__}({self.pattern!r}, {self.reduction!r}{given})"
