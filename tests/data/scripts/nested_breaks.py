# Graph breaks inside functions that forward calls: a helper whose `.item()` breaks, and a
# submodule whose forward prints. Dynamo ends forward's graph at each call, compiles the
# called function's frame on its own, and resumes forward after the call
# (torch_dynamo_resume_in_forward_at_<line of the call>). Recorded under PyTorch 2.15 with
# TORCH_LOGS=recompiles,graph_breaks (scripts/pytorch/check_script.py).
import torch
import torch.nn as nn


def fill(module):
    # Weights both sides compute alike (cosines of ramps), given as parameters.
    for i, (name, p) in enumerate(list(module.named_parameters())):
        ramp = torch.arange(p.numel()).view(*p.shape) * (0.7 + 0.1 * i)
        owner, _, leaf = name.rpartition(".")
        setattr(module.get_submodule(owner), leaf, nn.Parameter(torch.cos(ramp) * 0.4))
    return module.eval()


def helper(x):
    y = x * 2
    n = y.sum().item()
    return y + n


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        x = self.fc(x)
        print("inner", x.shape)
        return x.relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.inner = Inner()
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        x = self.a(x)
        x = helper(x)
        x = x - 1
        x = self.inner(x)
        return self.b(x)


model = fill(Net())
with torch.no_grad():
    for mode in [None, True]:
        torch._dynamo.reset()
        compiled = torch.compile(model, dynamic=mode)
        for b in [2, 3, 5]:
            x = torch.sin(torch.arange(b * 4).view(b, 4) * 0.3)
            print(mode, b, compiled(x).sum().item(), model(x).sum().item())
