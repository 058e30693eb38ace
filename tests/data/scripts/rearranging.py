import torch
import torch.nn as nn
from einops import einsum, parse_shape, rearrange, reduce, repeat
from einops.layers.torch import Rearrange, Reduce

# Eagerly: named axes, groups, `...`, `1` and `()`, keyword lengths, lists of tensors.
x = torch.cos(torch.arange(2 * 3 * 4).view(2, 3, 4) * 0.7)
print(rearrange(x, "b c n -> b n c"), rearrange(x, "b c n -> (b c) n"))
print(rearrange(x, "b c (h w) -> b c h w", h=2).shape, rearrange(x, "b c (h w) -> b (w c) h", w=2))
print(rearrange(x, "b c n -> c (n b)"), rearrange(x, "b ... -> b (...)").shape)
print(rearrange(x, "... n -> n ...").shape, rearrange(x, "b c n -> b 1 c () n").shape)
print(rearrange(x[:, :1], "b () n -> b n"), rearrange(x[:, :1], "b 1 n -> n b"))
print(rearrange([x[0], x[1]], "l c n -> c (l n)"), rearrange(x, "b c (n k) -> b c n k", k=2).shape)
print(reduce(x, "b c n -> b c", "mean"), reduce(x, "b c n -> c", "sum"))
print(reduce(x, "b c n -> b n", "max"), reduce(x, "b c (n 2) -> b c n", "min"))
print(reduce(x, "b c (n 2) -> n c", "prod"), reduce(x, "b ... -> b", "mean"))
print(reduce(x, "b c n -> b c 1", "max").shape, reduce(x, "(b b2) c n -> b2 n", "sum", b2=2))
print(repeat(x[0, 0], "n -> n r", r=2), repeat(x[0], "c n -> (c 2) n"))
print(repeat(x[0], "c n -> b c n", b=2).shape, repeat(x, "b c n -> b (c r) n", r=2)[1, 3])
print(repeat(x[:, :1], "b () n -> b k n", k=3).shape, repeat(x[0, 0], "... -> b ...", b=2).shape)
print(parse_shape(x, "b _ n"), parse_shape(x, "b ..."))
# vit-pytorch's LSA masks the diagonal with torch.eye and torch.finfo's largest float.
print(torch.eye(3), torch.eye(2, 4, dtype=torch.bool), torch.finfo(torch.float32).max)
print(-torch.finfo(x.dtype).max, torch.finfo(torch.float16).eps, torch.finfo().tiny)
layers = nn.Sequential(Rearrange("b c (h p1) -> b h (p1 c)", p1=2), Reduce("b h d -> b d", "mean"))
print(layers, layers(x))
for bad in ("b c (h w) -> b c h w", "b c n -> b n", "b c -> b c"):
    try:
        rearrange(x, bad, h=3)
    except RuntimeError as error:
        print(type(error).__name__, bad)


def fill(module):
    # Weights both sides compute alike: a cosine ramp per parameter.
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            p.copy_(torch.cos(torch.arange(p.numel()).view(p.shape) * (0.3 + 0.1 * i)) * 0.3)


class TinyViT(nn.Module):
    # vit-pytorch's ViT, small: patches by Rearrange, heads by rearrange, the class token by
    # repeat, mean pooling by Reduce.
    def __init__(self, channels=3, patch=2, dim=8, heads=2, classes=3):
        super().__init__()
        self.heads = heads
        self.to_patches = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
            nn.Linear(channels * patch * patch, dim),
        )
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.out = nn.Linear(dim, dim)
        self.pool = Reduce("b n d -> b d", "mean")
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        x = self.to_patches(img)
        b = x.shape[0]
        cls = repeat(self.cls, "1 n d -> b n d", b=b)
        x = torch.cat([cls, x], dim=1)
        qkv = self.qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=self.heads), qkv)
        attn = (q @ k.transpose(-1, -2) * 0.5).softmax(dim=-1)
        x = x + self.out(rearrange(attn @ v, "b h n d -> b n (h d)"))
        return self.head(self.pool(x)), reduce(x, "b n d -> b d", "max")


torch.manual_seed(0)
vit = TinyViT().eval()
fill(vit)
print(vit.to_patches[0], vit.pool)
compiled_vit = torch.compile(vit)
with torch.no_grad():
    # Automatic dynamic: the batch changes (the class token repeated to a symbolic batch).
    for b in (2, 3, 4):
        print(compiled_vit(torch.sin(torch.arange(b * 48).view(b, 3, 4, 4) * 0.37)))

# MobileViT's unfold and fold (the fold's lengths given as keywords), eagerly.
x = torch.cos(torch.arange(2 * 3 * 4 * 6).view(2, 3, 4, 6) * 0.45)
y = rearrange(x, "b d (h ph) (w pw) -> b (ph pw) (h w) d", ph=2, pw=2)
print(y[1, 2], rearrange(y, "b (ph pw) (h w) d -> b d (h ph) (w pw)", h=2, w=3, ph=2, pw=2)[1, 1])


def tokens(x):
    # LeViT's `...` inside a group, a reduce by a written length, a repeat, and LSA's
    # diagonal mask of a symbolic size.
    flat = rearrange(x, "b (h d) ... -> b h (...) d", h=1)
    rows = x[0, 0] @ x[0, 0].t()
    lsa = rows.masked_fill(torch.eye(rows.shape[-1], dtype=torch.bool), -torch.finfo(rows.dtype).max)
    return flat, reduce(x, "b d (h 2) w -> b d h", "sum"), repeat(x.mean(1), "b h w -> b h w r", r=3), lsa.softmax(-1)


def heads(x):
    # CvT's heads: `(x y)` split by the length of `y` given as a keyword (a symbolic size).
    merged = rearrange(x, "b (h d) x y -> (b h) (x y) d", h=2)
    return rearrange(merged * 2, "(b h) (x y) d -> b (h d) x y", h=2, y=x.shape[-1])


compiled_tokens = torch.compile(tokens, dynamic=True)
compiled_heads = torch.compile(heads, dynamic=True)
for h in (4, 6, 8):
    # One symbolic size at a time: the height here, the width below.
    x = torch.cos(torch.arange(2 * 3 * h * 6).view(2, 3, h, 6) * 0.45)
    torch._dynamo.mark_static(x, (0, 1, 3))
    out = compiled_tokens(x)
    print([t.shape for t in out], out[1][1], out[2][0, -1], out[3][1])
for w in (3, 5):
    x = torch.cos(torch.arange(2 * 4 * 3 * w).view(2, 4, 3, w) * 0.45)
    torch._dynamo.mark_static(x, (0, 1, 2))
    print(compiled_heads(x)[1, 2])

# einops.einsum: axes named by words, the pattern last (Perceiver's attention).
q = torch.cos(torch.arange(2 * 3 * 4).view(2, 3, 4) * 0.3)
k = torch.sin(torch.arange(2 * 5 * 4).view(2, 5, 4) * 0.2)
print(einsum(q, k, "b i d, b j d -> b i j"), einsum(q, "batch seq dim -> batch dim"))
print(einsum(q, q, "b ... d, b ... d -> b ..."))
