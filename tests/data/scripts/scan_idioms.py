# Idioms a scan of unseen model files met (pytorchcv, mixture-of-experts, rtdl, torchfm,
# coca, soft-moe, hourglass-transformer, mega, pytorch-forecasting, local-attention).
import math
import os
from inspect import isclass, isfunction

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from einops import pack, unpack
from torch import nn


def get_model(name, pretrained=False, root=os.path.join("~", ".torch", "models")):
    return name, root


def default(val, d):
    return val if val is not None else (d() if isfunction(d) else d)


print(get_model("resnet"), os.path.splitext("a/b.pth"), os.path.exists("x"), isclass(nn.Linear))
print(default(None, lambda: 3), default(None, 4), dist.is_available(), dist.is_initialized())
legacy = torch.Tensor(2, 3)
print(legacy.shape, legacy.dtype, torch.Tensor([1.0, 2.0]), torch.Tensor(torch.Size([1, 2])).shape)
offsets = np.array((0, *np.cumsum([16, 8, 4])[:-1]), dtype=np.long)
print(offsets, np.cumsum(np.arange(6).reshape(2, 3), axis=1), np.cumsum([0.5, 1.5]))
print(torch.arange(6).view(3, 2).repeat_interleave(torch.tensor([2, 0, 1]), dim=0))


class Idioms(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.ones(4))
        self.output_size = [2]

    def forward(self, x):
        n = x.shape[1]
        ratio = n / 4
        if not ratio.is_integer():
            x = F.pad(x, (0, 0, 0, math.ceil(ratio) * 4 - n))
        token = self.cls.view(1, 1, -1).expand(len(x), 1, -1)
        decay = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
        packed, shapes = pack([token, x * decay[None, :, None]], "b * d")
        first, rest = unpack(packed.softmax(-1), shapes, "b * d")
        picked = x[:, :3].repeat_interleave(torch.tensor(self.output_size), dim=1)
        top = x.topk(2, dim=-1).values
        return first, rest, picked, top


with torch.no_grad():
    model = Idioms()
    x = torch.cos(torch.arange(2 * 8 * 4).float().view(2, 8, 4))
    print(model(x))
    compiled = torch.compile(model, backend="eager", dynamic=True)
    for batch, length in ((2, 8), (3, 8), (3, 12), (3, 10)):
        outs = compiled(torch.sin(torch.arange(batch * length * 4).float().view(batch, length, 4)))
        print([tuple(o.shape) for o in outs], outs[1].sum().round())
