import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(0.5)
        self.scale = 2
        self.unused = 3

    def forward(self, x):
        y = self.bn(self.fc1(x))
        if self.training:
            y = y * self.scale
        return self.drop(y)


model = Net()
compiled = torch.compile(model, dynamic=None)
x = torch.randn(4, 8)
print(tuple(compiled(x).shape))
model.eval()
print(tuple(compiled(x).shape))
model.scale = 3
print(tuple(compiled(x).shape))
model.train()
print(tuple(compiled(x).shape))
model.scale = 5
print(tuple(compiled(x).shape))
model.unused = 4
print(tuple(compiled(x).shape))
compiled(torch.randn(6, 8))
model.bn.eval()
compiled(torch.randn(6, 8))
