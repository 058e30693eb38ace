import torch
import torch.nn as nn

x = torch.arange(2 * 3 * 4 * 5).view(2, 3, 4, 5) * 0.5 - 7
i = torch.tensor([0, 1])
j = torch.tensor([[1], [-1]])
print(x[i].shape, x[:, i].shape, x[..., j].shape, x[0, :, i].shape, x[:, i, j].shape)
print(x[i, 1:, j, None].shape, x[:, i, None, j].shape, x[torch.tensor(1)].shape)
print(x[:, [0, 2], 1])
print(x[i, :, j][..., 0])
table = torch.arange(7 * 3).view(7, 3) * 0.25
coords = torch.arange(3)[:, None] - torch.arange(3)[None, :] + 2
print(table[coords])
print(x[0][torch.arange(3), torch.tensor([3, 0, -2])])


class RelPos(nn.Module):
    # SAM's get_rel_pos: a parameter table read at relative coordinates, and CLIP's
    # text pooling: one row per batch element, at a computed position.
    def __init__(self):
        super().__init__()
        self.rel_pos = nn.Parameter(torch.cos(torch.arange(7 * 3).view(7, 3) * 0.3))

    def forward(self, x):
        coords = (torch.arange(4)[:, None] - torch.arange(4)[None, :] + 3).long()
        rel = self.rel_pos[coords]
        pooled = x[torch.arange(x.shape[0]), x.sum(-1).argmax(dim=-1)]
        return rel, pooled, x[:, [2, 0]] * 2


compiled = torch.compile(RelPos(), dynamic=True)
with torch.no_grad():
    print(compiled(torch.sin(torch.arange(2 * 4 * 3).view(2, 4, 3) * 0.7)))
    print([t.shape for t in compiled(torch.sin(torch.arange(5 * 6 * 3).view(5, 6, 3) * 0.3))])
