# A size divided by an int is a float in Python (PyTorch's SymFloat of IntTrueDiv):
# math.ceil / math.floor / math.trunc of it are sizes again, with no guard of their own
# (EnCodec's padding to whole frames), and a comparison of it is a guard on the size.
# Recorded under PyTorch 2.15 with TORCH_LOGS=recompiles (scripts/pytorch/check_script.py).
import math

import torch
import torch.nn.functional as F


def pad_to_frames(x, kernel=4, stride=3):
    length = x.shape[-1]
    n_frames = (length - kernel) / stride + 1
    ideal = (math.ceil(n_frames) - 1) * stride + kernel
    return F.pad(x, (0, ideal - length))


def halves(x):
    half = x.shape[0] / 2
    if half > 3:
        return x[: math.floor(half)] * 2
    return x[: math.trunc(half + 0.5 * 2)]


for mode in [True, None]:
    torch._dynamo.reset()
    f = torch.compile(pad_to_frames, dynamic=mode)
    for n in [10, 11, 12, 13, 20]:
        x = torch.randn(2, n)
        out = f(x)
        assert (out - pad_to_frames(x)).abs().amax().item() == 0
        print(mode, "pad_to_frames", n, tuple(out.shape))
    torch._dynamo.reset()
    g = torch.compile(halves, dynamic=mode)
    for n in [4, 5, 9, 12]:
        x = torch.randn(n, 3)
        out = g(x)
        assert (out - halves(x)).abs().amax().item() == 0
        print(mode, "halves", n, tuple(out.shape))
