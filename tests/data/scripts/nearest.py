import torch
import torch.nn as nn
import torch.nn.functional as F

# Nearest to a size: output position i reads input position floor(i * float32(in / out)),
# the quotient and the product each rounded to float32, as PyTorch's kernels compute it. The
# inputs hold their positions, so each printed value is the position read. Exact integer
# arithmetic would differ at 2 -> 82 (position 41), 3 -> 123 (41 and 82) and 4 -> 164.
for size_in, size_out in [(5, 7), (7, 5), (6, 4), (10, 3), (2, 82), (3, 123), (4, 164)]:
    line = torch.arange(size_in).view(1, 1, size_in) * 1.0
    print(size_in, size_out, F.interpolate(line, size=size_out).flatten().long().tolist())

x = torch.arange(24).view(1, 2, 3, 4) * 0.5
print(F.interpolate(x, size=(5, 7)))
print(nn.Upsample(size=(2, 6))(x))
print(F.interpolate(x, size=4, mode="nearest"))


def up(a, skip):
    # U-Net's and FPN's resize to the skip connection's size, symbolic under dynamic=True.
    return F.interpolate(a, size=skip.shape[2:], mode="nearest") + skip


def line_up(a, n):
    return F.interpolate(a, size=n.size(-1))


compiled_up = torch.compile(up, dynamic=True)
print(compiled_up(x, torch.zeros(1, 2, 6, 9)))
print(compiled_up(x[:, :, :2], torch.ones(1, 2, 3, 5)))
compiled_line = torch.compile(line_up, dynamic=True)
for size_in, size_out in [(2, 82), (3, 123), (7, 5)]:
    line = torch.arange(size_in).view(1, 1, size_in) * 1.0
    print(size_in, size_out, compiled_line(line, torch.zeros(size_out)).flatten().long().tolist())
