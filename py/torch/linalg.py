"""torch.linalg as model files use it while they are built (performer's random orthogonal
features, `torch.linalg.qr` of a Gaussian block) and in `forward` (norms).

In: tensors. Out: what PyTorch's functions return. Invariant: `qr` is LAPACK's Householder
QR (`dgeqr2`, then Q from `dorg2r`), step for step, so Q and R carry LAPACK's signs (a
reflection makes R's diagonal entry minus the sign of its pivot, a column already zero below
its pivot is left as it is); it runs on values, outside `forward` (inside, PyTorch's QR is one graph node
Tailor has no kernel for, and it says so). Norms are `Tensor.norm`'s.
"""

import _tailor
import torch
from torch._missing import _missing_names


class QRResult(tuple):
    """`torch.return_types.linalg_qr(Q=..., R=...)`: unpacks as `q, r`."""

    def __new__(cls, q, r):
        return super().__new__(cls, (q, r))

    @property
    def Q(self):
        return self[0]

    @property
    def R(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.linalg_qr(\nQ={self[0]!r},\nR={self[1]!r})"


def _reflector(alpha, x):
    """LAPACK's `dlarfg`: beta, tau and v[1:] of the reflection taking (alpha, x) to
    (beta, 0, …); tau is 0 (no reflection) where x is already 0."""
    xnorm = sum(v * v for v in x) ** 0.5
    if not x or xnorm == 0.0:
        return alpha, 0.0, x
    beta = -((alpha * alpha + xnorm * xnorm) ** 0.5)
    if alpha < 0:
        beta = -beta
    tau = (beta - alpha) / beta
    return beta, tau, [v / (alpha - beta) for v in x]


def _apply(a, i, v, tau, columns):
    """a[i:, columns] <- (I - tau v vᵀ) a[i:, columns], v's first entry 1."""
    for j in columns:
        dot = sum(v[t] * a[i + t][j] for t in range(len(v)))
        for t in range(len(v)):
            a[i + t][j] -= tau * v[t] * dot


def _geqr2(rows):
    """LAPACK's `dgeqr2`: R in the upper triangle, each reflection's v below the diagonal,
    and the taus."""
    a = [list(map(float, row)) for row in rows]
    m, n = len(a), len(a[0]) if a else 0
    taus = []
    for i in range(min(m, n)):
        beta, tau, tail = _reflector(a[i][i], [a[t][i] for t in range(i + 1, m)])
        a[i][i] = beta
        for t, value in enumerate(tail):
            a[i + 1 + t][i] = value
        _apply(a, i, [1.0] + tail, tau, range(i + 1, n))
        taus.append(tau)
    return a, taus


def _org2r(a, taus, columns):
    """LAPACK's `dorg2r`: the first `columns` columns of Q from `_geqr2`'s reflections,
    built from the last reflection back (so a column with no reflection holds -0.0 below
    its diagonal, as LAPACK's does)."""
    m = len(a)
    q = [[a[i][j] if j < len(taus) else 0.0 for j in range(columns)] for i in range(m)]
    for j in range(len(taus), columns):
        q[j][j] = 1.0
    for i in reversed(range(len(taus))):
        v = [1.0] + [q[t][i] for t in range(i + 1, m)]
        if i < columns - 1:
            _apply(q, i, v, taus[i], range(i + 1, columns))
        for t in range(i + 1, m):
            q[t][i] *= -taus[i]
        q[i][i] = 1.0 - taus[i]
        for t in range(i):
            q[t][i] = 0.0
    return q


def qr(A, mode="reduced"):
    if _tailor.tracing() and not _tailor.is_constant(A):
        _tailor.unsupported("torch.linalg.qr inside forward",
                            "compute it while the model is built (in __init__)")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if A.dim() != 2:
        _tailor.unsupported(f"torch.linalg.qr of a {A.dim()}-d tensor", "give a matrix")
    m, n = A.shape
    a, taus = _geqr2(A.tolist())
    k = m if mode == "complete" else min(m, n)
    r_out = torch.tensor([[a[i][j] if j >= i else 0.0 for j in range(n)] for i in range(k)])
    if mode == "r":
        return QRResult(torch.zeros(0), r_out)
    return QRResult(torch.tensor(_org2r(a, taus, k)), r_out)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if ord == 2:
        return (x * x).sum(dim, keepdim).sqrt()
    if ord == 1:
        return x.abs().sum(dim, keepdim)
    if ord == float("inf"):
        return x.abs().amax(dim, keepdim)
    _tailor.unsupported(f"torch.linalg.vector_norm with ord={ord!r}", "ord 1, 2 or inf")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if ord != "fro":
        _tailor.unsupported(f"torch.linalg.matrix_norm with ord={ord!r}", "ord='fro'")
    return (A * A).sum(list(dim), keepdim).sqrt()


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if ord is None or (ord == 2 and dim is not None and isinstance(dim, int)):
        return vector_norm(A, 2, dim, keepdim)
    if ord == "fro":
        return matrix_norm(A, "fro", (-2, -1) if dim is None else dim, keepdim)
    if isinstance(dim, int) or (dim is None and A.dim() == 1):
        return vector_norm(A, ord, dim, keepdim)
    _tailor.unsupported(f"torch.linalg.norm with ord={ord!r} over a matrix", "ord='fro'")


__getattr__ = _missing_names("torch.linalg")
