import torch
import torch.nn as nn
import torch.nn.functional as F

with torch.no_grad():
    # The padding row is zero (the other rows are random draws, which differ from PyTorch's).
    table = nn.Embedding(6, 3, padding_idx=0)
    print(table, table.weight[0] * 1, table.weight.shape)
    print(nn.Embedding(6, 3), nn.Embedding(6, 3, padding_idx=-1).padding_idx)
    weight = torch.arange(18).view(6, 3) * 0.5
    ids = torch.arange(4).view(2, 2) + 1
    print(F.embedding(ids, weight, padding_idx=0), nn.Embedding(6, 3, _weight=weight)(ids))
