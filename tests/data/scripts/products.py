import torch
import torch.nn.functional as F

a = torch.cos(torch.arange(24).view(2, 3, 4) * 0.7)
b = torch.sin(torch.arange(40).view(2, 4, 5) * 0.3)
c = torch.cos(torch.arange(30).view(2, 3, 5) * 1.1)
print(torch.bmm(a, b))
print(torch.baddbmm(c, a, b), torch.baddbmm(c, a, b, beta=0.5, alpha=2))
print(torch.outer(torch.arange(3) * 1.0, torch.arange(4) - 1.5))
print(a.norm(), a.norm(dim=-1), torch.norm(a, p=1, dim=1, keepdim=True))
print(F.normalize(a, dim=-1), F.normalize(a[0], p=1, dim=0))


def cosine_scores(q, k):
    # Cosine attention scores (normalised queries and keys), for symbolic lengths.
    return torch.bmm(F.normalize(q, dim=-1), F.normalize(k, dim=-1).transpose(1, 2))


compiled = torch.compile(cosine_scores, dynamic=True)
print(compiled(a, torch.sin(torch.arange(40).view(2, 5, 4) * 0.3)))
print(compiled(a[:, :2], torch.cos(torch.arange(56).view(2, 7, 4) * 0.45)))
