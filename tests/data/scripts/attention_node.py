# F.scaled_dot_product_attention under dynamic=True: Dynamo keeps it one node, and its only
# shape guards are the inputs' own (duck sizing, strides, 2 <= size): the head size stays a
# symbol (no guard from the 1/sqrt(head) scale), and nothing inside it is lifted or guarded.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Causal(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Masked(nn.Module):
    def forward(self, q, k, v, keep):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)


class Biased(nn.Module):
    def forward(self, q, k, v, bias):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.5)


torch.manual_seed(0)
causal = torch.compile(Causal(), dynamic=True)
for length, head in [(8, 16), (12, 16), (12, 24)]:
    q, k, v = (torch.randn(2, 3, length, head) for _ in range(3))
    print("causal", tuple(causal(q, k, v).shape))
torch._dynamo.reset()
masked = torch.compile(Masked(), dynamic=True)
for queries, keys in [(5, 7), (6, 9)]:
    q = torch.randn(2, 4, queries, 8)
    k, v = torch.randn(2, 4, keys, 8), torch.randn(2, 4, keys, 8)
    print("masked", tuple(masked(q, k, v, torch.randn(queries, keys) > 0).shape))
torch._dynamo.reset()
biased = torch.compile(Biased(), dynamic=True)
q, k, v = (torch.randn(3, 5, 8) for _ in range(3))
print("biased", tuple(biased(q, k, v, torch.randn(5, 5)).shape))
