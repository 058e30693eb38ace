# LLaMA's rotary embedding as Meta's model.py writes it: complex frequencies from
# torch.polar, queries viewed as complex, multiplied, viewed back as real.
import torch


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    return freqs_cis


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Rope(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.freqs_cis = precompute_freqs_cis(8, 32)

    def forward(self, x, start_pos: int):
        seqlen = x.shape[1]
        freqs_cis = self.freqs_cis[start_pos : start_pos + seqlen]
        q, k = apply_rotary_emb(x, x * 2, freqs_cis)
        return q + k


fc = precompute_freqs_cis(8, 6)
print(fc.shape, fc.dtype, torch.view_as_real(fc)[1], fc.real[2], (fc * fc.conj()).real[3])
print(torch.exp(1j * torch.arange(3).float()).imag, torch.polar(torch.ones(2), torch.zeros(2)))
x = torch.cos(torch.arange(2 * 5 * 2 * 8).float().view(2, 5, 2, 8) * 0.3)
m = Rope()
print(m(x, 0)[1, 2])
compiled = torch.compile(m, backend="eager", dynamic=True)
print(compiled(x, 0)[1, 2], compiled(x[:, :3].contiguous(), 4)[0, 1])
compiled = torch.compile(m, backend="eager")
print(compiled(x, 0).shape, compiled(x[:, :4].contiguous(), 1).shape, compiled(x[:, :3].contiguous(), 2).shape)
