# Graph breaks, as a learner meets them: a print inside forward, a branch on a tensor's
# value, and an int read from a tensor. Recorded under PyTorch 2.15 with
# TORCH_LOGS=recompiles,graph_breaks (scripts/pytorch/check_script.py).
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        x = self.fc1(x)
        print("hidden", x.shape)
        return self.fc2(x)


def branch(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def counted(x):
    n = int(x[0, 0].item())
    h = x.relu()
    return h[:, :n] * 3


torch.manual_seed(0)
model = Net()
for mode in [None, True, False]:
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=mode)
    for b in [2, 3, 5]:
        print(mode, "net", tuple(compiled(torch.ones(b, 4)).shape))

for mode in [None, True]:
    torch._dynamo.reset()
    f = torch.compile(branch, dynamic=mode)
    for b, sign in [(2, 1), (3, 1), (3, -1), (5, -1), (4, 1)]:
        print(mode, "branch", f(sign * torch.ones(b, 4)).sum().item())

torch._dynamo.reset()
g = torch.compile(counted)
for b in [2, 3, 4]:
    x = torch.cat([torch.full((b, 1), 2.0), torch.ones(b, 3)], dim=1)
    print("counted", tuple(g(x).shape))
