"""torch.Tensor, torch.Size and the symbolic sizes, as Tailor's capture sees them.

A Tensor is a proxy: its native base (`_tailor.TensorBase`) holds a node of the graph being
captured, or, outside `forward`, a constant's static shape and fill. Each method is one call
into `_tailor`, which appends the node through the shape rule of its op. A size is an int,
or a SymInt where it is symbolic; using a SymInt (or a SymBool, a comparison of sizes) as a
condition asks the shape environment and records a guard, as TorchDynamo does.
"""

import _tailor
from torch._missing import UnsupportedAttribute


class TailorError(Exception):
    """An error of Tailor's capture: an op's shape error, or a construct outside the subset."""


def _extremum(x, dim, keepdim, which):
    """`x.max()` / `x.min()`: of every element, of two tensors elementwise, or along a dim
    the values and their positions (`torch.return_types.max(values, indices)`)."""
    if dim is None:
        return x.amax() if which == "max" else x.amin()
    if isinstance(dim, Tensor):
        return x.maximum(dim) if which == "max" else x.minimum(dim)
    from torch import return_types
    values = x.amax(dim, keepdim) if which == "max" else x.amin(dim, keepdim)
    return getattr(return_types, which)(values, _arg_extremum(x, dim, keepdim, which))


def _repeat_each(x, counts, dim):
    """`x.repeat_interleave(counts, dim)` for a list of counts, one per element along `dim`:
    the elements picked by a constant index, element i `counts[i]` times."""
    import torch
    if dim is None:
        x, dim = x.flatten(), 0
    d = _dim_index(dim, x.dim())
    if x.size(d) != len(counts):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {len(counts)} and input.size({d}) = {x.size(d)}")
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    index = [i for i, count in enumerate(counts) for _ in range(count)]
    return x.index_select(d, torch.tensor(index, dtype=int64))


def _real():
    return False


def _complex_times(tensor, other):
    """A real tensor times a Python complex number or a complex tensor (`torch._complex`)."""
    from torch._complex import ComplexTensor, complex_of
    if isinstance(other, ComplexTensor):
        return other * tensor
    return complex_of(tensor * other.real, tensor * other.imag)


def _arg_extremum(x, dim, keepdim, which):
    """`argmax` / `argmin`: the first position of the extremum along `dim` (of the flattened
    tensor when `dim` is None), int64, as PyTorch returns it; decomposed as the smallest
    position whose value equals the extremum."""
    import torch
    if dim is None:
        flat = _arg_extremum(x.reshape(-1), 0, False, which)
        return flat.reshape([1] * x.dim()) if keepdim else flat
    d = _dim_index(dim, x.dim())
    n = x.size(d)
    best = x.amax(d, keepdim=True) if which == "max" else x.amin(d, keepdim=True)
    shape = [1] * x.dim()
    shape[d] = n
    positions = torch.arange(n).reshape(shape)
    return torch.where(x == best, positions, positions * 0 + n).amin(d, keepdim)


class dtype:
    """A tensor element type. Tailor's tensors are float32, int64 or bool (`graph::dtype`);
    the others exist so that a model naming them gets a clear error where it casts."""

    def __init__(self, name, is_floating_point):
        self.name = name
        self.is_floating_point = is_floating_point

    def __repr__(self):
        return "torch." + self.name

    @property
    def itemsize(self):
        """Bytes per element, as PyTorch's `torch.float32.itemsize`."""
        return _ITEM_SIZES[self.name]


_ITEM_SIZES = {"float32": 4, "int64": 8, "bool": 1, "float64": 8, "float16": 2, "bfloat16": 2,
               "int32": 4}
float32 = dtype("float32", True)
int64 = dtype("int64", False)
bool_ = dtype("bool", False)
float64 = dtype("float64", True)
float16 = dtype("float16", True)
bfloat16 = dtype("bfloat16", True)
int32 = dtype("int32", False)
_DTYPES = {d.name: d for d in (float32, int64, bool_, float64, float16, bfloat16, int32)}
# `Tensor.type()`'s names of the legacy tensor types.
_TENSOR_TYPE_NAMES = {"float32": "torch.FloatTensor", "int64": "torch.LongTensor",
                      "bool": "torch.BoolTensor", "float64": "torch.DoubleTensor",
                      "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor",
                      "int32": "torch.IntTensor"}


def _cast(tensor, to):
    """`tensor.to(to)`: itself when it already has that dtype."""
    if to is None:
        return tensor
    if not isinstance(to, dtype):
        raise TypeError(f"to() received an invalid combination of arguments: {to!r} is not a dtype")
    return _tailor.op("to", tensor, to.name)


def _made(tensor, to):
    """A new tensor (`zeros`, `full`, `new_ones`) given `dtype=to`."""
    return _cast(tensor, to)


class device:
    """Where a tensor lives; capture is device independent, so this only records the name."""

    def __init__(self, type="cpu", index=None):
        self.type = str(type).split(":")[0]
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')"

    def __str__(self):
        return self.type

    def __eq__(self, other):
        return isinstance(other, device) and other.type == self.type

    def __hash__(self):
        return hash(self.type)


class Size(tuple):
    """The sizes of a tensor: ints, and SymInts for the symbolic ones."""

    def numel(self):
        total = 1
        for size in self:
            total = total * size
        return total

    def __repr__(self):
        return "torch.Size([" + ", ".join(repr(size) for size in self) + "])"


def _sizes(args):
    """Sizes given as varargs or as one sequence: `view(b, -1)` or `view((b, -1))`."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def _dims(dim):
    """A dim argument as a list of ints, or None for every dim."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return list(dim)
    return [dim]


def _log_softmax(input, dim, dtype):
    """`log_softmax` along `dim`; every tensor here is float32, so `dtype` must be None."""
    if dim is None:
        raise TypeError("log_softmax() needs dim")
    if dtype is not None:
        _tailor.unsupported("log_softmax with a dtype", "every tensor is float32; leave dtype=None")
    return _tailor.op("log_softmax", input, _dims(dim))


def _one_index_list_as_slice(item):
    """`x[:, [-1], :]`: an index list of one int keeps its dim, as a one-long slice does;
    a longer list is an index tensor (advanced indexing)."""
    if not isinstance(item, list):
        return item
    if len(item) == 1 and isinstance(item[0], int):
        i = item[0]
        return slice(i, None) if i == -1 else slice(i, i + 1)
    import torch
    return torch.tensor(item)


def _advanced_index(x, items):
    """`x[idx]`, `x[:, idx]`, `x[rows, cols]`: indexing by integer tensors, as PyTorch does
    it. The other items index first (ints drop their dim, None adds one), each tensor's dim
    kept whole; then the indices, broadcast together to a shape B and made non-negative,
    pick rows: one tensor by index_select along its dim, several by one index_select of
    their dims flattened (the linear index). B replaces the indexed dims where they are
    next to each other, else it comes first. An index out of range is not checked here
    (PyTorch's kernel raises)."""
    import torch
    consumed = sum(1 for item in items if item is not None and item is not Ellipsis)
    basic, positions, indices, at = [], [], [], 0
    for item in items:
        if isinstance(item, Tensor):
            if item.dtype is bool_:
                _tailor.unsupported("indexing a tensor with a bool mask",
                                    "the result's size depends on the mask's values; "
                                    "torch.where(mask, x, 0) keeps the shape")
            if item.dtype not in (int64, int32):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            positions.append(at)
            indices.append(_cast(item, int64))
            basic.append(slice(None))
            at += 1
            continue
        basic.append(item)
        if item is Ellipsis:
            at += x.dim() - consumed
        elif item is None or isinstance(item, slice):
            at += 1
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    plain = all(isinstance(item, slice) and item.start is None and item.stop is None
                and item.step is None for item in basic)
    y = x if plain else _tailor.op("index", x, tuple(basic))
    sizes = [y.size(p) for p in positions]
    indices = [torch.where(i < 0, i + n, i) for i, n in zip(indices, sizes)]
    if len(indices) == 1:
        index, p = indices[0], positions[0]
        picked = y.index_select(p, index.reshape(-1))
        return picked.reshape(list(y.shape[:p]) + list(index.shape) + list(y.shape[p + 1:]))
    linear = indices[0]
    for i, n in zip(indices[1:], sizes[1:]):
        linear = linear * n + i
    rest = [d for d in range(y.dim()) if d not in positions]
    moved = y.permute(positions + rest)
    count = 1
    for n in sizes:
        count = count * n
    table = moved.reshape([count] + [y.size(d) for d in rest])
    picked = table.index_select(0, linear.reshape(-1))
    picked = picked.reshape(list(linear.shape) + [y.size(d) for d in rest])
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    if not adjacent or positions[0] == 0:
        return picked
    b = linear.dim()
    order = list(range(b, b + positions[0])) + list(range(b)) + list(range(b + positions[0], picked.dim()))
    return picked.permute(order)


def _dim_index(dim, rank):
    return dim + rank if dim < 0 else dim


def _roll_dim(x, shift, dim):
    """`x` rolled by `shift` along `dim` (`out[i] = x[(i - shift) mod n]`), from slices and
    `cat`. Of an int size `n`, the last `shift % n` positions moved to the front. Of a
    symbolic size, whose `shift % n` would need a guard (PyTorch's roll asks none), a
    window of `n` positions of `x` repeated: a symbolic size is at least 2, so `copies`
    of it hold a window starting `shift` before a multiple of `n` for every `n`."""
    import torch
    d = _dim_index(dim, x.dim())
    n = x.size(d)
    if isinstance(n, int):
        if n == 0 or shift % n == 0:
            return x
        kept = shift % n
        return torch.cat([x.narrow(d, n - kept, kept), x.narrow(d, 0, n - kept)], d)
    if shift == 0:
        return x
    copies = (abs(shift) + 1) // 2 + 1
    start = (copies - 1) * n - shift if shift > 0 else -shift
    return torch.cat([x] * copies, d).narrow(d, start, n)


class Tensor(_tailor.TensorBase):
    """A float32 tensor of symbolic shape: a node of the captured graph, or a constant.
    Instances take attributes as PyTorch's do (`p._no_weight_decay = True`)."""

    def __new__(cls, *args, **kwargs):
        """PyTorch's legacy constructor, as model files still call it: `Tensor(n, d)` (or a
        `Size`) a float32 tensor of those sizes (PyTorch leaves it uninitialised; here it
        holds zeros, and the file initialises it next), `Tensor([1.0])` one of that data,
        `Tensor(t)` the tensor itself, `Tensor()` an empty one."""
        import torch
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0]
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and \
                not isinstance(args[0], Size):
            return torch.tensor(args[0], dtype=float32)
        if not args:
            return torch.zeros(0)
        return torch.zeros(*args)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        raise UnsupportedAttribute(f"Tensor.{name}")

    # ---- sizes ----------------------------------------------------------------------------

    @property
    def shape(self):
        return Size(_tailor.shape(self))

    def size(self, dim=None):
        if dim is None:
            return Size(_tailor.shape(self))
        return _tailor.size(self, dim)

    def ndimension(self):
        return self.dim()

    def dim(self):
        return len(_tailor.shape(self))

    @property
    def ndim(self):
        return len(_tailor.shape(self))

    def numel(self):
        return _tailor.numel(self)

    def __len__(self):
        return _tailor.size(self, 0)

    @property
    def dtype(self):
        return _DTYPES[_tailor.dtype_of(self)]

    def is_floating_point(self):
        return self.dtype.is_floating_point

    @property
    def device(self):
        return device("cpu")

    # Every tensor is a CPU tensor, as PyTorch without a GPU has them.
    @property
    def is_cuda(self):
        return False

    @property
    def is_cpu(self):
        return True

    def get_device(self):
        return -1

    @property
    def data(self):
        # Gradients are never computed: the tensor is its own data.
        return self

    @data.setter
    def data(self, value):
        # `w.data /= s` writes w in place, then assigns it back to itself.
        if value is not self:
            _tailor.rebind(self, value, "data")

    @property
    def T(self):
        return _tailor.op("transposed", self, False)

    @property
    def mT(self):
        return _tailor.op("transposed", self, True)

    # ---- views ----------------------------------------------------------------------------

    def view(self, *shape):
        return _tailor.op("view", self, _sizes(shape))

    def reshape(self, *shape):
        return _tailor.op("reshape", self, _sizes(shape))

    def unflatten(self, dim, sizes):
        dim %= self.dim()
        shape = list(self.shape)
        return self.reshape(shape[:dim] + list(sizes) + shape[dim + 1:])

    def view_as(self, other):
        return self.view(list(other.shape))

    def reshape_as(self, other):
        return self.reshape(list(other.shape))

    def movedim(self, source, destination):
        sources = [d % self.dim() for d in _dims(source)]
        destinations = [d % self.dim() for d in _dims(destination)]
        if len(sources) != len(destinations):
            raise RuntimeError(
                f"movedim: Invalid source or destination dims: source ({_dims(source)} dims) "
                f"should contain the same number of dims as destination "
                f"({_dims(destination)} dims)")
        order = [d for d in range(self.dim()) if d not in sources]
        for dest, src in sorted(zip(destinations, sources)):
            order.insert(dest, src)
        return self.permute(order)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    swapdims = swapaxes

    def narrow(self, dim, start, length):
        dim %= self.dim()
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def __iter__(self):
        """Rows along dim 0, as PyTorch iterates (`a, b = t`, `for row in t`): the length is
        read as an int, which specialises a symbolic one, as in PyTorch."""
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def broadcast_to(self, *size):
        return self.expand(*size)

    def unbind(self, dim=0):
        dim %= self.dim()
        return tuple(self[(slice(None),) * dim + (i,)] for i in range(self.size(dim)))

    # `new_*` tensors take this tensor's dtype unless given one, as in PyTorch.
    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return _made(_tailor.constant(list(size), "fill", fill_value), dtype or self.dtype)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _made(_tailor.constant(_sizes(size), "fill", 0.0), dtype or self.dtype)

    def type_as(self, other):
        return _cast(self, other.dtype)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return _TENSOR_TYPE_NAMES[self.dtype.name]
        if isinstance(dtype, str):
            # The names `type()` returns (`"torch.FloatTensor"`), as PyTorch accepts them.
            names = {name: dtype_name for dtype_name, name in _TENSOR_TYPE_NAMES.items()}
            if dtype not in names:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = _DTYPES[names[dtype]]
        return _cast(self, dtype)

    def reciprocal(self):
        return 1.0 / self

    def true_divide(self, other):
        return self / other

    def floor_divide(self, other):
        return _integral(self, other, (self / other).floor())

    def remainder(self, other):
        # Python's modulo: the sign of the divisor.
        return _integral(self, other, self - (self / other).floor() * other)

    def fmod(self, other):
        # C's modulo: the sign of the dividend.
        return _integral(self, other, self - (self / other).trunc() * other)

    def lerp(self, end, weight):
        # PyTorch's two-sided formula: exact at weight 0 and at weight 1.
        difference = end - self
        if isinstance(weight, (int, float)):
            if weight < 0.5:
                return self + difference * weight
            return end - difference * (1.0 - weight)
        return _tailor.op("where", weight < 0.5, self + difference * weight,
                          end - difference * (1.0 - weight))

    def addcmul(self, tensor1, tensor2, *, value=1):
        return self + tensor1 * tensor2 * value

    def addcdiv(self, tensor1, tensor2, *, value=1):
        return self + tensor1 / tensor2 * value

    def permute(self, *dims):
        return _tailor.op("permute", self, _sizes(dims))

    def expand(self, *sizes):
        return _tailor.op("expand", self, _sizes(sizes))

    def expand_as(self, other):
        return _tailor.op("expand", self, list(other.shape))

    def repeat(self, *sizes):
        # As PyTorch computes it: each dim of `self` gets a new dim of its repeat count in
        # front, expanded, then each pair is merged.
        sizes = _sizes(sizes)
        if len(sizes) < self.dim():
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        shape = [1] * (len(sizes) - self.dim()) + list(self.shape)
        paired, expanded, merged = [], [], []
        for count, size in zip(sizes, shape):
            paired += [1, size]
            expanded += [count, size]
            merged.append(count * size)
        return self.reshape(paired).expand(expanded).reshape(merged)

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each element `repeats` times along `dim` (of the flattened tensor when None), as
        ATen's int overload computes it: a new dim after `dim` expanded to `repeats`, then
        merged with it."""
        if isinstance(repeats, Tensor):
            if not _tailor.is_constant(repeats):
                _tailor.unsupported("repeat_interleave with a computed tensor of repeats",
                                    "its output size is data-dependent; pass an int")
            # A constant (`torch.tensor([2])`): its values are known, as a fake tensor
            # keeps a small constant's values, so the output size is too.
            counts = [int(r) for r in _tailor.values(repeats)]
            if repeats.dim() == 0 or len(counts) == 1:
                return self.repeat_interleave(counts[0], dim)
            return _repeat_each(self, counts, dim)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        x = self.flatten() if dim is None else self
        d = 0 if dim is None else _dim_index(dim, self.dim())
        x = x.unsqueeze(d + 1)
        shape = list(x.shape)
        shape[d + 1] = repeats
        return x.expand(shape).flatten(d, d + 1)

    def roll(self, shifts, dims=None):
        """As `torch._refs.roll`: no dims rolls the flattened tensor, several dims one after
        another, each dim by `_roll_dim`."""
        shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
        dims = [] if dims is None else _dims(dims)
        if not shifts:
            raise RuntimeError("`shifts` required")
        if not dims and len(shifts) == 1:
            return _roll_dim(self.flatten(), shifts[0], 0).view(self.shape)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        out = self
        for shift, dim in zip(shifts, dims):
            out = _roll_dim(out, shift, dim)
        return out

    def __getitem__(self, index):
        items = index if isinstance(index, tuple) else (index,)
        items = tuple(_one_index_list_as_slice(item) for item in items)
        if any(isinstance(item, Tensor) for item in items):
            return _advanced_index(self, items)
        return _tailor.op("index", self, items)

    def split(self, split_size_or_sections, dim=0):
        size = self.size(dim)
        if isinstance(split_size_or_sections, (list, tuple)):
            lengths = list(split_size_or_sections)
        else:
            step = split_size_or_sections
            lengths = [step] * (size // step) + ([size % step] if size % step else [])
        parts, start = [], 0
        for length in lengths:
            parts.append(self[(slice(None),) * _dim_index(dim, self.dim()) + (slice(start, start + length),)])
            start = start + length
        return tuple(parts)

    def chunk(self, chunks, dim=0):
        size = self.size(dim)
        return self.split((size + chunks - 1) // chunks, dim)

    # ---- masks ----------------------------------------------------------------------------

    def masked_fill(self, mask, value):
        if mask.dtype is not bool_:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {'float' if mask.dtype is float32 else mask.dtype.name}")
        # The result keeps this tensor's dtype (a float fill of an int64 tensor truncates).
        return _cast(_tailor.op("where", mask, value, self), self.dtype)

    def contiguous(self, memory_format=None):
        return _tailor.op("contiguous", self)

    def to(self, *args, **kwargs):
        # to(dtype), to(device), to(device, dtype), to(other), and the same as keywords.
        for arg in list(args) + [kwargs.get("dtype"), kwargs.get("other")]:
            if isinstance(arg, dtype):
                return _cast(self, arg)
            if isinstance(arg, Tensor):
                return _cast(self, arg.dtype)
        _tailor.record_call()
        return self

    def float(self):
        return _cast(self, float32)

    def long(self):
        return _cast(self, int64)

    def bool(self):
        return _cast(self, bool_)

    def int(self):
        return _cast(self, int32)

    def double(self):
        return _cast(self, float64)

    def half(self):
        return _cast(self, float16)

    # Each is a call in Dynamo's graph, so a trace that makes one is not empty.
    def cpu(self):
        _tailor.record_call()
        return self

    def cuda(self, device=None):
        _tailor.record_call()
        return self

    def detach(self):
        _tailor.record_call()
        return self

    def clone(self, *, memory_format=None):
        _tailor.record_call()
        return _tailor.copy(self)

    def __deepcopy__(self, memo):
        # Module state is copied with its values (a cloned layer's parameters start equal to
        # the original's, as in PyTorch); any other tensor is immutable here: its own copy.
        return _tailor.copy_state(self) if _tailor.is_state(self) else self

    # ---- elementwise, reductions, products -------------------------------------------------

    # relu, sigmoid, tanh, exp, sum, mean, matmul, …: defined from the op table (OP_ALIASES).

    def mm(self, mat2):
        if self.dim() != 2:
            raise RuntimeError(f"mm: self must be a matrix, got {self.dim()}-D tensor")
        if mat2.dim() != 2:
            raise RuntimeError(f"mm: mat2 must be a matrix, got {mat2.dim()}-D tensor")
        return _tailor.op("matmul", self, mat2)

    def __rpow__(self, other):
        return _tailor.op("pow", other, self)

    def square(self):
        return self * self

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _made(_tailor.constant(_sizes(size), "fill", 0.0), dtype or self.dtype)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _made(_tailor.constant(_sizes(size), "fill", 1.0), dtype or self.dtype)

    # ---- in place -----------------------------------------------------------------------
    #
    # Functionalized, as PyTorch's functionalization does: the op's out-of-place result, cast
    # to this tensor's dtype, and the tensor rebound to it (`_in_place`), so every reference
    # to it sees the write and the graph holds the out-of-place op. A fill of a constant
    # outside forward (`self.bias.data.zero_()`, `nn.init`) sets the constant's fill itself.
    # The in-place forms of the elementwise ops are defined after the class (`_IN_PLACE`).

    def fill_(self, value):
        if self.dtype is int64:
            value = int(value)
        elif self.dtype is bool_:
            value = bool(value)
        if _tailor.is_constant(self) and not _tailor.tracing():
            return _tailor.set_init(self, "fill", value)
        return _in_place(self, _full_like(self, value), "fill_")

    def zero_(self):
        return self.fill_(0)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        if _tailor.is_constant(self) and not _tailor.tracing():
            from torch.nn import init
            return init.normal_(self, mean, std)
        draws = _tailor.constant(list(self.shape), "normal", 1.0)
        return _in_place(self, draws * std + mean, "normal_")

    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        if _tailor.is_constant(self) and not _tailor.tracing():
            from torch.nn import init
            return init.uniform_(self, from_, to)
        draws = _tailor.constant(list(self.shape), "unit", 0.0)
        return _in_place(self, draws * (to - from_) + from_, "uniform_")

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
        # copy_ converts any dtype (PyTorch's copy casts; only the ops' results are checked)
        # and broadcasts src to this tensor's shape.
        for i in range(1, min(self.dim(), src.dim()) + 1):
            a, b = self.shape[-i], src.shape[-i]
            if isinstance(a, int) and isinstance(b, int) and b not in (1, a):
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                                   f"({b}) at non-singleton dimension {self.dim() - i}")
        return _tailor.rebind(self, _cast(src, self.dtype).expand_as(self), "copy_")

    def __setitem__(self, index, value):
        _in_place(self, _index_put(self, index, value), "__setitem__")

    def log1p(self):
        """`log(1 + x)`, by its series where `1 + x` would round x away."""
        small = self.abs() < 1e-4
        series = self - self * self / 2 + self * self * self / 3
        return _tailor.op("where", small, series, (self + 1).log())

    def expm1(self):
        """`exp(x) - 1`, by its series where the difference would cancel."""
        small = self.abs() < 1e-5
        return _tailor.op("where", small, self + self * self / 2, self.exp() - 1)

    def cumsum(self, dim, *, dtype=None):
        """Running sums along `dim`: a product with an upper-triangular matrix of ones
        (column j sums the elements up to j), in float32; integral inputs give int64, as in
        PyTorch."""
        import torch
        x = self if dtype is None else _cast(self, dtype)
        d = _dim_index(dim, x.dim())
        moved = _cast(x, float32).movedim(d, -1)
        n = moved.size(-1)
        summed = (moved @ torch.ones(n, n).triu()).movedim(-1, d)
        if x.dtype.is_floating_point:
            return summed
        return _cast(summed.round(), int64)

    def logcumsumexp(self, dim):
        """`log(cumsum(exp(x)))` along `dim`, shifted by the dim's largest element so no
        exp overflows."""
        d = _dim_index(dim, self.dim())
        top = self.amax(d, keepdim=True)
        return (self - top).exp().cumsum(d).log() + top

    @property
    def requires_grad(self):
        # Parameters require gradients unless told otherwise; buffers and the rest do not.
        return _tailor.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, value):
        _tailor.set_requires_grad(self, bool(value))

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def _dynamo_propagated_dynamic_indices(self):
        """The dims a compiled call's back end stamped dynamic on this tensor (a returned
        one, or an argument saved for backward); absent until one did, as in PyTorch."""
        dims = _tailor.propagated_dims(self)
        if not dims:
            raise AttributeError("'Tensor' object has no attribute '_dynamo_propagated_dynamic_indices'")
        return set(dims)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        if correction is None:
            correction = 1 if unbiased else 0
        dims = list(range(self.dim())) if dim is None else _dims(dim)
        count = 1
        for d in dims:
            count = count * self.size(d)
        centred = self - self.mean(dims, keepdim=True)
        return (centred * centred).sum(dims, keepdim=keepdim) / (count - correction)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return _tailor.op("sqrt", self.var(dim, unbiased, keepdim, correction=correction))

    def rsqrt(self):
        return 1.0 / _tailor.op("sqrt", self)

    def clamp(self, min=None, max=None):
        out = self
        if min is not None:
            out = _tailor.op("maximum", out, min)
        if max is not None:
            out = _tailor.op("minimum", out, max)
        return out

    def clamp_min(self, min):
        return self.clamp(min=min)

    def clamp_max(self, max):
        return self.clamp(max=max)

    def softmax(self, dim, dtype=None):
        return _tailor.op("softmax", self, _dims(dim))

    def log_softmax(self, dim, dtype=None):
        return _log_softmax(self, dim, dtype)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        if p in ("fro", 2):
            return (self * self).sum(dim, keepdim).sqrt()
        if p == 1:
            return self.abs().sum(dim, keepdim)
        return _tailor.unsupported(f"Tensor.norm with p={p!r}",
                                   "p=2 ('fro') and p=1 are in the subset")

    def logsumexp(self, dim, keepdim=False):
        # PyTorch's decomposition: the largest value taken out before the exponentials.
        largest = self.amax(dim, keepdim=True)
        total = (self - largest).exp().sum(dim, keepdim=True).log() + largest
        if keepdim:
            return total
        dims = dim if isinstance(dim, (tuple, list)) else [dim]
        for d in sorted((d % self.dim() for d in dims), reverse=True):
            total = total.squeeze(d)
        return total

    def prod(self, dim=None, keepdim=False, dtype=None):
        """The product along `dim` (of every element when None; an integral or bool tensor's
        is int64, as PyTorch's), as the product of the dim's slices one by one, so the dim's
        size must be an int."""
        x = _cast(self, dtype)
        if not x.dtype.is_floating_point:
            x = _cast(x, int64)
        if dim is None:
            out = x.reshape(-1).prod(0)
            return out.reshape([1] * self.dim()) if keepdim else out
        d = _dim_index(dim, x.dim())
        n = x.size(d)
        if not isinstance(n, int):
            _tailor.unsupported("prod over a dim of symbolic size",
                                "Tailor multiplies a dim's slices one by one; reduce with "
                                "sum or amax, or make the dim's size static")
        if n == 0:
            shape = list(x.shape)
            del shape[d]
            out = _made(_tailor.constant(shape, "fill", 1.0), x.dtype)
        else:
            out = x[(slice(None),) * d + (0,)]
            for i in range(1, n):
                out = out * x[(slice(None),) * d + (i,)]
        return out.unsqueeze(d) if keepdim else out

    def amin(self, dim=None, keepdim=False):
        return -(-self).amax(dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return _arg_extremum(self, dim, keepdim, "max")

    def argmin(self, dim=None, keepdim=False):
        return _arg_extremum(self, dim, keepdim, "min")

    def index_select(self, dim, index):
        """Rows picked by an int64 vector: the dim moved first, looked up as an embedding's
        rows, moved back."""
        if index.dim() > 1:
            raise IndexError("index_select(): Index is supposed to be a vector")
        if index.dtype is not int64:
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        d = _dim_index(dim, self.dim())
        if self.dim() == 2 and d == 0 and _tailor.is_constant(self):
            # A table the compiled lookup reads as it is stored: module state, given whole
            # (a view of it would be a computed table).
            return _tailor.op("embedding", index.reshape(-1), self)
        if not _tailor.tracing():
            # Outside forward ops run on values: any table is a lookup's.
            moved = self.movedim(d, 0)
            rows = moved.reshape(moved.size(0), -1)
            picked = _tailor.op("embedding", index.reshape(-1), rows)
            return picked.reshape([index.numel()] + list(moved.shape[1:])).movedim(0, d)
        # A computed table: each picked row is the sum of the rows its index matches (one),
        # as gather picks, so no lookup reads a tensor the graph has not stored whole.
        import torch
        moved = self.movedim(d, 0)
        flat = index.reshape(-1)
        hit = flat.unsqueeze(1) == torch.arange(moved.size(0)).unsqueeze(0)
        hit = hit.reshape([flat.numel(), moved.size(0)] + [1] * (moved.dim() - 1))
        picked = torch.where(hit, moved.unsqueeze(0), 0).sum(1)
        return picked.movedim(0, d)

    def gather(self, dim, index):
        """`out[..., j, ...] = self[..., index[..., j, ...], ...]` along `dim`, decomposed as
        a one-hot match of each index against the positions, summed (an index's other dims
        are the input's)."""
        import torch
        if index.dtype is not int64:
            raise RuntimeError("gather(): Expected dtype int64 for index")
        d = _dim_index(dim, self.dim())
        n = self.size(d)
        shape = [1] * (index.dim() + 1)
        shape[d + 1] = n
        hit = index.unsqueeze(d + 1) == torch.arange(n).reshape(shape)
        return torch.where(hit, self.unsqueeze(d), 0).sum(d + 1)

    def max(self, dim=None, keepdim=False):
        return _extremum(self, dim, keepdim, "max")

    def min(self, dim=None, keepdim=False):
        return _extremum(self, dim, keepdim, "min")

    # ---- operators -------------------------------------------------------------------------

    def __add__(self, other):
        return _tailor.op("add", self, other)

    def __radd__(self, other):
        return _tailor.op("add", other, self)

    def __sub__(self, other):
        return _tailor.op("sub", self, other)

    def __rsub__(self, other):
        return _tailor.op("sub", other, self)

    def __mul__(self, other):
        if isinstance(other, complex) or getattr(other, "is_complex", _real)():
            return _complex_times(self, other)
        return _tailor.op("mul", self, other)

    def __rmul__(self, other):
        if isinstance(other, complex):
            return _complex_times(self, other)
        return _tailor.op("mul", other, self)

    def __truediv__(self, other):
        return _tailor.op("div", self, other)

    def __rtruediv__(self, other):
        return _tailor.op("div", other, self)

    def __matmul__(self, other):
        return _tailor.op("matmul", self, other)

    def __rmatmul__(self, other):
        return _tailor.op("matmul", other, self)

    def __pow__(self, other):
        return _tailor.op("pow", self, other)

    def __floordiv__(self, other):
        return self.floor_divide(other)

    def __rfloordiv__(self, other):
        return _integral(self, other, (other / self).floor())

    def __mod__(self, other):
        return self.remainder(other)

    def __rmod__(self, other):
        return _integral(self, other, other - (other / self).floor() * self)

    def __neg__(self):
        return _tailor.op("neg", self)

    def __pos__(self):
        return self

    def __bool__(self):
        return _tailor.tensor_condition(self)

    # Logical operators of bool tensors (masks): `~m`, `m & n`, `m | n`, `m ^ n`.
    def __invert__(self):
        _bool_operands("bitwise_not", self)
        return self == 0

    def __and__(self, other):
        _bool_operands("bitwise_and", self, other)
        return self * other

    def __or__(self, other):
        _bool_operands("bitwise_or", self, other)
        return self + other

    def __xor__(self, other):
        _bool_operands("bitwise_xor", self, other)
        return self != other

    __rand__ = __and__
    __ror__ = __or__
    __rxor__ = __xor__

    def all(self, dim=None, keepdim=False):
        return (self == 0).sum(dim, keepdim) == 0

    def any(self, dim=None, keepdim=False):
        return (self != 0).sum(dim, keepdim) > 0

    def logical_not(self):
        return self == 0

    def logical_and(self, other):
        return (self != 0) & (other != 0)

    def logical_or(self, other):
        return (self != 0) | (other != 0)

    # ---- values (a script's tensors outside forward) --------------------------------------

    def tolist(self):
        def nest(flat, shape):
            if not shape:
                return flat[0]
            step = len(flat) // shape[0] if shape[0] else 0
            return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]

        # Read before the break: after it, the tensor belongs to the graph that ended.
        shape, dtype = list(_tailor.shape(self)), self.dtype
        handed = _tailor.tolist_break(self)
        flat = _tailor.values(self) if handed is None else handed
        return nest([_python_number(v, dtype) for v in flat], shape)

    def item(self):
        return _python_number(_tailor.item(self), self.dtype)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __eq__(self, other):
        return _tailor.op("eq", self, other)

    def __ne__(self, other):
        return _tailor.op("ne", self, other)

    def __lt__(self, other):
        return _tailor.op("lt", self, other)

    def __le__(self, other):
        return _tailor.op("le", self, other)

    def __gt__(self, other):
        return _tailor.op("gt", self, other)

    def __ge__(self, other):
        return _tailor.op("ge", self, other)

    __hash__ = object.__hash__

    def __repr__(self):
        if _tailor.has_values(self):
            from torch._tensor_str import tensor_str
            return tensor_str(_tailor.values(self), list(_tailor.shape(self)), self.dtype.name)
        return _tailor.describe(self)


def _python_number(value, of):
    """A value read from a tensor of dtype `of` as the Python number PyTorch gives: an int
    for int64 and int32, a bool for bool, else the float (or the symbol a graph break
    made)."""
    if isinstance(value, float):
        if of is int64 or of is int32:
            return int(value)
        if of is bool_:
            return value != 0
    if type(value) is int and of is bool_:
        return value != 0
    return value


def _integral(x, other, result):
    """`result` of `//`, `%` or `fmod` on `x` and `other`, computed through true division,
    in the dtype PyTorch gives it: int64 where both operands are integral."""
    integral = (isinstance(other, Tensor) and not other.dtype.is_floating_point) or (
        isinstance(other, int) and not isinstance(other, bool) and not isinstance(other, SymInt))
    if x.dtype is int64 and integral:
        return _cast(result.round(), int64)
    return result


def _full_like(x, value):
    return _cast(_tailor.constant(list(x.shape), "fill", value), x.dtype)


# PyTorch's `canCast`: an in-place result may not go down a kind (float to integral, or
# anything but bool to bool).
_KIND = {"bool": 0, "int64": 1, "int32": 1, "float32": 2, "float64": 2, "float16": 2,
         "bfloat16": 2}
_TYPE_NAMES = {"bool": "Bool", "int64": "Long", "int32": "Int", "float32": "Float",
               "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}


def _in_place(x, result, name):
    """`x` written in place by the op `name`, whose out-of-place result is `result`: the
    result is cast to x's dtype as PyTorch casts an in-place result, and x rebound to it."""
    if not isinstance(result, Tensor):
        result = _full_like(x, result)
    if result.dtype is not x.dtype:
        if _KIND[result.dtype.name] > _KIND[x.dtype.name]:
            raise RuntimeError(f"result type {_TYPE_NAMES[result.dtype.name]} can't be cast to "
                               f"the desired output type {_TYPE_NAMES[x.dtype.name]}")
        result = _cast(result, x.dtype)
    return _tailor.rebind(x, result, name)


def _index_put(x, index, value):
    """`x` with `x[index] = value` written, out of place (PyTorch's `index_put` and
    `slice_scatter`): a bool mask of x's leading dims takes a fill; ints, slices, `...` and
    `None` take a value broadcast to the region they select, placed back along each dim by
    padding (`_placed`), and kept where the region's mask, placed the same way, is set."""
    items = index if isinstance(index, tuple) else (index,)
    if len(items) == 1 and isinstance(items[0], Tensor) and items[0].dtype is bool_:
        mask = items[0]
        while mask.dim() < x.dim():
            mask = mask.unsqueeze(-1)
        if isinstance(value, Tensor) and value.dim() > 0:
            _tailor.unsupported("x[mask] = tensor",
                                "its values go where the mask is true, a data-dependent "
                                "count; write x = torch.where(mask, values, x)")
        return x.masked_fill(mask, value)
    for item in items:
        if isinstance(item, (Tensor, list, tuple)):
            _tailor.unsupported("x[index tensor] = value",
                                "writing at tensor indices (index_put) is not in the subset; "
                                "write x = torch.where(mask, values, x) with a mask")
    region = x[index]
    if not isinstance(value, Tensor):
        value = _full_like(region, value)
    value = _cast(value, x.dtype).expand_as(region)
    inside = _cast(_tailor.constant(list(region.shape), "fill", 1.0), float32)
    # x's dims beside the region's: `...` spelled out as full slices, trailing dims added.
    named = len([i for i in items if i is not None and i is not Ellipsis])
    expanded = []
    for item in items:
        expanded.extend([slice(None)] * (x.dim() - named) if item is Ellipsis else [item])
    expanded.extend([slice(None)] * (x.dim() - len([i for i in expanded if i is not None])))
    dim, at = 0, 0   # the dim of x, and of the value
    for item in expanded:
        if item is None:
            value, inside = value.squeeze(at), inside.squeeze(at)
            continue
        size = x.size(dim)
        if isinstance(item, slice):
            if item != slice(None):
                start, step = _slice_start(item, size), item.step or 1
                value = _placed(value, at, start, step, size)
                inside = _placed(inside, at, start, step, size)
        else:
            start = item + size if not isinstance(item, SymInt) and item < 0 else item
            value = _placed(value.unsqueeze(at), at, start, 1, size)
            inside = _placed(inside.unsqueeze(at), at, start, 1, size)
        dim, at = dim + 1, at + 1
    return _tailor.op("where", inside > 0, value, x)


def _slice_start(item, size):
    """Where a slice of a dim of `size` starts, as Python clamps it."""
    if item.step is not None and item.step <= 0:
        raise ValueError("step must be greater than zero")
    start = item.start
    if start is None:
        return 0
    if not isinstance(start, SymInt) and start < 0:
        return max(size + start, 0)
    return start


def _placed(part, dim, start, step, size):
    """`part` (length L along `dim`) spread over a dim of `size`: element j at
    `start + step * j`, zeros elsewhere. Interleaving zeros is a pad of a new dim after
    `dim` merged into it; the trailing gap is cut, so the pad after the last element is
    `size - start - step * (L - 1) - 1`, never negative."""
    length = part.size(dim)
    if step > 1:
        spread = _tailor.op("constant_pad", part.unsqueeze(dim + 1), dim + 1, 0, step - 1, 0.0)
        merged = list(part.shape)
        merged[dim] = length * step
        part = spread.reshape(merged).narrow(dim, 0, length * step - step + 1)
    after = size - start - step * (length - 1) - 1
    return _tailor.op("constant_pad", part, dim, start, after, 0.0)


def _bool_operands(name, *operands):
    """Tailor's `~`, `&`, `|` and `^` are the logical ones: bool tensors only (PyTorch's
    bitwise forms of integer tensors are not in the subset)."""
    for t in operands:
        if isinstance(t, Tensor) and t.dtype is not bool_:
            _tailor.unsupported(f"{name} of a {t.dtype} tensor",
                                "compare first (a mask is a bool tensor: x > 0), or use .bool()")


# The methods and functions the op table defines (`src/frontend/table.rs`): `[(op,
# [alias, ...])]`, each alias taking exactly the op's schema arguments ("Tensor.relu",
# "torch.relu", "F.sigmoid"). torch/__init__.py and nn/functional.py define theirs from it.
OP_ALIASES = _tailor.op_aliases()


def _op_function(op, name):
    def function(*args, **kwargs):
        if "keepdims" in kwargs:
            # NumPy's spelling, which PyTorch's reductions accept too.
            kwargs["keepdim"] = kwargs.pop("keepdims")
        return _tailor.op(op, *args, **kwargs)

    function.__name__ = name
    return function


def _define_aliases(prefix, namespace):
    """Defines in `namespace` (a dict) each op alias starting with `prefix` (`"torch."`)."""
    for op, aliases in OP_ALIASES:
        for alias in aliases:
            if alias.startswith(prefix):
                name = alias[len(prefix):]
                namespace[name] = _op_function(op, name)


# ---- methods that are other methods under PyTorch's other names, or short decompositions
# over them as torch/_refs writes them; checked against PyTorch by
# tests/data/scripts/tensor_methods.py --------------------------------------------------------


def _torch():
    """The package, for methods written as expressions (it imports this module first)."""
    import torch
    return torch


def _divide(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return self / other
    if rounding_mode == "trunc":
        return _integral(self, other, (self / other).trunc())
    if rounding_mode == "floor":
        return self.floor_divide(other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def _flip(self, *dims):
    """Each dim read backwards: an index_select by `n - 1 - arange(n)` (an arange from a
    symbolic start is not one of the op table's forms)."""
    import torch
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    out = self
    for dim in dims:
        d = _dim_index(dim, self.dim())
        n = self.size(d)
        out = out.index_select(d, (n - 1) - torch.arange(n))
    return out


def _rot90(self, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    k %= 4
    if k == 1:
        return self.flip(dims[1]).transpose(dims[0], dims[1])
    if k == 2:
        return self.flip(dims)
    if k == 3:
        return self.flip(dims[0]).transpose(dims[0], dims[1])
    return self.clone()


def _diff(self, n=1, dim=-1, prepend=None, append=None):
    import torch
    d = _dim_index(dim, self.dim())
    out = self
    if prepend is not None or append is not None:
        out = torch.cat([t for t in (prepend, self, append) if t is not None], d)
    for _ in range(n):
        length = out.size(d)
        out = out.narrow(d, 1, length - 1) - out.narrow(d, 0, length - 1)
    return out


def _select(self, dim, index):
    d = _dim_index(dim, self.dim())
    return self[(slice(None),) * d + (index,)]


def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = (self - other).abs() <= atol + rtol * other.abs()
    close = close | (self == other)
    if equal_nan:
        close = close | ((self != self) & (other != other))
    return close


def _nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    import torch
    if not self.is_floating_point():
        return self.clone()
    info = torch.finfo(self.dtype)
    out = _tailor.op("where", self != self, nan, self)
    out = _tailor.op("where", out == float("inf"), info.max if posinf is None else posinf, out)
    return _tailor.op("where", out == float("-inf"), info.min if neginf is None else neginf,
                      out)


def _logit(self, eps=None):
    x = self if eps is None else self.clamp(eps, 1.0 - eps)
    return (x / (1.0 - x)).log()


def _sinc(self):
    import math
    scaled = self * math.pi
    return _tailor.op("where", self == 0, 1.0, scaled.sin() / scaled)


def _count_nonzero(self, dim=None):
    nonzero = (self != 0).long()
    return nonzero.sum() if dim is None else nonzero.sum(dim)


def _unfold(self, dimension, size, step):
    """Windows of `size` elements every `step` along `dimension`, as a new last dim (the
    dim itself counts the windows: (length - size) // step + 1). Window element j is
    elements j, j + step, … of the dim: `size` strided slices stacked, so a symbolic length
    is asked only what PyTorch's view asks (`size <= length`)."""
    import torch
    if self.dim() == 0:
        return self.reshape(1)
    d = _dim_index(dimension, self.dim())
    length = self.size(d)
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    span = length - size + 1
    index = (slice(None),) * d
    taps = [self.narrow(d, j, span)[index + (slice(None, None, step),)] for j in range(size)]
    return torch.stack(taps, -1)


def _diag(self, diagonal=0):
    """A vector's diagonal matrix (shifted `diagonal` places), or a matrix's diagonal, as
    `torch.diag`: picks by a constant index, so the graph shows an index_select."""
    import torch
    if self.dim() == 1:
        n = self.size(0)
        size = n + abs(diagonal)
        rows = torch.arange(size).unsqueeze(1)
        cols = torch.arange(size).unsqueeze(0)
        source = (rows if diagonal >= 0 else cols).clamp(max=n - 1).expand(size, size)
        picked = self.index_select(0, source.reshape(-1)).view(size, size)
        return torch.where(cols - rows == diagonal, picked, torch.zeros_like(picked))
    if self.dim() == 2:
        return _diagonal(self, diagonal)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.dim()}D")


def _diagonal(self, offset=0, dim1=0, dim2=1):
    """The elements (i, i + offset) of a matrix (dims 0 and 1)."""
    import torch
    if self.dim() != 2 or sorted((dim1 % 2, dim2 % 2)) != [0, 1]:
        _tailor.unsupported("Tensor.diagonal beyond a matrix's dims 0 and 1",
                            "move the two dims to the front and reshape to a matrix")
    matrix = self if dim1 % 2 == 0 else self.t()
    rows, cols = matrix.shape
    start = offset if offset >= 0 else -offset * cols
    length = min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols)
    index = torch.arange(max(length, 0)) * (cols + 1) + start
    return matrix.reshape(-1).index_select(0, index)


def _in_tensor(self, element):
    return bool((self == element).any())


_MORE_METHODS = {
    "eq": Tensor.__eq__, "ne": Tensor.__ne__, "lt": Tensor.__lt__, "le": Tensor.__le__,
    "gt": Tensor.__gt__, "ge": Tensor.__ge__,
    "greater": Tensor.__gt__, "greater_equal": Tensor.__ge__, "less": Tensor.__lt__,
    "less_equal": Tensor.__le__, "not_equal": Tensor.__ne__,
    "divide": _divide, "multiply": lambda self, other: self * other,
    "subtract": lambda self, other, alpha=1: self - other * alpha if alpha != 1 else self - other,
    "negative": lambda self: -self, "absolute": lambda self: self.abs(),
    "fix": lambda self: self.trunc(), "clip": lambda self, min=None, max=None: self.clamp(min, max),
    "frac": lambda self: self - self.trunc(),
    "isnan": lambda self: self != self,
    "isinf": lambda self: self.abs() == float("inf"),
    "isfinite": lambda self: (self == self) & (self.abs() != float("inf")),
    "isposinf": lambda self: self == float("inf"),
    "isneginf": lambda self: self == float("-inf"),
    "nan_to_num": _nan_to_num,
    "log2": lambda self: self.log() * 1.4426950408889634,
    "log10": lambda self: self.log() * 0.4342944819032518,
    "cosh": lambda self: (self.exp() + (-self).exp()) * 0.5,
    "sinh": lambda self: (self.exp() - (-self).exp()) * 0.5,
    "logit": _logit, "sinc": _sinc,
    "flip": _flip, "fliplr": lambda self: self.flip(1), "flipud": lambda self: self.flip(0),
    "rot90": _rot90, "diff": _diff, "select": _select,
    "isclose": _isclose,
    "allclose": lambda self, other, rtol=1e-05, atol=1e-08, equal_nan=False:
        bool(_isclose(self, other, rtol, atol, equal_nan).all()),
    "equal": lambda self, other: list(self.shape) == list(other.shape) and bool((self == other).all()),
    "count_nonzero": _count_nonzero,
    "nelement": lambda self: self.numel(),
    "element_size": lambda self: self.dtype.itemsize,
    "dot": lambda self, other: (self * other).sum(),
    "vdot": lambda self, other: (self * other).sum(),
    "mv": lambda self, vec: self @ vec,
    "bmm": lambda self, other: _torch().bmm(self, other),
    "addmm": lambda self, mat1, mat2, *, beta=1, alpha=1:
        _torch().addmm(self, mat1, mat2, beta=beta, alpha=alpha),
    "baddbmm": lambda self, batch1, batch2, *, beta=1, alpha=1:
        _torch().baddbmm(self, batch1, batch2, beta=beta, alpha=alpha),
    "outer": lambda self, vec2: _torch().outer(self, vec2),
    "ger": lambda self, vec2: _torch().outer(self, vec2),
    "new_tensor": lambda self, data, *, dtype=None, device=None, requires_grad=False:
        _torch().tensor(data, dtype=dtype or self.dtype),
    "bfloat16": lambda self: _cast(self, bfloat16),
    "unfold": _unfold,
    "diag": _diag,
    "diagonal": _diagonal,
    "__contains__": _in_tensor,
}
for _name, _method in _MORE_METHODS.items():
    if not hasattr(Tensor, _name) or _name.startswith("__"):
        setattr(Tensor, _name, _method)



_methods = {}
_define_aliases("Tensor.", _methods)
for _name, _method in _methods.items():
    setattr(Tensor, _name, _method)
Tensor.__abs__ = Tensor.abs


def _with_alpha(name):
    """`x.add(y, alpha=a)` is `x + y * a` (and `sub` alike), as PyTorch's refs write it."""
    plain = getattr(Tensor, name)

    def method(self, other, *, alpha=1):
        return plain(self, other if alpha == 1 else other * alpha)

    method.__name__ = name
    return method


Tensor.add = _with_alpha("add")
Tensor.sub = _with_alpha("sub")

# The in-place forms `x.name_(...)` of out-of-place methods (`_in_place`).
_IN_PLACE = ["abs", "add", "addcdiv", "addcmul", "ceil", "clamp", "clamp_max", "clamp_min",
             "clip", "cos", "div", "erf", "exp", "floor", "floor_divide", "fmod", "lerp", "log",
             "logical_not", "masked_fill", "mul", "neg", "pow", "reciprocal", "relu",
             "remainder", "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "sub",
             "tanh", "tril", "triu", "true_divide", "trunc", "fix", "frac", "nan_to_num",
             "negative", "subtract", "multiply", "divide", "log2", "log10", "logit", "sinc",
             "cosh", "sinh", "absolute"]


def _in_place_method(name):
    def method(self, *args, **kwargs):
        return _in_place(self, getattr(self, name)(*args, **kwargs), name + "_")

    method.__name__ = name + "_"
    return method


for _name in _IN_PLACE:
    if hasattr(Tensor, _name):
        setattr(Tensor, _name + "_", _in_place_method(_name))


class SymInt(_tailor.SymIntBase):
    """A symbolic size such as `s0` or `(s0 - 3)//2 + 1`; arithmetic builds expressions. With
    a float it is a `SymRatio` (PyTorch's SymFloat: `group_size * capacity_factor`), exact;
    a float power (`dim_head ** -0.5`) takes the size's value, with a guard."""

    __slots__ = ()

    def __add__(self, other):
        if type(other) is float:
            return SymRatio(self, 1) + other
        return _tailor.sym_binary("add", self, other)

    def __radd__(self, other):
        if type(other) is float:
            return other + SymRatio(self, 1)
        return _tailor.sym_binary("add", other, self)

    def __sub__(self, other):
        if type(other) is float:
            return SymRatio(self, 1) - other
        return _tailor.sym_binary("sub", self, other)

    def __rsub__(self, other):
        if type(other) is float:
            return other - SymRatio(self, 1)
        return _tailor.sym_binary("sub", other, self)

    def __mul__(self, other):
        if type(other) is float:
            return SymRatio(self, 1) * other
        return _tailor.sym_binary("mul", self, other)

    def __rmul__(self, other):
        if type(other) is float:
            return SymRatio(self, 1) * other
        return _tailor.sym_binary("mul", other, self)

    def __floordiv__(self, other):
        return _tailor.sym_binary("floordiv", self, other)

    def __rfloordiv__(self, other):
        return _tailor.sym_binary("floordiv", other, self)

    def __mod__(self, other):
        return _tailor.sym_binary("mod", self, other)

    def __rmod__(self, other):
        return _tailor.sym_binary("mod", other, self)

    def __truediv__(self, other):
        if type(other) is int and other > 0:
            return SymRatio(self, other)
        if isinstance(other, (int, float, SymInt)):
            return float(self) / float(other)
        return NotImplemented

    def __rtruediv__(self, other):
        if isinstance(other, (int, float)):
            return float(other) / float(self)
        return NotImplemented

    def __pow__(self, other):
        if type(other) is float:
            return float(self) ** other
        return _tailor.sym_binary("pow", self, other)

    def __rpow__(self, other):
        if type(other) is float:
            return other ** float(self)
        return _tailor.sym_binary("pow", other, self)

    def __neg__(self):
        return _tailor.sym_neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _tailor.unsupported("abs() of a symbolic size", "")

    def __eq__(self, other):
        return _tailor.sym_compare("eq", self, other)

    def __ne__(self, other):
        return _tailor.sym_compare("ne", self, other)

    def __lt__(self, other):
        return _tailor.sym_compare("lt", self, other)

    def __le__(self, other):
        return _tailor.sym_compare("le", self, other)

    def __gt__(self, other):
        return _tailor.sym_compare("gt", self, other)

    def __ge__(self, other):
        return _tailor.sym_compare("ge", self, other)

    __hash__ = None

    def __bool__(self):
        return _tailor.sym_condition(self)

    def __index__(self):
        return _tailor.sym_specialize(self)

    def __int__(self):
        return _tailor.sym_specialize(self)

    def __float__(self):
        # PyTorch keeps `float(s0)` symbolic (a SymFloat); Tailor uses its value in this
        # trace, guarded (`s0 == 8`), so the result stays right at the cost of recompiles.
        return float(_tailor.sym_specialize(self))

    def __ceil__(self):
        return self

    __floor__ = __trunc__ = __round__ = __ceil__

    def __repr__(self):
        return _tailor.describe(self)


class SymRatio:
    """A size divided by a positive int (`(length - kernel) / stride + 1`), PyTorch's SymFloat
    of `IntTrueDiv`: as numerator (an int or a size) over a positive int. `math.ceil`,
    `math.floor` and `int()` of it are sizes again, exactly, as floor divisions (no guard:
    `ceil(n / d) == (n + d - 1) // d`); sums and products with ints, floats (each a ratio
    of ints) and sizes, and comparisons (guarded where they are decided, as any comparison
    of sizes), stay exact.
    Anything else (a float operand, `math.log2`, a tensor scalar) takes its value through
    `float()`, which specialises the numerator with a guard."""

    __slots__ = ("num", "den")

    def __init__(self, num, den):
        self.num = num
        self.den = den

    @staticmethod
    def _of(other):
        if isinstance(other, SymRatio):
            return other
        if type(other) is int or isinstance(other, SymInt):
            return SymRatio(other, 1)
        if type(other) is float and other == other and abs(other) != float("inf"):
            # A float is a ratio of ints exactly (`0.5` is 1/2), so sums and comparisons
            # with one stay exact.
            return SymRatio(*other.as_integer_ratio())
        return None

    def __add__(self, other):
        o = SymRatio._of(other)
        if o is None:
            return float(self) + other
        return SymRatio(self.num * o.den + o.num * self.den, self.den * o.den)

    __radd__ = __add__

    def __sub__(self, other):
        o = SymRatio._of(other)
        if o is None:
            return float(self) - other
        return SymRatio(self.num * o.den - o.num * self.den, self.den * o.den)

    def __rsub__(self, other):
        o = SymRatio._of(other)
        if o is None:
            return other - float(self)
        return o - self

    def __mul__(self, other):
        o = SymRatio._of(other)
        if o is None:
            return float(self) * other
        return SymRatio(self.num * o.num, self.den * o.den)

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = SymRatio._of(other)
        if o is not None and type(o.num) is int and o.num > 0:
            return SymRatio(self.num * o.den, self.den * o.num)
        return float(self) / other

    def __rtruediv__(self, other):
        return other / float(self)

    def __neg__(self):
        return SymRatio(-self.num, self.den)

    def __pos__(self):
        return self

    def __ceil__(self):
        return (self.num + self.den - 1) // self.den

    def __floor__(self):
        return self.num // self.den

    def __trunc__(self):
        if self.num >= 0:
            return self.num // self.den
        return -((-self.num) // self.den)

    def __int__(self):
        # Python's int() must give an int: the value in this trace, guarded (PyTorch keeps
        # it symbolic; `math.trunc` does here too).
        return int(self.__trunc__())

    def __float__(self):
        return float(int(self.num)) / int(self.den)

    def is_integer(self):
        """Whether the ratio is whole, from its value: PyTorch's `SymFloat.is_integer`
        specialises the ratio (`(x.size()[1] / 4) == 2.0`), as `float()` specialises the
        numerator here, so each new size recompiles, as in PyTorch."""
        return float(self).is_integer()

    def __round__(self, ndigits=None):
        return round(float(self), ndigits)

    def _compare(self, other, op):
        o = SymRatio._of(other)
        if o is not None:
            return op(self.num * o.den, o.num * self.den)
        return NotImplemented

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return self._compare(other, lambda a, b: a != b)

    __hash__ = None

    def __bool__(self):
        return bool(self.num != 0)

    def __repr__(self):
        return f"({self.num!r})/{self.den}"


class SymBool(_tailor.SymBoolBase):
    """A comparison of sizes, decided (and guarded) only when used as a condition."""

    __slots__ = ()

    def __bool__(self):
        return _tailor.sym_condition(self)

    def __repr__(self):
        return _tailor.describe(self)


class SymFloat(Tensor):
    """A float argument traced as a symbol (dynamic=True, or automatic dynamic once it
    changed): a 0-dimensional input of the graph, so `x * f` reads the call's value. A
    comparison with a number is decided on the traced value and guarded (`L['f'] > 1.0`), as
    PyTorch's SymFloat is; `float(f)` specialises it."""

    def _compare(self, op, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return _tailor.sym_float_compare(self, op, float(other))
        return _tailor.op(op, self, other)

    def __gt__(self, other):
        return self._compare("gt", other)

    def __ge__(self, other):
        return self._compare("ge", other)

    def __lt__(self, other):
        return self._compare("lt", other)

    def __le__(self, other):
        return self._compare("le", other)

    def __eq__(self, other):
        return self._compare("eq", other)

    def __ne__(self, other):
        return self._compare("ne", other)

    def __bool__(self):
        return self._compare("ne", 0.0)

    def __float__(self):
        return _tailor.sym_float_specialize(self)

    def __int__(self):
        return int(self.__float__())

    __hash__ = object.__hash__


_tailor.register(Tensor, SymInt, SymBool, SymFloat, TailorError)
