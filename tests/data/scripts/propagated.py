# What AOTAutograd stamps on tensors after a compiled call (`_dynamo_propagated_dynamic_indices`):
# the dynamic dims of what the graph returned, and, with gradients on, of the arguments
# it saved for backward. A later compile reads a stamped dim as dynamic, whatever its
# wrapper's dynamic=, which is why the material's demo compiles 6 times under inductor.
import torch
import torch.nn as nn


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return self.linear(x)


class Flattened(Linear):
    def forward(self, x):
        return self.linear(x.reshape(-1, 8))


class Reshaped(Linear):
    def forward(self, x):
        return self.linear(x.reshape(-1, 8))


class ReluFirst(Linear):
    def forward(self, x):
        return self.linear(torch.relu(x))


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(8))

    def forward(self, x):
        return x * self.scale


class Shifted(nn.Module):
    def forward(self, x):
        return x + 1


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3)

    def forward(self, x):
        return self.conv(x)


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 4)

    def forward(self, ids):
        return self.embed(ids)


def stamps(t):
    return getattr(t, "_dynamo_propagated_dynamic_indices", None)


def probe(name, model, x, backend="inductor", dynamic=True, grad=True):
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend, dynamic=dynamic)
    with torch.set_grad_enabled(grad):
        y = compiled(x)
    print(f"{name} backend={backend} dynamic={dynamic} grad={grad}: x {stamps(x)}, y {stamps(y)}")


torch.manual_seed(0)
for backend in ["inductor", "aot_eager", "eager"]:
    probe("linear", Linear(), torch.randn(3, 8), backend)
    probe("flattened", Flattened(), torch.randn(3, 2, 8), backend)
    probe("reshaped to its shape", Reshaped(), torch.randn(3, 8), backend)
probe("linear", Linear(), torch.randn(3, 8), grad=False)
probe("linear", Linear(), torch.randn(3, 8), dynamic=None)
probe("linear", Linear(), torch.randn(3, 8), dynamic=False)
probe("relu first", ReluFirst(), torch.randn(3, 8))
probe("scaled", Scaled(), torch.randn(3, 8))
probe("shifted", Shifted(), torch.randn(3, 8))
probe("conv", Conv(), torch.randn(3, 2, 16))
probe("embedding", Embed(), torch.randint(0, 16, (3, 5)))
frozen = Linear()
frozen.requires_grad_(False)
probe("frozen", frozen, torch.randn(3, 8))

# The demo's pattern: one tensor through a dynamic wrapper, then a static one of the same
# module. The static wrapper compiles the stamped dim as a symbol, so its result is stamped
# too, and a later batch of another size hits that entry.
torch._dynamo.reset()
base = Linear()
dynamic = torch.compile(base, dynamic=True)
static = torch.compile(base, dynamic=False)
x = torch.randn(3, 8)
dynamic(x)
y = static(x)
print("static after dynamic: x", stamps(x), "y", stamps(y))
z = static(torch.randn(5, 8))
print("static, a fresh batch of 5:", stamps(z))
