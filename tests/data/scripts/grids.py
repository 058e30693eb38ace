import torch

print(torch.linspace(-1, 1, 5), torch.linspace(0, 3, 7), torch.linspace(2, 2.5, 1))
rows, cols = torch.meshgrid(torch.arange(3) * 1.0, torch.linspace(0, 1, 4), indexing="ij")
print(rows, cols)
xs, ys = torch.meshgrid(torch.arange(3) * 1.0, torch.arange(2) * 10.0, indexing="xy")
print(xs, ys)
x = torch.cos(torch.arange(24).view(2, 3, 4) * 0.7) * 3
print(torch.logsumexp(x, -1), x.logsumexp((0, 2)), x.logsumexp(1, keepdim=True))


def log_partition(scores):
    # A CRF's or a contrastive loss's log-sum-exp over a symbolic length.
    return scores.logsumexp(-1) - scores.amax(-1)


compiled = torch.compile(log_partition, dynamic=True)
print(compiled(x), compiled(torch.sin(torch.arange(35).view(1, 5, 7) * 0.9) * 4))
