import torch
import torch.nn.functional as F

x = torch.arange(72).view(2, 4, 3, 3) * 0.1 - 2.95
w = torch.arange(108).view(4, 3, 3, 3) * 0.05 - 2
b = torch.arange(3) * 0.5
print(F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1))
print(F.conv_transpose2d(x, w[:, :, :2, :2], stride=2))
wg = torch.arange(32).view(4, 2, 2, 2) * 0.1 - 1.5
print(F.conv_transpose2d(x, wg, groups=2, dilation=2))
x1 = torch.arange(40).view(2, 4, 5) * 0.2 - 2
w1 = torch.arange(24).view(4, 2, 3) * 0.1 - 1
print(F.conv_transpose1d(x1, w1, stride=3, padding=2))


def up(a, weight):
    # U-Net's upsampling step, compiled: the kernels compute it.
    return F.conv_transpose2d(a, weight, stride=2, padding=1, output_padding=1).relu()


compiled = torch.compile(up, dynamic=True)
print(compiled(x, w))
print(compiled(torch.arange(240).view(3, 4, 5, 4) * 0.01, w))
