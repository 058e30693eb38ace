import torch
import torch.nn as nn


class Tagger(nn.Module):
    """Token ids to a tag per token: token and position embeddings, a LayerNorm and a
    linear head; also, per sequence, how many ids are past a threshold (an int64 output)."""

    def __init__(self, vocab=50, width=32, tags=5, max_len=64):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(max_len, width)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, tags)

    def forward(self, ids):
        positions = torch.arange(ids.size(1), device=ids.device)
        h = self.norm(self.tokens(ids) + self.positions(positions))
        return self.head(h), (ids > 10).sum(dim=1)
