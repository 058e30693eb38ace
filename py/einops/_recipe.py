"""An einops pattern read into a plan of tensor steps, and the plan applied to a tensor.

Written for Tailor from einops' documented semantics (https://einops.rocks), not from its
source. Input: a pattern such as `b c (h p1) (w p2) -> b (h w) (p1 p2 c)`, the operation
(`rearrange`, `reduce`, `repeat`), the tensor's rank and the names given lengths as keywords.
Output: a `_Plan`, kept per those four, whose `apply` is at most five tensor steps, the ones
einops' torch backend takes: `reshape` to the elementary axes (where a dim is a group),
`permute` to the output's order, the reduction, `unsqueeze` + `expand` for new axes, and
`reshape` to the output's groups. Steps that would do nothing are left out, as einops leaves
them out, so a trace records exactly the ops (and the size questions) PyTorch's trace through
einops records.

Invariant: sizes are never turned into Python ints. A group's unknown axis is the dim's size
floor-divided by the product of the others, a SymInt expression inside `forward`, and the
questions asked of sizes are the ones PyTorch's trace through einops asks: whether the known
product divides the dim (`s2 % 2 == 0`), or equals it where nothing is unknown.
"""

from einops._backends import get_backend


class EinopsError(RuntimeError):
    """A pattern that cannot be read, or that does not fit the tensor or the given lengths."""


class _Anonymous:
    """An axis written as its length (`(h 2)`, `-> b 3 n` in `repeat`): each occurrence is an
    axis of its own, known by its length."""

    __slots__ = ("length",)

    def __init__(self, length):
        self.length = length

    def __repr__(self):
        return str(self.length)


# The marker the tokenizer puts for `...`; the axes it stands for are keyed ("...", i).
_ELLIPSIS = "..."


def _tokens(text):
    """`b (h w) ... c` -> ["b", "(", "h", "w", ")", "...", "c"]."""
    out, word = [], ""
    text = text.replace("...", " ... ")
    for char in text:
        if char in "() ":
            if word:
                out.append(word)
                word = ""
            if char != " ":
                out.append(char)
        else:
            word += char
    if word:
        out.append(word)
    return out


def _axis(word):
    """The axis a word names: itself (a name), `_Anonymous` (a length), or None for `1`."""
    if word == _ELLIPSIS:
        return _ELLIPSIS
    if word.isdecimal():
        length = int(word)
        if length < 1:
            raise EinopsError(f"an axis given by its length must be positive, not {word}")
        return None if length == 1 else _Anonymous(length)
    if not word.isidentifier() or word.startswith("_") and word != "_" or word.endswith("_"):
        raise EinopsError(f"invalid axis name '{word}': a Python identifier without a leading "
                          "or trailing underscore, or a number")
    return word


def _side(text):
    """One side of a pattern: its dims, each a list of axes (`()` and `1` are dims with no
    axis) or `_ELLIPSIS` for a `...` standing alone; whether `...` appears, and whether
    inside parentheses."""
    dims, group = [], None
    ellipsis, grouped = False, False
    seen = set()
    for token in _tokens(text):
        if token == "(":
            if group is not None:
                raise EinopsError("parentheses cannot be nested")
            group = []
        elif token == ")":
            if group is None:
                raise EinopsError("a ')' closes no '('")
            dims.append(group)
            group = None
        else:
            axis = _axis(token)
            if axis == _ELLIPSIS:
                if ellipsis:
                    raise EinopsError("'...' may appear only once on each side")
                ellipsis, grouped = True, group is not None
            elif isinstance(axis, str):
                if axis in seen:
                    raise EinopsError(f"the axis '{axis}' appears twice on one side")
                seen.add(axis)
            if group is not None:
                if axis is not None:
                    group.append(axis)
            elif axis == _ELLIPSIS:
                dims.append(_ELLIPSIS)
            else:
                dims.append([] if axis is None else [axis])
    if group is not None:
        raise EinopsError("a '(' is not closed")
    return dims, ellipsis, grouped


def _spelled(dims, n_ellipsis):
    """`dims` with `...` replaced by its `n_ellipsis` axes: dims of their own where it stands
    alone, axes of the group where it is inside one."""
    axes = [(_ELLIPSIS, i) for i in range(n_ellipsis)]
    out = []
    for group in dims:
        if group == _ELLIPSIS:
            out.extend([axis] for axis in axes)
        elif _ELLIPSIS in group:
            at = group.index(_ELLIPSIS)
            out.append(group[:at] + axes + group[at + 1:])
        else:
            out.append(group)
    return out


def _names(axes):
    return "{" + ", ".join(sorted(repr(a) if isinstance(a, _Anonymous) else a
                                  for a in axes)) + "}"


class _Plan:
    """The steps of one pattern for one rank and one set of keyword names."""

    def __init__(self, pattern, operation, ndim, named):
        left_text, arrow, right_text = pattern.partition("->")
        if not arrow:
            raise EinopsError("a pattern has the form 'input -> output' ('->' is missing)")
        left, left_ellipsis, left_grouped = _side(left_text)
        right, right_ellipsis, _ = _side(right_text)
        if left_grouped:
            raise EinopsError("'...' cannot be inside parentheses on the left side")
        if right_ellipsis and not left_ellipsis:
            raise EinopsError("'...' is on the right side but not on the left")
        if left_ellipsis and not right_ellipsis and operation != "reduce":
            raise EinopsError("'...' is on the left side but not on the right")
        if ndim is None:
            ndim = len(left) - (1 if left_ellipsis else 0)
        n_ellipsis = ndim - (len(left) - 1) if left_ellipsis else 0
        if n_ellipsis < 0 or not left_ellipsis and len(left) != ndim:
            wanted = f"at least {len(left) - 1}" if left_ellipsis else str(len(left))
            raise EinopsError(f"the pattern's left side has {wanted} dims, the tensor {ndim}")
        self.left = _spelled(left, n_ellipsis)
        self.right = _spelled(right, n_ellipsis)
        self.elementary = [axis for group in self.left for axis in group]
        outputs = [axis for group in self.right for axis in group]
        inputs = set(self.elementary)
        self.known = {axis: axis.length for axis in self.elementary + outputs
                      if isinstance(axis, _Anonymous)}
        self._check_sides(operation, inputs, outputs, named)
        for group in self.left:
            unknown = [a for a in group if a not in named and not isinstance(a, _Anonymous)]
            if len(unknown) > 1:
                raise EinopsError(f"cannot infer the lengths of {_names(unknown)}: give all "
                                  "but one of a group's axes as keywords")
        kept = [axis for axis in outputs if axis in inputs]
        reduced = [axis for axis in self.elementary if axis not in set(outputs)]
        order = [self.elementary.index(axis) for axis in kept + reduced]
        self.permutation = None if order == list(range(len(order))) else order
        self.n_reduced = len(reduced)
        self.added = [(position, axis) for position, axis in enumerate(outputs)
                      if axis not in inputs]
        self.init_reshape = any(len(group) != 1 for group in self.left)
        self.final_reshape = any(len(group) != 1 for group in self.right)

    def _check_sides(self, operation, inputs, outputs, named):
        """The axes each side may have: both the same for `rearrange`, fewer on the right for
        `reduce`, more on the right for `repeat` (each new one given a length)."""
        only_left = [a for a in self.elementary if a not in set(outputs)]
        only_right = [a for a in outputs if a not in inputs]
        if operation == "rearrange":
            if only_left or only_right:
                raise EinopsError("rearrange needs the same axes on both sides; on one side "
                                  f"only: {_names(only_left + only_right)}")
        elif operation == "reduce":
            if only_right:
                raise EinopsError(f"reduce cannot add axes: {_names(only_right)} are only on "
                                  "the right side")
        elif only_left:
            raise EinopsError(f"repeat cannot drop axes: {_names(only_left)} are only on the "
                              "left side")
        else:
            missing = [a for a in only_right if not isinstance(a, _Anonymous) and a not in named]
            if missing:
                raise EinopsError(f"give the lengths of the new axes {_names(missing)} as "
                                  "keywords")
        unused = [name for name in named
                  if name not in set(self.elementary) and name not in set(outputs)]
        if unused:
            raise EinopsError(f"the keyword axes {_names(unused)} are not in the pattern")

    def lengths(self, shape, axes_lengths):
        """Every axis's length, from the tensor's sizes and the keyword lengths: a group's
        one unknown axis is its dim's size // the product of the others."""
        lengths = dict(self.known)
        lengths.update(axes_lengths)
        for size, group in zip(shape, self.left):
            unknown = [axis for axis in group if axis not in lengths]
            if len(group) == 1 and unknown:
                lengths[group[0]] = size
                continue
            product = 1
            for axis in group:
                if axis in lengths:
                    product = product * lengths[axis]
            # A symbolic size is checked too, as PyTorch's trace checks it (Dynamo takes a
            # SymInt for an int): where the check is not decided by the sizes' forms, it is
            # a guard (`s2 % 2 == 0`), which PyTorch records as well.
            if not unknown:
                if size != product:
                    raise EinopsError(f"a dim of length {size} is not the product {product} "
                                      "of its axes")
            else:
                if isinstance(product, int) and product == 0 or size % product != 0:
                    raise EinopsError(f"a dim of length {size} cannot be split into parts of "
                                      f"{product}")
                lengths[unknown[0]] = size // product
        return lengths

    def apply(self, x, reduction, axes_lengths):
        lengths = self.lengths(x.shape, axes_lengths)
        if self.init_reshape:
            x = x.reshape([lengths[axis] for axis in self.elementary])
        if self.permutation is not None:
            x = x.permute(self.permutation)
        if self.n_reduced:
            first = len(self.elementary) - self.n_reduced
            x = _reduced(x, reduction, list(range(first, len(self.elementary))))
        if self.added:
            for position, _ in self.added:
                x = x.unsqueeze(position)
            sizes = [-1] * x.dim()
            for position, axis in self.added:
                sizes[position] = lengths[axis]
            x = x.expand(sizes)
        if self.final_reshape:
            x = x.reshape([_product(lengths[axis] for axis in group) for group in self.right])
        return x


def _product(sizes):
    total = 1
    for size in sizes:
        total = total * size
    return total


_REDUCTIONS = ("min", "max", "sum", "mean", "prod", "any", "all")


def _reduced(x, reduction, dims):
    """`x` reduced over `dims` by a reduction's name or a callable `(x, dims) -> tensor`."""
    if callable(reduction):
        return reduction(x, tuple(dims))
    if reduction == "mean":
        return x.mean(dims)
    if reduction == "sum":
        return x.sum(dims)
    if reduction == "max":
        return x.amax(dims)
    if reduction == "min":
        return x.amin(dims)
    # `prod`, `any` and `all` take one dim at a time, the last first.
    for dim in reversed(dims):
        x = getattr(x, reduction)(dim)
    return x


_PLANS = {}


def plan(pattern, operation, ndim, named):
    """The `_Plan` of `pattern` for a tensor of rank `ndim` (None: the pattern's own) and
    keyword axes `named`, made once per distinct four (einops keeps its recipes the same way:
    a model calls the same pattern every step)."""
    key = (pattern, operation, ndim, tuple(sorted(named)))
    found = _PLANS.get(key)
    if found is None:
        found = _PLANS[key] = _Plan(pattern, operation, ndim, named)
    return found


def run(tensor, pattern, operation, reduction, axes_lengths):
    """`operation` of `pattern` on `tensor` (a list of tensors is stacked first), errors
    named with the pattern, the tensor's shape and the keyword lengths."""
    import torch
    if isinstance(tensor, (list, tuple)):
        if not tensor:
            raise EinopsError("rearrange, reduce and repeat need at least one tensor")
        tensor = torch.stack(list(tensor))
    if operation == "reduce" and reduction not in _REDUCTIONS and not callable(reduction):
        raise EinopsError(f"unknown reduction {reduction!r}: one of {', '.join(_REDUCTIONS)}, "
                          "or a callable")
    get_backend(tensor)
    try:
        return plan(pattern, operation, tensor.dim(), axes_lengths).apply(
            tensor, reduction, axes_lengths)
    except EinopsError as error:
        given = "".join(f", {name}={length!r}" for name, length in axes_lengths.items())
        raise EinopsError(f"{operation} '{pattern}' of a tensor of shape "
                          f"{list(tensor.shape)}{given}: {error}") from None
