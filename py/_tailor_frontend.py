"""What the Python front end asks of the model's module: entries, their inputs, names.

Called from Rust (`frontend::python`), never from model code.
"""

import _tailor
import torch

_function = type(lambda: None)


def candidates(namespace):
    """(name, object, is_module) of the nn.Module subclasses and functions the file defines."""
    found = []
    for name, value in namespace.items():
        if (isinstance(value, type) and issubclass(value, torch.nn.Module)
                and value.__module__ == "__main__"):
            found.append((name, value, True))
        elif isinstance(value, _function) and value.__code__.co_filename == "<model>":
            found.append((name, value, False))
    return found


def forward_of(cls):
    """The class's forward, or None when only nn.Module's own (which raises) is there."""
    forward = getattr(cls, "forward", None)
    return None if forward is torch.nn.Module.forward else forward


def inputs(function, is_method):
    """The parameters without defaults (self excluded): the tensors `forward` takes."""
    code = function.__code__
    names = code.co_varnames[:code.co_argcount]
    required = len(names) - len(function.__defaults__ or ())
    return list(names[1 if is_method else 0:required])


def first_line(function):
    return function.__code__.co_firstlineno


def name_state(model):
    """Names every parameter and buffer after its dotted path (`layers.0.weight`)."""
    for name, tensor in model.named_parameters():
        _tailor.set_name(tensor, name)
    for name, tensor in model.named_buffers():
        _tailor.set_name(tensor, name)
