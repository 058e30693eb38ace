import torch

a = torch.arange(12).view(3, 4) * 0.5
print(a)
print(a - 2.25)
print(torch.ones(2, 3))
print(torch.ones(2, 2, 3) * 3)
print(torch.arange(30) * 0.125)
print(torch.arange(6).view(2, 3) * 1000.5)
print(torch.arange(4) * 0.00001)
print((torch.arange(5) * 1.0 + 1).sum())
print(torch.arange(2000) * 0.5)
print(torch.arange(1200).view(40, 30) * 0.25)
print(a.shape, a.size(1), a.dim())
print(a.tolist())
print(float(a.sum()))
