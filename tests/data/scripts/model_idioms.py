import collections

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast

# Idioms of published model files, eagerly and compiled, that a scan of files Tailor had not
# seen met: each prints what PyTorch prints and compiles where PyTorch compiles.
torch.manual_seed(0)
x = torch.cos(torch.arange(2 * 3 * 5 * 6).float().reshape(2, 3, 5, 6) * 0.3)

# Average pools that count only the input (Inception, NASNet), a window as big as the map.
print(nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)(x)[0, 0])
print(F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)[1, 2])
print(F.avg_pool2d(x, kernel_size=(x.size(2), x.size(3)))[:, :, 0, 0])

# Convolutions padded by mode, and 'same' / 'valid'.
for mode in ("zeros", "reflect", "replicate", "circular"):
    conv = nn.Conv2d(3, 2, 3, padding=1, padding_mode=mode, bias=False)
    with torch.no_grad():
        conv.weight.fill_(0.1)
    print(mode, conv(x)[0, 0, :2].detach())
same = nn.Conv1d(3, 2, 4, padding="same", bias=False)
with torch.no_grad():
    same.weight.fill_(0.5)
print(same(x[:, :, 0]).shape, same(x[:, :, 0])[0].detach(), nn.Conv2d(3, 2, 3, padding="valid")(x).shape)
print(F.conv1d(x[:, :, 0], torch.ones(2, 3, 2), padding="same")[1])

# Mixed precision that does nothing on a CPU: a context and a decorator.
with torch.autocast("cuda", enabled=False):
    print(torch.amp.autocast("cuda")(lambda t: t * 2)(x[0, 0, 0]))
with autocast(enabled=True):
    print((x[0, 0, 0] + 1).dtype)

# Legacy tensor types, broadcasting, iteration and named tuples.
print(torch.FloatTensor([0.5, 1]), torch.LongTensor([1, 2]).dtype, torch.FloatTensor(2, 3).shape,
      isinstance(x, torch.FloatTensor), isinstance(x, torch.LongTensor))
a, b = torch.broadcast_tensors(x[0, :, :1, 0], x[0, 0, :, 0])
print(a.shape, b, torch.broadcast_shapes((3, 1), (1, 4), (4,)), x[0, 0, :1].broadcast_to(2, 6).shape)
first, second = x[:, 0, 0, :2]
print(first, second, [row.sum() for row in x[0, 0]], list(map(len, x[0])))
Pair = collections.namedtuple("Pair", ["low", "high"])


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.conv = nn.Conv2d(3, 3, 3, padding="same", padding_mode="reflect", bias=False)
        self.scale = nn.Parameter(torch.ones(2, 3) * 0.5)

    def forward(self, x):
        low, high = self.scale
        values, indices = self.conv(self.pool(x)).max(dim=-1)
        pair = Pair(values * low[0], indices)
        window = F.avg_pool2d(x, kernel_size=(x.size(2), x.size(3)))
        grid, _ = torch.broadcast_tensors(window, x)
        return pair.low + high[1], pair.high, grid.sum(-1)


compiled = torch.compile(Block(), dynamic=True)
for shape in [(2, 3, 5, 6), (3, 3, 5, 6), (3, 3, 7, 6)]:
    out = compiled(torch.sin(torch.arange(torch.Size(shape).numel()).float().reshape(shape)))
    print([tuple(t.shape) for t in out], out[0].sum().item() > -1e9)
