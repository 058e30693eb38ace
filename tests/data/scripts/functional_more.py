import torch
import torch.nn as nn
import torch.nn.functional as F

# Functions and modules of torch.nn written over Tailor's primitives, eagerly and compiled.
torch.manual_seed(0)
x = torch.cos(torch.arange(48).float().reshape(2, 4, 2, 3) * 0.7) * 2
y = torch.sin(torch.arange(48).float().reshape(2, 4, 2, 3) * 0.3) * 2
print(F.threshold(x, 0.5, -1.0), nn.Threshold(0.1, 20.0)(x[0]))
print(F.softmin(x, dim=1)[0], nn.Softmin(dim=-1)(x[1]), nn.Softmax2d()(x)[1])
print(F.softshrink(x, 0.5)[0], nn.Hardshrink(1.0)(x[1]), F.hardshrink(x)[0, 0])
print(F.cosine_similarity(x, y)[0], nn.CosineSimilarity(dim=-1, eps=1e-6)(x, y * 0)[0])
print(F.pairwise_distance(x[0, 0], y[0, 0]), nn.PairwiseDistance(p=1.0, keepdim=True)(x[0], y[0]))
print(nn.Dropout2d(0.3).eval()(x)[0, 0], nn.Dropout1d()(x[0]).shape,
      nn.AlphaDropout(0.2).eval()(x)[0, 0], F.dropout3d(x.unsqueeze(2), 0.5, False).shape)
print(F.one_hot(torch.tensor([0, 3, 1]), 5), F.one_hot(torch.tensor([[2, 0], [1, 1]])))
print(F.channel_shuffle(x, 2)[0], nn.ChannelShuffle(4)(x)[1, :, 0])
print(F.local_response_norm(x, 3)[0], nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0)(x)[1])
print(F.local_response_norm(x[:, :, 0], 2)[0])
print(nn.Unflatten(1, (2, 2))(x).shape, nn.Unflatten(-1, (3, 1))(x)[0, 0])
bilinear = nn.Bilinear(3, 3, 2)
print(bilinear.weight.shape, bilinear.bias.shape,
      F.bilinear(x[0, 0], y[0, 0], torch.ones(2, 3, 3), torch.tensor([0.5, -0.5])))
w = x.clone()
F.relu_(w)
print(w[0, 0], F.leaky_relu_(x.clone(), 0.2)[0, 0], F.hardtanh_(x.clone())[0, 0],
      F.elu_(x.clone())[0, 0], F.threshold_(x.clone(), 0.0, 9.0)[0, 0])
print(F.upsample_nearest(x[0:1, 0:1], scale_factor=2), F.upsample_bilinear(x[0:1, 0:1], size=(3, 4)))
p = torch.sigmoid(x)
print(F.huber_loss(x, y), F.huber_loss(x, y, reduction="none", delta=0.5)[0, 0],
      nn.HuberLoss(delta=2.0)(x, y), F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction="batchmean"),
      nn.KLDivLoss(reduction="sum", log_target=True)(F.log_softmax(x, 1), F.log_softmax(y, 1)))
print(F.soft_margin_loss(x, y.sign()), nn.SoftMarginLoss(reduction="sum")(x, y.sign()),
      F.margin_ranking_loss(x, y, y.sign(), margin=0.1), nn.MarginRankingLoss()(x, y, -y.sign()),
      F.hinge_embedding_loss(p, y.sign()), nn.HingeEmbeddingLoss(margin=0.5, reduction="none")(p, y.sign())[0, 0])
print(hasattr(F, "grid_sample"), hasattr(nn, "Transformer"), hasattr(F, "no_such_function"),
      [name for name in ("Conv3d", "BatchNorm3d") if hasattr(nn, name)])
LAYERS = {"2d": nn.BatchNorm2d, "3d": nn.BatchNorm3d}
print(LAYERS["2d"](4).eval()(x).shape)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.shuffle = nn.ChannelShuffle(2)
        self.lrn = nn.LocalResponseNorm(3)
        self.drop = nn.Dropout2d(0.25)
        self.cos = nn.CosineSimilarity(dim=1)

    def forward(self, a, b):
        h = self.drop(self.lrn(self.shuffle(a)))
        return (F.softshrink(h, 0.3) + F.softmin(h, 1) + F.threshold(h, 0.2, 0.0),
                self.cos(h, b), F.pairwise_distance(h, b).sum(-1))


block = Block().eval()
compiled = torch.compile(block, dynamic=True)
print(compiled(x, y))
a = torch.cos(torch.arange(120).float().reshape(3, 4, 2, 5) * 0.4)
print(compiled(a, a.flip(0)))
