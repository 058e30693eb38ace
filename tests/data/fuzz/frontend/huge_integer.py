# shapes: x=2,64
# Found by the fuzzer: one operation on a huge integer ran for minutes inside one line, out of
# the step budget's sight. Tailor's Python bounds integers to 2**20 bits (`bounds.rs`).
import torch
import torch.nn as nn


class SimpleNet(nn.Module):
    def __init__(self, d_in=64, d_hidden=10**2147483648):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(d_in, d_hidden),
            nn.ReLU(),
            nn.Linear(d_hidden, d_in),
        )

    def forward(self, x):
        return self.layers(x) + (1 << 2147483648) + 3 ** (2 ** 40)
