"""torch.fft as model files use it (FNet's Fourier mixing, mega's long convolutions):
`fft`, `ifft`, `rfft`, `irfft`, `fft2`, `ifft2`, `fftn`, `ifftn`, `rfftfreq`, `fftfreq`, with
PyTorch's `n=`, `dim=` and `norm=`.

In: a real tensor or a `ComplexTensor` (`torch._complex`). Out: a `ComplexTensor` (a real
one from `irfft`). Invariant: each transform along a dim is a product with the transform's
cos and sin tables built from `arange`s of the dim's length, so a symbolic length stays
symbolic (the angles divide by it as a tensor, never as a Python number) and the graph shows
the products a DFT is (PyTorch's graph shows one FFT node; its kernels use an FFT library).
The tables cost n² elements a dim, which bounds the lengths the memory budget allows.
"""

import math

import torch
from torch._complex import ComplexTensor
from torch._tensor import _dim_index


def _norm_scale(norm, n, inverse):
    """The factor a transform of length `n` is scaled by under `norm`: a number, or a 0-d
    tensor where `n` is a symbolic size (a Python division by it would specialise it)."""
    if norm is None or norm == "backward":
        return _reciprocal(n) if inverse else 1.0
    if norm == "ortho":
        root = n ** 0.5 if isinstance(n, int) else (torch.ones(()) * n).sqrt()
        return 1.0 / root
    if norm == "forward":
        return 1.0 if inverse else _reciprocal(n)
    raise ValueError(f"Invalid normalization mode: {norm}")


def _reciprocal(n):
    return 1.0 / n if isinstance(n, int) else torch.ones(()) / n


def _tables(rows, cols, n):
    """cos and sin of 2π · (r · c mod n) / n for r < rows, c < cols, the sin exactly 0 where
    the angle is a multiple of π (as an FFT's are: a real signal's mean has no imaginary
    part)."""
    turns = (torch.arange(rows).unsqueeze(1) * torch.arange(cols).unsqueeze(0)).remainder(n)
    angles = turns.float() / n * (2 * math.pi)
    whole = (turns == 0) | (turns * 2 == n)
    return angles.cos(), torch.where(whole, torch.zeros_like(angles), angles.sin())


def _resized(x, dim, n):
    """`x` cut or zero-padded along `dim` to `n` elements (`n=` of the transforms)."""
    if n is None:
        return x
    length = x.size(dim)
    if n < length:
        return x.narrow(dim, 0, n)
    if n > length:
        pad = [0, 0] * (x.dim() - 1 - dim) + [0, n - length]
        return torch.nn.functional.pad(x, pad)
    return x


def _parts(x):
    """Real and imaginary parts of a real or complex tensor."""
    if isinstance(x, ComplexTensor):
        return x.real, x.imag
    return x.float(), None


def _transform(x, dim, n, norm, inverse, half=False):
    """The DFT (or its inverse) of `x` along `dim`; `half` keeps the first n // 2 + 1
    outputs (`rfft`)."""
    rank = x.dim()
    d = _dim_index(dim, rank)
    if isinstance(x, ComplexTensor):
        x = ComplexTensor(_resized(x._pairs, d, n))
    else:
        x = _resized(x, d, n)
    length = x.size(d)
    outputs = length // 2 + 1 if half else length
    real, imag = _parts(x)
    real = real.movedim(d, -1)
    imag = None if imag is None else imag.movedim(d, -1)
    cos, sin = _tables(length, outputs, length)
    # (a + ib)(cos + i·sign·sin) summed over the input's positions.
    signed_sin = sin if inverse else -sin
    out_real = real @ cos
    out_imag = real @ signed_sin
    if imag is not None:
        out_real = out_real - imag @ signed_sin
        out_imag = out_imag + imag @ cos
    scale = _norm_scale(norm, length, inverse)
    out_real, out_imag = out_real * scale, out_imag * scale
    return ComplexTensor(torch.stack([out_real.movedim(-1, d), out_imag.movedim(-1, d)], -1))


def fft(input, n=None, dim=-1, norm=None):
    return _transform(input, dim, n, norm, inverse=False)


def ifft(input, n=None, dim=-1, norm=None):
    return _transform(input, dim, n, norm, inverse=True)


def rfft(input, n=None, dim=-1, norm=None):
    if isinstance(input, ComplexTensor):
        raise RuntimeError("rfft expects a real input tensor, but got ComplexFloat")
    return _transform(input, dim, n, norm, inverse=False, half=True)


def irfft(input, n=None, dim=-1, norm=None):
    """The real signal of length `n` (default 2 · (m - 1)) whose rfft is `input`: each of
    the first n // 2 + 1 frequencies counted twice but the first and, for an even `n`, the
    last, the imaginary parts of those two ignored."""
    if not isinstance(input, ComplexTensor):
        input = ComplexTensor(torch.stack([input.float(), torch.zeros_like(input.float())], -1))
    d = _dim_index(dim, input.dim())
    m = input.size(d)
    n = 2 * (m - 1) if n is None else n
    kept = n // 2 + 1
    pairs = _resized(input._pairs, d, kept)
    real, imag = pairs[..., 0].movedim(d, -1), pairs[..., 1].movedim(d, -1)
    cos, sin = _tables(kept, n, n)
    ends = (torch.arange(kept) == 0) | (torch.arange(kept) * 2 == n)
    weights = torch.where(ends, torch.ones(kept), torch.ones(kept) * 2).unsqueeze(1)
    cos, sin = cos * weights, sin * weights
    out = real @ cos - imag @ sin
    return (out * _norm_scale(norm, n, inverse=True)).movedim(-1, d)


def _over_dims(transform, input, s, dim, norm):
    if dim is None:
        dim = list(range(input.dim()))[-len(s):] if s is not None else list(range(input.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    sizes = [None] * len(dims) if s is None else list(s)
    out = input
    for d, size in zip(dims, sizes):
        out = transform(out, size, d, norm)
    return out


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _over_dims(fft, input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _over_dims(ifft, input, s, dim, norm)


def fftn(input, s=None, dim=None, norm=None):
    return _over_dims(fft, input, s, dim, norm)


def ifftn(input, s=None, dim=None, norm=None):
    return _over_dims(ifft, input, s, dim, norm)


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies, [0, 1, …, (n - 1) // 2, -(n // 2), …, -1] / (d · n)."""
    k = torch.arange(n)
    return torch.where(k < (n + 1) // 2, k, k - n).float() / (d * n)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    return torch.arange(n // 2 + 1).float() / (d * n)
