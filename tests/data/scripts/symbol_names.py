# Symbol names as PyTorch 2.8+ gives them: each a hash of its source, modulo 100, moved on to
# the next free number on a collision (L['b'].size()[1] and L['c'].size()[0] both hash to 20).
import torch


def matmul(x, y):
    return x @ y


def collide(b, c):
    return b.sum() + c.sum()


def scale(a, n):
    return a * n


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).relu()


print(torch.compile(matmul, dynamic=True)(torch.ones(3, 4), torch.ones(4, 5)).shape)
print(torch.compile(collide, dynamic=True)(torch.ones(3, 4), torch.ones(5, 6)).shape)
print(torch.compile(scale, dynamic=True)(torch.ones(6, 7), 3).shape)
print(torch.compile(Net(), dynamic=True)(torch.ones(5, 8)).shape)
automatic = torch.compile(collide)
for rows in (2, 3, 4):
    print(automatic(torch.ones(rows, 4), torch.ones(5, 6)).shape)
