"""torch.nn: modules whose parameters are named as PyTorch names them, and the layers."""

from torch._tensor import _missing_names
from torch.nn import functional, init
from torch.nn.modules import (
    AdaptiveAvgPool2d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    GELU,
    GroupNorm,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    Module,
    ModuleDict,
    ModuleList,
    Parameter,
    ReLU,
    ReLU6,
    Sequential,
    SiLU,
    Sigmoid,
    Softmax,
    Tanh,
)


__getattr__ = _missing_names("torch.nn")
