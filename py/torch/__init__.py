"""The torch package as Tailor's capture sees it (a stand-in, not PyTorch).

Tensors are proxies (`torch._tensor`): every tensor function here is one call into the
native module `_tailor`, which appends a node to the graph being captured, or, outside
`forward`, makes a constant. Only what models commonly use is here; what PyTorch would do
on a GPU is answered as CPU PyTorch 2.x would. Training mode computes as PyTorch's does
(batch statistics, dropout with a seeded mask) but updates no running statistics.
"""

import builtins as _builtins
import math as _math
import sys as _sys

import _tailor
from torch._tensor import Size, SymBool, SymInt, Tensor, TailorError, device, dtype, float32
from torch._tensor import bfloat16, bool_, float16, float64, int32, int64, _define_aliases
from torch._missing import _missing_names
from torch._tensor import _cast, _dims, _log_softmax, _made, _sizes
from torch import amp, autograd, cuda, distributed, jit, _dynamo, _logging, return_types
from torch.amp import autocast
from torch._sorting import METHODS as _SORTING_METHODS
from torch._complex import ComplexTensor as _ComplexTensor, complex64, is_complex, polar
from torch._complex import complex_of as complex, view_as_complex, view_as_real
from torch import nn
from torch import fft, linalg

# The PyTorch whose torch.compile Tailor follows.
__version__ = "2.15.0"

float = float32
long = int64
int = int32
double = float64
half = float16
# `torch.bool` (named last: from here on `bool` in this module is the dtype).
bool = bool_

# PyTorch's constants are Python floats, `math`'s.
inf = _math.inf
nan = _math.nan
pi = _math.pi
e = _math.e


class finfo:
    """A float dtype's limits, as PyTorch gives them."""

    _LIMITS = {
        "float32": (1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38, 32),
        "float64": (2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308, 64),
        "float16": (0.0009765625, 65504.0, 6.103515625e-05, 16),
        "bfloat16": (0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 16),
    }

    def __init__(self, type=None):
        type = float32 if type is None else type
        if not isinstance(type, dtype) or type.name not in self._LIMITS:
            raise TypeError(f"finfo(): argument 'type' must be a floating point dtype, not {type!r}")
        self.dtype = type.name
        self.eps, self.max, self.tiny, self.bits = self._LIMITS[type.name]
        self.min = -self.max
        self.smallest_normal = self.tiny


class iinfo:
    """An integer dtype's limits, as PyTorch gives them."""

    def __init__(self, type):
        bits = {"int64": 64, "int32": 32}.get(getattr(type, "name", None))
        if bits is None:
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, not {type!r}")
        self.dtype, self.bits = type.name, bits
        self.max = 2 ** (bits - 1) - 1
        self.min = -(2 ** (bits - 1))


# ---- creating tensors (constants: made outside forward, static shape, seeded fill) ----------


def _factory_sizes(name, sizes, size):
    """The sizes of `torch.zeros(2, 3)`, `zeros((2, 3))` or `zeros(size=(2, 3))`."""
    if size is None:
        return _sizes(sizes)
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (list, tuple)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    return list(size)


def randn(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _made(_tailor.constant(_factory_sizes("randn", sizes, size), "normal", 1.0), dtype)


def rand(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _made(_tailor.constant(_factory_sizes("rand", sizes, size), "unit", 0.0), dtype)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _made(_tailor.constant(_factory_sizes("zeros", sizes, size), "fill", 0.0), dtype)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _made(_tailor.constant(_factory_sizes("ones", sizes, size), "fill", 1.0), dtype)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _made(_tailor.constant(_factory_sizes("empty", sizes, size), "fill", 0.0), dtype)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    # A 0-d tensor bound is its value, read as PyTorch reads it (`.item()`: a graph break
    # inside forward).
    start, end, step = (v.item() if isinstance(v, Tensor) and v.dim() == 0 else v
                        for v in (start, end, step))
    # Integer bounds give int64 (PyTorch's default for them); float bounds give float32.
    integral = _builtins.all(not isinstance(v, (_builtins.float, Tensor)) for v in (start, end, step))
    numbers = _builtins.all(type(v) in (_builtins.int, _builtins.float) for v in (start, end, step))
    if numbers:
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if (end - start) * step < 0:
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        if step < 0 or not _builtins.all(_builtins.float(v).is_integer() for v in (start, end, step)):
            # PyTorch's values, start + i * step for i < ceil((end - start) / step), over
            # the integer positions (the native range counts up in whole steps). An integer
            # range steps in integers, start and step truncated, as PyTorch's kernel casts.
            count = _math.ceil((end - start) / step)
            if integral or dtype in (int64, int32):
                return (arange(count) * _builtins.int(step) + _builtins.int(start)).to(dtype or int64)
            return (arange(count) * step + start).to(dtype or float32)
        start, end, step = (_builtins.int(v) for v in (start, end, step))
    elif integral and type(step) is _builtins.int and (step < 0 or type(start) is not _builtins.int):
        # From a size, or counting down (mega's `arange(n - 1, -1, -1)` and
        # `arange(start=fast_len - n, end=fast_len)`): start + i * step for
        # i < ceil((end - start) / step), the count a size expression, no guard.
        if step > 0:
            count = (end - start + step - 1) // step
        else:
            count = (start - end - step - 1) // (-step)
        return (arange(count) * step + start).to(dtype or int64)
    return _made(_tailor.op("arange", start, end, step), dtype or (int64 if integral else float32))


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The identity matrix (`n` by `m`), as positions compared: `i == j`."""
    m = n if m is None else m
    return _made(arange(n).unsqueeze(1) == arange(m).unsqueeze(0), dtype or float32)


def _cosine_window(window_length, periodic, coefficients, dtype):
    """sum_k (-1)^k a_k cos(2 pi k n / N) over n < window_length, N the length for a
    periodic window (the first `window_length` points of one a point longer), else one
    less: PyTorch's generalised cosine windows."""
    if window_length == 0:
        return zeros(0, dtype=dtype)
    if window_length == 1:
        return ones(1, dtype=dtype)
    period = window_length if periodic else window_length - 1
    phase = arange(window_length) * (2 * _math.pi / period)
    window = full([window_length], _builtins.float(coefficients[0]))
    for k, a in enumerate(coefficients[1:], start=1):
        window = window + ((-1) ** k) * a * (phase * k).cos()
    return window.to(dtype or float32)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    return _cosine_window(window_length, periodic, (0.5, 0.5), dtype)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False):
    return _cosine_window(window_length, periodic, (alpha, beta), dtype)


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False):
    return _cosine_window(window_length, periodic, (0.42, 0.5, 0.08), dtype)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """PyTorch's values: the first half counts up from `start`, the second down from `end`,
    so both ends are exact."""
    if steps == 1:
        return full([1], start)
    step = (end - start) / (steps - 1)
    index = arange(steps) * 1.0
    from_end = (arange(steps) * -1.0 + (steps - 1)) * -step + end
    return where(index < steps // 2, index * step + start, from_end)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """`base ** linspace(start, end, steps)`, as PyTorch's reference (`torch._refs.logspace`)
    computes it: AxialRotaryEmbedding's frequency scales, `torch.logspace(0., 2., 4, base=2)`."""
    return base ** linspace(start, end, steps)


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         f"received: {indexing}")
    swapped = indexing == "xy" and len(tensors) >= 2
    if swapped:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    sizes = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[i] = sizes[i]
        grids.append(t.reshape(shape).expand(sizes))
    if swapped:
        # "xy": the grid of the first two swapped, their outputs swapped back.
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def logsumexp(input, dim, keepdim=False):
    return input.logsumexp(dim, keepdim)


def tril(input, diagonal=0):
    return input.tril(diagonal)


def triu(input, diagonal=0):
    return input.triu(diagonal)


def split(tensor, split_size_or_sections, dim=0):
    return tensor.split(split_size_or_sections, dim)


def chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


def log1p(input):
    return input.log1p()


def expm1(input):
    return input.expm1()


def cumsum(input, dim, *, dtype=None):
    return input.cumsum(dim, dtype=dtype)


def logcumsumexp(input, dim):
    return input.logcumsumexp(dim)


def masked_fill(input, mask, value):
    return input.masked_fill(mask, value)


def _of_numpy(data):
    """The tensor of one of Tailor's numpy arrays (`py/numpy`), else None."""
    numpy = _sys.modules.get("numpy")
    if numpy is not None and isinstance(data, numpy.ndarray):
        return data._tensor
    return None


def from_numpy(ndarray):
    """The array's values as a tensor: a copy (Tailor's tensors are values, not views of the
    array's memory), float32 for a float64 array (Tailor's tensors are float32, int64 or
    bool)."""
    tensor = _of_numpy(ndarray)
    if tensor is None:
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return tensor


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A constant from nested lists of numbers (or a numpy array); its dtype is bool, int64
    or float32 by the numbers' Python types, as PyTorch infers it."""
    if isinstance(data, Tensor):
        return _cast(data, dtype)
    if _of_numpy(data) is not None:
        return _cast(_of_numpy(data), dtype)
    shape, flat, item = [], [], data
    while isinstance(item, (list, tuple)):
        shape.append(len(item))
        if not item:
            break
        item = item[0]

    def flatten(value, depth):
        if depth == len(shape):
            if isinstance(value, (list, tuple)):
                raise ValueError("expected sequence of length 0 at dim "
                                 f"{depth} (got {len(value)})")
            flat.append(value)
            return
        if not isinstance(value, (list, tuple)) or len(value) != shape[depth]:
            got = len(value) if isinstance(value, (list, tuple)) else "a number"
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} "
                             f"(got {got})")
        for v in value:
            flatten(v, depth + 1)

    flatten(data, 0)
    if dtype is None:
        if _builtins.all(isinstance(v, _builtins.bool) for v in flat) and flat:
            dtype = bool_
        elif _builtins.all(isinstance(v, _builtins.int) for v in flat) and flat:
            dtype = int64
        else:
            dtype = float32
    values = [_builtins.float(v) for v in flat]
    if dtype not in (float32, int64, bool_):
        return _cast(_tailor.from_values(shape, values, "float32"), dtype)
    if dtype is int64:
        values = [_builtins.float(_builtins.int(v)) for v in values]
    if dtype is bool_:
        values = [1.0 if v else 0.0 for v in values]
    return _tailor.from_values(shape, values, dtype.name)


as_tensor = tensor


def randint(low, high=None, size=None, *, dtype=None, device=None, requires_grad=False):
    # randint(high, size) or randint(low, high, size): uniform draws scaled and floored.
    if size is None:
        low, high, size = 0, low, high
    draws = _tailor.constant(_sizes((size,)), "unit", 0.0)
    return _cast((draws * (high - low) + low).floor(), dtype or int64)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _made(_tailor.constant(list(input.shape), "normal", 1.0), dtype)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _made(_tailor.constant(list(input.shape), "unit", 0.0), dtype)


# `*_like` tensors take the input's dtype unless given one, as in PyTorch.
def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _made(_tailor.constant(list(input.shape), "fill", 0.0), dtype or input.dtype)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _made(_tailor.constant(list(input.shape), "fill", 1.0), dtype or input.dtype)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _made(_tailor.constant(list(input.shape), "fill", fill_value), dtype or input.dtype)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    # The fill's Python type gives the dtype when none is named: bool, int64 or float32.
    if dtype is None and isinstance(fill_value, _builtins.bool):
        dtype = bool_
    elif dtype is None and isinstance(fill_value, _builtins.int):
        dtype = int64
    return _made(_tailor.constant(_sizes((size,)), "fill", fill_value), dtype)


def manual_seed(seed):
    return None


# ---- tensor functions ------------------------------------------------------------------------


def _function_of_method(name):
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    return function


# torch.relu, torch.maximum, torch.where, torch.cat, …: from the op table. (`abs`, `all` and
# `any` become globals of this module: its own functions must not call the builtins but
# `_builtins.all`.)
_define_aliases("torch.", globals())

for _name, _method in _SORTING_METHODS.items():
    setattr(Tensor, _name, _method)
Tensor.is_complex = lambda self: False
cfloat = complex64


# torch.rsqrt(x) is x.rsqrt(), and so on, for the methods the package writes in Python.
for _name in ("rsqrt", "clamp", "clamp_min", "clamp_max", "square", "var", "std", "norm", "unflatten", "movedim",
                              "moveaxis", "swapaxes", "swapdims", "narrow", "unbind",
                              "reciprocal", "true_divide", "floor_divide", "remainder", "fmod",
                              "lerp", "addcmul", "addcdiv", "all", "any", "logical_not",
                              "logical_and", "logical_or", "argmax", "argmin", "index_select",
                              "gather", "mm", "roll", "repeat_interleave", "prod"):
    globals()[_name] = _function_of_method(_name)
clip = clamp

# Every other function PyTorch has at the top level whose first argument is the tensor and
# which Tensor has as a method (torch.add, torch.flip, torch.eq, …) is that method.
from torch._api_names import NAMES as _NAMES  # noqa: E402
for _name in _NAMES["torch"].split():
    if _name not in globals() and callable(getattr(Tensor, _name, None)):
        globals()[_name] = _function_of_method(_name)


def broadcast_shapes(*shapes):
    """The shape tensors of `shapes` broadcast to, right-aligned: where one size is 1 the
    other's, else they must agree (each question a guard where the sizes are symbolic, as
    PyTorch's `infer_size` asks it)."""
    out = []
    for shape in shapes:
        shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i, size in enumerate(shape):
            j = len(out) - len(shape) + i
            if out[j] == 1:
                out[j] = size
            elif size != 1 and size != out[j]:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single "
                                   f"shape.  Mismatch is between {out[j]} and {size} at "
                                   f"dimension {j}")
    return Size(out)


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


class _LegacyTensorType(type):
    """`torch.FloatTensor` and its kin: a constructor of that dtype, and a type that
    `isinstance` checks by dtype, as PyTorch's legacy tensor types are."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and instance.dtype is cls._dtype

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and isinstance(args[0], Tensor):
            return _cast(args[0], cls._dtype)
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return tensor(args[0], dtype=cls._dtype)
        return zeros(*args, dtype=cls._dtype)


class FloatTensor(metaclass=_LegacyTensorType):
    _dtype = float32


class LongTensor(metaclass=_LegacyTensorType):
    _dtype = int64


class IntTensor(metaclass=_LegacyTensorType):
    _dtype = int32


class BoolTensor(metaclass=_LegacyTensorType):
    _dtype = bool_


def rsub(input, other, alpha=1):
    return other - (input if alpha == 1 else input * alpha)


def bmm(input, mat2):
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    return _tailor.op("matmul", input, mat2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    return product if beta == 0 else (input if beta == 1 else input * beta) + product


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    product = mat1 @ mat2
    if alpha != 1:
        product = product * alpha
    return product if beta == 0 else (input if beta == 1 else input * beta) + product


def outer(input, vec2):
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def einsum(equation, *operands):
    """Einstein summation as PyTorch contracts it, left to right: each pair of operands is
    one batched matmul (batch, kept and contracted letters permuted into place), letters
    that no later term and not the output needs summed away first. Repeated letters in one
    term (diagonals) are not in the subset."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(
            f"einsum(): {'more' if len(operands) > len(terms) else 'fewer'} operands were "
            f"provided than specified in the equation")
    terms, output = _einsum_ellipses(terms, output if arrow else None, operands)
    for term in terms:
        for letter in term:
            if term.count(letter) > 1:
                _tailor.unsupported(f"einsum with the repeated subscript '{letter}' in '{term}'",
                                    "diagonals are not in the subset")
    for letter in output:
        if not _builtins.any(letter in term for term in terms):
            raise RuntimeError(f"einsum(): output subscript {letter} does not appear in the "
                               f"equation for any input operand")
    result, term = operands[0], terms[0]
    for i in range(1, len(operands)):
        needed = set(output)
        for later in terms[i + 1:]:
            needed |= set(later)
        result, term = _einsum_pair(term, result, terms[i], operands[i], needed)
    return _einsum_reduce(term, result, output)


def _einsum_ellipses(terms, output, operands):
    """Terms and output with each `...` spelled as upper-case letters, aligned on the right,
    and the implicit output (ellipsis letters, then the letters used once, sorted)."""
    used = set("".join(terms) + (output or ""))
    pool = [c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in used]
    widest = 0
    spelled = []
    for term, operand in zip(terms, operands):
        if "..." in term:
            extra = operand.dim() - (len(term) - 3)
            # Not `max`: this module's `max` is torch.max.
            widest = extra if extra > widest else widest
            term = term.replace("...", "".join(reversed(pool[:extra])))
        spelled.append(term)
    ellipsis = "".join(reversed(pool[:widest]))
    if output is None:
        letters = "".join(spelled)
        once = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis)
        output = ellipsis + "".join(once)
    else:
        output = output.replace("...", ellipsis)
    return spelled, output


def _einsum_reduce(term, x, keep):
    """`x` (subscripts `term`) summed over the letters not in `keep`; when `keep` is a string
    (the output), permuted to its order."""
    dropped = [i for i, c in enumerate(term) if c not in keep]
    if dropped:
        x = x.sum(dropped)
        term = "".join(c for c in term if c in keep)
    if isinstance(keep, str) and term != keep:
        x = x.permute([term.index(c) for c in keep])
    return x


def _einsum_product(sizes):
    total = 1
    for size in sizes:
        total = total * size
    return total


def _einsum_pair(ta, a, tb, b, needed):
    """Operands `a` and `b` (subscripts `ta`, `tb`) as one batched matmul: letters of both
    that are `needed` later are the batch, the other shared ones contracted; returns the
    product and its subscripts (batch, then a's own letters, then b's)."""
    a = _einsum_reduce(ta, a, set(tb) | needed)
    ta = "".join(c for c in ta if c in set(tb) | needed)
    b = _einsum_reduce(tb, b, set(ta) | needed)
    tb = "".join(c for c in tb if c in set(ta) | needed)
    batch = [c for c in ta if c in tb and c in needed]
    contracted = [c for c in ta if c in tb and c not in needed]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]
    a = a.permute([ta.index(c) for c in batch + left + contracted])
    b = b.permute([tb.index(c) for c in batch + contracted + right])
    nb = len(batch)
    a_left = [a.size(nb + i) for i in range(len(left))]
    inner = _einsum_product([a.size(nb + len(left) + i) for i in range(len(contracted))])
    b_right = [b.size(nb + len(contracted) + i) for i in range(len(right))]
    a = a.reshape([a.size(i) for i in range(nb)] + [_einsum_product(a_left), inner])
    b = b.reshape([b.size(i) for i in range(nb)] + [inner, _einsum_product(b_right)])
    # Nothing contracted: an outer product, which PyTorch multiplies rather than sums.
    out = a * b if not contracted else a @ b
    out = out.reshape([out.size(i) for i in range(nb)] + a_left + b_right)
    return out, "".join(batch + left + right)


def softmax(input, dim, dtype=None):
    return _tailor.op("softmax", input, _dims(dim))


def log_softmax(input, dim, dtype=None):
    return _log_softmax(input, dim, dtype)


concat = cat
concatenate = cat


def stack(tensors, dim=0):
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def sum(input, dim=None, keepdim=False):
    return input.sum(dim, keepdim)


def mean(input, dim=None, keepdim=False):
    return input.mean(dim, keepdim)


def amax(input, dim=None, keepdim=False):
    return input.amax(dim, keepdim)


def amin(input, dim=None, keepdim=False):
    return input.amin(dim, keepdim)


def max(input, dim=None, keepdim=False):
    return input.max(dim, keepdim)


def min(input, dim=None, keepdim=False):
    return input.min(dim, keepdim)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def transpose(input, dim0, dim1):
    return input.transpose(dim0, dim1)


def permute(input, dims):
    return input.permute(dims)


def reshape(input, shape):
    return input.reshape(shape)


# ---- what a model may ask of the framework ---------------------------------------------------


_grad_enabled = True


def is_grad_enabled():
    return _grad_enabled


class _GradContext:
    """A context that sets whether gradients are on for the script's compiled calls to
    `_mode` on entry and restores them on exit (whether they are on decides what a compiled
    call saves for backward: see OptimizedModule; capture itself never computes gradients).
    As a decorator it returns the function unchanged."""

    _mode = False

    def __enter__(self):
        global _grad_enabled
        self._previous = _grad_enabled
        _grad_enabled = self._mode
        return self

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self._previous
        return False

    def __call__(self, function):
        return function


class set_grad_enabled(_GradContext):
    """Sets gradients at once when called, and back as they were when used as a context and
    left."""

    def __init__(self, mode=True):
        self._mode = True if mode else False
        _GradContext.__enter__(self)

    def __enter__(self):
        return self


class no_grad(_GradContext):
    _mode = False


class enable_grad(_GradContext):
    _mode = True


class inference_mode(_GradContext):
    def __init__(self, mode=True):
        self._mode = not mode


def _bound_arguments(wrapper, args, kwargs, function):
    """A compiled call's arguments in the function's order: keyword arguments bound to its
    parameters by name, as Python binds them (and refused in Python's words; `function` is
    the name Python gives, `Net.forward` or `f`)."""
    names = _tailor.compiled_inputs(wrapper)
    method = function.endswith(".forward")
    if len(args) > len(names):
        raise TypeError(f"{function}() takes {len(names) + method} positional arguments but "
                        f"{len(args) + method} were given")
    for name in kwargs:
        if name not in names:
            raise TypeError(f"{function}() got an unexpected keyword argument '{name}'")
        if names.index(name) < len(args):
            raise TypeError(f"{function}() got multiple values for argument '{name}'")
    bound = list(args)
    for name in names[len(args):]:
        if name not in kwargs:
            raise TypeError(f"{function}() missing 1 required positional argument: '{name}'")
        bound.append(kwargs[name])
    return bound


class OptimizedModule:
    """What `torch.compile(module)` returns in a script: calls go through the guard cache of
    the module's `forward` (shared by every wrapper of it), attributes are the module's."""

    def __init__(self, mod, wrapper):
        object.__setattr__(self, "_orig_mod", mod)
        object.__setattr__(self, "_wrapper", wrapper)

    def __call__(self, *args, **kwargs):
        args = _bound_arguments(self._wrapper, args, kwargs,
                                f"{type(self._orig_mod).__name__}.forward")
        # With gradients on, what the module trains decides what the back end saves for
        # backward (and so which arguments it stamps dynamic dims on).
        trainable = None
        if _grad_enabled:
            trainable = [name for name, p in self._orig_mod.named_parameters() if p.requires_grad]
        return _tailor.call_compiled(self._wrapper, args, trainable)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)


def _compiled_function(function, wrapper):
    def compiled(*args, **kwargs):
        args = _bound_arguments(wrapper, args, kwargs, compiled.__name__)
        return _tailor.call_compiled(wrapper, args, [] if _grad_enabled else None)

    compiled.__name__ = getattr(function, "__name__", "compiled")
    compiled.__wrapped__ = function
    compiled._torchdynamo_orig_callable = function
    return compiled


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, recompile_limit=None):
    """torch.compile: in a script, a wrapper whose calls Tailor compiles and runs; in a model
    file, unsupported (the controls choose the mode)."""
    if model is None:
        return lambda target: compile(target, fullgraph=fullgraph, dynamic=dynamic,
                                      backend=backend, mode=mode, options=options,
                                      disable=disable, recompile_limit=recompile_limit)
    if disable:
        return model
    # What PyTorch's backend wrappers compare in __eq__ besides `dynamic`: wrappers equal in
    # all of it share entries.
    settings = repr((backend if isinstance(backend, str) else id(backend),
                     None if mode in (None, "default") else mode,
                     sorted((options or {}).items())))
    wrapper = _tailor.compile(model, dynamic, recompile_limit, backend, settings)
    if isinstance(model, nn.Module):
        return OptimizedModule(model, wrapper)
    return _compiled_function(model, wrapper)


__getattr__ = _missing_names("torch")


def _complex_aware(name, real_function):
    """`torch.NAME` that hands a complex tensor to its own method."""
    def function(input, *args, **kwargs):
        if isinstance(input, _ComplexTensor):
            return getattr(input, name)(*args, **kwargs)
        return real_function(input, *args, **kwargs)

    function.__name__ = name
    return function


for _name in ("exp", "abs", "mul", "reshape", "flatten", "unsqueeze", "squeeze", "transpose"):
    globals()[_name] = _complex_aware(_name, globals()[_name])
