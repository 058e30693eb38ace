# `.tolist()` inside forward, a graph break as in PyTorch 2.15: the list goes to the resume
# function on Python's stack (`___stack0`), each item an argument of it. An int tensor's
# list (token-shift-gpt's shift amounts, a U-Net's pads) breaks as a data-dependent
# operator and its values are guarded; a float tensor's list breaks as `tolist()` on a
# non-integer tensor and, under dynamic=True, its values are symbols. Recorded under
# PyTorch 2.15 with TORCH_LOGS=recompiles,graph_breaks (scripts/pytorch/check_script.py).
import torch
import torch.nn as nn


class Shifts(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        amounts = torch.arange(1, 4).tolist()
        y = self.proj(x)
        for a in amounts:
            y = y + a
        return y


def scaled(x):
    sums = x.sum(1).tolist()
    return x * len(sums) + sums[0]


torch.manual_seed(0)
model = Shifts()
with torch.no_grad():
    model.proj.weight.copy_(torch.arange(64.0).reshape(8, 8).sin() * 0.1)
    model.proj.bias.copy_(torch.arange(8.0).cos())
for mode in [None, True]:
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=mode, backend="eager")
    for b in [2, 3, 5]:
        with torch.no_grad():
            out = compiled(torch.arange(b * 8.0).reshape(b, 8).cos())
        print(mode, "shifts", tuple(out.shape), round(out.sum().item(), 4))

for mode in [None, True]:
    torch._dynamo.reset()
    f = torch.compile(scaled, dynamic=mode, backend="eager")
    for b in [2, 3, 3]:
        out = f(torch.arange(b * 4.0).reshape(b, 4) * 0.25)
        print(mode, "scaled", tuple(out.shape), round(out.sum().item(), 4))
