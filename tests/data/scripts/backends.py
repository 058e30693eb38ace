# Which torch.compile wrappers share entries: PyTorch compares the wrappers' backends
# (_TorchCompileWrapper.__eq__: the same back end or callable, mode, options and dynamic=),
# so two wrappers made alike share one entry, and a wrapper unlike them recompiles with a
# BACKEND_MATCH failure.
import torch
import torch.nn as nn


class Double(nn.Module):
    def forward(self, x):
        return x * 2


def first(gm, inputs):
    return gm.forward


def second(gm, inputs):
    return gm.forward


for backend in ["eager", "inductor", "aot_eager"]:
    torch._dynamo.reset()
    model = Double()
    alike = [torch.compile(model, backend=backend, dynamic=True) for _ in range(2)]
    static = torch.compile(model, backend=backend, dynamic=False)
    for compiled in alike + [static]:
        print(backend, tuple(compiled(torch.randn(4)).shape))
torch._dynamo.reset()
model = Double()
for backend in [first, first, second]:
    print(backend.__name__, tuple(torch.compile(model, backend=backend)(torch.randn(4)).shape))
