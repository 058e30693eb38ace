"""einops' backend registry, as einops 0.8 keeps it: `_type2backend` maps a tensor's type to
its backend and is filled on first use (`get_backend`).

In: the tensor each `rearrange`/`reduce`/`repeat` is given. Out: its backend (Tailor has one:
the torch stand-in's ops). Invariant: the registry changes only where einops' does, and a
capture reads it as PyTorch's Dynamo does: tracing einops' `get_backend`, Dynamo guards the
dict's keys (`len(G['__import_einops_dot__backends']._type2backend) == 1`), and a type the
trace registers (einops applied to an `nn.Parameter`, a class token) changes the dict after
the graph, so the next call recompiles. Dynamo registers `torch.Tensor` up front when it
first meets einops (`torch/_dynamo/decorators.py`, `_allow_in_graph_einops`), which
`einops/__init__.py` does here at import.
"""

import _tailor


class TorchBackend:
    framework_name = "torch"


_torch_backend = TorchBackend()
_type2backend = {}


def _tensor_type(tensor):
    """`type(tensor)` as PyTorch has it: `nn.Parameter` for a parameter, `Tensor` for a
    buffer. (Tailor's tensors share one class; module state that requires gradients is a
    parameter, so a parameter frozen with `requires_grad=False` counts as a buffer here.)"""
    import _tailor
    from torch import nn
    if _tailor.is_state(tensor) and tensor.requires_grad:
        return nn.Parameter
    return type(tensor)


def get_backend(tensor):
    """The backend of `tensor`'s type, registered on first use."""
    if _tailor.tracing():
        _tailor.global_dict_read(__name__, "_type2backend")
    kind = _tensor_type(tensor)
    backend = _type2backend.get(kind)
    if backend is None:
        backend = _type2backend[kind] = _torch_backend
    return backend
