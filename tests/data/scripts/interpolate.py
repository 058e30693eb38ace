import torch
import torch.nn as nn
import torch.nn.functional as F

# Multiples of 1/4 mixed by weights of 1/4, 3/4 or 1/2: every value is exact, in PyTorch's
# float arithmetic and in Tailor's integer one alike.
x = torch.arange(24).view(1, 2, 3, 4) * 0.25 - 2.75
print(F.interpolate(x, scale_factor=2, mode="bilinear"))
print(F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True))
print(nn.UpsamplingBilinear2d(size=(5, 7))(x))
print(F.interpolate(x, size=(3, 2), mode="bilinear"))
print(F.interpolate(x[0], scale_factor=2, mode="linear"))


def up(a, skip):
    # Segmentation heads (and U-Net's bilinear variant): resize to the skip connection's
    # size, symbolic under dynamic=True.
    return F.interpolate(a, size=skip.shape[2:], mode="bilinear", align_corners=False) + skip


def corners(a):
    return F.interpolate(a, size=(2 * a.size(2) - 1, 2 * a.size(3) - 1), mode="bilinear",
                         align_corners=True) * 2


compiled_up = torch.compile(up, dynamic=True)
print(compiled_up(x, torch.zeros(1, 2, 6, 8)))
print(compiled_up(x[:, :, :2], torch.ones(1, 2, 4, 8)))
compiled_corners = torch.compile(corners, dynamic=True)
print(compiled_corners(x))
print(compiled_corners(x[:, :1, :, :3]))
