"""`ndarray` for Tailor's numpy: a torch tensor computed eagerly, with numpy's dtype and
printing.

In: nested lists, numbers, tensors (`array`), and the operands of an array's operators.
Out: arrays whose elementwise operators, indexing and reductions are torch ops on the held
tensor, their result typed by numpy's promotion (`_scalars.promote`; Python numbers are
weak, as in numpy 2), a 0-d result as a numpy scalar. Invariant: the held tensor's values
are exact for float32, and int64 values up to 2**24 (Tailor's tensors hold float32); a
float64 array holds float32 values and prints them as numpy would print the short decimal
they stand for (`_display`).
"""

import math

import _tailor
import torch

from numpy import _scalars
from numpy._scalars import BOOL, FLOAT32, FLOAT64, INT64, dtype, generic, of_python

# Tailor's tensors are float32, int64 or bool: a float64 array holds a float32 tensor (and
# `torch.from_numpy` gives one), an int32 array an int64 one.
_TORCH_DTYPES = {"float64": torch.float32, "float32": torch.float32, "int64": torch.int64,
                 "int32": torch.int64, "bool": torch.bool}
_FROM_TORCH = {"float64": "float64", "float32": "float32", "float16": "float32",
               "bfloat16": "float32", "int64": "int64", "int32": "int32", "bool": "bool"}


def torch_dtype(dt):
    return _TORCH_DTYPES[dt.name]


def of_tensor(tensor):
    """The numpy dtype of a torch tensor's values."""
    return dtype(_FROM_TORCH[tensor.dtype.name])


def wrap(tensor, dt):
    """An array of `tensor` (cast to `dt`'s torch dtype), or a numpy scalar when 0-d."""
    tensor = tensor.to(torch_dtype(dt))
    if tensor.dim() == 0:
        return scalar(tensor.item(), dt)
    return ndarray._of(tensor, dt)


def scalar(value, dt):
    """A numpy scalar of dtype `dt` from a number read out of a tensor."""
    if dt.kind == "b":
        return value != 0
    if dt.kind == "i":
        return dt.type(int(value))
    return dt.type(_display(value) if dt is FLOAT64 else value)


def _operand(x):
    """`(tensor or Python number, dtype, weak)` of an operator's operand; None where numpy's
    array is not the one to answer (a torch tensor answers by itself)."""
    if isinstance(x, ndarray):
        return x._tensor, x.dtype, False
    if isinstance(x, generic):
        return x.item(), x.dtype, False
    if isinstance(x, (bool, int, float)) and not isinstance(x, torch.Tensor):
        return x, of_python(x), True
    if isinstance(x, (list, tuple)):
        a = array(x)
        return a._tensor, a.dtype, False
    return None


def result_dtype(da, wa, db, wb):
    """numpy 2's promotion with weak Python numbers: a Python float makes an integer result
    float64, and otherwise a Python number takes the array's dtype."""
    if wa and not wb:
        da, db, wa, wb = db, da, wb, wa
    if wb and not wa:
        if db.kind == "f" and da.kind != "f":
            return FLOAT64
        if db.kind == "i" and da.kind == "b":
            return INT64
        return da
    return _scalars.promote(da, db)


def binary(a, b, op, how="arith"):
    """`a op b` elementwise; `how` is 'arith' (numpy's promotion), 'true' (true division: a
    float result), 'compare' (bool) or 'logical' (bool operands)."""
    left, right = _operand(a), _operand(b)
    if left is None or right is None:
        return NotImplemented
    (ta, da, wa), (tb, db, wb) = left, right
    out = result_dtype(da, wa, db, wb)
    if how == "true" and out.kind != "f":
        out = FLOAT64
    compute = out
    if how == "compare":
        compute, out = _scalars.promote(da, db), BOOL
    elif how == "logical":
        compute = BOOL

    def cast(t):
        return t.to(torch_dtype(compute)) if isinstance(t, torch.Tensor) else t

    ta, tb = cast(ta), cast(tb)
    if not isinstance(ta, torch.Tensor) and not isinstance(tb, torch.Tensor):
        ta = torch.tensor(ta, dtype=torch_dtype(compute))
    return wrap(op(ta, tb), out)


def _reduce_dims(a, axis):
    if axis is None:
        return list(range(a.ndim))
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    return [d % a.ndim for d in axes]


class ndarray:
    """A numpy array held as a torch tensor (see the module docstring)."""

    __array_priority__ = 100

    def __init__(self, *args, **kwargs):
        raise TypeError("Tailor's numpy makes arrays with np.array, np.zeros, np.arange and "
                        "the other functions, not ndarray(...)")

    @classmethod
    def _of(cls, tensor, dt):
        made = object.__new__(cls)
        made._tensor, made._dtype = tensor, dt
        return made

    # ---- what an array is -----------------------------------------------------------------

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return tuple(int(s) for s in self._tensor.shape)

    @property
    def ndim(self):
        return self._tensor.dim()

    @property
    def size(self):
        total = 1
        for s in self.shape:
            total *= s
        return total

    @property
    def T(self):
        return self.transpose()

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def tolist(self):
        values = [scalar(v, self.dtype) for v in _tailor.values(self._tensor)]
        values = [v.item() if isinstance(v, generic) else v for v in values]

        def nest(flat, shape):
            if not shape:
                return flat[0]
            step = len(flat) // shape[0] if shape[0] else 0
            return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]

        return nest(values, list(self.shape))

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.reshape(-1)[0].item() if self.ndim else scalar(self._tensor.item(),
                                                                     self.dtype).item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.item())

    # ---- new arrays of the same values --------------------------------------------------

    def astype(self, to):
        return ndarray._of(self._tensor.to(torch_dtype(dtype(to))), dtype(to))

    def copy(self):
        return ndarray._of(self._tensor, self.dtype)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        return ndarray._of(self._tensor.reshape(list(shape)), self.dtype)

    def flatten(self):
        return self.reshape(-1)

    ravel = flatten

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        order = list(axes) if axes else list(range(self.ndim))[::-1]
        return ndarray._of(self._tensor.permute(order), self.dtype)

    def __getitem__(self, index):
        if isinstance(index, ndarray) and index.dtype is BOOL:
            # A mask picks values, known here: the picked ones in order, as a 1-d array.
            if index.shape != self.shape[:index.ndim]:
                raise IndexError(f"boolean index of shape {index.shape} does not match the "
                                 f"array's shape {self.shape}")
            rows = self.reshape([index.size] + list(self.shape[index.ndim:]))
            picked = [rows[i] for i, keep in enumerate(index.flatten().tolist()) if keep]
            if not picked:
                return array([], self.dtype)
            if isinstance(picked[0], ndarray):
                return _stacked(picked, self.dtype)
            return array([p.item() if isinstance(p, generic) else p for p in picked], self.dtype)
        if isinstance(index, ndarray):
            raise IndexError("Tailor's numpy indexes by ints, slices, None, ... and bool "
                             "masks, not by an array of indices")
        return wrap(self._tensor[index], self.dtype)

    def __setitem__(self, index, value):
        if isinstance(value, ndarray):
            value = value._tensor
        elif isinstance(value, (list, tuple)):
            value = array(value)._tensor
        elif isinstance(value, generic):
            value = value.item()
        self._tensor[index] = value

    # ---- reductions -----------------------------------------------------------------------

    def _reduced(self, tensor_fn, axis, keepdims, out):
        dims = _reduce_dims(self, axis)
        t = self._tensor
        if out.kind == "f":
            t = t.float()
        elif self.dtype.kind == "b":
            t = t.long()
        result = tensor_fn(t, dims) if dims else t
        if keepdims:
            for d in sorted(dims):
                result = result.unsqueeze(d)
        return wrap(result, out)

    def _integral_or(self, floating):
        return INT64 if self.dtype.kind in "bi" else floating

    def sum(self, axis=None, keepdims=False):
        return self._reduced(lambda t, d: t.sum(d), axis, keepdims,
                             self._integral_or(self.dtype))

    def prod(self, axis=None, keepdims=False):
        def product(t, dims):
            for d in sorted(dims, reverse=True):
                t = t.prod(d)
            return t
        return self._reduced(product, axis, keepdims, self._integral_or(self.dtype))

    def cumsum(self, axis=None, dtype=None):
        """Running sums along `axis`, of the flattened array when it is None (torchfm's
        field offsets, `np.cumsum(field_dims)`); integral arrays sum as int64."""
        t = self._tensor if axis is not None else self._tensor.reshape(-1)
        out = wrap(t.cumsum(0 if axis is None else axis), self._integral_or(self.dtype))
        return out if dtype is None else out.astype(dtype)

    def mean(self, axis=None, keepdims=False):
        out = FLOAT32 if self.dtype is FLOAT32 else FLOAT64
        return self._reduced(lambda t, d: t.mean(d), axis, keepdims, out)

    def max(self, axis=None, keepdims=False):
        return self._reduced(lambda t, d: t.amax(d), axis, keepdims, self.dtype)

    def min(self, axis=None, keepdims=False):
        return self._reduced(lambda t, d: t.amin(d), axis, keepdims, self.dtype)

    def all(self, axis=None, keepdims=False):
        return self._reduced(lambda t, d: (t == 0).sum(d) == 0, axis, keepdims, BOOL)

    def any(self, axis=None, keepdims=False):
        return self._reduced(lambda t, d: (t != 0).sum(d) > 0, axis, keepdims, BOOL)

    def argmax(self, axis=None):
        t = self._tensor.reshape(-1) if axis is None else self._tensor
        return wrap(t.argmax(0 if axis is None else axis), INT64)

    def argmin(self, axis=None):
        t = self._tensor.reshape(-1) if axis is None else self._tensor
        return wrap(t.argmin(0 if axis is None else axis), INT64)

    # ---- operators ------------------------------------------------------------------------

    def __add__(self, other):
        return binary(self, other, lambda a, b: a + b)

    def __radd__(self, other):
        return binary(other, self, lambda a, b: a + b)

    def __sub__(self, other):
        return binary(self, other, lambda a, b: a - b)

    def __rsub__(self, other):
        return binary(other, self, lambda a, b: a - b)

    def __mul__(self, other):
        return binary(self, other, lambda a, b: a * b)

    def __rmul__(self, other):
        return binary(other, self, lambda a, b: a * b)

    def __truediv__(self, other):
        return binary(self, other, lambda a, b: a / b, "true")

    def __rtruediv__(self, other):
        return binary(other, self, lambda a, b: a / b, "true")

    def __floordiv__(self, other):
        return binary(self, other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return binary(other, self, lambda a, b: a // b)

    def __mod__(self, other):
        return binary(self, other, lambda a, b: a % b)

    def __rmod__(self, other):
        return binary(other, self, lambda a, b: a % b)

    def __pow__(self, other):
        return binary(self, other, lambda a, b: a ** b)

    def __rpow__(self, other):
        return binary(other, self, lambda a, b: a ** b)

    def __matmul__(self, other):
        return binary(self, other, lambda a, b: a @ b)

    def dot(self, other):
        return self @ other

    def __neg__(self):
        return wrap(-self._tensor, self.dtype)

    def __pos__(self):
        return self

    def __abs__(self):
        return wrap(self._tensor.abs(), self.dtype)

    def __eq__(self, other):
        return binary(self, other, lambda a, b: a == b, "compare")

    def __ne__(self, other):
        return binary(self, other, lambda a, b: a != b, "compare")

    def __lt__(self, other):
        return binary(self, other, lambda a, b: a < b, "compare")

    def __le__(self, other):
        return binary(self, other, lambda a, b: a <= b, "compare")

    def __gt__(self, other):
        return binary(self, other, lambda a, b: a > b, "compare")

    def __ge__(self, other):
        return binary(self, other, lambda a, b: a >= b, "compare")

    def __and__(self, other):
        return binary(self, other, lambda a, b: a & b, "logical")

    def __or__(self, other):
        return binary(self, other, lambda a, b: a | b, "logical")

    def __invert__(self):
        if self.dtype is not BOOL:
            raise TypeError("Tailor's numpy has ~ of bool arrays only")
        return wrap(~self._tensor, BOOL)

    __hash__ = None

    # ---- printing -------------------------------------------------------------------------

    def _words(self):
        values = _tailor.values(self._tensor)
        if self.dtype.kind == "b":
            return _justified(["True" if v else "False" for v in values])
        if self.dtype.kind == "i":
            return _justified([str(int(v)) for v in values])
        if self.dtype is FLOAT64:
            values = [_display(v) for v in values]
        return _float_words(values)

    def __repr__(self):
        default = self.dtype in (FLOAT64, INT64, BOOL)
        suffix = ")" if default else f", dtype={self.dtype.name})"
        if self.size == 0:
            return f"array([], dtype={self.dtype.name})"
        words = self._words()
        if self.ndim == 0:
            return "array(" + words[0].strip() + suffix
        return "array(" + _nested(words, self.shape, 75 - len(suffix), " " * 7, ", ") + suffix

    def __str__(self):
        words = self._words()
        if self.ndim == 0:
            return words[0].strip()
        if self.size == 0:
            return "[]"
        return _nested(words, self.shape, 75, " ", " ")


def _stacked(rows, dt):
    return ndarray._of(torch.stack([r._tensor for r in rows]), dt)


def _display(value):
    """The float64 a float32 value of a float64 array stands for: its short decimal where it
    has one (a typed 0.1), else the value itself (a computed log, shown to 8 digits)."""
    short = _scalars.shortest_float32(value)
    digits = len(short.split("e")[0].replace("-", "").replace(".", "").strip("0"))
    return float(short) if digits < 7 else value


def _justified(words):
    width = max(len(w) for w in words) if words else 0
    return [w.rjust(width) for w in words]


def _positional(value):
    """`value` positionally with at most 8 fraction digits, the shortest that reads back
    (numpy's 'maxprec'), trailing zeros dropped but the point kept: `1.`, `0.5`."""
    text = repr(float(value))
    if "e" in text or len(text.split(".")[1]) > 8:
        text = "%.8f" % value
    text = text.rstrip("0")
    return text if "." in text else text + "."


def _float_words(values):
    """numpy's FloatingFormat: positional, aligned at the point and padded with spaces on
    the right; scientific when the magnitudes span too much."""
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    if finite and (max(finite) >= 1e8 or min(finite) < 1e-4 or max(finite) / min(finite) > 1e3):
        return _scientific_words(values)
    parts = [_positional(v).split(".") if math.isfinite(v) else None for v in values]
    real = [p for p in parts if p is not None]
    left = max((len(p[0]) for p in real), default=0)
    right = max((len(p[1]) for p in real), default=0)
    width = left + right + 1
    words = []
    for v, p in zip(values, parts):
        if p is None:
            words.append(("nan" if v != v else "inf" if v > 0 else "-inf").rjust(width))
        else:
            words.append(p[0].rjust(left) + "." + p[1].ljust(right))
    return words


def _scientific_words(values):
    """The scientific form: every mantissa with as many digits as the longest needs (at
    most 8), the exponent signed with at least two digits: `1.5e-05`, `1.0e+00`."""
    def digits(v):
        # The fewest mantissa digits (at most 8) that read back as `v`.
        for p in range(8):
            if float("%.*e" % (p, v)) == v:
                return p
        return 8

    precision = max((digits(v) for v in values if math.isfinite(v)), default=0)
    words = []
    for v in values:
        if not math.isfinite(v):
            words.append("nan" if v != v else "inf" if v > 0 else "-inf")
            continue
        text = "%.*e" % (precision, v)
        if precision == 0:
            text = text.replace("e", ".e")
        words.append(text)
    return _justified(words)


def _nested(words, shape, line_width, indent, separator):
    """The elements laid out as numpy lays out an array: brackets per dim, rows of the last
    dim wrapped at `line_width`, blank lines between blocks of higher dims."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]

    def block(offset, axis, hanging, width):
        n = shape[axis]
        if axis == len(shape) - 1:
            limit = width - max(len(separator.rstrip()), 1)
            text, line = "", hanging
            for i in range(n):
                word = words[offset + i]
                if len(line) + len(word) > limit and len(line) > len(hanging):
                    text += line.rstrip() + "\n"
                    line = hanging
                line += word + (separator if i < n - 1 else "")
            text += line
        else:
            between = separator.rstrip() + "\n" * (len(shape) - axis - 1)
            text = ""
            for i in range(n):
                inner = block(offset + i * strides[axis], axis + 1, hanging + " ", width - 1)
                text += hanging + inner + (between if i < n - 1 else "")
        return "[" + text[len(hanging):] + "]"

    return block(0, 0, indent, line_width)


def array(obj, dtype=None, copy=True):
    """An array of nested lists or tuples of numbers, an array, or a tensor; its dtype is
    bool, int64 or float64 by the numbers' types unless `dtype` is given."""
    want = None if dtype is None else _scalars.dtype(dtype)
    if isinstance(obj, ndarray):
        return obj if want is None or want is obj.dtype else obj.astype(want)
    if isinstance(obj, torch.Tensor):
        dt = want or of_tensor(obj)
        return ndarray._of(obj.to(torch_dtype(dt)), dt)
    flat = []

    def walk(item):
        if isinstance(item, (list, tuple)):
            for x in item:
                walk(x)
        elif isinstance(item, ndarray):
            flat.extend(item.tolist() if item.ndim == 0 else item.flatten().tolist())
        else:
            flat.append(item)

    walk(obj)
    if want is None:
        kinds = [of_python(v) for v in flat]
        want = BOOL
        for kind in kinds:
            want = kind if want is BOOL else _scalars.promote(want, kind)
        if not flat:
            want = FLOAT64
    data = _plain(obj)
    return ndarray._of(torch.tensor(data, dtype=torch_dtype(want)), want)


def _plain(obj):
    """Nested lists of Python numbers for `torch.tensor` (numpy scalars and arrays inside
    written out)."""
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, ndarray):
        return obj.tolist()
    if isinstance(obj, generic):
        return obj.item()
    if not isinstance(obj, (bool, int, float)):
        raise TypeError(f"Tailor's numpy makes arrays of numbers, not of "
                        f"{type(obj).__name__}")
    return obj


def asarray(obj, dtype=None):
    return array(obj, dtype)
