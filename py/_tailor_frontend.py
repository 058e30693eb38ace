"""What the Python front end asks of the model's module: entries, their inputs, names.

Called from Rust (`frontend`), never from model code.
"""

import _tailor
import torch

_function = type(lambda: None)


def candidates(namespace):
    """(name, object, kind) of what the file defines that can be compiled, in definition
    order: its nn.Module subclasses ("class"), the nn.Module instances it builds at module
    level ("instance": `model = Transformer(dim=64)`), and its functions ("function")."""
    found = []
    for name, value in namespace.items():
        if (isinstance(value, type) and issubclass(value, torch.nn.Module)
                and value.__module__ == "__main__"):
            found.append((name, value, "class"))
        elif isinstance(value, torch.nn.Module):
            found.append((name, value, "instance"))
        elif isinstance(value, _function) and value.__code__.co_filename == "<model>":
            found.append((name, value, "function"))
    return found


def forward_of(cls):
    """The class's forward, or None when only nn.Module's own (which raises) is there."""
    forward = getattr(cls, "forward", None)
    return None if forward is torch.nn.Module.forward else forward


def inputs(function, is_method):
    """The parameters without defaults (self excluded): the tensors `forward` takes, the
    positional ones first, then the keyword-only ones (`def forward(self, *, x)`)."""
    code = function.__code__
    names = code.co_varnames[:code.co_argcount]
    required = len(names) - len(function.__defaults__ or ())
    return list(names[1 if is_method else 0:required]) + keyword_inputs(function)


def keyword_inputs(function):
    """The keyword-only parameters without defaults, which a call passes by name."""
    code = function.__code__
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    defaults = function.__kwdefaults__ or {}
    return [name for name in names if name not in defaults]


def first_line(function):
    return function.__code__.co_firstlineno


def name_state(model):
    """Names every parameter and buffer after its dotted path (`layers.0.weight`)."""
    for name, tensor in model.named_parameters():
        _tailor.set_name(tensor, name)
    for name, tensor in model.named_buffers():
        _tailor.set_name(tensor, name)


def state_entries(model):
    """(name, tensor) of every `state_dict` key of the entry, in PyTorch's order, for loading
    weights; a buffer or parameter that is not module state (a tensor computed in
    `__init__` and assigned in place) is made state first, so loaded values reach it."""
    for module in model.modules():
        for registry in (module._parameters, module._buffers):
            for name, value in registry.items():
                if value is not None and not _tailor.is_state(value):
                    registry[name] = _tailor.as_state(value)
    name_state(model)
    return list(torch.nn.Module.state_dict(model).items())


def compiled_target(target):
    """What `torch.compile(target)` compiles, in a script: (name, function, callable,
    is_module, key), `key` naming its cache (the code object, and the instance)."""
    if isinstance(target, torch.nn.Module):
        cls = type(target)
        forward = forward_of(cls)
        if forward is None:
            raise TypeError(f"'{cls.__name__}' has no forward method to compile")
        name_state(target)
        return cls.__name__, forward, target.forward, True, (id(forward.__code__), id(target))
    if isinstance(target, _function):
        return target.__name__, target, target, False, (id(target.__code__), 0)
    raise TypeError(f"torch.compile expects an nn.Module or a function, got {type(target).__name__}")


class _Output:
    """sys.stdout / sys.stderr of a script: what it writes goes to the session, in order."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        _tailor.write(self._stream, text)
        return len(text)

    def flush(self):
        pass


def capture_output():
    import builtins
    import sys
    sys.stdout = _Output("stdout")
    sys.stderr = _Output("stderr")
    if getattr(builtins.print, "_tailor", False):
        return
    builtin_print = builtins.print

    def print(*args, **kwargs):
        # Inside forward, Dynamo cannot trace the builtin: a graph break.
        _tailor.print_break(list(args))
        builtin_print(*args, **kwargs)

    print._tailor = True
    builtins.print = print


def install_len():
    """`len(tensor)` is the tensor's first size, kept symbolic, as Dynamo reads `len()` of a
    tensor (rtdl's `expand(len(x), 1, -1)`): Python's own `len` must return an int, which
    would specialise the size with a guard."""
    import builtins
    if getattr(builtins.len, "_tailor", False):
        return
    builtin_len = builtins.len
    from torch import Tensor

    def len(obj):
        if isinstance(obj, Tensor):
            if obj.dim() == 0:
                raise TypeError("len() of a 0-d tensor")
            return obj.size(0)
        return builtin_len(obj)

    len._tailor = True
    builtins.len = len


def install_clock():
    """A script's monotonic clocks are the run's clock (also in the browser)."""
    import time
    time.perf_counter = time.monotonic = _tailor.perf_counter
    time.perf_counter_ns = time.monotonic_ns = lambda: int(_tailor.perf_counter() * 1e9)


# ---- modules Tailor's Python does not have ---------------------------------------------------
#
# A model file imports more than its model needs: argparse, torchvision's datasets, torch.optim,
# numpy for a data loader. Dynamo never runs that driver code, and neither does Tailor; so an
# import that no frozen module answers gives a stand-in module whose names are stand-ins too
# (attributes, subclasses and decorators' lookups work), and only *calling* one raises
# AbsentName, which the front end reports as "NAME is not supported" at the user's line.


class AbsentName(ImportError):
    """A name of a module Tailor's Python does not have was called."""

    def __init__(self, path, module):
        super().__init__(f"{path} is not available: Tailor's Python has no module '{module}'")
        self.path = path
        self.module = module


class _AbsentMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(f"{cls._tailor_path}.{name}", cls._tailor_module)

    def __call__(cls, *args, **kwargs):
        raise AbsentName(cls._tailor_path, cls._tailor_module)


def _absent(path, module):
    return _AbsentMeta(path.rsplit(".", 1)[-1], (), {"_tailor_path": path, "_tailor_module": module})


class _AbsentModule(type(_tailor)):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _absent(f"{self.__name__}.{name}", self.__name__)


class _AbsentFinder:
    """The last finder on sys.meta_path: every module nothing else found is absent."""

    absent = []

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        import _frozen_importlib
        return _frozen_importlib.ModuleSpec(name, cls, is_package=True)

    @classmethod
    def create_module(cls, spec):
        module = _AbsentModule(spec.name)
        module.__path__ = []
        cls.absent.append(spec.name)
        return module

    @classmethod
    def exec_module(cls, module):
        pass


def install_absent_modules():
    import sys
    if _AbsentFinder not in sys.meta_path:
        sys.meta_path.append(_AbsentFinder)


def take_absent_modules():
    """The modules made absent since the last call, in import order."""
    taken = list(_AbsentFinder.absent)
    _AbsentFinder.absent.clear()
    return taken
