# Python float arguments, as Dynamo guards them: a constant first (EQUALS_MATCH), then,
# once it changes (or under dynamic=True), a symbolic float whose comparisons are guards;
# and a float read by .item() across a graph break. Recorded under PyTorch 2.15 with
# TORCH_LOGS=recompiles (scripts/pytorch/check_script.py).
import torch


def scale(x, f):
    return x * f


def branch(x, f):
    if f > 1.0:
        return x * 2
    return x + f


def mean_scaled(x):
    s = x.sum().item()
    return x * s


for mode in [None, True, False]:
    torch._dynamo.reset()
    g = torch.compile(scale, dynamic=mode)
    for v in [2.0, 3.0, 4.5, 3.0]:
        print(mode, "scale", v, g(torch.ones(3), v).tolist())

for mode in [None, True, False]:
    torch._dynamo.reset()
    g = torch.compile(branch, dynamic=mode)
    for v in [2.0, 3.0, 0.5, 0.25, 1.5]:
        print(mode, "branch", v, g(torch.ones(3), v).tolist())

torch._dynamo.reset()
h = torch.compile(mean_scaled)
for b in [2, 2, 3]:
    print("mean_scaled", b, h(torch.ones(b, 2)).tolist())
