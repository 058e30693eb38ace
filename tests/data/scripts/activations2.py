import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.arange(12).view(3, 4) * 0.75 - 4.1
print(F.softplus(x), nn.Softplus(beta=2, threshold=3)(x))
print(F.elu(x), nn.ELU(0.5)(x), F.celu(x, 2.0), nn.SELU()(x))
print(F.mish(x), F.softsign(x), nn.Tanhshrink()(x), nn.LogSigmoid()(x))
print(F.glu(x), nn.GLU(0)(x[:2]))
print(F.gelu(x, approximate="tanh"), nn.GELU("tanh")(x), nn.GELU()(x))
with torch.no_grad():
    print(nn.PReLU()(x), nn.PReLU(3, init=0.1)(x.view(1, 3, 4)))


def block(a):
    # A conv net's activations (Mish, SELU, GELU's tanh form) for a symbolic batch.
    return F.mish(a) + F.selu(a) * F.gelu(a, approximate="tanh")


compiled = torch.compile(block, dynamic=True)
print(compiled(x), compiled(x[:2] * 2))
print(nn.ELU(), nn.Softplus(2, 3), nn.GLU(), nn.AdaptiveMaxPool2d(1), nn.PReLU(3), nn.SELU())
print(x.amin(1), torch.amin(x, 0, keepdim=True), x.max(), torch.min(x), x.min(), torch.max(x, -x))


def extremes(a):
    # amin, and max/min of every element or of two tensors, on a symbolic batch.
    return a.amin(-1, keepdim=True) + torch.max(a) - a.min() + torch.min(a, a * 0.5)


compiled = torch.compile(extremes, dynamic=True)
print(compiled(x), compiled(x[:2] * 2))
