# Forward hooks and weight normalisation: a pre-hook that replaces the arguments, a hook
# that replaces the output, a removed hook, `torch.nn.utils.weight_norm` (a pre-hook that
# computes the weight from weight_g and weight_v) and its `parametrizations` form, eagerly
# and compiled. Recorded by running it under PyTorch 2.15 (tests/data/pytorch/hooks.txt).
import torch
import torch.nn as nn
from torch.nn.utils import weight_norm, remove_weight_norm
from torch.nn.utils import parametrizations

def det(*shape):
    """Values that do not depend on a random generator."""
    count = 1
    for size in shape:
        count *= size
    return (torch.arange(count).reshape(shape) * 0.37).sin()


def filled(module):
    for name, param in list(module.named_parameters()):
        setattr(module, name, nn.Parameter(det(*param.shape)))
    return module


def show(label, t):
    print(label, tuple(t.shape), [round(v, 4) for v in t.flatten().tolist()[:6]])


lin = filled(nn.Linear(4, 3))
x = det(2, 4)
handle = lin.register_forward_pre_hook(lambda module, args: (args[0] * 2,))
lin.register_forward_hook(lambda module, args, out: out + 1)
show("hooked", lin(x))
handle.remove()
show("pre-hook removed", lin(x))

conv = weight_norm(filled(nn.Conv1d(3, 5, 3, padding=1)))
print(sorted(name for name, _ in conv.named_parameters()))
print(tuple(conv.weight_g.shape), tuple(conv.weight_v.shape))
signal = det(2, 3, 8)
show("weight_norm", conv(signal))
compiled = torch.compile(conv, dynamic=True)
for n in [8, 11]:
    s = det(2, 3, n) + 1
    show(f"compiled {n}", (compiled(s) - conv(s)).abs())
with torch.no_grad():
    conv.weight_g.mul_(2.0)
show("scaled g", conv(signal))
remove_weight_norm(conv)
print(sorted(name for name, _ in conv.named_parameters()))
show("removed", conv(signal))

whole = weight_norm(filled(nn.Linear(4, 2)), dim=None)
print(tuple(whole.weight_g.shape))
show("dim=None", whole(x))

param = parametrizations.weight_norm(filled(nn.Linear(4, 3)))
print(sorted(name for name, _ in param.named_parameters()))
show("parametrized", param(x))
show("parametrized compiled", (torch.compile(param)(x) - param(x)).abs())
