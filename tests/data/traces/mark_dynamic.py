# torch._dynamo.mark_dynamic(x, 0, min=2, max=64) on a sequence model's input (the eager
# back end): the first call compiles with the batch as a symbol in [2, 64], the next hits,
# and a batch past the range recompiles. Its PyTorch 2.15 trace is mark_dynamic.log.
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 8)

    def forward(self, x):
        return self.proj(x).softmax(-1)


model = Tagger().eval()
compiled = torch.compile(model, backend="eager")
with torch.no_grad():
    for batch in [4, 9, 100]:
        x = torch.randn(batch, 5, 16)
        if batch < 64:
            torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
        print(batch, tuple(compiled(x).shape))
