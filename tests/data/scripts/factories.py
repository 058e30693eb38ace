# torch.arange with float bounds or step: float32 values start + i * step, whole float
# bounds as the integer range, negative steps, and PyTorch's errors where the step cannot
# get there.
# Recorded by running it under PyTorch 2.15 (tests/data/pytorch/factories.txt).
import torch

for args in [(16.0,), (1.0, 4.0), (0, 1, 0.1), (0.5, 3.2, 0.7), (5, 0, -1.5), (2, 3.5),
             (0.0, 1.0, 0.25)]:
    t = torch.arange(*args)
    print(args, t.dtype, tuple(t.shape), [round(v, 4) for v in t.tolist()])

for args in [(0, 2, 0.5), (0.5, 3, 1), (0.5, 3.7, 0.9), (1.7, 6, 1.5)]:
    print(args, torch.arange(*args, dtype=torch.int64).tolist())
table = torch.sin(torch.arange(16.0).unsqueeze(1) * torch.arange(1.0, 4.0))
print(tuple(table.shape), round(table.sum().item(), 4))

print(torch.arange(10, 0, -3).tolist(), torch.arange(5, -1, -2).dtype)

for args in [(3.0, 1.0), (0.0, 1.0, 0.0), (1, 0, 0.5), (3, 1), (0, 4, 0)]:
    try:
        torch.arange(*args)
    except RuntimeError as e:
        print(args, "RuntimeError:", e)
