import torch
import torch.nn as nn

E, H = 8, 2
# Weights both sides compute alike (cos of a ramp), given as the module's parameters.
mha = nn.MultiheadAttention(E, H, batch_first=True)
mha.in_proj_weight = nn.Parameter(torch.cos(torch.arange(3 * E * E).view(3 * E, E) * 0.7) * 0.4)
mha.in_proj_bias = nn.Parameter(torch.sin(torch.arange(3 * E) * 1.3) * 0.1)
mha.out_proj.weight = nn.Parameter(torch.cos(torch.arange(E * E).view(E, E) * 1.1) * 0.3)
mha.eval()
with torch.no_grad():
    x = torch.cos(torch.arange(2 * 3 * E).view(2, 3, E) * 0.9)
    out, weights = mha(x, x, x)
    print(out)
    print(weights)
    out, per_head = mha(x, x, x, average_attn_weights=False)
    print(per_head)
    memory = torch.sin(torch.arange(2 * 5 * E).view(2, 5, E) * 0.4)
    print(mha(x, memory, memory, need_weights=False))

    # Sequence-first (the default) with separate key and value widths.
    cross = nn.MultiheadAttention(E, 4, kdim=3, vdim=5)
    cross.q_proj_weight = nn.Parameter(torch.cos(torch.arange(E * E).view(E, E) * 0.3) * 0.5)
    cross.k_proj_weight = nn.Parameter(torch.cos(torch.arange(E * 3).view(E, 3) * 0.5) * 0.5)
    cross.v_proj_weight = nn.Parameter(torch.cos(torch.arange(E * 5).view(E, 5) * 0.8) * 0.5)
    cross.out_proj.weight = nn.Parameter(torch.sin(torch.arange(E * E).view(E, E) * 0.6) * 0.3)
    cross.eval()
    q = torch.cos(torch.arange(4 * 2 * E).view(4, 2, E) * 0.2)
    k = torch.sin(torch.arange(6 * 2 * 3).view(6, 2, 3) * 0.7)
    v = torch.cos(torch.arange(6 * 2 * 5).view(6, 2, 5) * 0.35)
    print(cross(q, k, v))

    compiled = torch.compile(mha, dynamic=True)
    print(compiled(x, x, x)[0])
    y = torch.sin(torch.arange(3 * 7 * E).view(3, 7, E) * 0.55)
    print(compiled(y, y, y)[0])
