# BreakNet (models/break_net.py, its branch always taken whatever the weights): a print and
# a branch on a tensor's value break forward's graph, and each resume function is a frame of
# its own (the eager back end, dynamic=None, batches 8, 16, 16). Its PyTorch 2.15 trace is
# break_net.log.
import torch
import torch.nn as nn


class BreakNet(nn.Module):
    def __init__(self, d_in=64, d_hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_in)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("hidden", h.shape)
        if h.mean() >= 0:
            h = h * 2
        return self.fc2(h)


model = BreakNet().eval()
compiled = torch.compile(model, backend="eager")
with torch.no_grad():
    for batch in [8, 16, 16]:
        print(batch, tuple(compiled(torch.randn(batch, 64)).shape))
