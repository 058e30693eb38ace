import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.utils import _pair, _triple

# `math` as model files use it.
print(math.log2(8), math.log(100, 10), math.log10(1000), math.prod((2, 3, 4)), math.gcd(12, 18))
print(math.ceil(2.1), math.floor(-2.1), math.trunc(-2.7), math.erf(0.5), math.isclose(1.0, 1.0 + 1e-10))
print(math.comb(5, 2), math.factorial(5), math.radians(180), math.atan2(1, 1), math.tau, math.pow(2, 10))
print(_pair(3), _triple((1, 2, 3)), torch.finfo(torch.float32).eps, torch.finfo().max,
      torch.iinfo(torch.int64).max, torch.finfo(torch.float16).tiny)

# Running sums, and NumPy's keepdims spelling.
x = torch.cos(torch.arange(12).view(3, 4) * 0.5)
print(x.cumsum(1), torch.cumsum(x, dim=0), torch.arange(6).cumsum(0), x.logcumsumexp(-1))
print(x.sum(1, keepdims=True), x.mean(0, keepdims=True))

# Pools in ceil mode: one more window where the division leaves a rest.
img = torch.sin(torch.arange(2 * 7 * 9).view(1, 2, 7, 9) * 0.1)
print(F.max_pool2d(img, 3, 2, ceil_mode=True), F.avg_pool2d(img, 2, ceil_mode=True))
print(nn.MaxPool2d(2, 2, 1, ceil_mode=True)(img).shape, nn.AvgPool2d(3, 2, 1, ceil_mode=True)(img))

# Losses a model builds in __init__, and the 1-d pools.
logits = torch.sin(torch.arange(12).view(3, 4) * 0.7) * 2
classes = torch.tensor([1, 3, 0])
labels = (torch.cos(torch.arange(12).view(3, 4)) > 0).float()
print(F.cross_entropy(logits, classes), nn.CrossEntropyLoss(label_smoothing=0.1)(logits, classes),
      F.cross_entropy(logits, torch.tensor([1, -100, 2])),
      F.cross_entropy(logits, classes, weight=torch.tensor([1.0, 2.0, 0.5, 1.0])),
      F.cross_entropy(logits, classes, reduction="none"), F.cross_entropy(logits, F.softmax(logits * 0.3, 1)))
print(F.binary_cross_entropy_with_logits(logits, labels),
      nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1, 1, 1]))(logits, labels),
      F.binary_cross_entropy(torch.sigmoid(logits), labels), nn.SmoothL1Loss()(logits, labels),
      F.nll_loss(F.log_softmax(logits, 1), classes), nn.L1Loss(reduction="sum")(logits, labels))
print(torch.log1p(torch.tensor([1e-6, 0.5, -0.3])), torch.expm1(torch.tensor([1e-7, 0.5])),
      nn.MaxPool1d(3, 2, ceil_mode=True)(logits.unsqueeze(0)), nn.AvgPool1d(2)(logits.unsqueeze(0)))


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


def fill(parameter, phase):
    with torch.no_grad():
        parameter.copy_(torch.sin(torch.arange(parameter.numel()).view(parameter.shape) + phase) * 0.3)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.blocks.insert(1, nn.ReLU())
        self.blocks.append(nn.Tanh())
        self.blocks[3] = nn.Sigmoid()
        self.norm = nn.RMSNorm(8)
        self.criterion = nn.L1Loss()
        self.pool = nn.MaxPool2d(3, 2, ceil_mode=True)
        # Ceil mode with windows that fit: an overhanging average pool's decomposition
        # (eager above) adds the `!= 1` guard PyTorch's elementwise ops ask of a derived size.
        self.average = nn.AvgPool2d(3, 2, 1, ceil_mode=True)
        self.shifts = nn.ParameterList([nn.Parameter(torch.ones(8)), nn.Parameter(torch.zeros(8))])
        self.register_buffer("offset", torch.full((8,), 0.25))
        for block in self.blocks:
            if isinstance(block, nn.Linear):
                block.reset_parameters()
        for i, parameter in enumerate(self.parameters()):
            fill(parameter, i)
        self.k = _pair(3)[1] + math.log2(4)

    @torch.jit.export
    def helper(self, x):
        return x

    @torch.jit.ignore
    def other(self, x):
        return x

    def forward(self, x, img):
        for block in self.blocks:
            x = block(x)
        x = self.norm(x) * self.shifts[0] + self.shifts[1] + self.offset
        y = Scale.apply(x, self.k).cumsum(1) + x.logcumsumexp(-1)
        loss = self.criterion(y, x) + F.mse_loss(y, x)
        return y, self.pool(img), self.average(img), x.sum(-1, keepdims=True), loss


torch.manual_seed(0)
net = Net().eval()
print([name for name, _ in net.named_parameters()], len(net.blocks), type(net.blocks[1]).__name__)
print([p.requires_grad for p in net.parameters()][:2], net.offset.requires_grad, x.requires_grad,
      x.clone().requires_grad_().requires_grad, torch.jit.is_scripting())
compiled = torch.compile(net)
for n in (2, 3, 5):
    with torch.no_grad():
        inputs = torch.cos(torch.arange(n * 8).view(n, 8) * 0.3)
        images = torch.sin(torch.arange(27 * (7 + n)).view(1, 3, 7 + n, 9) * 0.1)
        out = compiled(inputs, images)
    print([tuple(t.shape) for t in out], [round(t.sum().item(), 3) for t in out])


def nested(x):
    # Outputs in a structure: Dynamo flattens it into the graph's outputs and rebuilds it.
    h = x * 2
    return h, (h.sum(0), [h + 1, None]), {"a": h.t(), "b": (h,)}


compiled_nested = torch.compile(nested)
for n in (2, 3):
    out = compiled_nested(torch.ones(n, 4))
    print(type(out[1]).__name__, type(out[1][1]).__name__, list(out[2].keys()), out[1][1][1],
          out[2]["b"][0].shape, out[1][0], out[0].type())
weight = nn.Linear(2, 2).weight
weight._no_weight_decay = True
print(weight._no_weight_decay, torch.ones(2).type("torch.LongTensor").dtype)
