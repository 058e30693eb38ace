import torch
import torch.nn.functional as F

E, H = 8, 2
# Weights both sides compute alike (cos and sin of ramps).
w = torch.cos(torch.arange(3 * E * E).view(3 * E, E) * 0.7) * 0.4
b = torch.sin(torch.arange(3 * E) * 1.3) * 0.1
out_w = torch.cos(torch.arange(5 * E).view(5, E) * 0.65) * 0.3
out_b = torch.arange(5) * 0.1
s = torch.cos(torch.arange(5 * 2 * E).view(5, 2, E) * 0.47)

# As CLIP's AttentionPool2d calls it: separate projections, their biases concatenated, an
# output projection to another width, no weights returned.
out, none = F.multi_head_attention_forward(
    query=s, key=s, value=s, embed_dim_to_check=E, num_heads=H,
    q_proj_weight=w[:E], k_proj_weight=w[E:2 * E], v_proj_weight=w[2 * E:],
    in_proj_weight=None, in_proj_bias=b, bias_k=None, bias_v=None, add_zero_attn=False,
    dropout_p=0, out_proj_weight=out_w, out_proj_bias=out_b, use_separate_proj_weight=True,
    training=False, need_weights=False)
print(out, none)

# Packed projections, cross-attention with a float mask, the weights per head.
memory = torch.sin(torch.arange(3 * 2 * E).view(3, 2, E) * 0.4)
out, per_head = F.multi_head_attention_forward(
    s, memory, memory, E, H, w, b, None, None, False, 0.0, out_w, None, training=False,
    attn_mask=torch.triu(torch.ones(5, 3), 1) * -2.0, average_attn_weights=False)
print(out, per_head)


class Pool(torch.nn.Module):
    # Compiled under dynamic=True (a sequence length and a batch that vary), the weights
    # as parameters.
    def __init__(self):
        super().__init__()
        self.w, self.b = torch.nn.Parameter(w), torch.nn.Parameter(b)
        self.out_w, self.out_b = torch.nn.Parameter(out_w), torch.nn.Parameter(out_b)

    def forward(self, x):
        return F.multi_head_attention_forward(
            x, x, x, E, H, self.w, self.b, None, None, False, 0.0, self.out_w, self.out_b,
            training=False, need_weights=False)[0]


compiled = torch.compile(Pool(), dynamic=True)
with torch.no_grad():
    print(compiled(s))
    print(compiled(torch.sin(torch.arange(7 * 3 * E).view(7, 3, E) * 0.55)))
