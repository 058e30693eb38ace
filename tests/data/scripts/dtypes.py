import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, ids):
        keep = ids > 3
        h = self.emb(ids).masked_fill(~keep.unsqueeze(-1), 0.0)
        pos = torch.arange(ids.size(1))
        return self.head(h), keep.sum(), pos + ids


def scale(x):
    return x * 2 + 1


# Casts, promotion and what prints.
ids = torch.arange(6).view(2, 3) + 1
print(ids, ids.dtype, ids.float().dtype, (ids * 0.5).dtype, (ids / 2).dtype)
print(ids > 3, (ids > 3).dtype, (ids > 3).sum(), (ids > 3).sum().dtype)
print(torch.tensor([1.7, -1.7]).long(), torch.tensor([0.0, 2.5]).bool())
print(torch.tensor([[True, False]]), torch.tensor([3, 4]).dtype, torch.full((2,), 3).dtype)
print(torch.zeros(2, dtype=torch.long), torch.ones_like(ids).dtype, ids.new_zeros(2).dtype)
print((ids > 2) & (ids < 5), ~(ids > 2), torch.where(ids > 3, ids, 0))
print(ids.masked_fill(ids > 4, 9), ids.to(torch.float32).dtype, ids.type_as(torch.zeros(1)).dtype)
print(ids.sum().item(), type(ids.sum().item()).__name__, (ids > 0).all().item())

# Positions: argmax and argmin (first of equal values), max along a dim, rows and elements
# picked by int64 indices.
scores = torch.tensor([[1.0, 5.0, 5.0, -2.0], [7.0, 2.0, 7.0, 0.5]])
print(scores.argmax(), scores.argmax(1), scores.argmin(0, keepdim=True), scores.max(1))
values, indices = scores.min(dim=1)
print(values, indices, torch.argmax(scores, dim=-1).dtype)
print(scores.index_select(1, torch.tensor([3, 0])), torch.index_select(scores, 0, torch.tensor([1])))
print(scores.gather(1, torch.tensor([[0, 0], [3, 1]])))

# An embedding needs integer ids.
try:
    F.embedding(torch.ones(2), torch.randn(3, 2))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.where(torch.ones(2), torch.ones(2), torch.ones(2))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.ones(2).masked_fill(torch.ones(2), 0.0)
except RuntimeError as e:
    print("RuntimeError:", e)

# Bools: + is a logical or, * a logical and, a Python bool stays bool and an int promotes;
# subtraction, negation and the integer rounding functions have no bool kernel.
a = torch.tensor([True, True, False, False])
b = torch.tensor([True, False, True, False])
print(a + b, a * b, torch.maximum(a, b), a + 1, (a + 1).dtype, a.sum())
print(a & b, a | b, a ^ b, a & True, a | False, a + True, (a * True).dtype)
for refused in [lambda: a - b, lambda: a - 1, lambda: 1 - a, lambda: -a, lambda: a.abs(),
                lambda: torch.relu(a)]:
    try:
        refused()
    except NotImplementedError as e:
        print("NotImplementedError:", e)

# An id outside the table is an IndexError.
try:
    F.embedding(torch.tensor([5]), torch.randn(3, 2))
except IndexError as e:
    print("IndexError:", e)

# Compiled: the ids' dtype is part of the guards; a new dtype recompiles.
model = Tagger().eval()
compiled = torch.compile(model)
logits, count, shifted = compiled(ids)
print(tuple(logits.shape), logits.dtype, count, count.dtype, shifted, shifted.dtype)
f = torch.compile(scale)
print(f(torch.ones(3)), f(torch.ones(3, dtype=torch.long)), f(torch.ones(3, dtype=torch.bool)))
print(f(torch.ones(3, dtype=torch.long)))
top = torch.compile(lambda x: x.argmax(-1), dynamic=True)
print(top(scores), top(torch.cos(torch.arange(15).view(3, 5) * 0.7)))
either = torch.compile(lambda m, n: (m + n).sum() + (m & n).sum())
print(either(a, b), either(a, b).dtype)

# int32 (`.int()`, `dtype=torch.int`): whole numbers printed with their dtype, promoting
# below int64 (a sum is int64), accepted as embedding ids, and a compiled call's input.
x = torch.arange(6).int()
print(x, x.dtype, x + 1, (x + 1).dtype, x * 2.5, x.sum(), x.sum().dtype, x.long().dtype,
      (x + torch.arange(6)).dtype)
print(torch.tensor([1, 2], dtype=torch.int32), torch.zeros(2, dtype=torch.int), x.float(),
      x.tolist(), x.max(), x.view(2, 3), torch.arange(3, dtype=torch.int32))
print(nn.Embedding(10, 3)(torch.tensor([1, 2]).int()).shape)
lengths = torch.tensor([3, 5], dtype=torch.int32)
print(torch.arange(6)[None, :] < lengths[:, None], lengths.max().item(), int(lengths[0]))


def counted(x, n):
    return (x.int() + n).float() * 2, (x > 0).int().sum(-1)


compiled_counts = torch.compile(counted, dynamic=True)
print(compiled_counts(torch.arange(6.0).reshape(2, 3) - 2, torch.tensor([1, 2, 3], dtype=torch.int32)))
print(compiled_counts(torch.arange(8.0).reshape(2, 4) - 2, torch.tensor([1, 2, 3, 4])))
