"""torch._dynamo: marks on a script's input tensors (in a model file, marks are given in
Tailor's controls), and reset()."""

import _tailor


def _dims(index):
    return list(index) if isinstance(index, (list, tuple)) else [index]


def mark_dynamic(tensor, index, min=None, max=None):
    for dim in _dims(index):
        _tailor.mark(tensor, True, dim, min, max)


def maybe_mark_dynamic(tensor, index):
    _tailor.unsupported("torch._dynamo.maybe_mark_dynamic",
                        "its weak marks are not modelled; use mark_dynamic")


def mark_static(tensor, index=None):
    dims = range(tensor.dim()) if index is None else _dims(index)
    for dim in dims:
        _tailor.mark(tensor, False, dim, None, None)


def reset():
    """Forgets every compiled entry and the automatic-dynamic state (a script's wrappers
    compile afresh on their next call)."""
    _tailor.reset()
