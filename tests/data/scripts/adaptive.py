import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.cos(torch.arange(48).view(2, 2, 3, 4) * 0.7)
print(F.adaptive_max_pool2d(x, 1), nn.AdaptiveMaxPool2d((1, 1))(x[0]))
print(nn.AdaptiveAvgPool1d(1)(x[0]), F.adaptive_max_pool1d(x[0], 1))


def squeeze_excite(a):
    # A squeeze-and-excitation gate from both global pools, for a symbolic image size.
    gate = torch.sigmoid(F.adaptive_avg_pool2d(a, 1) + F.adaptive_max_pool2d(a, 1))
    return a * gate


compiled = torch.compile(squeeze_excite, dynamic=True)
print(compiled(x), compiled(torch.sin(torch.arange(60).view(1, 3, 4, 5) * 0.9)))
