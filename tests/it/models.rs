//! Model sources shared by the end-to-end tests, written as a learner would paste them.

/// The material's `SimpleNet` (`models/simplenet.py`).
pub const SIMPLENET: &str = tailor::SIMPLENET_SOURCE;

/// `f(x) = x + 1`, the function of most rows of pytorch-semantics.md §9.
pub const ADD_ONE: &str = "\
import torch


def f(x):
    return x + 1
";

/// §9's 2-D function `f(x) = (x * 2).sum(-1)`, fed `ones(B, 16)`.
pub const SUM_ROWS: &str = "\
import torch


def f(x):
    return (x * 2).sum(-1)
";

/// The Dynamic Shapes guide's specialization example (`==10`, `<=30`: "three graphs").
pub const SPECIALIZE: &str = "\
import torch


def g(x):
    if x.shape[0] == 10:
        return x * 10
    if x.shape[0] <= 30:
        return x * 200
    return x * 300
";

/// A branch on the size: `6 <= s` when taken, `2 <= s <= 5` when not.
pub const BRANCH_GT5: &str = "\
import torch


def f(x):
    if x.shape[0] > 5:
        return x * 2
    return x + 1
";

/// `nn.Linear(64, 32)`: the weight pins the feature dim (§9 row 20).
pub const LINEAR_64_32: &str = "\
import torch
import torch.nn as nn


class Proj(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return self.fc(x)
";

/// Two inputs added elementwise: broadcasting equates their sizes.
pub const ADD_XY: &str = "\
import torch


def f(x, y):
    return x + y
";

/// `x.view(-1, 4)`: a divisibility guard.
pub const VIEW_4: &str = "\
import torch


def f(x):
    return x.view(-1, 4)
";

/// `a @ b`: the contraction dims must agree.
pub const MATMUL: &str = "\
import torch


def f(a, b):
    return a @ b
";

/// pytorch-semantics.md §6.4: `Conv1d(4, 8, kernel_size=5, stride=2, padding=1)`, output
/// length `(L - 3)//2 + 1`.
pub const CONV1D_K5_S2: &str = "\
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=5, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)
";

/// The material's Conv1d example: `padding=1, kernel_size=3, stride=1` keeps the length.
pub const CONV1D_K3_S1: &str = "\
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        return self.conv(x)
";

/// The material's `(B, L, D)` sequence example: a projection over `D`, attention-like
/// scores over `L`, and a mean over the sequence.
pub const SEQUENCE: &str = "\
import torch
import torch.nn as nn


class SeqNet(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        scores = h @ h.transpose(1, 2)
        return scores.softmax(-1).mean(1)
";
