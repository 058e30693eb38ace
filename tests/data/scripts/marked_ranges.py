# mark_dynamic with a range (min=, max=) under every op that may narrow or guard the marked
# size: PyTorch raises ConstraintViolationError where a generated guard is not implied by the
# range (a branch, a convolution's or pool's window, a view's divisibility, a slice's end)
# or where the size is specialised (max_pool1d), and compiles otherwise.
import torch
import torch.nn as nn
import torch.nn.functional as F

class Branch(nn.Module):
    def forward(self, x):
        if x.shape[0] > 50:
            return x * 2
        return x + 1

class Pool(nn.Module):
    def forward(self, x):
        return F.max_pool1d(x, 4)

class View(nn.Module):
    def forward(self, x):
        return x.view(4, -1)

class Slice(nn.Module):
    def forward(self, x):
        return x[:, :8] + 1

class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 5)
    def forward(self, x):
        return self.conv(x)

class Both(nn.Module):
    def forward(self, x, y):
        return x + y

def run(name, model, xs, marks, dynamic=None):
    torch._dynamo.reset()
    f = torch.compile(model, backend="eager", dynamic=dynamic)
    for (i, dim, lo, hi) in marks:
        torch._dynamo.mark_dynamic(xs[i], dim, min=lo, max=hi)
    try:
        print(name, "compiles", tuple(f(*xs).shape))
    except Exception:
        print(name, "raises")

run("branch-min-only", Branch(), [torch.randn(10, 3)], [(0, 0, 2, None)])
run("branch-max-only", Branch(), [torch.randn(10, 3)], [(0, 0, None, 100)])
run("branch-above", Branch(), [torch.randn(60, 3)], [(0, 0, 2, 100)])
run("pool", Pool(), [torch.randn(1, 2, 16)], [(0, 2, 2, 100)])
run("pool-min4", Pool(), [torch.randn(1, 2, 16)], [(0, 2, 4, 100)])
run("view", View(), [torch.randn(8, 3)], [(0, 0, 2, 100)])
run("slice", Slice(), [torch.randn(2, 16)], [(0, 1, 2, 100)])
run("slice-min8", Slice(), [torch.randn(2, 16)], [(0, 1, 8, 100)])
run("conv-min3", Conv(), [torch.randn(1, 2, 10)], [(0, 2, 3, 100)])
run("conv-true", Conv(), [torch.randn(1, 2, 10)], [(0, 2, 2, 100)], True)
run("both-equal", Both(), [torch.randn(10), torch.randn(10)], [(0, 0, 2, 100)])
run("both-marked-different-ranges", Both(), [torch.randn(10), torch.randn(10)], [(0, 0, 2, 100), (1, 0, 5, 50)])
run("both-bcast", Both(), [torch.randn(10, 1), torch.randn(1, 10)], [(0, 0, 2, 100)])
