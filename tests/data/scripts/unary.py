import math

import torch

x = torch.arange(12).view(3, 4) * 0.75 - 4.1
print(torch.sin(x), x.cos())
print(torch.erf(x * 0.5))
print(x.floor(), torch.ceil(x), (x * 2).trunc())
print(torch.round(x), torch.round(torch.arange(6) - 2.5))
print(torch.sign(x - x[1:2, 1:2]))


def gelu(a):
    # The hand-written GELU of BERT-era model files.
    return a * 0.5 * (1.0 + torch.erf(a / math.sqrt(2.0)))


D_MODEL = 4


def positions(a):
    # The Transformer's sinusoidal encoding of positions, for a symbolic sequence length.
    d = D_MODEL
    position = torch.arange(a.size(1)).unsqueeze(1) * 1.0
    frequency = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    angles = position * frequency
    encoding = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(-2)
    return a + encoding


compiled_gelu = torch.compile(gelu, dynamic=True)
print(compiled_gelu(x))
compiled_positions = torch.compile(positions, dynamic=True)
print(compiled_positions(torch.zeros(1, 3, 4)))
print(compiled_positions(torch.ones(2, 5, 4)))
