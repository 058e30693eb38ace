import torch
import torch.nn as nn


def fixed(module):
    # Weights from a formula: Tailor's initialisation does not draw PyTorch's random numbers.
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel()).float() * 0.37 + i).view_as(p) * 0.3)
    return module.eval()


layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)
enc = fixed(nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16), enable_nested_tensor=False))
src = torch.sin(torch.arange(2 * 5 * 16).float().view(2, 5, 16) * 0.3)
pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
causal = nn.Transformer.generate_square_subsequent_mask(5)
print(causal, len(enc.layers), enc.layers[0] is not enc.layers[1])
with torch.no_grad():
    print(enc(src), enc(src, src_key_padding_mask=pad)[1], enc(src, mask=causal)[0, 2])
    print(enc(src, mask=causal, is_causal=True)[0, 2], enc(src[0])[1])
dec_layer = nn.TransformerDecoderLayer(16, 2, dim_feedforward=32, batch_first=True,
                                       norm_first=True, activation="gelu")
dec = fixed(nn.TransformerDecoder(dec_layer, 2))
tgt = torch.cos(torch.arange(2 * 3 * 16).float().view(2, 3, 16) * 0.2)
with torch.no_grad():
    print(dec(tgt, src), dec(tgt, src, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3),
                            memory_key_padding_mask=pad)[1])
model = fixed(nn.Transformer(16, 2, 1, 1, 32))
with torch.no_grad():
    out = model(src.transpose(0, 1), tgt.transpose(0, 1))
    print(out.shape, out[:, 1])


class Classifier(nn.Module):
    # A transformer classifier as tutorials write it.
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 4)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)).mean(1))


with torch.no_grad():
    clf = fixed(Classifier())
    ids = (torch.arange(2 * 6).view(2, 6) * 7) % 16
    compiled = torch.compile(clf, backend="eager", dynamic=True)
    print(compiled(ids), compiled((torch.arange(3 * 9).view(3, 9) * 5) % 16))
    compiled = torch.compile(clf, backend="eager")
    ids = (torch.arange(2 * 6).view(2, 6) * 7) % 16
    print(compiled(ids).shape, compiled((torch.arange(2 * 9).view(2, 9) * 5) % 16).shape,
          compiled((torch.arange(3 * 4).view(3, 4) * 3) % 16).shape)
