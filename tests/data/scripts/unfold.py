import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.arange(2 * 3 * 5 * 6).view(2, 3, 5, 6) * 0.25 - 20
print(F.unfold(x, 2))
print(F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 3)))
print(nn.Unfold(kernel_size=3, stride=2)(x[0]))
cols = F.unfold(x, 2, padding=1, stride=2)
print(F.fold(cols, (5, 6), 2, padding=1, stride=2))
print(nn.Fold((5, 6), 3, dilation=1, padding=0, stride=1)(F.unfold(x[:, :1], 3)))
print(F.fold(F.unfold(x, (2, 2), stride=(2, 3)), (5, 6), (2, 2), stride=(2, 3)))


def patches(a):
    # The same ops, compiled over symbolic sizes: PiT's patch embedding, then its inverse.
    blocks = nn.Unfold(kernel_size=4, stride=2)(a)
    return blocks.transpose(1, 2), F.fold(blocks, (8, 8), 4, stride=2)


compiled = torch.compile(patches, dynamic=True)
print(compiled(x[:, :, :5, :5].repeat(1, 1, 2, 2)[:, :, :8, :8]))
print([t.shape for t in compiled(torch.arange(3 * 2 * 8 * 8).view(3, 2, 8, 8) * 0.5)])
