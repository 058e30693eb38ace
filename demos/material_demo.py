import torch
import torch.nn as nn
import time

device = "cuda" if torch.cuda.is_available() else "cpu"


class SimpleNet(nn.Module):
    def __init__(self, d_in=64, d_hidden=128):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(d_in, d_hidden),
            nn.ReLU(),
            nn.Linear(d_hidden, d_in),
        )

    def forward(self, x):
        return self.layers(x)


def benchmark(model, batch_sizes, runs=3):
    total = 0.0
    for bs in batch_sizes:
        x = torch.randn(bs, 64).to(device)
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x)
            total += time.perf_counter() - t0
    return total


base = SimpleNet().to(device)
model_dynamic = torch.compile(base, dynamic=True)
model_static = torch.compile(base, dynamic=False)

sizes = [8, 16, 32, 16, 8, 64, 16, 8]
benchmark(model_dynamic, [8], runs=2)
benchmark(model_static, [8], runs=2)

t_dyn = benchmark(model_dynamic, sizes)
t_sta = benchmark(model_static, sizes)
print(f"动态形状总耗时: {t_dyn:.4f}s")
print(f"静态形状总耗时: {t_sta:.4f}s")
print(f"静态/动态 = {t_sta / max(t_dyn, 1e-9):.2f}x")

for bs in [3, 7, 11]:
    x = torch.randn(bs, 64).to(device)
    assert model_dynamic(x).shape == (bs, 64)
    assert model_static(x).shape == (bs, 64)
print("多种 batch size 下输出形状均正确")
