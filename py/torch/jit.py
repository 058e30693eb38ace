"""`torch.jit` as model files use it: the decorators that mark what TorchScript compiles or
skips pass the function or class through (Dynamo traces the Python, not TorchScript), and
the predicates answer as in eager Python."""

import _tailor


def script(obj=None, *args, **kwargs):
    return obj


def export(fn):
    return fn


def ignore(fn=None, drop=False, **kwargs):
    return fn if fn is not None else (lambda f: f)


def unused(fn):
    return fn


def interface(obj):
    return obj


def _overload(fn):
    return fn


def _overload_method(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def trace(*args, **kwargs):
    _tailor.unsupported("torch.jit.trace", "compile the module itself: torch.compile(model)")


class _Final:
    def __getitem__(self, item):
        return item


Final = _Final()
