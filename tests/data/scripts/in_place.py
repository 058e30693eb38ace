import math

import torch
import torch.nn as nn

# Definition time: writes into tensors a model builds its tables and state with.
pe = torch.zeros(6, 8)
position = torch.arange(0, 6).unsqueeze(1).float()
div_term = torch.exp(torch.arange(0, 8, 2).float() * (-math.log(10000.0) / 8))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term)
print(pe)
grid = torch.arange(12).view(3, 4)
grid[1] = -1
grid[:, 1:3] = grid[:, 1:3] * 10
grid[..., -1] = 7
grid[grid > 20] = 0
print(grid, grid.dtype)
w = torch.ones(2, 3)
w.mul_(0.5).add_(torch.arange(3).float())
w.masked_fill_(w > 2, -1.0).clamp_(min=-0.5)
print(w, w.zero_(), torch.ones(4).fill_(3), torch.empty(2, 2).copy_(torch.tensor([1.0, 2.0])))
counts = torch.arange(6)
print(counts // 4, counts % 4, -counts // 4, 7 // (counts + 1), counts.float() % 2.5, 9 % (counts + 2))
try:
    counts.add_(0.5)
except RuntimeError as error:
    print("RuntimeError:", error)
try:
    w.copy_(torch.ones(3, 3))
except RuntimeError as error:
    print("RuntimeError:", error)


class Positional(nn.Module):
    def __init__(self, width, length):
        super().__init__()
        table = torch.zeros(length, width)
        steps = torch.arange(0, length).unsqueeze(1).float()
        table[:, 0::2] = torch.sin(steps * 0.5)
        table[:, 1::2] = torch.cos(steps * 0.25)
        self.register_buffer("table", table.unsqueeze(0))
        self.proj = nn.Linear(width, width)
        with torch.no_grad():
            self.proj.weight.copy_(torch.sin(torch.arange(width * width).view(width, width) * 0.7))
        self.proj.weight.data.mul_(0.5)
        self.proj.bias.data.zero_()
        with torch.no_grad():
            self.proj.bias.copy_(torch.linspace(-0.2, 0.2, width))

    def forward(self, x):
        h = self.proj(x) + self.table[:, : x.size(1)]
        h.masked_fill_(h > 0.75, 0.75)
        h.mul_(2).sub_(0.25)
        h[:, 0] = -1.0
        h[..., -1] = h[..., 0] * 3
        h[:, 1:, 1:3] = 0.5
        out = torch.zeros_like(h)
        out.copy_(h)
        out.clamp_(min=-0.5)
        out[out < -0.25] = 0.0
        # A lookup in a tensor the graph computed, not module state.
        return out + out.index_select(2, torch.tensor([7, 0, 1, 1, 3, 2, 6, 5])) * 0.5


def scan(x):
    # A recurrence writing one time step at a time into a buffer of the call's own.
    steps = torch.zeros(x.size(0), x.size(1), 2)
    state = torch.zeros(x.size(0), 2)
    for t in range(x.size(1)):
        state = torch.tanh(state + x[:, t, :2])
        steps[:, t] = state
    return steps


torch.manual_seed(0)
model = Positional(8, 16).eval()
print(model.proj.bias.data, model.proj.weight.data[0])
compiled = torch.compile(model)
compiled_scan = torch.compile(scan, dynamic=True)
with torch.no_grad():
    for length in (5, 7, 9):
        x = torch.cos(torch.arange(2 * length * 8).view(2, length, 8) * 0.1)
        y = compiled(x)
        print(tuple(y.shape), round(y.sum().item(), 3), y[1, -1])
        print(round(compiled_scan(x[:, :3].contiguous()).sum().item(), 5) if length < 9 else compiled_scan(x[:, :4].contiguous())[1])
