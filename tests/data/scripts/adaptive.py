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

# To other sizes: larger, smaller, uneven windows, None keeping a dim, both kinds.
y = torch.cos(torch.arange(2 * 3 * 7 * 5).float().view(2, 3, 7, 5) * 0.37)
print(F.adaptive_avg_pool2d(y, (3, 2)), nn.AdaptiveMaxPool2d((4, 3))(y))
print(F.adaptive_avg_pool2d(y, (6, 4))[0, 0], nn.AdaptiveAvgPool2d((None, 2))(y)[1, 2],
      F.adaptive_max_pool2d(y[0], (2, None))[1], nn.AdaptiveAvgPool2d(7)(y[0, :1, :1, :1]))
print(F.adaptive_avg_pool2d(y, (7, 5)).equal(y), F.adaptive_avg_pool2d(y[:, :, :6, :4], (3, 2)))
print(nn.AdaptiveAvgPool1d(3)(y[0, 0]), F.adaptive_max_pool1d(y[:, 0], 4)[1])


def pyramid(a):
    # A pyramid of pools (PSPNet) and a VGG-style head, for a symbolic image size.
    pooled = [F.adaptive_avg_pool2d(a, s) for s in (1, 2, 3)]
    return (pooled[1].sum() + pooled[2].mean(), F.adaptive_max_pool2d(a, (3, 2)),
            F.adaptive_avg_pool1d(a.flatten(2), 5))


compiled = torch.compile(pyramid, dynamic=True)
print(compiled(y), compiled(torch.sin(torch.arange(2 * 3 * 9 * 4).float().view(2, 3, 9, 4))))
print(compiled(torch.sin(torch.arange(3 * 3 * 2 * 2).float().view(3, 3, 2, 2))))
