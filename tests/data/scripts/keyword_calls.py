# Keyword arguments to a compiled call (a model's forward, a function) are bound to its
# parameters by name, as Python binds them, and a wrong call is Python's TypeError in its
# words. Recorded under PyTorch 2.15 (tests/data/pytorch/keyword_calls.txt).
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, y):
        return self.fc(x) + y


def f(a, b):
    return a * b


with torch.no_grad():
    m = torch.compile(Net().eval())
    print(tuple(m(torch.ones(2, 4), y=torch.ones(2, 3)).shape))
    print(tuple(m(y=torch.ones(5, 3), x=torch.ones(5, 4)).shape))
    g = torch.compile(f)
    print(g(torch.ones(3), b=torch.ones(3) * 2).sum().item())
    for bad in [lambda: m(torch.ones(2, 4)), lambda: m(torch.ones(2, 4), z=torch.ones(2, 3)),
                lambda: g(torch.ones(3), a=torch.ones(3)), lambda: g(torch.ones(3))]:
        try:
            bad()
        except TypeError as err:
            print("TypeError:", err)
