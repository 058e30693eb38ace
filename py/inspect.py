"""inspect for Tailor: the predicates model files use while they are defined
(`isfunction(d)` in lucidrains' `default(val, d)`, `isclass` in layer factories), as
CPython's `inspect` answers them. CPython's own module needs native parts Tailor's Python
does not carry (build.rs)."""

import types


def isfunction(obj):
    return isinstance(obj, types.FunctionType)


def ismethod(obj):
    return isinstance(obj, types.MethodType)


def isclass(obj):
    return isinstance(obj, type)


def ismodule(obj):
    return isinstance(obj, types.ModuleType)


def isbuiltin(obj):
    return isinstance(obj, types.BuiltinFunctionType)


def isroutine(obj):
    return isfunction(obj) or ismethod(obj) or isbuiltin(obj)


def isgeneratorfunction(obj):
    return isfunction(obj) and bool(obj.__code__.co_flags & 0x20)


def iscoroutinefunction(obj):
    return isfunction(obj) and bool(obj.__code__.co_flags & 0x80)
