# torch.linalg as model files use it while they are built: performer's orthogonal random
# features are the Q of a QR of a Gaussian block; norms.
import torch

a = torch.tensor([[2.0, -1.0, 0.5], [1.0, 3.0, -2.0], [-0.5, 1.5, 4.0], [1.0, 0.0, 1.0]])
q, r = torch.linalg.qr(a)
print(q, r, (q @ r - a).abs().amax() < 1e-5)
full = torch.linalg.qr(a, mode="complete")
print(full.Q.shape, full.R.shape, (full.Q.t() @ full.Q - torch.eye(4)).abs().amax() < 1e-5)
print(torch.linalg.qr(a.t()).R, torch.linalg.qr(torch.tensor([[0.0, 1.0], [0.0, 2.0]])))
print(torch.linalg.qr(torch.tensor([[-3.0, 1.0], [4.0, 2.0]])).Q)
block = torch.randn(6, 6)
q, _ = torch.linalg.qr(block)
print(q.shape, (q.t() @ q - torch.eye(6)).abs().amax() < 1e-5)
print(torch.linalg.norm(a), torch.linalg.vector_norm(a, dim=1), torch.linalg.norm(a, dim=0),
      torch.linalg.matrix_norm(a), torch.linalg.vector_norm(a, float("inf"), dim=-1))
v = torch.tensor([1.0, -2.0, 3.0])
print(torch.diag(v), torch.diag(v, 1), torch.diag(v, -2).shape, torch.diag(a), torch.diag(a, 1),
      torch.diag(a, -1), a.diagonal(), torch.diagonal(a.t(), 1))
