import torch
import torch.nn.functional as F

x = torch.arange(24).view(1, 2, 3, 4) * 0.25 - 2.9
print(F.pad(x, (1, 2)))
print(F.pad(x, (-1, 2, 1, -2), value=-1.5))
print(F.pad(x, [0, 0, 2, 0, 1, 0]))


def up(x1, x2):
    # milesial's U-Net: the upsampled map is padded to its skip connection's size, by
    # amounts that are symbolic under dynamic=True.
    diffY = x2.size()[2] - x1.size()[2]
    diffX = x2.size()[3] - x1.size()[3]
    x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
    return torch.cat([x2, x1], dim=1)


def crop(a):
    # A symbolic negative pad crops.
    return F.pad(a, [-(a.size(3) // 3), 1], value=0.5) * 2


compiled_up = torch.compile(up, dynamic=True)
print(compiled_up(x[:, :1, :2, :2], x[:, 1:]))
print(compiled_up(x[:, :1, 1:, 1:], x[:, 1:] + 10))
compiled_crop = torch.compile(crop, dynamic=True)
print(compiled_crop(x))
print(compiled_crop(torch.arange(14).view(1, 1, 2, 7) * 0.5))
