# A convolution under dynamic=None (the eager back end), batches 2, 4, 16. PyTorch's CPU
# convolution picks its kernel from the batch (torch._C._select_conv_backend in the fake
# kernel), which guards 2 <= batch <= 15, so batch 16 recompiles; Tailor has no such guard
# and hits. A known difference, kept to test the comparison. Its trace is conv_batches.log.
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x).relu().mean((2, 3))


model = Conv().eval()
compiled = torch.compile(model, backend="eager")
with torch.no_grad():
    for batch in [2, 4, 16]:
        print(batch, tuple(compiled(torch.randn(batch, 1, 12, 12)).shape))
