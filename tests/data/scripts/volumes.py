import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
v = torch.cos(torch.arange(2 * 3 * 5 * 6 * 7).float().view(2, 3, 5, 6, 7) * 0.37)
w = torch.sin(torch.arange(4 * 3 * 2 * 3 * 2).float().view(4, 3, 2, 3, 2) * 0.11)
b = torch.tensor([0.1, -0.2, 0.3, 0.0])
print(F.conv3d(v, w), F.conv3d(v, w, b, stride=2, padding=1)[1, 2])
print(F.conv3d(v, w, stride=(1, 2, 1), padding=(2, 0, 1), dilation=(2, 1, 2))[0, :, 1])
print(F.conv3d(v[0], w, padding="same").shape,
      F.conv3d(v[:, :2], w[:2, :1], groups=2).sum((2, 3, 4)))
print(F.max_pool3d(v, 2), F.max_pool3d(v, (2, 3, 2), stride=1, padding=1)[1, 0, 2])
print(F.avg_pool3d(v, 2, stride=(1, 2, 2)), F.avg_pool3d(v, 3, padding=1)[0, 1])
print(F.max_pool3d(v, 2, ceil_mode=True).shape, F.adaptive_avg_pool3d(v, 1).flatten(1),
      F.adaptive_max_pool3d(v, (1, 1, 1)).flatten(1), F.adaptive_avg_pool3d(v, (2, 3, 4))[1, 2])
conv = nn.Conv3d(3, 4, 3, padding=1, bias=False)
print(conv.weight.shape, conv(v).shape, nn.Conv3d(3, 2, (1, 3, 3), padding="same",
                                                  padding_mode="replicate")(v).shape)
with torch.no_grad():
    bn = nn.BatchNorm3d(3).eval()
    bn.running_mean.fill_(0.5)
    print(bn(v)[1, 2, 0], nn.InstanceNorm3d(3)(v)[0, 1, 1])


class Video(nn.Module):
    # A 3-d CNN block as a video classifier writes it.
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(3, 4, (3, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1))
        self.bn = nn.BatchNorm3d(4)
        self.pool = nn.MaxPool3d((1, 2, 2))
        self.avg = nn.AvgPool3d(2, stride=1)
        self.head = nn.AdaptiveAvgPool3d(1)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        return self.head(self.avg(x)).flatten(1), x


with torch.no_grad():
    model = Video().eval()
    for i, p in enumerate(model.parameters()):
        # Fixed weights: Tailor's initialisation does not draw PyTorch's random numbers.
        p.copy_(torch.cos(torch.arange(p.numel()).float() * 0.3 + i).view_as(p) * 0.2)
    compiled = torch.compile(model, backend="eager", dynamic=True)
    u = torch.cos(torch.arange(2 * 3 * 4 * 10 * 12).float().view(2, 3, 4, 10, 12) * 0.21)
    print(compiled(u), compiled(torch.cos(torch.arange(3 * 3 * 5 * 12 * 10).float().view(3, 3, 5, 12, 10))))
    compiled = torch.compile(model, backend="eager")
    u = torch.cos(torch.arange(2 * 3 * 4 * 10 * 12).float().view(2, 3, 4, 10, 12) * 0.21)
    print(compiled(u)[1].shape, compiled(u[:1])[1].shape, compiled(torch.sin(u[:, :, :3, :9, :11]))[1].shape)
