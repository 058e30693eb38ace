"""Functions that take Python ints and bools besides tensors: what Dynamo guards on them.

Each is compiled with every `dynamic` mode by `scripts/pytorch/check_values.py` (real
PyTorch) and by `tests/it/values.rs` (Tailor), with the same calls.
"""

import torch


def scale(x, n):
    return x * n


def head(x, n):
    return x[:n] + 1


def branch(x, n):
    if n > 3:
        return x * 2
    return x + 1


def flag(x, b):
    if b:
        return x * 2
    return x + 1


def rows(x, n):
    return x.view(n, 4)


def grow(x, n):
    return x.sum() + torch.ones(n)


def count(x, n):
    return torch.arange(n) + x.sum()


def repeat(x, n):
    y = x
    for _ in range(n):
        y = y * 2
    return y
