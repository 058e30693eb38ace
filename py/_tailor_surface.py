"""What Tailor's `torch` captures, read from the package itself, and what to use instead of a
name it lacks.

Called from Rust (`frontend::surface`, `frontend::errors`), never from model code. Input:
the frozen `torch` package. Output: `surface()`, the modules, functions, methods and
operators it defines, grouped as the page's reference panel shows them; `instead(path)`, the
supported alternative to an unsupported name (`Tensor.amin`), or its closest spelling.
Invariant: every name `surface()` lists resolves in the package, and nothing is listed by
hand: a layer or function added to `py/torch` appears here as it is.
"""

import torch
from torch import nn
from torch.nn import functional as F

# Operators a Tensor supports, by the method that implements them.
_OPERATORS = {
    "__add__": "x + y", "__sub__": "x - y", "__mul__": "x * y", "__truediv__": "x / y",
    "__floordiv__": "x // y", "__mod__": "x % y", "__pow__": "x ** y", "__matmul__": "x @ y",
    "__neg__": "-x", "__abs__": "abs(x)", "__getitem__": "x[...]", "__lt__": "x < y",
    "__le__": "x <= y", "__gt__": "x > y", "__ge__": "x >= y", "__eq__": "x == y",
    "__ne__": "x != y", "__and__": "x & y", "__or__": "x | y", "__invert__": "~x",
}

# Unsupported names whose work a supported spelling does, as PyTorch computes it.
_ALTERNATIVES = {
    "Tensor.numpy": "x.tolist() outside forward",
    "torch.nn.functional.unfold": "a strided slice, or nn.Conv2d",
}


def _public(namespace, keep):
    return sorted(name for name, value in vars(namespace).items()
                  if not name.startswith("_") and keep(value))


def _is_function(value):
    return callable(value) and not isinstance(value, type)


def surface():
    """{group: [names]} of what capture supports: `torch.nn` modules, `torch` and
    `torch.nn.functional` functions, `Tensor` methods and properties, Tensor operators."""
    tensor_names = [name for name in dir(torch.Tensor) if not name.startswith("_")]
    return {
        "torch.nn": _public(nn, lambda v: isinstance(v, type) and issubclass(v, nn.Module)),
        "torch.nn.functional": _public(F, _is_function),
        "torch": _public(torch, lambda v: _is_function(v) and not isinstance(v, torch.dtype)),
        "Tensor": sorted(tensor_names),
        "operators": [text for method, text in _OPERATORS.items() if hasattr(torch.Tensor, method)],
    }


def _group_of(path):
    """The surface group an unsupported `path` (`torch.nn.functional.unfold`) belongs to,
    and the name in it."""
    for group in ("torch.nn.functional", "torch.nn", "Tensor", "torch"):
        if path.startswith(group + "."):
            return group, path[len(group) + 1:]
    return None, path


def _distance(a, b):
    """Levenshtein distance: the fewest edits of one character that turn `a` into `b`."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def instead(path):
    """What to write instead of the unsupported `path`: its alternative, or, for what looks
    like a misspelling (at most a third of the name's letters changed), the closest
    supported name of its group ("did you mean"); None when there is neither."""
    if path in _ALTERNATIVES:
        return "use " + _ALTERNATIVES[path]
    group, name = _group_of(path)
    if group is None:
        return None
    if group == "Tensor" and name.endswith("_") and hasattr(torch.Tensor, name[:-1]):
        # `x.unsqueeze_(0)`: an in-place form Tailor lacks, of a method it has.
        return f"use x = x.{name[:-1]}(...), its out-of-place form"
    candidates = surface()[group]
    scored = sorted((_distance(name.lower(), c.lower()), c) for c in candidates)
    if scored and scored[0][0] <= max(1, len(name) // 3):
        prefix = "x." if group == "Tensor" else ("F." if group == "torch.nn.functional" else
                                                 ("nn." if group == "torch.nn" else "torch."))
        return f"did you mean {prefix}{scored[0][1]}?"
    return None
