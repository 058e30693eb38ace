# torch.arange with float bounds or step: float32 values start + i * step, whole float
# bounds as the integer range, negative steps, and PyTorch's errors where the step cannot
# get there; the cosine windows (hann, hamming, blackman).
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

for window in [torch.hann_window, torch.hamming_window, torch.blackman_window]:
    for length, periodic in [(0, True), (1, True), (5, True), (5, False), (8, True)]:
        w = window(length, periodic)
        print(window.__name__, length, periodic, w.dtype, [round(v, 4) for v in w.tolist()])

for start, end, steps, base in [(0.0, 2.0, 4, 2), (-2.0, 3.0, 6, 10.0), (1.0, 1.0, 1, 3.0), (0, 1, 5, 2.718)]:
    scales = torch.logspace(start, end, steps, base=base)
    print("logspace", start, end, steps, base, scales.dtype, [round(v, 4) for v in scales.tolist()])
