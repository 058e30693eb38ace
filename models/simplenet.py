import torch
import torch.nn as nn
import time

device = "cuda" if torch.cuda.is_available() else "cpu"


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
