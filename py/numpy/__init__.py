"""numpy for Tailor: what model files do with numpy while they build a model.

Written for Tailor, not numpy's code: constants (`pi`, `e`, `inf`, `nan`, `newaxis`), scalar
types (`float64`, `float32`, `int64`, `int32`, `bool_`, callable, and `dtype`), math on
Python numbers and sequences (`log`, `exp`, `sqrt`, `sin`, `cos`, `power`, `prod`, `sum`,
`floor`, `ceil`, `abs`, `maximum`, `minimum`, …), and arrays for building tables (`array`,
`arange`, `zeros`, `ones`, `linspace`, `stack`, `concatenate`, elementwise ufuncs, indexing,
reductions), which `torch.from_numpy(a)` and `torch.tensor(a)` take.

Numbers stay Python numbers: `np.log(10000)` is a `np.float64`, a float computed in double
precision, and `np.prod(x.shape[1:])` of sizes multiplies them as Python does (a symbolic
size stays symbolic). An array is a torch tensor computed eagerly (`_array.ndarray`), so its
values are float32 values: a float64 array holds float32 values (exact to about 7 digits)
and int64 values are exact up to 2**24; `torch.from_numpy` copies rather than shares.
What numpy has and Tailor's does not (`np.random`, `np.frombuffer`, `np.fft`, …) raises an
error naming it where it is used.
"""

import builtins as _builtins
import math as _math

import torch as _torch
from torch._missing import UnsupportedAttribute as _Unsupported

from numpy._array import array, asarray, ndarray, wrap as _wrap, binary as _binary
from numpy._array import torch_dtype as _torch_dtype
from numpy._scalars import (BOOL as _BOOL, FLOAT32 as _FLOAT32, FLOAT64 as _FLOAT64,
                            INT64 as _INT64, bool_, dtype, float32, float64, generic, int32,
                            int64, of_python as _of_python, promote as _promote)

_dtype = dtype

__version__ = "2.0.0"

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None
float_ = double = float64
single = float32
int_ = long = int64
bool8 = bool_
number = floating = integer = generic


def _missing(path):
    return _Unsupported(path, "it is not in Tailor's numpy, which has constants, scalar "
                              "types, math on numbers and small arrays for building tables")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'numpy' has no attribute '{name}'")
    raise _missing(f"numpy.{name}")


def _is_array_like(x):
    return isinstance(x, (ndarray, list, tuple))


def _float_kind(x):
    return _FLOAT32 if _of_python(x) is _FLOAT32 else _FLOAT64


# ---- elementwise functions ------------------------------------------------------------------


def _unary(name, on_number, on_tensor, keeps_integers=False):
    """A ufunc of one operand: on a number, a numpy scalar (a float, or for `keeps_integers`
    the operand's own type); on a sequence or array, an array of the tensor op."""

    def ufunc(x, out=None):
        if out is not None:
            raise _missing(f"numpy.{name}(..., out=)")
        if isinstance(x, _torch.Tensor):
            # A tensor answers as numpy's ufunc returns it to torch: the torch op's tensor.
            if on_tensor is None:
                raise _missing(f"numpy.{name} of a tensor")
            return on_tensor(x if keeps_integers or x.is_floating_point() else x.float())
        if _is_array_like(x):
            a = asarray(x)
            if on_tensor is None:
                raise _missing(f"numpy.{name} of an array")
            if keeps_integers and a.dtype.kind in "bi":
                kind = _INT64 if a.dtype.kind == "b" else a.dtype
                return _wrap(on_tensor(a._tensor.long()), kind)
            kind = _FLOAT32 if a.dtype is _FLOAT32 else _FLOAT64
            return _wrap(on_tensor(a._tensor.float()), kind)
        kind = _of_python(x)
        if keeps_integers and kind.kind in "bi":
            return (_INT64 if kind is _BOOL else kind).type(on_number(int(x)))
        return _float_kind(x).type(on_number(float(x)))

    ufunc.__name__ = name
    return ufunc


exp = _unary("exp", _math.exp, lambda t: t.exp())
log = _unary("log", lambda v: _math.log(v) if v > 0 else (-inf if v == 0 else nan),
             lambda t: t.log())
log2 = _unary("log2", lambda v: _math.log2(v) if v > 0 else (-inf if v == 0 else nan),
              lambda t: t.log() / _math.log(2))
log10 = _unary("log10", lambda v: _math.log10(v) if v > 0 else (-inf if v == 0 else nan),
               lambda t: t.log() / _math.log(10))
log1p = _unary("log1p", _math.log1p, lambda t: (t + 1).log())
expm1 = _unary("expm1", _math.expm1, lambda t: t.exp() - 1)
sqrt = _unary("sqrt", lambda v: _math.sqrt(v) if v >= 0 else nan, lambda t: t.sqrt())
sin = _unary("sin", _math.sin, lambda t: t.sin())
cos = _unary("cos", _math.cos, lambda t: t.cos())
tan = _unary("tan", _math.tan, lambda t: t.sin() / t.cos())
tanh = _unary("tanh", _math.tanh, lambda t: t.tanh())
sinh = _unary("sinh", _math.sinh, None)
cosh = _unary("cosh", _math.cosh, None)
arcsin = _unary("arcsin", _math.asin, None)
arccos = _unary("arccos", _math.acos, None)
arctan = _unary("arctan", _math.atan, None)
floor = _unary("floor", lambda v: float(_math.floor(v)), lambda t: t.floor())
ceil = _unary("ceil", lambda v: float(_math.ceil(v)), lambda t: t.ceil())
trunc = _unary("trunc", lambda v: float(int(v)), lambda t: t.trunc())
rint = _unary("rint", lambda v: float(round(v)), lambda t: t.round())
deg2rad = radians = _unary("radians", _math.radians, lambda t: t * (pi / 180))
rad2deg = degrees = _unary("degrees", _math.degrees, lambda t: t * (180 / pi))
abs = absolute = _unary("absolute", lambda v: -v if v < 0 else v, lambda t: t.abs(), True)
square = _unary("square", lambda v: v * v, lambda t: t * t, True)
sign = _unary("sign", lambda v: (v > 0) - (v < 0), lambda t: t.sign(), True)


def round(a, decimals=0):
    """numpy's round: halves to even, at `decimals` places."""
    scale = 10.0 ** decimals
    if _is_array_like(a):
        x = asarray(a)
        if x.dtype.kind != "f":
            return x
        return _wrap((x._tensor.float() * scale).round() / scale, x.dtype)
    if isinstance(a, int) and not isinstance(a, float64):
        return int64(a) if decimals >= 0 else int64(_builtins.round(a, decimals))
    return _float_kind(a).type(_builtins.round(float(a) * scale) / scale)


around = round


def _binary_ufunc(name, on_numbers, op, how="arith"):
    """A ufunc of two operands: on numbers, a numpy scalar of numpy's promoted type; with a
    sequence or array, an array of the tensor op."""

    def ufunc(x1, x2, out=None):
        if out is not None:
            raise _missing(f"numpy.{name}(..., out=)")
        if isinstance(x1, _torch.Tensor) or isinstance(x2, _torch.Tensor):
            # As numpy's ufunc returns it to torch: the torch op's tensor.
            if op is None:
                raise _missing(f"numpy.{name} of a tensor")
            if not isinstance(x1, _torch.Tensor):
                x1 = _torch.full_like(x2, x1.item() if isinstance(x1, generic) else x1)
            return op(x1, x2.item() if isinstance(x2, generic) else x2)
        if _is_array_like(x1) or _is_array_like(x2):
            return _binary(asarray(x1) if _is_array_like(x1) else x1,
                           asarray(x2) if _is_array_like(x2) else x2, op, how)
        k1, k2 = _of_python(x1), _of_python(x2)
        kind = _promote(k1, k2)
        if how == "true" and kind.kind != "f":
            kind = _FLOAT64
        value = on_numbers(x1.item() if isinstance(x1, generic) else x1,
                           x2.item() if isinstance(x2, generic) else x2)
        if kind.kind == "b":
            return bool(value)
        if isinstance(value, float) and kind.kind != "f":
            kind = _FLOAT64
        return kind.type(value)

    ufunc.__name__ = name
    return ufunc


def _power(a, b):
    if isinstance(a, int) and isinstance(b, int) and not isinstance(b, bool) and b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    return a ** b


def _extremum(pick):
    def choose(a, b):
        if a != a or b != b:
            return nan
        return pick(a, b)
    return choose


power = _binary_ufunc("power", _power, lambda a, b: a ** b)
maximum = _binary_ufunc("maximum", _extremum(lambda a, b: a if a >= b else b),
                        lambda a, b: _torch.maximum(a, b) if isinstance(b, _torch.Tensor)
                        else a.clamp(min=b))
minimum = _binary_ufunc("minimum", _extremum(lambda a, b: a if a <= b else b),
                        lambda a, b: _torch.minimum(a, b) if isinstance(b, _torch.Tensor)
                        else a.clamp(max=b))
add = _binary_ufunc("add", lambda a, b: a + b, lambda a, b: a + b)
subtract = _binary_ufunc("subtract", lambda a, b: a - b, lambda a, b: a - b)
multiply = _binary_ufunc("multiply", lambda a, b: a * b, lambda a, b: a * b)
divide = true_divide = _binary_ufunc("divide", lambda a, b: a / b, lambda a, b: a / b, "true")
floor_divide = _binary_ufunc("floor_divide", lambda a, b: a // b, lambda a, b: a // b)
mod = remainder = _binary_ufunc("remainder", lambda a, b: a % b, lambda a, b: a % b)
arctan2 = _binary_ufunc("arctan2", lambda a, b: _math.atan2(a, b), None, "true")


def clip(a, a_min, a_max):
    return minimum(maximum(a, a_min), a_max)


def where(condition, x, y):
    c = asarray(condition)
    xs, ys = asarray(x), asarray(y)
    kind = _promote(xs.dtype, ys.dtype)
    t = _torch.where(c._tensor.bool(), xs._tensor.to(_torch_dtype(kind)),
                     ys._tensor.to(_torch_dtype(kind)))
    return _wrap(t, kind)


# ---- reductions -----------------------------------------------------------------------------


def _numbers(a):
    """Whether `a` is a flat sequence of Python numbers (sizes included, symbolic or not),
    reduced in Python rather than as an array."""
    return isinstance(a, (list, tuple)) and _builtins.all(
        not isinstance(x, (list, tuple, ndarray, _torch.Tensor)) or isinstance(x, _torch.SymInt)
        for x in a)


def _typed(total, items):
    """A Python reduction's result as numpy types it (a symbolic size stays itself)."""
    if isinstance(total, _torch.SymInt):
        return total
    kinds = [_of_python(x) for x in items if not isinstance(x, _torch.SymInt)]
    kind = _BOOL
    for k in kinds:
        kind = k if kind is _BOOL else _promote(kind, k)
    if kind is _BOOL:
        kind = _INT64
    return kind.type(total)


def prod(a, axis=None, dtype=None, keepdims=False):
    """The product of the elements (`np.prod(img_shape)`): of a sequence of numbers, as
    Python multiplies them; of an array, along `axis`."""
    if _numbers(a) and axis is None and not keepdims:
        if not a:
            return float64(1.0)
        total = 1
        for x in a:
            total = total * x
        return _typed(total, a)
    result = asarray(a).prod(axis, keepdims)
    return result if dtype is None else result.astype(dtype)


def sum(a, axis=None, dtype=None, keepdims=False):
    if _numbers(a) and axis is None and not keepdims:
        if not a:
            return float64(0.0)
        total = 0
        for x in a:
            total = total + x
        return _typed(total, a)
    result = asarray(a).sum(axis, keepdims)
    return result if dtype is None else result.astype(dtype)


def cumsum(a, axis=None, dtype=None):
    return asarray(a).cumsum(axis, dtype)


def mean(a, axis=None, keepdims=False):
    return asarray(a).mean(axis, keepdims)


def amax(a, axis=None, keepdims=False):
    return asarray(a).max(axis, keepdims)


def amin(a, axis=None, keepdims=False):
    return asarray(a).min(axis, keepdims)


max = amax
min = amin


def argmax(a, axis=None):
    return asarray(a).argmax(axis)


def argmin(a, axis=None):
    return asarray(a).argmin(axis)


def all(a, axis=None, keepdims=False):
    return asarray(a).all(axis, keepdims)


def any(a, axis=None, keepdims=False):
    return asarray(a).any(axis, keepdims)


# ---- making arrays --------------------------------------------------------------------------


def _shape(shape):
    return [shape] if isinstance(shape, int) else list(shape)


def _filled(shape, value, dt):
    kind = _dtype(dt)
    t = _torch.full(_shape(shape), value).to(_torch_dtype(kind))
    return ndarray._of(t, kind)


def zeros(shape, dtype=float64):
    return _filled(shape, 0.0, dtype)


def ones(shape, dtype=float64):
    return _filled(shape, 1.0, dtype)


empty = zeros


def full(shape, fill_value, dtype=None):
    return _filled(shape, fill_value, dtype or _of_python(fill_value))


def zeros_like(a, dtype=None):
    a = asarray(a)
    return zeros(a.shape, dtype or a.dtype)


def ones_like(a, dtype=None):
    a = asarray(a)
    return ones(a.shape, dtype or a.dtype)


empty_like = zeros_like


def full_like(a, fill_value, dtype=None):
    a = asarray(a)
    return full(a.shape, fill_value, dtype or a.dtype)


def arange(start, stop=None, step=1, dtype=None):
    """`start, start + step, …` below `stop`: int64 of ints, else float64."""
    if stop is None:
        start, stop = 0, start
    integral = _builtins.all(isinstance(v, int) for v in (start, stop, step))
    kind = _dtype(dtype) if dtype is not None else _INT64 if integral else _FLOAT64
    count = _math.ceil((stop - start) / step)
    count = count if count > 0 else 0
    t = _torch.arange(count).float() * step + start
    return ndarray._of(t.to(_torch_dtype(kind)), kind)


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """`num` evenly spaced values from `start` to `stop` (included unless `endpoint` is
    False), computed as numpy does: `start + i * step`, the last one exactly `stop`."""
    kind = _dtype(dtype) if dtype is not None else _FLOAT64
    div = num - 1 if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    t = _torch.arange(num).float() * step + start
    if endpoint and num > 1:
        t[num - 1] = float(stop)
    return ndarray._of(t.to(_torch_dtype(kind)), kind)


def eye(n, m=None, dtype=float64):
    m = n if m is None else m
    t = _torch.arange(n).unsqueeze(1) == _torch.arange(m).unsqueeze(0)
    kind = _dtype(dtype)
    return ndarray._of(t.to(_torch_dtype(kind)), kind)


def _joined(arrays, join):
    arrays = [asarray(a) for a in arrays]
    kind = arrays[0].dtype
    for a in arrays[1:]:
        kind = _promote(kind, a.dtype)
    return _wrap(join([a._tensor.to(_torch_dtype(kind)) for a in arrays]), kind)


def stack(arrays, axis=0):
    return _joined(arrays, lambda ts: _torch.stack(ts, axis))


def concatenate(arrays, axis=0):
    return _joined(arrays, lambda ts: _torch.cat(ts, axis))


def vstack(arrays):
    return concatenate([a if asarray(a).ndim > 1 else asarray(a).reshape(1, -1) for a in arrays])


def hstack(arrays):
    return concatenate(arrays, 0 if asarray(arrays[0]).ndim == 1 else 1)


def reshape(a, shape):
    return asarray(a).reshape(shape)


def transpose(a, axes=None):
    return asarray(a).transpose(*(axes or ()))


def expand_dims(a, axis):
    return _wrap(asarray(a)._tensor.unsqueeze(axis), asarray(a).dtype)


def outer(a, b):
    return asarray(a).reshape(-1, 1) * asarray(b).reshape(1, -1)


def dot(a, b):
    return asarray(a) @ asarray(b)


matmul = dot


def shape(a):
    return asarray(a).shape


def ndim(a):
    return asarray(a).ndim


def size(a):
    return asarray(a).size


def isscalar(x):
    return isinstance(x, (int, float, complex, str, bytes))
