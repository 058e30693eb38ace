# shapes: x=8,64
import torch


def f(x):
    y = x.view(-1, 2147483648)
    return torch.ones(10**12, 10**12) + y.sum()
