# shapes: x=4,6,8
# A seed for lifted tensors and strides: a module-level tensor and a plain tensor attribute
# (lifted, symbolic under dynamic=True), and views that keep their strides (transpose,
# permute, expand, unsqueeze) before reshape, view and contiguous.
import torch
import torch.nn as nn

W = torch.randn(8, 6)
B = torch.randn(6)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.A = torch.randn(6, 4)

    def forward(self, x):
        h = x @ W + B
        t = h.transpose(1, 2).contiguous().view(x.shape[0], -1)
        p = h.permute(2, 0, 1).reshape(6, -1)
        u = p.unsqueeze(0).expand(2, 6, -1).reshape(-1, 2)
        return (h @ self.A).view(-1, 4), t.flatten(), u.sum(0)
