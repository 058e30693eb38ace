# A graph break inside a submodule's forward after an einops call in that forward
# (ponder-transformer's halting check): einops imports lazily inside `rearrange`, and
# Python's import machinery runs (a frame of `<frozen importlib._bootstrap>`), which is
# library code, not the user's: forward's graph still ends at the call, as in PyTorch 2.15.
# Recorded with TORCH_LOGS=recompiles,graph_breaks (scripts/pytorch/check_script.py).
import torch
import torch.nn as nn
from einops import rearrange


class Halting(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        x = rearrange(x, "b (h d) -> b h d", h=2)
        x = self.proj(rearrange(x, "b h d -> b (h d)"))
        if torch.all(x > 100):
            return x * 2
        return x - 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.halting = Halting()

    def forward(self, x):
        return self.halting(x).relu()


torch.manual_seed(0)
model = Model()
with torch.no_grad():
    model.halting.proj.weight.copy_(torch.arange(64.0).reshape(8, 8).sin() * 0.1)
    model.halting.proj.bias.copy_(torch.arange(8.0).cos())
for mode in [None, True]:
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=mode, backend="eager")
    for b in [2, 3, 5]:
        with torch.no_grad():
            out = compiled(torch.arange(b * 8.0).reshape(b, 8).cos())
        print(mode, tuple(out.shape), round(out.sum().item(), 4))
