# Which pools keep a length symbolic under dynamic=True and which specialise it: PyTorch's
# CPU kernel for max_pool1d (without indices) reads the length as a plain int, so each new
# length recompiles; the 2-d pools, avg_pool1d and the global pools keep it symbolic.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaxPool1d(nn.Module):
    def forward(self, x):
        return F.max_pool1d(x, 4)


class ConvThenPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 3, padding=1)
        self.pool = nn.MaxPool1d(3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(self.conv(x))


class AvgPool1d(nn.Module):
    def forward(self, x):
        return F.avg_pool1d(x, 4)


class MaxPool2d(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2)


class GlobalAverage(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, 1)


for model, shapes in [
    (MaxPool1d(), [(1, 3, 16), (1, 3, 20), (1, 3, 16)]),
    (ConvThenPool(), [(1, 2, 16), (1, 2, 20)]),
    (AvgPool1d(), [(1, 3, 16), (1, 3, 20)]),
    (MaxPool2d(), [(1, 3, 16, 24), (1, 3, 20, 28)]),
    (GlobalAverage(), [(1, 3, 16, 24), (1, 3, 20, 28)]),
]:
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=True)
    for shape in shapes:
        print(type(model).__name__, tuple(compiled(torch.randn(*shape)).shape))
