import contextlib

import torch
import torch.nn as nn

# Constants and device attributes, as CPU PyTorch answers them.
print(torch.inf, -torch.inf, torch.nan, torch.pi, torch.e, torch.inf > 1e38)
x = torch.cos(torch.arange(12).view(3, 4) * 0.7) * 3
print(x.is_cuda, x.is_cpu, x.device, x.get_device(), x.data.shape)

# Factories: full_like, and sizes given as size=.
print(torch.full_like(x, 2.5), torch.full_like(x, 7, dtype=torch.int64),
      torch.full_like(x.long(), 1.5))
print(torch.full_like(x, -torch.inf)[0], torch.full_like(x, True).dtype)
print(torch.zeros(size=(2, 3)), torch.ones(size=[2]), torch.empty(size=(1, 2)).shape,
      torch.randn(size=(2, 2)).shape, torch.rand(size=(3,)).shape)

# Products, rolls and repeats.
print(x.mm(x.t()), torch.mm(x[:, :2], x[:2]))
print(torch.roll(x, 1), x.roll(-1, 0), x.roll((1, -2), (0, 1)))
print(x.roll(5, 1), torch.roll(x, 3), x.long().roll(2, dims=1), x.roll(-7, -1))
print(x.repeat_interleave(2), torch.repeat_interleave(x, 2, dim=0), x.repeat_interleave(3, -1))
print(x[0].repeat_interleave(1), x.repeat_interleave(2, dim=1).shape)


# Definition time: a context manager, initialisers and in-place fills of module state.
@contextlib.contextmanager
def scaled(factor):
    print("enter", factor)
    try:
        yield factor * 2
    finally:
        print("exit", factor)


@scaled(5)
def decorated():
    print("decorated")


decorated()
with contextlib.suppress(ValueError), scaled(3) as twice:
    print("inside", twice)
    raise ValueError("swallowed")
with contextlib.nullcontext(7) as seven:
    print("null", seven)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)
        nn.init.trunc_normal_(self.proj.weight, std=0.02)
        self.proj.bias.data.zero_()
        self.mix = nn.Linear(width, width)
        self.mix.weight.data.fill_(0.125)
        nn.init.zeros_(self.mix.bias)
        self.gain = nn.Parameter(torch.empty(size=(width,)))
        self.gain.data.fill_(0.5)
        self.register_buffer("offset", torch.zeros(1, width))
        self.offset.fill_(-0.25)

    def forward(self, x):
        h = self.mix(x.roll(1, 0)) * self.gain + self.offset
        return torch.mm(h, x.t()) + torch.full_like(h[:, :1], torch.pi)


torch.manual_seed(0)
block = Block(4)
weight = block.proj.weight
print(weight.shape, weight.abs().amax().item() < 0.2, weight.abs().amax().item() > 0.0)
print(block.proj.bias.data, block.mix.bias.data, block.gain.data, block.offset)
compiled_block = torch.compile(block)
with torch.no_grad():
    for rows in (3, 5, 6):
        inputs = torch.sin(torch.arange(rows * 4).view(rows, 4) * 0.3)
        print(compiled_block(inputs))


def shuffle(a, b):
    # A roll by 1 or -1 slices a symbolic size; by more it picks positions by index.
    rolled = a.roll(1, 0) + a.roll(-1, 1) * 2 + a.roll(3, 1) * 3 + a.roll(-2) * 4
    return rolled.mm(b.t()), b.repeat_interleave(2, dim=1), a.repeat_interleave(2) - torch.e


compiled = torch.compile(shuffle, dynamic=True)
for n, m, k in ((3, 4, 2), (5, 6, 3), (2, 3, 4), (1, 5, 2)):
    a = torch.cos(torch.arange(n * m).view(n, m) * 0.9)
    b = torch.sin(torch.arange(k * m).view(k, m) * 0.5)
    print(compiled(a, b))
