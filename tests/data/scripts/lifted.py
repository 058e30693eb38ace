# Tensors a compiled function reads without receiving them: module-level tensors (G['W'])
# and a module's plain tensor attribute (L['self'].A). Dynamo lifts them into the graph as
# inputs of their own, with a TENSOR_MATCH each and a place in NO_TENSOR_ALIASING; under
# dynamic=True their sizes are symbols too, duck-sized with the arguments'
# (G['W'].size()[0] == L['x'].size()[1]). Recorded under PyTorch 2.15 with
# TORCH_LOGS=recompiles,guards (scripts/pytorch/check_script.py).
import torch
import torch.nn as nn

torch.manual_seed(0)
W = torch.randn(16, 8)
V = torch.randn(8)


class Glob(nn.Module):
    def forward(self, x):
        return (x @ W) + V


class Attr(nn.Module):
    def __init__(self):
        super().__init__()
        self.A = torch.randn(16, 3)

    def forward(self, x):
        return (x @ self.A).relu()


class Table(nn.Module):
    # A tensor computed in __init__ and kept as a plain attribute (SimpleViT's sin-cos
    # position embedding): lifted like any tensor attribute.
    def __init__(self):
        super().__init__()
        self.T = torch.sin(torch.arange(16.0).unsqueeze(1) * torch.arange(1.0, 4.0))

    def forward(self, x):
        return x @ self.T


def rows(x):
    return x.reshape(-1, V.shape[0]) * 2


for mode in [None, True]:
    for model in [Glob(), Attr(), Table()]:
        torch._dynamo.reset()
        f = torch.compile(model, dynamic=mode)
        for n in [4, 5, 6]:
            x = torch.randn(n, 16)
            out = f(x)
            assert (out - model(x)).abs().amax().item() < 1e-5
            print(mode, type(model).__name__, n, tuple(out.shape))

for mode in [None, True]:
    torch._dynamo.reset()
    g = torch.compile(rows, dynamic=mode)
    for n in [4, 6]:
        x = torch.randn(n, 8)
        out = g(x)
        assert (out - rows(x)).abs().amax().item() < 1e-5
        print(mode, "rows", n, tuple(out.shape))
