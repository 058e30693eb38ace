# Powers of integer tensors are integers, as in PyTorch 2.15 (token-shift-gpt's shift
# amounts, `2 ** torch.arange(n)`, then `.tolist()`), negative bases to whole powers keep
# their sign (`(-1) ** k`), and an integer tensor to a negative power is refused. Recorded
# under PyTorch 2.15: each line's values and dtype, eagerly and compiled.
import torch
import torch.nn as nn

k = torch.arange(5)
for name, value in [
    ("2 ** k", 2 ** k),
    ("(-1) ** k", (-1) ** k),
    ("3 ** k", torch.pow(3, k)),
    ("k ** 2", k ** 2),
    ("(k - 2) ** 3", (k - 2) ** 3),
    ("k ** k", k.pow(k)),
    ("k ** 20", k ** 20),
    ("k ** 0.5", k ** 0.5),
    ("2.0 ** k", 2.0 ** k),
    ("k.int() ** 2", k.int() ** 2),
    ("3 ** k.int()", 3 ** k.int()),
    ("k.int() ** k", k.int() ** k),
    ("mask ** 2", torch.tensor([True, False]) ** 2),
    ("negatives ** 3", torch.tensor([0.0, -2.0, -3.0]) ** 3),
    ("zero ** 0", torch.tensor([0.0, 2.0]) ** 0),
]:
    print(name, value.tolist(), value.dtype)

try:
    k ** -1
except RuntimeError as err:
    print("k ** -1:", err)


class Shifts(nn.Module):
    def forward(self, x):
        n = x.shape[1]
        amounts = (2 ** torch.arange(3)).tolist()
        signs = (-1) ** torch.arange(n)
        y = x * signs
        for a in amounts:
            y = y + x.roll(a, 1) * a
        return y, signs


# The default back end: with backend="eager" PyTorch 2.15 runs Dynamo's FX code, which
# prints `(-1) ** k` as `-1 ** arange` (no parentheses) and so returns -1 everywhere.
for mode in [None, True]:
    torch._dynamo.reset()
    compiled = torch.compile(Shifts(), dynamic=mode)
    for n in [4, 6, 6]:
        x = torch.arange(2.0 * n).reshape(2, n).cos()
        with torch.no_grad():
            y, signs = compiled(x)
        print(mode, n, tuple(y.shape), round(y.sum().item(), 4), signs.tolist(), signs.dtype)
