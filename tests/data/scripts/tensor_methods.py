import torch

# Methods under PyTorch's other names and short decompositions, eagerly and compiled;
# torch.X(t, ...) is t.X(...) for each.
x = torch.cos(torch.arange(12).float().reshape(3, 4) * 0.9) * 3
y = torch.sin(torch.arange(12).float().reshape(3, 4) * 0.5) * 3
print(x.eq(y.round()), torch.ne(x, 0), x.gt(0.5), x.ge(y), torch.lt(x, y), x.le(1))
print(x.greater(y), x.greater_equal(0), x.less(y), x.less_equal(0), x.not_equal(x))
print(torch.add(x, y), x.add(y, alpha=0.5), torch.mul(x, 2), torch.sub(x, y, alpha=2), torch.div(x, y))
print(x.divide(2.5, rounding_mode="floor"), x.divide(2.5, rounding_mode="trunc"),
      torch.multiply(x, y), x.subtract(y), x.negative(), torch.rsub(x, 1), torch.rsub(x, y, alpha=2))
print(x.absolute(), x.fix(), x.clip(-1, 1), x.frac(), torch.log2(x.abs() + 1),
      torch.log10(x.abs() + 1), x.cosh(), x.sinh())
print(torch.logit(torch.sigmoid(x)), (x / 4).logit(eps=0.01), x.sinc(), torch.sinc(x * 0))
z = torch.tensor([1.0, float("nan"), float("inf"), float("-inf"), -2.0])
print(z.isnan(), z.isinf(), z.isfinite(), z.isposinf(), z.isneginf(), z.nan_to_num(),
      torch.nan_to_num(z, nan=1.5, posinf=9.0, neginf=-9.0))
print(x.flip(0), torch.flip(x, [0, 1]), x.fliplr(), x.flipud(), torch.rot90(x), x.rot90(2),
      x.rot90(3, [0, 1]), x.rot90(-1))
print(x.diff(), torch.diff(x, n=2, dim=0), x.diff(prepend=y[:, :1]), x.select(1, -1),
      torch.select(x, 0, 1))
print(x.isclose(x + 1e-6), torch.allclose(x, x + 1e-3), x.equal(x.clone()), x.equal(y),
      3.0 in torch.arange(4).float(), 7 in torch.arange(4))
print(x.count_nonzero(), torch.count_nonzero(x.round(), dim=1), x.nelement(), x.element_size(),
      torch.arange(3).element_size(), torch.float32.itemsize)
v = torch.arange(4).float()
print(v.dot(v), torch.dot(v, v + 1), x.mv(v), torch.mv(x, v), v.outer(v[:2]), v.ger(v[:3]))
print((x.t() @ x).addmm(y.t(), x, beta=0.5, alpha=2), x.new_tensor([1, 2]))
b = x.reshape(1, 3, 4)
print(b.bmm(y.t().reshape(1, 4, 3)), b.baddbmm(b, torch.ones(1, 4, 4), alpha=0.5))
w = x.clone()
w.clip_(-1, 1)
w.negative_()
print(w, torch.isnan(z), torch.isinf(z), torch.eq(x, x))


def methods(a, b):
    return (a.flip(-1) + a.rot90(2, [1, 2]) * a.gt(b) - a.diff(dim=-1, prepend=b[..., :1]),
            a.divide(b.abs() + 1, rounding_mode="floor") + a.sinc() + a.logit(0.1),
            torch.select(a, 1, -1).nan_to_num() * a.count_nonzero(dim=1))


compiled = torch.compile(methods, dynamic=True)
a = torch.cos(torch.arange(24).float().reshape(2, 3, 4))
print(compiled(a, a.sin()))
a = torch.cos(torch.arange(30).float().reshape(2, 3, 5) * 0.7)
print(compiled(a, a * 2))
