import torch

a = torch.cos(torch.arange(24).view(2, 3, 4) * 0.7)
b = torch.sin(torch.arange(40).view(2, 4, 5) * 0.3)
q = torch.cos(torch.arange(48).view(1, 2, 6, 4) * 0.45)
k = torch.sin(torch.arange(40).view(1, 2, 5, 4) * 0.8)
print(torch.einsum("bij,bjk->bik", a, b))
print(torch.einsum("bhid,bhjd->bhij", q, k))
print(torch.einsum("ij->ji", a[0]), torch.einsum("bij->", a), torch.einsum("bij->j", a))
print(torch.einsum("i,j->ij", a[0, 0], b[0, 0]), torch.einsum("bij,bjk", a, b).shape)
print(torch.einsum("...ij,...jk->...ik", q, k.transpose(-1, -2)))
print(torch.einsum("bi,bj,bk->bijk", a[:, 0], a[:, 1], a[:, 2]).shape)
print(torch.einsum("bij,bjk->k", [a, b]))


def attention_scores(queries, keys):
    # Attention written with einsum, as many model files do, for symbolic lengths.
    return torch.einsum("bhid,bhjd->bhij", queries, keys).softmax(-1)


compiled = torch.compile(attention_scores, dynamic=True)
print(compiled(q, k))
print(compiled(torch.cos(torch.arange(72).view(1, 2, 9, 4) * 0.2), k[:, :, :3]))
