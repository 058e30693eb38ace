import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class EncoderBlock(nn.Module):
    """One BERT-style encoder layer: multi-head self-attention and a GELU MLP."""

    def __init__(self, d_model=64, n_heads=4, d_ff=128):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, d_ff),
            nn.GELU(),
            nn.Linear(d_ff, d_model),
        )

    def forward(self, x):
        b, seq_len, d = x.shape
        qkv = self.qkv(self.norm1(x))
        q = qkv[:, :, :d].view(b, seq_len, self.n_heads, self.d_head).transpose(1, 2)
        k = qkv[:, :, d:2 * d].view(b, seq_len, self.n_heads, self.d_head).transpose(1, 2)
        v = qkv[:, :, 2 * d:].view(b, seq_len, self.n_heads, self.d_head).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        attn = F.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, seq_len, d)
        x = x + self.proj(out)
        return x + self.mlp(self.norm2(x))
