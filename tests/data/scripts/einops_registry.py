import torch
import torch.nn as nn
from einops import reduce
from einops.layers.torch import Rearrange


class Tokens(nn.Module):
    # einops applied to a Parameter inside the compiled call, as vit-pytorch applies it to
    # its class token: the trace registers the Parameter type in einops' backend registry.
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1, 1, 4) * 0.5)
        self.patches = Rearrange("b c (h p) -> b h (p c)", p=2)

    def forward(self, x):
        patches = self.patches(x)
        return patches * reduce(self.scale, "1 1 d -> d", "sum")


with torch.no_grad():
    model = Tokens()
    compiled = torch.compile(model, backend="eager", dynamic=True)
    x = torch.cos(torch.arange(16).float().view(2, 2, 4))
    # The same input three times: the second call recompiles all the same, as the first
    # trace added Parameter to the registry whose length its entry guards.
    print(compiled(x), compiled(x), compiled(x).shape)
