import numpy as np
import torch
import torch.nn as nn

# Definition time: constants, scalar types and math on Python numbers and shapes.
print(np.pi, np.e, np.inf, -np.inf, np.nan, np.newaxis, np.inf > 1e308)
print(np.log(10000), np.exp(1.5), np.sqrt(2), np.sin(0.5), np.cos(0.5), np.log2(8), np.log10(1000))
print(np.power(2, 10), np.power(2.0, 0.5), np.floor(2.7), np.ceil(2.2), np.abs(-3), np.abs(-2.5))
print(np.maximum(3, 7), np.minimum(2.5, 1), np.sum([1, 2, 3]), np.sum([1.5, 2]), np.prod([]))
print(repr(np.log(10000)), repr(np.prod((3, 32, 32))), int(np.prod((1, 28, 28))), repr(np.prod([8, 5, 4, 2])))
print(np.float32(0.1), repr(np.float32(0.1)), np.float64(2) * 3, repr(np.int64(7) // 2), np.int32(5))
print(type(np.float64(1.5) + 1).__name__, type(np.int64(3) * 2).__name__, type(np.int64(3) / 2).__name__)
print(np.dtype("float32"), repr(np.dtype(np.int64)), np.float64 == np.dtype("float64"))

# Arrays for tables: printed as numpy prints them, computed in float32.
a = np.arange(6)
print(repr(a), a.dtype, a.shape, a.ndim, a.size, repr(a * 2.5), repr(a.reshape(2, 3)), repr(a / 2))
print(repr(np.linspace(0, 1, 5)), repr(np.zeros((2, 3))), repr(np.ones(3, dtype=np.float32)))
print(repr(np.log(np.arange(1, 4))), repr(np.array([[1, 2], [3, 4]]).T), repr(np.stack([a, a])))
print(repr(np.concatenate([a, a[:2]])), repr(np.arange(30.)), repr(np.array([True, False])))
print(repr(np.array(3.5)), repr(np.array([0.5, 0.25, -1.5])), repr(np.exp(-np.arange(4) / 2)))
x = np.arange(12).reshape(3, 4)
print(x[1], x[:, 1], x[1, 2], x.sum(), x.sum(axis=0), x.mean(), x.max(1), x[x > 5], x[:, np.newaxis].shape)
print(np.sqrt(x).max(), (x % 5 == 0).any(), np.maximum(x, 4)[0], np.minimum(x, 4.5)[2], np.prod(x[0] + 1))
table = np.zeros((3, 4))
table[1] = 2.5
table[:, 0] = np.arange(3)
print(table, table.tolist())
print(torch.from_numpy(a), torch.from_numpy(np.arange(4.0)).float(), torch.tensor(np.array([1, 2, 3])))
print(torch.tensor(np.array([1.5, 2.5], dtype=np.float32)), torch.from_numpy(table).float().sum())
try:
    np.power(2, -1)
except ValueError as error:
    print("ValueError:", error)


def sinusoids(length, channels, max_timescale=10000):
    # Whisper's positional table: np.log of a Python number, np.newaxis.
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class Tables(nn.Module):
    # Widths from np.prod of shapes (lightning-bolts' GAN, EnCodec's hop length), a causal
    # mask filled with -np.inf (Whisper's decoder), a buffer from a numpy table.
    def __init__(self, token_shape=(2, 2), ratios=(2, 2)):
        super().__init__()
        self.hop_length = np.prod(ratios)
        self.proj = nn.Linear(int(np.prod(token_shape)), 8)
        mask = torch.empty(6, 6).fill_(-np.inf).triu_(1)
        self.register_buffer("mask", mask, persistent=False)
        self.register_buffer("positions", sinusoids(6, 8))
        grid = np.cos(np.arange(8) * np.pi / 7).astype(np.float32)
        self.register_buffer("grid", torch.from_numpy(grid))
        with torch.no_grad():
            self.proj.weight.copy_(torch.cos(torch.arange(32).view(8, 4) * 0.3) * 0.3)
            self.proj.bias.zero_()

    def forward(self, tokens):
        # A batch of 6 tokens each, attending causally.
        x = self.proj(tokens) * np.sqrt(0.5) + self.grid
        scores = x @ x.transpose(1, 2) / np.sqrt(8) + self.mask
        return scores.softmax(-1) @ x + self.positions * self.hop_length


torch.manual_seed(0)
tables = Tables().eval()
print(tables.hop_length, tables.proj.in_features, tables.mask, tables.positions[3], tables.grid)
compiled = torch.compile(tables)
with torch.no_grad():
    for b in (2, 3, 4):
        print(compiled(torch.sin(torch.arange(b * 24).view(b, 6, 4) * 0.3))[-1, 1:3])


def scaled(x):
    # numpy constants and scalar math on numbers inside forward: Python constants.
    return x * np.pi + np.log(2.0) - np.sqrt(x.abs() + 1) * np.float32(0.5)


compiled_scaled = torch.compile(scaled, dynamic=True)
for n in (3, 5, 7):
    print(compiled_scaled(torch.cos(torch.arange(n) * 0.5)))
