import torch
import torch.nn as nn


class BranchNet(nn.Module):
    """A size-dependent branch: Dynamo records which way it went as a guard on the batch."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 16)

    def forward(self, x):
        if x.shape[0] > 16:
            return torch.relu(self.fc(x))
        return self.fc(x)
