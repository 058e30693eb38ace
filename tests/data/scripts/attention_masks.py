import torch
import torch.nn as nn
import torch.nn.functional as F

E, H = 8, 2
# Weights both sides compute alike (cos of a ramp), given as the module's parameters.
mha = nn.MultiheadAttention(E, H, batch_first=True)
mha.in_proj_weight = nn.Parameter(torch.cos(torch.arange(3 * E * E).view(3 * E, E) * 0.7) * 0.4)
mha.in_proj_bias = nn.Parameter(torch.sin(torch.arange(3 * E) * 1.3) * 0.1)
mha.out_proj.weight = nn.Parameter(torch.cos(torch.arange(E * E).view(E, E) * 1.1) * 0.3)
mha.eval()
with torch.no_grad():
    x = torch.cos(torch.arange(2 * 4 * E).view(2, 4, E) * 0.9)
    causal = torch.ones(4, 4).triu(1) == 1
    out, weights = mha(x, x, x, attn_mask=causal)
    print(out)
    print(weights)
    padding = torch.tensor([[False, False, False, True], [False, False, True, True]])
    out, weights = mha(x, x, x, key_padding_mask=padding)
    print(weights)
    additive = torch.cos(torch.arange(16).view(4, 4) * 0.3)
    out, weights = mha(x, x, x, attn_mask=additive, key_padding_mask=padding,
                       average_attn_weights=False)
    print(out)
    print(weights[1, 0])

    q = torch.sin(torch.arange(2 * 2 * 4 * 3).view(2, 2, 4, 3) * 0.5)
    print(F.scaled_dot_product_attention(q, q, q, attn_mask=causal.logical_not()))
    print(F.scaled_dot_product_attention(q, q, q, attn_mask=additive))
    print(F.scaled_dot_product_attention(q, q, q, is_causal=True))
