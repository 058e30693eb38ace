# Python ints and bools passed to compiled code: Dynamo specialises an int first
# (EQUALS_MATCH), makes it a SymInt once it changes, and always specialises a bool.
import torch
import torch.nn as nn


class Repeat(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, times):
        for _ in range(times):
            x = self.proj(x)
        return x


def head(x, n, double):
    y = x[:n] * n
    if double:
        y = y * 2
    return y


torch.manual_seed(0)
model = torch.compile(Repeat())
x = torch.randn(2, 8)
for times in [1, 2, 2, 3]:
    print(times, tuple(model(x, times).shape))

compiled = torch.compile(head)
x = torch.arange(10).float()
for n, double in [(2, False), (3, False), (5, False), (5, True), (4, True), (1, True)]:
    print(n, double, compiled(x, n, double))
