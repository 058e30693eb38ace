# Small functions that branch on sizes, slice by them or return their input, each called
# over a sequence of shapes under every mode: the recompiles PyTorch 2.15 makes, and why.
# Among them: a dim that automatic dynamic made a symbol is never shared by duck sizing
# (B2), and a trace that records no op makes Dynamo skip the code for good (B3, B4).
import torch
import torch.nn as nn

class B1(nn.Module):
    def forward(self, x):
        if x.shape[0] > 4:
            return x * 2
        return x + 1

class B2(nn.Module):
    def forward(self, x):
        if x.shape[0] % 2 == 0:
            return x * 2
        return x + 1

class B3(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        if n == 1:
            return x
        return x[: n // 2] * 2

class B4(nn.Module):
    def forward(self, x):
        if x.shape[0] > x.shape[1]:
            return x.t()
        return x

class B5(nn.Module):
    def forward(self, x):
        if x.numel() > 64:
            return x.sum(0)
        return x.mean(0)

class B6(nn.Module):
    def forward(self, x):
        h = x.shape[-1] // 2
        return x[..., :h] + x[..., h:2 * h]

class B7(nn.Module):
    def forward(self, x):
        return x.view(x.shape[0], -1, 2).sum(-1)

class B8(nn.Module):
    def forward(self, x):
        if x.shape[1] >= 8:
            return x[:, :8]
        return torch.nn.functional.pad(x, (0, 8 - x.shape[1]))

class B9(nn.Module):
    def forward(self, x):
        return x[:, 2:] * x.shape[0]

class B10(nn.Module):
    def forward(self, x):
        return torch.cat([x, x[:1]], 0)

seqs = {
    "B1": [(3, 4), (5, 4), (6, 4), (2, 4), (8, 4)],
    "B2": [(3, 4), (4, 4), (5, 4), (6, 4), (7, 4)],
    "B3": [(2, 4), (4, 4), (1, 4), (6, 4), (3, 4)],
    "B4": [(3, 5), (4, 6), (6, 4), (7, 2), (2, 9)],
    "B5": [(4, 8), (8, 8), (16, 8), (2, 8), (9, 8)],
    "B6": [(2, 8), (2, 10), (2, 11), (3, 12), (3, 7)],
    "B7": [(2, 8), (3, 8), (4, 10), (5, 6)],
    "B8": [(2, 4), (2, 10), (2, 8), (2, 12), (2, 6)],
    "B9": [(2, 5), (3, 5), (4, 6), (2, 3), (2, 2)],
    "B10": [(2, 4), (3, 4), (5, 4), (1, 4), (2, 6)],
}
for name, shapes in seqs.items():
    for mode in [None, True, False]:
        torch._dynamo.reset()
        f = torch.compile(globals()[name](), backend="eager", dynamic=mode)
        for s in shapes:
            print(name, mode, tuple(f(torch.randn(*s)).shape))
