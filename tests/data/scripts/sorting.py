import torch

x = torch.cos(torch.arange(24).float().view(2, 3, 4) * 1.3)
print(torch.sort(x), x.sort(dim=1, descending=True))
print(torch.argsort(x, dim=0), x.argsort(descending=True), torch.msort(x[0]))
print(torch.topk(x, 2), x.topk(1, dim=1, largest=False), x.topk(3, sorted=True).indices)
print(x.kthvalue(2), torch.kthvalue(x, 1, dim=0, keepdim=True))
print(x.median(), x.median(dim=-1), torch.median(x, 1, keepdim=True).values)
# Ties keep their order under a stable sort; NaN sorts last, or first when descending.
t = torch.tensor([[2.0, 1.0, float("nan"), 1.0, -float("inf"), 2.0]])
print(t.sort(stable=True), t.sort(descending=True, stable=True), t.argsort(stable=True))
print(torch.tensor([3, 1, 2]).sort(), torch.tensor([[3, 1, 2]]).topk(2))
print(torch.sort(x, -1).values.equal(x.sort().values), x.sort()[1].dtype)


def ranked(a):
    # Sorted per row, the top two, the order of the columns: for a symbolic length.
    values, indices = a.sort(dim=-1, descending=True)
    top = a.topk(2, dim=-1)
    return values * 2, indices, top.values.sum(-1), top.indices, a.argsort(dim=0), a.msort()


compiled = torch.compile(ranked, dynamic=True)
print(compiled(x))
print(compiled(torch.sin(torch.arange(30).float().view(2, 3, 5) * 0.7)))


def sampled(logits, k: int):
    # Top-k filtering as a generate loop writes it.
    v, _ = torch.topk(logits, k)
    return logits.masked_fill(logits < v[:, [-1]], -float("inf")).softmax(-1)


compiled = torch.compile(sampled)
print(compiled(x[0], 3), compiled(torch.cos(torch.arange(28).float().view(2, 14)), 3))
print(compiled(torch.cos(torch.arange(36).float().view(3, 12)), 3))
