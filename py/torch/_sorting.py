"""Sorting along a dim: `sort`, `argsort`, `msort`, `topk`, `kthvalue` and `median`, as
Tensor methods (and through them `torch.*`).

In: a tensor and a dim. Out: values and int64 indices, in PyTorch's named tuples.
Invariant: the order is PyTorch's stable one (ties keep their positions, NaN sorts above
every number), and nothing here asks a symbolic size anything PyTorch's meta functions do
not ask (`topk` and `kthvalue` ask `k <= n`).

Inside `forward` a sort is decomposed over primitives the compiler has, as PyTorch's refs
decompose: each element's rank is the count of elements that order before it (an n × n
comparison), and output position r takes the element ranked r (a one-hot match summed).
That costs n² elements per row, so a sort of a long row inside a compiled call meets the
memory budget; outside `forward` (a generate loop's top-k over a vocabulary, a table built
in `__init__`) tensors hold values and are sorted as values.
"""

import _tailor
from torch._tensor import Tensor, _dim_index, int64


def _before(a, b):
    """Whether element a orders strictly before b ascending: NaN is above every number."""
    a_nan, b_nan = a != a, b != b
    return (a < b) | (b_nan & ~a_nan)


def _ranks(x, descending):
    """Each element's position in the stable order along the last dim (int64, x's shape)."""
    import torch
    n = x.size(-1)
    mine, theirs = x.unsqueeze(-1), x.unsqueeze(-2)
    ahead = _before(mine, theirs) if descending else _before(theirs, mine)
    tied = (theirs == mine) | ((theirs != theirs) & (mine != mine))
    positions = torch.arange(n)
    earlier = positions.unsqueeze(-1) > positions.unsqueeze(0)
    return (ahead | (tied & earlier)).sum(-1)


def _ranked(x, ranks, wanted):
    """The elements ranked `wanted` (an int64 vector of ranks) along the last dim, and
    their positions."""
    import torch
    hit = ranks.unsqueeze(-1) == wanted
    positions = torch.arange(x.size(-1)).unsqueeze(-1)
    values = torch.where(hit, x.unsqueeze(-1), 0).sum(-2)
    if not x.is_floating_point():
        values = values.to(x.dtype)
    return values, torch.where(hit, positions, 0).sum(-2)


def _sorted_rows(x, descending):
    """Values and positions of each row of x (last dim) in order, from its values."""
    import math
    import torch
    n = x.size(-1)
    flat = _tailor.values(x)
    floating = x.is_floating_point()

    def key(value):
        if floating and math.isnan(value):
            return (1, 0.0)
        return (0, value)

    values, indices = [], []
    for start in range(0, len(flat), n) if n else ():
        row = flat[start:start + n]
        order = sorted(range(n), key=lambda i: key(row[i]), reverse=descending)
        values.extend(row[i] for i in order)
        indices.extend(order)
    shape = list(x.shape)
    return (torch.tensor(values, dtype=x.dtype).reshape(shape),
            torch.tensor(indices, dtype=int64).reshape(shape))


def _order(x, d, descending, first=None, rank=None):
    """Values and indices along dim d in order: all of them, the `first` few, or the one
    at `rank` (kept as a dim of 1)."""
    import torch
    moved = x.movedim(d, -1)
    if not _tailor.tracing():
        values, indices = _sorted_rows(moved, descending)
        if first is not None:
            values, indices = values[..., :first], indices[..., :first]
        elif rank is not None:
            values, indices = values[..., rank:rank + 1], indices[..., rank:rank + 1]
    else:
        if first is not None:
            wanted = torch.arange(first)
        elif rank is not None:
            wanted = rank
        else:
            wanted = torch.arange(moved.size(-1))
        values, indices = _ranked(moved, _ranks(moved, descending), wanted)
    return values.movedim(-1, d), indices.movedim(-1, d)


def _sort(self, dim=-1, descending=False, stable=False):
    from torch import return_types
    if isinstance(dim, bool):
        # torch.sort(x, True) is a descending sort along the last dim (the overload whose
        # second argument is `descending`).
        dim, descending = -1, dim
    if self.dim() == 0:
        return return_types.sort(self.clone(), _zero_index())
    values, indices = _order(self, _dim_index(dim, self.dim()), descending)
    return return_types.sort(values, indices)


def _zero_index():
    import torch
    return torch.tensor(0)


def _argsort(self, dim=-1, descending=False, stable=False):
    return _sort(self, dim, descending, stable).indices


def _msort(self):
    return _sort(self, 0).values


def _topk(self, k, dim=-1, largest=True, sorted=True):
    from torch import return_types
    d = _dim_index(dim, max(self.dim(), 1))
    n = self.size(d) if self.dim() else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if self.dim() == 0:
        return return_types.topk(self.clone(), _zero_index())
    values, indices = _order(self, d, largest, first=k)
    return return_types.topk(values, indices)


def _kthvalue(self, k, dim=-1, keepdim=False):
    from torch import return_types
    d = _dim_index(dim, max(self.dim(), 1))
    n = self.size(d) if self.dim() else 1
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if self.dim() == 0:
        return return_types.kthvalue(self.clone(), _zero_index())
    values, indices = _order(self, d, False, rank=k - 1)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return return_types.kthvalue(values, indices)


def _median(self, dim=None, keepdim=False):
    """The lower median (rank (n - 1) // 2 ascending), NaN where the row holds one (at the
    first NaN's position), as PyTorch's `median`; of every element when `dim` is None."""
    import torch
    from torch import return_types
    if dim is None:
        flat = self.reshape(-1)
        return _median(flat, 0).values if flat.numel() else flat.sum() * float("nan")
    d = _dim_index(dim, max(self.dim(), 1))
    if self.dim() == 0:
        return return_types.median(self.clone(), _zero_index())
    n = self.size(d)
    values, indices = _order(self, d, False, rank=(n - 1) // 2)
    if self.is_floating_point():
        nan = self != self
        any_nan = nan.any(d, keepdim=True)
        values = torch.where(any_nan, float("nan"), values)
        indices = torch.where(any_nan, nan.long().argmax(d, keepdim=True), indices)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return return_types.median(values, indices)


METHODS = {
    "sort": _sort, "argsort": _argsort, "msort": _msort, "topk": _topk,
    "kthvalue": _kthvalue, "median": _median,
}
