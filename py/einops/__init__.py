"""einops for Tailor: `rearrange`, `reduce`, `repeat` and `parse_shape` over the torch
stand-in's tensors, and the layers `einops.layers.torch.Rearrange` / `Reduce`.

Written for Tailor from einops' documented semantics (https://einops.rocks), not from its
source. A pattern names a tensor's axes on each side of `->`: names (`b c h w`), groups of
axes merged into one dim (`(h p1)`), `...` for any number of dims (inside a group on the
right it merges them), and `1` or `()` for a dim of length 1; lengths are given as keywords
(`p1=16`). Each call is a few reshape/permute/reduce/expand calls on the tensor
(`_recipe.py`), so inside `forward` it is captured op by op with symbolic sizes, as PyTorch's
Dynamo traces through einops 0.8. `einsum` names axes by words (`'b i d, b j d -> b i j'`)
and is `torch.einsum` with a letter per word; `pack`/`unpack` are in `packing.py`. Not here:
`EinMix` and the other frameworks' backends.
"""

from einops import _backends
from einops._recipe import EinopsError, run as _run
from einops.packing import pack, unpack

__version__ = "0.8.2"

# What PyTorch's Dynamo does when it first meets einops: register torch.Tensor's backend up
# front, so that only other types (a Parameter) change the registry while tracing.
_backends._type2backend[__import__("torch").Tensor] = _backends._torch_backend
__all__ = ["EinopsError", "einsum", "pack", "parse_shape", "rearrange", "reduce", "repeat",
           "unpack"]


def rearrange(tensor, pattern, **axes_lengths):
    """The same elements in another arrangement: `rearrange(x, 'b c h w -> b (h w) c')`."""
    return _run(tensor, pattern, "rearrange", None, axes_lengths)


def reduce(tensor, pattern, reduction, **axes_lengths):
    """Axes missing on the right reduced by `reduction` ('mean', 'sum', 'max', 'min',
    'prod', 'any', 'all', or a callable `(tensor, dims)`): `reduce(x, 'b c h w -> b c',
    'mean')`."""
    return _run(tensor, pattern, "reduce", reduction, axes_lengths)


def repeat(tensor, pattern, **axes_lengths):
    """New axes on the right, of the lengths given (`repeat(x, 'h w -> b h w', b=2)`, or
    written as numbers: `'h w -> h (w 2)'`), the tensor repeated along them."""
    return _run(tensor, pattern, "repeat", None, axes_lengths)


def einsum(*tensors_and_pattern):
    """`einsum(q, k, 'b i d, b j d -> b i j')`: the pattern last, axes named by words and
    `...`, each word a letter of `torch.einsum`'s equation."""
    if len(tensors_and_pattern) < 2 or not isinstance(tensors_and_pattern[-1], str):
        raise EinopsError("einsum takes tensors and then the pattern, "
                          "einsum(x, y, 'a b, b c -> a c')")
    *tensors, pattern = tensors_and_pattern
    if "->" not in pattern:
        raise EinopsError(f"einsum '{pattern}': the pattern needs '->'")
    if any(c in pattern for c in "()"):
        raise EinopsError(f"einsum '{pattern}': groups of axes are not allowed")
    letters = {}

    def side(text):
        words = text.replace("...", " ... ").split()
        out = []
        for word in words:
            if word == "...":
                out.append("...")
                continue
            if word not in letters:
                letters[word] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[len(letters)]
            out.append(letters[word])
        return "".join(out)

    inputs, output = pattern.split("->")
    operands = inputs.split(",")
    if len(operands) != len(tensors):
        raise EinopsError(f"einsum '{pattern}': {len(operands)} operands in the pattern for "
                          f"{len(tensors)} tensors")
    import torch
    equation = ",".join(side(operand) for operand in operands) + "->" + side(output)
    return torch.einsum(equation, *tensors)


def parse_shape(x, pattern):
    """The lengths of the named axes of `x`'s shape: `parse_shape(x, 'b _ h w')` ->
    `{'b': 2, 'h': 8, 'w': 8}` (`_` skips a dim, `...` any number of dims; a number is a
    dim of that length)."""
    words = pattern.replace("...", " ... ").split()
    if any("(" in word or ")" in word for word in words):
        raise EinopsError(f"parse_shape '{pattern}': groups are not allowed")
    shape = list(x.shape)
    if "..." in words:
        at = words.index("...")
        n_ellipsis = len(shape) - (len(words) - 1)
        if n_ellipsis < 0:
            raise EinopsError(f"parse_shape '{pattern}': a tensor of shape {shape} has too "
                              "few dims")
        words = words[:at] + ["_"] * n_ellipsis + words[at + 1:]
    if len(words) != len(shape):
        raise EinopsError(f"parse_shape '{pattern}': {len(words)} axes for a tensor of shape "
                          f"{shape}")
    lengths = {}
    for word, size in zip(words, shape):
        if word.isdecimal():
            if isinstance(size, int) and size != int(word):
                raise EinopsError(f"parse_shape '{pattern}': a dim of length {size} is not "
                                  f"{word}")
        elif word != "_":
            lengths[word] = size
    return lengths
