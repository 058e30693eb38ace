"""Complex tensors, as rotary position embeddings use them (LLaMA's `precompute_freqs_cis`
and `apply_rotary_emb`): `torch.polar`, `torch.complex`, `torch.view_as_complex`,
`torch.view_as_real`, a Python complex number times a tensor, and the arithmetic, views and
indexing such code applies to them.

In: real tensors. Out: `ComplexTensor`s, each holding its values as a float tensor whose
last dim is 2 (real, imaginary): the layout `view_as_real` returns. Invariant: every method
works on the leading dims of that tensor and keeps the pair last, so shapes, slices and
views ask a symbolic size what PyTorch's complex tensor asks of it; a product is
(ac - bd, ad + bc) over the pairs, the real ops PyTorch's compilers lower complex products
to (Dynamo's own graph shows the complex ops). Complex tensors computed outside `forward`
(a table of frequencies built in `__init__`) are held as constants, as a plain tensor
attribute is, so `forward` can read them.
"""

import _tailor
from torch._tensor import Size, Tensor, _dim_index, _sizes, dtype

complex64 = dtype("complex64", False)


def _held(pairs):
    """`pairs` as a constant when it was computed outside a capture."""
    if _tailor.tracing() or _tailor.is_constant(pairs):
        return pairs
    state = _tailor.as_state(pairs)
    state.requires_grad = False
    return state


def _pairs(real, imag):
    import torch
    return torch.stack([real, imag], -1)


class ComplexTensor:
    """A complex64 tensor over its (..., 2) pairs of real and imaginary parts."""

    def __init__(self, pairs):
        self._pairs = _held(pairs)

    # ---- what it is ------------------------------------------------------------------------

    dtype = complex64
    is_cuda = False

    @property
    def shape(self):
        return Size(list(self._pairs.shape)[:-1])

    @property
    def ndim(self):
        return self._pairs.dim() - 1

    @property
    def device(self):
        return self._pairs.device

    @property
    def real(self):
        return self._pairs[..., 0]

    @property
    def imag(self):
        return self._pairs[..., 1]

    def dim(self):
        return self.ndim

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[_dim_index(dim, self.ndim)]

    def numel(self):
        return self._pairs.numel() // 2

    def is_complex(self):
        return True

    def is_floating_point(self):
        return False

    # ---- views -----------------------------------------------------------------------------

    def view(self, *shape):
        return ComplexTensor(self._pairs.view(*_sizes(shape), 2))

    def reshape(self, *shape):
        return ComplexTensor(self._pairs.reshape(*_sizes(shape), 2))

    def unsqueeze(self, dim):
        return ComplexTensor(self._pairs.unsqueeze(_dim_index(dim, self.ndim + 1)))

    def squeeze(self, dim=None):
        if dim is None:
            dims = [d for d, n in enumerate(self.shape) if n == 1]
            out = self._pairs
            for d in reversed(dims):
                out = out.squeeze(d)
            return ComplexTensor(out)
        return ComplexTensor(self._pairs.squeeze(_dim_index(dim, self.ndim)))

    def transpose(self, dim0, dim1):
        return ComplexTensor(self._pairs.transpose(_dim_index(dim0, self.ndim),
                                                   _dim_index(dim1, self.ndim)))

    def flatten(self, start_dim=0, end_dim=-1):
        return ComplexTensor(self._pairs.flatten(_dim_index(start_dim, self.ndim),
                                                 _dim_index(end_dim, self.ndim)))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if Ellipsis not in index:
            index = index + (Ellipsis,)
        return ComplexTensor(self._pairs[index + (slice(None),)])

    def to(self, *args, **kwargs):
        # Devices are names to capture; a complex tensor stays complex64.
        return self

    def clone(self):
        return ComplexTensor(self._pairs.clone())

    def contiguous(self):
        return self

    def detach(self):
        return self

    # ---- arithmetic ------------------------------------------------------------------------

    def __mul__(self, other):
        a, b = self.real, self.imag
        if isinstance(other, ComplexTensor):
            c, d = other.real, other.imag
            return ComplexTensor(_pairs(a * c - b * d, a * d + b * c))
        if isinstance(other, complex):
            c, d = other.real, other.imag
            return ComplexTensor(_pairs(a * c - b * d, a * d + b * c))
        if isinstance(other, Tensor):
            return ComplexTensor(self._pairs * other.unsqueeze(-1))
        return ComplexTensor(self._pairs * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (ComplexTensor, complex)):
            return self * _reciprocal(other)
        if isinstance(other, Tensor):
            return ComplexTensor(self._pairs / other.unsqueeze(-1))
        return ComplexTensor(self._pairs / other)

    def __add__(self, other):
        if isinstance(other, ComplexTensor):
            return ComplexTensor(self._pairs + other._pairs)
        if isinstance(other, complex):
            return ComplexTensor(_pairs(self.real + other.real, self.imag + other.imag))
        return ComplexTensor(_pairs(self.real + other, self.imag))

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __neg__(self):
        return ComplexTensor(-self._pairs)

    def conj(self):
        return ComplexTensor(_pairs(self.real, -self.imag))

    def abs(self):
        return (self.real * self.real + self.imag * self.imag).sqrt()

    def exp(self):
        scale = self.real.exp()
        return ComplexTensor(_pairs(scale * self.imag.cos(), scale * self.imag.sin()))

    def angle(self):
        _tailor.unsupported("the angle of a complex tensor",
                            "keep the angles you made it from (torch.polar(r, angle))")

    def __repr__(self):
        from torch._tensor_str import tensor_str
        flat = _tailor.values(self._pairs)
        pairs = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
        return tensor_str(pairs, list(self.shape), "complex64")


def _reciprocal(value):
    if isinstance(value, complex):
        return 1 / value
    norm = value.real * value.real + value.imag * value.imag
    return ComplexTensor(_pairs(value.real / norm, -value.imag / norm))


def polar(abs, angle):
    """`abs * (cos(angle) + i sin(angle))`."""
    return ComplexTensor(_pairs(abs * angle.cos(), abs * angle.sin()))


def complex_of(real, imag):
    return ComplexTensor(_pairs(real, imag))


def view_as_complex(input):
    if isinstance(input, ComplexTensor):
        raise RuntimeError("view_as_complex is only supported for float tensors, but got a "
                           "tensor of scalar type: ComplexFloat")
    if input.dim() == 0 or input.size(-1) != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return ComplexTensor(input)


def view_as_real(input):
    if not isinstance(input, ComplexTensor):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return input._pairs


def is_complex(input):
    return isinstance(input, ComplexTensor)
