import torch
import torch.nn as nn

D, HEADS, FF = 8, 2, 12


def encoder_layer(**options):
    # Weights both sides compute alike (cos and sin of ramps), given as parameters.
    layer = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=FF, **options)
    attention = layer.self_attn
    attention.in_proj_weight = nn.Parameter(torch.cos(torch.arange(3 * D * D).view(3 * D, D) * 0.7) * 0.4)
    attention.in_proj_bias = nn.Parameter(torch.sin(torch.arange(3 * D) * 1.3) * 0.1)
    attention.out_proj.weight = nn.Parameter(torch.cos(torch.arange(D * D).view(D, D) * 1.1) * 0.3)
    layer.linear1.weight = nn.Parameter(torch.sin(torch.arange(FF * D).view(FF, D) * 0.45) * 0.3)
    layer.linear1.bias = nn.Parameter(torch.cos(torch.arange(FF) * 0.8) * 0.1)
    layer.linear2.weight = nn.Parameter(torch.cos(torch.arange(D * FF).view(D, FF) * 0.65) * 0.3)
    layer.linear2.bias = nn.Parameter(torch.sin(torch.arange(D) * 0.9) * 0.1)
    return layer.eval()


with torch.no_grad():
    x = torch.cos(torch.arange(2 * 3 * D).view(2, 3, D) * 0.9)
    print(encoder_layer(batch_first=True)(x))
    print(encoder_layer(norm_first=True, activation="gelu")(x))
    compiled = torch.compile(encoder_layer(batch_first=True), dynamic=True)
    print(compiled(x))
    print(compiled(torch.sin(torch.arange(3 * 5 * D).view(3, 5, D) * 0.55)))
