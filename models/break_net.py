import torch
import torch.nn as nn


class BreakNet(nn.Module):
    """SimpleNet with two graph breaks: a print, then a branch."""

    def __init__(self, d_in=64, d_hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_in)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("hidden", h.shape)
        if h.mean() > 0:
            h = h * 2
        return self.fc2(h)
