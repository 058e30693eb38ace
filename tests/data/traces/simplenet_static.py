# SimpleNet under dynamic=False (the eager back end): every batch compiles a static entry,
# each recompile failing the entries before it. Its PyTorch 2.15 trace is simplenet_static.log.
import torch
import torch.nn as nn


class SimpleNet(nn.Module):
    def __init__(self, d_in=64, d_hidden=128):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(d_in, d_hidden),
            nn.ReLU(),
            nn.Linear(d_hidden, d_in),
        )

    def forward(self, x):
        return self.layers(x)


model = SimpleNet().eval()
compiled = torch.compile(model, dynamic=False, backend="eager")
with torch.no_grad():
    for batch in [8, 16, 32]:
        print(batch, tuple(compiled(torch.randn(batch, 64)).shape))
