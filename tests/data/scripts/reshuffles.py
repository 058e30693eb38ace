import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.arange(32).view(1, 8, 2, 2) * 0.25 - 3
y = torch.arange(24).view(2, 3, 4) * 0.5 - 5
print(F.pixel_shuffle(x, 2))
print(nn.PixelShuffle(2)(x).shape, F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2).shape)
print(F.interpolate(y, scale_factor=2))
print(nn.Upsample(scale_factor=2, mode="nearest")(x[:, :2]))
print(F.pad(y, (2, 1), mode="reflect"))
print(F.pad(y, (1, 2, 1, 0), mode="replicate"))
print(F.pad(y, (1, 1), mode="circular"))
print(F.pad(y, (1, -1, 0, 1), value=7.0))
print(nn.ReflectionPad2d(1)(x[:, :1]))
print(nn.ZeroPad2d((1, 0, 0, 1))(x[:, :1]))
print(nn.InstanceNorm2d(8)(x * x))
print(F.instance_norm(y * y))
print(nn.GroupNorm(2, 8, affine=False)(x * x))
print(F.group_norm(y * y, 3))
print(y.expand(2, 2, 3, 4).shape, y[:, :1].expand(-1, 3, -1), y[0, :, :1].expand_as(y[0]))
print(y[:, :2, :2].repeat(1, 2, 3), y[0, 0].repeat(2, 2))
print(torch.stack([y[0], y[1] * 2], dim=1), torch.stack([y[0, 0], y[1, 0]], -1))
print(y ** 3, torch.pow(y, -2), y.abs() ** 1.5, torch.pow(y.abs(), 2.5))
print(y.var(-1), y.var((1, 2), keepdim=True, unbiased=False), torch.square(y[0]))


def block(a):
    # The same ops, compiled: the kernels compute them.
    up = F.interpolate(F.pixel_shuffle(a, 2), scale_factor=2)
    padded = F.pad(up, (2, 2, 1, 1), mode="reflect")
    norm = F.group_norm(padded, 1) + nn.InstanceNorm2d(2)(padded)
    return norm.repeat(1, 2, 1, 1) ** 3, torch.stack([a, a * 2]).unsqueeze(1).expand(-1, 3, *a.shape).sum(1)


compiled = torch.compile(block, dynamic=True)
print(compiled(x))
print(compiled(torch.arange(64).view(2, 8, 2, 2) * 0.125 - 4)[0].shape)
