# SimpleNet (models/simplenet.py) under the default dynamic=None and the default back end
# (inductor): batch 8 compiles static, batch 16 recompiles with the batch as a symbol, batch
# 32 hits. Its PyTorch 2.15 trace is simplenet_auto.log (scripts/pytorch/record_traces.py).
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
compiled = torch.compile(model)
with torch.no_grad():
    for batch in [8, 16, 32]:
        print(batch, tuple(compiled(torch.randn(batch, 64)).shape))
