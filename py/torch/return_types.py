"""`torch.return_types`: the named tuples of values and indices that reductions along a dim
return (`x.max(dim)` is `torch.return_types.max(values=..., indices=...)`), printed as
PyTorch prints them."""

from collections import namedtuple


def _values_and_indices(name):
    base = namedtuple(name, ["values", "indices"])

    class ValuesAndIndices(base):
        __slots__ = ()

        def __repr__(self):
            return f"torch.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    ValuesAndIndices.__name__ = ValuesAndIndices.__qualname__ = name
    return ValuesAndIndices


max = _values_and_indices("max")
min = _values_and_indices("min")
sort = _values_and_indices("sort")
topk = _values_and_indices("topk")
kthvalue = _values_and_indices("kthvalue")
median = _values_and_indices("median")
