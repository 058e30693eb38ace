import torch
import torch.nn as nn
import torch.nn.functional as F

x = torch.arange(12).view(3, 4) * 0.75 - 4
print(F.leaky_relu(x, 0.2))
print(nn.LeakyReLU()(x))
print(F.relu6(x * 2))
print(nn.Hardswish()(x))
print(nn.Hardsigmoid()(x))
print(nn.Hardtanh(-2.0, 1.5)(x))
print(torch.clamp(x, min=-0.5, max=0.25))
print(x.clamp(max=0.1))
print(torch.log(x.abs() + 1))
print(torch.rsqrt(x * x + 1))
print(torch.maximum(x, x.t().t() * 0.5))
print(abs(x).minimum(x * x))
print(torch.where(x > 0, x, 0.5 * x))
print((x >= 0.5) * 1.0 + (x < -1.0) * 2.0)
print(torch.tril(torch.ones(3, 4)), x.triu(1))
print(torch.arange(2, 11, 3) * 1.0)
print(F.scaled_dot_product_attention(x.view(1, 3, 4), x.view(1, 3, 4), x.view(1, 3, 4) * 0.1, is_causal=True))
print(x.masked_fill(torch.tril(torch.ones(3, 4)) == 0, -1.0))
print([tuple(part.shape) for part in x.split(3, dim=1)], [tuple(c.shape) for c in x.chunk(2)])
