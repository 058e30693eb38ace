//! Model sources shared by the end-to-end tests, written as a learner would paste them.

/// The material's `SimpleNet` (`models/simplenet.py`).
pub const SIMPLENET: &str = tailor::SIMPLENET_SOURCE;

/// `f(x) = x + 1`, the function of most rows of pytorch-semantics.md §9.
pub const ADD_ONE: &str = "\
import torch


def f(x):
    return x + 1
";

/// A view that fails for sizes not divisible by 3, before `y` is used.
pub const VIEW_THEN_ADD: &str = "\
import torch


def f(x, y):
    z = x.view(3, -1)
    return z.sum() + y
";

/// A maximum over dim 0 (`amax`), which has no value over an empty dim.
pub const AMAX_DIM0: &str = "\
import torch


def f(x):
    return x.amax(0)
";

/// `squeeze(1)` then an elementwise op.
pub const SQUEEZE_DIM1: &str = "\
import torch


def f(x):
    return x.squeeze(1) + 1
";

/// §9's 2-D function `f(x) = (x * 2).sum(-1)`, fed `ones(B, 16)`.
pub const SUM_ROWS: &str = "\
import torch


def f(x):
    return (x * 2).sum(-1)
";

/// The Dynamic Shapes guide's specialization example (`==10`, `<=30`: "three graphs").
pub const SPECIALIZE: &str = "\
import torch


def g(x):
    if x.shape[0] == 10:
        return x * 10
    if x.shape[0] <= 30:
        return x * 200
    return x * 300
";

/// A branch on the size: `6 <= s` when taken, `2 <= s <= 5` when not.
pub const BRANCH_GT5: &str = "\
import torch


def f(x):
    if x.shape[0] > 5:
        return x * 2
    return x + 1
";

/// `nn.Linear(64, 32)`: the weight pins the feature dim (§9 row 20).
pub const LINEAR_64_32: &str = "\
import torch
import torch.nn as nn


class Proj(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32)

    def forward(self, x):
        return self.fc(x)
";

/// Two inputs added elementwise: broadcasting equates their sizes.
pub const ADD_XY: &str = "\
import torch


def f(x, y):
    return x + y
";

/// `x.view(-1, 4)`: a divisibility guard.
pub const VIEW_4: &str = "\
import torch


def f(x):
    return x.view(-1, 4)
";

/// `a @ b`: the contraction dims must agree.
pub const MATMUL: &str = "\
import torch


def f(a, b):
    return a @ b
";

/// pytorch-semantics.md §6.4: `Conv1d(4, 8, kernel_size=5, stride=2, padding=1)`, output
/// length `(L - 3)//2 + 1`.
pub const CONV1D_K5_S2: &str = "\
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=5, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)
";

/// The material's Conv1d example: `padding=1, kernel_size=3, stride=1` keeps the length.
pub const CONV1D_K3_S1: &str = "\
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        return self.conv(x)
";

/// The material's `(B, L, D)` sequence example: a projection over `D`, attention-like
/// scores over `L`, and a mean over the sequence.
pub const SEQUENCE: &str = "\
import torch
import torch.nn as nn


class SeqNet(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        scores = h @ h.transpose(1, 2)
        return scores.softmax(-1).mean(1)
";

// ---- the kernel tests' programs, one per op family, with the sizes they are checked at ----

/// A program and the input sizes to check it at.
pub struct Model {
    /// A short name for messages.
    pub name: &'static str,
    /// Python source.
    pub source: String,
    /// Input names, in order.
    pub inputs: &'static [&'static str],
    /// Sizes per case: inputs separated by `;`, dims by `,` (e.g. `8,64;64`).
    pub cases: &'static [&'static str],
}

impl Model {
    /// `x=8,64;y=3` for case `case`.
    pub fn spec(&self, case: &str) -> String {
        self.inputs
            .iter()
            .zip(case.split(';'))
            .map(|(n, dims)| format!("{n}={dims}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// Parses `8,64;3` style size lists: one list per input (a `:int64` dtype suffix is the
/// spec's, not a size).
pub fn sizes(case: &str) -> Vec<Vec<usize>> {
    case.split(';')
        .map(|input| {
            let sizes = input.split(':').next().unwrap_or(input);
            sizes
                .split(',')
                .map(|d| d.trim().parse().expect("a size"))
                .collect()
        })
        .collect()
}

const PRELUDE: &str = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("        {l}\n")).collect()
}

fn module(init: &str, forward: &str) -> String {
    format!(
        "{PRELUDE}\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n{}\n    def forward(self, x):\n{}\n",
        indent(init),
        indent(forward)
    )
}

fn function(params: &str, body: &str) -> String {
    format!("{PRELUDE}\ndef f({params}):\n{}\n", indent(body))
}

fn preset(name: &str) -> String {
    std::fs::read_to_string(format!("{}/models/{name}.py", env!("CARGO_MANIFEST_DIR")))
        .expect("the preset exists")
}

/// The sizes row-wise models are checked at.
const ROWS: &[&str] = &["8,64", "1,64", "3,64", "7,64", "64,64", "127,64", "513,64"];

/// Every model, op programs first, presets last.
pub fn all() -> Vec<Model> {
    vec![
        Model {
            name: "linear_relu",
            source: module(
                "self.fc = nn.Linear(64, 37)",
                "return torch.relu(self.fc(x))",
            ),
            inputs: &["x"],
            cases: ROWS,
        },
        Model {
            name: "linear_3d_no_bias",
            source: module(
                "self.fc = nn.Linear(7, 5, bias=False)",
                "return self.fc(x) * 2 + 1",
            ),
            inputs: &["x"],
            cases: &["2,3,7", "1,1,7", "3,127,7", "5,64,7"],
        },
        Model {
            name: "matmul_broadcast",
            source: function("a, b", "return a @ b"),
            inputs: &["a", "b"],
            cases: &[
                "3,7,5;5,9",
                "2,1,7,5;3,5,9",
                "7;7,3",
                "4,7;7",
                "64,127;127,33",
                "1,513;513,3",
            ],
        },
        Model {
            name: "matmul_transposed_views",
            source: function("a, b", "return a.transpose(0, 1) @ b.t() - 0.5"),
            inputs: &["a", "b"],
            cases: &["5,3;7,5", "64,127;33,64", "3,1;2,3"],
        },
        Model {
            name: "matmul_packed_operands",
            // Reshapes of transposes: offsets with floor divisions, so both operands are
            // packed (an im2col-like copy) rather than viewed in place.
            source: function(
                "a, b",
                "return a.t().reshape(a.shape[0], a.shape[1]) @ b.t().reshape(b.shape[0], b.shape[1])",
            ),
            inputs: &["a", "b"],
            cases: &["5,3;3,7", "64,127;127,33", "1,3;3,1", "7,513;513,3"],
        },
        Model {
            name: "conv1d_dilated",
            source: module(
                "self.conv = nn.Conv1d(3, 6, kernel_size=3, stride=2, padding=2, dilation=2)",
                "return F.silu(self.conv(x))",
            ),
            inputs: &["x"],
            cases: &["2,3,16", "1,3,7", "3,3,64", "2,3,127", "1,3,513"],
        },
        Model {
            name: "conv2d_no_bias",
            source: module(
                "self.conv = nn.Conv2d(2, 5, kernel_size=(3, 2), stride=(1, 2), padding=(1, 0), bias=False)",
                "return self.conv(x)",
            ),
            inputs: &["x"],
            cases: &["2,2,7,9", "1,2,3,4", "1,2,64,33", "1,2,20,127"],
        },
        Model {
            name: "grouped_conv",
            // MobileNet's depthwise convolution with a folded BatchNorm, then a grouped,
            // strided one (ShuffleNet, ResNeXt).
            source: module(
                "self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)\nself.bn = nn.BatchNorm2d(8)\nself.g = nn.Conv2d(8, 12, 3, stride=2, groups=4)",
                "return self.g(F.relu6(self.bn(self.dw(x))))",
            ),
            inputs: &["x"],
            cases: &["2,8,9,9", "1,8,3,3", "1,8,32,17", "3,8,5,127"],
        },
        Model {
            name: "conv_transpose",
            // U-Net's and DCGAN's upsampling: strided and padded, then grouped, then 1-d.
            source: module(
                "self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)\nself.g = nn.ConvTranspose2d(6, 4, 2, stride=2, groups=2, bias=False)",
                "return self.g(F.relu(self.up(x)))",
            ),
            inputs: &["x"],
            cases: &["2,4,3,3", "1,4,1,1", "1,4,16,9", "3,4,5,33"],
        },
        Model {
            name: "conv2d_strided_dilated",
            source: module(
                "self.conv = nn.Conv2d(3, 4, kernel_size=3, stride=(2, 3), padding=(2, 1), dilation=(2, 1))",
                "return self.conv(x) * 0.5 + 1",
            ),
            inputs: &["x"],
            cases: &["1,3,7,9", "2,3,3,4", "1,3,64,33", "1,3,127,7", "1,3,5,513"],
        },
        Model {
            name: "conv_batch_norm",
            source: module(
                "self.conv = nn.Conv2d(3, 4, 3, padding=1)\nself.bn = nn.BatchNorm2d(4)",
                "return torch.relu(self.bn(self.conv(x)))",
            ),
            inputs: &["x"],
            cases: &["1,3,8,8", "2,3,7,5", "1,3,64,64", "1,3,3,127"],
        },
        Model {
            name: "residual_block",
            // A ResNet basic block with a strided 1x1 shortcut, then pooling and a head.
            source: module(
                "self.conv1 = nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)\nself.bn1 = nn.BatchNorm2d(4)\nself.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)\nself.bn2 = nn.BatchNorm2d(4)\nself.down = nn.Conv2d(3, 4, 1, stride=2, bias=False)\nself.bn3 = nn.BatchNorm2d(4)\nself.pool = nn.AvgPool2d(2)\nself.fc = nn.Linear(4, 5)",
                "out = F.relu(self.bn1(self.conv1(x)))\nout = F.relu(self.bn2(self.conv2(out)) + self.bn3(self.down(x)))\nreturn self.fc(self.pool(out).mean(3).mean(2))",
            ),
            inputs: &["x"],
            cases: &["1,3,8,8", "2,3,7,9", "1,3,64,33", "1,3,12,127"],
        },
        Model {
            name: "linear_batch_norm",
            source: module(
                "self.fc = nn.Linear(6, 4)\nself.bn = nn.BatchNorm1d(4)",
                "return self.bn(self.fc(x))",
            ),
            inputs: &["x"],
            cases: &["8,6", "1,6", "3,6", "127,6"],
        },
        Model {
            name: "layer_norm_softmax",
            source: module(
                "self.norm = nn.LayerNorm(64)",
                "z = F.softmax(self.norm(x) * 3, dim=-1)\nreturn z.sum(dim=1, keepdim=True), z.mean(dim=0), x.amax(dim=-1)",
            ),
            inputs: &["x"],
            cases: ROWS,
        },
        Model {
            name: "reductions",
            source: function(
                "x",
                "return F.softmax(x, dim=-1), x.sum(dim=0), x.mean(dim=1, keepdim=True), x.amax(dim=0)",
            ),
            inputs: &["x"],
            cases: &["4,6", "1,5", "3,7", "64,64", "7,127", "2,513"],
        },
        Model {
            name: "softmax_middle_dim",
            source: function(
                "x",
                "return torch.softmax(x, dim=1) + x.sum(dim=2, keepdim=True), x.sum(dim=(0, 2))",
            ),
            inputs: &["x"],
            cases: &["2,5,3", "3,7,4", "2,127,3"],
        },
        Model {
            name: "log_softmax",
            // The spellings: F's keyword dim, torch's positional one (a middle dim: strided
            // rows), the method's with dtype=None, F's implicit dim (0 for a 3-D input); an
            // epilogue on the first.
            source: function(
                "x",
                "a = F.log_softmax(x * 2, dim=-1)\nb = torch.log_softmax(x, 1)\nc = x.log_softmax(dim=0, dtype=None)\nreturn a + 1, b, c, F.log_softmax(x)",
            ),
            inputs: &["x"],
            cases: &["2,5,3", "1,1,1", "3,7,4", "2,127,3", "1,513,2", "4,6,64"],
        },
        Model {
            name: "activations",
            // The activations of MobileNet-style and GAN files, as PyTorch decomposes them
            // (clamp is a maximum then a minimum), and log/abs/rsqrt/maximum.
            source: function(
                "x",
                "a = F.leaky_relu(x, 0.2) + F.relu6(x * 4) + F.hardswish(x * 4) + F.hardsigmoid(x * 4)\nb = torch.log(x.abs() + 1) * torch.rsqrt(x * x + 1)\nc = torch.clamp(x, min=-0.5, max=0.25) + x.clamp(max=0.1) + nn.LeakyReLU()(x)\nreturn a, b, c, torch.maximum(x, x.t().t() * 0.5), abs(x).minimum(x * x)",
            ),
            inputs: &["x"],
            cases: &["2,5", "1,1", "3,127", "4,513"],
        },
        Model {
            name: "masks",
            // nanoGPT's causal mask (a comparison of a triangle, masked_fill with -inf, then
            // softmax), torch.where with a number, triu above the diagonal, arange over a
            // symbolic length, split, and a one-element index list keeping its dim.
            source: function(
                "x",
                "t = x.size(1)\natt = (x @ x.transpose(-2, -1)).masked_fill(torch.tril(torch.ones(t, t)) == 0, float('-inf'))\nw = torch.where(x > 0, x, 0.5 * x)\na, b = x.split(2, dim=2)\nreturn torch.softmax(att, dim=-1), w, x.triu(1), torch.arange(0, t) * 2 + 1, a - b, x[:, [-1], :]",
            ),
            inputs: &["x"],
            cases: &["2,5,4", "1,1,4", "3,7,4", "2,33,4"],
        },
        Model {
            name: "reshuffles",
            // Super-resolution's pixel shuffle, U-Net's and fast-neural-style's upsampling
            // and reflection pad, GroupNorm, repeat/expand/stack and powers: views, cats and
            // reductions as PyTorch decomposes them.
            source: function(
                "x",
                "up = F.interpolate(F.pixel_shuffle(x, 2), scale_factor=2)\npadded = F.pad(up, (2, 1, 1, 1), mode='reflect')\nnorm = F.group_norm(padded, 2) + F.pad(up, (1, 0, 0, 1), mode='replicate').mean()\nreturn norm ** 3, x.repeat(1, 1, 2, 1), torch.stack([x, x * 2], -1).expand(2, -1, -1, -1, -1, -1), x.abs() ** 1.5",
            ),
            inputs: &["x"],
            cases: &["2,8,3,3", "1,8,2,5", "3,8,7,2", "1,8,16,33"],
        },
        Model {
            name: "pads",
            // U-Net's pad to the skip connection's size (symbolic, 0 or 1), a symbolic crop,
            // and a pad with a fill value read by a convolution through its own zero padding.
            source: module(
                "self.conv = nn.Conv2d(3, 2, 3, padding=1)",
                "d = x.size(3) % 2\nup = F.pad(x, [d, 1 - d, x.size(2) // 2 - 1, -1])\nreturn self.conv(F.pad(x, [d, 0, 1, d], value=0.5)), up * 2, F.pad(x, (-1, 2), value=-1.5)",
            ),
            inputs: &["x"],
            cases: &["1,3,4,5", "2,3,2,2", "1,3,7,8", "2,3,9,33"],
        },
        Model {
            name: "bilinear",
            // Segmentation heads' resize to a symbolic size, U-Net's bilinear upsampling with
            // aligned corners, a 1-d linear one, and a conv reading a resize.
            source: module(
                "self.conv = nn.Conv2d(3, 2, 3, padding=1)",
                "up = F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)\nto = F.interpolate(x, size=(x.size(2) + 3, x.size(3) // 2 + 1), mode='bilinear')\nline = F.interpolate(x.flatten(2), scale_factor=3, mode='linear')\nreturn self.conv(up), to * 2, line",
            ),
            inputs: &["x"],
            cases: &["1,3,4,5", "2,3,2,2", "1,3,7,8", "2,3,9,33"],
        },
        Model {
            name: "nearest",
            // Nearest resizes to symbolic sizes (U-Net's and FPN's upsampling to a skip
            // connection), where PyTorch's float32 scale and exact integer arithmetic part
            // ways (2 to 82 positions, 3 to 123), fused into the next op.
            source: function(
                "x",
                "return F.interpolate(x, size=(2 * x.size(2) + 1, x.size(3) * 3 - 1)) * 2, F.interpolate(x.flatten(2), size=41 * x.size(2))",
            ),
            inputs: &["x"],
            cases: &["1,3,4,5", "2,3,2,2", "1,3,7,8", "2,1,2,41", "1,2,3,41"],
        },
        Model {
            name: "unary_functions",
            // Every function added for real model files: trigonometry (sinusoidal positions),
            // erf (hand-written GELUs), the roundings and sign, fused into one kernel.
            source: function(
                "x",
                "return torch.sin(x) * torch.cos(x * 3) + torch.erf(x), (x * 2.5).floor() + (x * 2.5).ceil() + (x * 2.5).round() + (x * 2.5).trunc() + x.sign()",
            ),
            inputs: &["x"],
            cases: &["2,5", "1,1", "3,127", "4,513"],
        },
        Model {
            name: "powers",
            // torch.pow where WGSL's pow is undefined or off by an ulp: negative bases to
            // whole powers (`(-1) ** k`), 0 ** 0, and whole powers of whole numbers.
            source: function(
                "x",
                "k = (x * 3).round()\nreturn (-2.0) ** k.abs(), k ** torch.full_like(x, 3.0), x.abs() ** 1.7, k ** 0, 3 ** k.abs()",
            ),
            inputs: &["x"],
            cases: &["2,5", "1,1", "3,127"],
        },
        Model {
            name: "random",
            // The VAE's reparameterisation and friends: draws in forward, of symbolic size.
            source: function(
                "x",
                "return x + torch.randn_like(x) * 0.5, torch.rand_like(x) * 2, torch.randn(x.size(0), 3)",
            ),
            inputs: &["x"],
            cases: &["2,5", "1,1", "3,127", "4,513"],
        },
        Model {
            name: "layer_norm_2d",
            source: module("self.norm = nn.LayerNorm((3, 4))", "return self.norm(x)"),
            inputs: &["x"],
            cases: &["5,3,4", "1,3,4", "127,3,4"],
        },
        Model {
            name: "pooling",
            source: module(
                "self.pool = nn.MaxPool2d(3, stride=2, padding=1)\nself.avg = nn.AvgPool2d(2)",
                "return self.pool(x), self.avg(x)",
            ),
            inputs: &["x"],
            cases: &["1,2,8,8", "2,3,7,9", "1,1,64,33", "1,1,3,127"],
        },
        Model {
            name: "views_and_cat",
            source: function(
                "x",
                "a = x[:, 1:]\nb = x[..., 0]\nc = x.reshape(-1)\nd = torch.cat([x, x * 2], dim=1)\nreturn a.flatten(), b + 1, c, d, x.permute(1, 0)",
            ),
            inputs: &["x"],
            cases: &["4,6", "3,7", "64,64", "7,127", "2,513"],
        },
        Model {
            name: "elementwise",
            source: function(
                "x, y",
                "u = F.gelu(x) + torch.sigmoid(y) * torch.tanh(x)\nv = 2 - torch.exp(-x) / torch.sqrt(x * x + 1)\nreturn u, v / x.shape[1], F.silu(v) + y",
            ),
            inputs: &["x", "y"],
            cases: &["4,6;6", "1,1;1", "3,7;7", "64,127;127", "513,3;3"],
        },
        Model {
            name: "embedding",
            // 16 rows: random int64 ids are drawn in 0..16, and an id past the table is
            // PyTorch's IndexError in the reference.
            source: module("self.emb = nn.Embedding(16, 4)", "return self.emb(x) * 2"),
            inputs: &["x"],
            cases: &["3,5:int64", "1,1:int64", "7,2:int64", "64,3:int64"],
        },
        Model {
            name: "returned_input",
            source: function("x, y", "return x, y.t()"),
            inputs: &["x", "y"],
            cases: &["3,4;5,6", "1,2;3,1"],
        },
        Model {
            name: "simplenet",
            source: preset("simplenet"),
            inputs: &["x"],
            cases: &["8,64", "1,64", "3,64", "7,64", "64,64", "127,64", "513,64"],
        },
        Model {
            name: "bert_block",
            source: preset("bert_block"),
            inputs: &["x"],
            cases: &[
                "2,8,64", "1,1,64", "1,3,64", "2,7,64", "1,64,64", "1,127,64",
            ],
        },
        Model {
            name: "yolo_stack",
            source: preset("yolo_stack"),
            inputs: &["image"],
            cases: &["1,3,32,32", "1,3,7,7", "2,3,33,47", "1,3,64,64"],
        },
        Model {
            name: "conv1d",
            source: preset("conv1d"),
            inputs: &["x"],
            cases: &["2,4,16", "1,4,1", "3,4,7", "2,4,127", "1,4,513"],
        },
        Model {
            name: "add_one",
            source: preset("add_one"),
            inputs: &["x"],
            cases: &["3,5", "1,1", "7,3", "64,127", "513,2"],
        },
    ]
}

/// The model called `name`.
pub fn get(name: &str) -> Model {
    all()
        .into_iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no model {name}"))
}
