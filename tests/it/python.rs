//! Real Python that a hand-written subset would not run, captured verbatim: class
//! attributes, lists built by arithmetic, dict configs, `@dataclass` configs, `while` loops
//! over sizes, and the model's errors at their line:col. The graph text and the
//! `ShapeEnv`'s guards and events are snapshots.

use crate::models;

use tailor::frontend::{self, FrontendError};
use tailor::graph::{DType, TracedArg};
use tailor::shape::{DimPolicy, DimSource, ShapeEnv};

/// What a capture produced, as text: the graph, then every guard and event.
fn report(result: Result<(tailor::graph::Graph, ShapeEnv), FrontendError>) -> String {
    match result {
        Err(err) => format!("error: {err}"),
        Ok((graph, env)) => {
            let mut text = graph.to_string();
            for guard in env.guards() {
                text.push_str(&format!("guard {} ({})\n", guard.rel, guard.origin));
            }
            for (node, event) in env.events() {
                text.push_str(&format!("event @{node} {event}\n"));
            }
            text
        }
    }
}

/// The input shapes of one case (`8,64;64`) under `policy`.
fn input_shapes(
    env: &mut ShapeEnv,
    names: &[String],
    case: &str,
    policy: DimPolicy,
) -> Vec<(String, TracedArg)> {
    let why = match policy {
        DimPolicy::Static => "dynamic=False",
        _ => "dynamic=True",
    };
    names
        .iter()
        .zip(models::sizes(case))
        .map(|(name, dims)| {
            let shape = dims
                .iter()
                .enumerate()
                .map(|(dim, &value)| {
                    let source = DimSource::dim(name, dim);
                    env.add_input_dim(source, value as i64, policy, None, why)
                        .expect("no marks, so no range error")
                })
                .collect();
            (name.clone(), TracedArg::Tensor(shape, DType::Float32))
        })
        .collect()
}

fn capture(source: &str, case: &str, policy: DimPolicy) -> String {
    let run = || {
        let program = frontend::parse(source)?;
        let entry = program.entry(None)?;
        let mut env = ShapeEnv::new();
        let shapes = input_shapes(&mut env, &entry.inputs, case, policy);
        let graph = frontend::capture(&program, &entry, &shapes, &mut env)?.graph;
        Ok((graph, env))
    };
    report(run())
}

/// The capture of `source` at `case` with every dim dynamic (`dynamic=True`).
#[track_caller]
fn check_capture(source: &str, case: &str, expected: expect_test::Expect) {
    expected.assert_eq(&capture(source, case, DimPolicy::Duck));
}

/// A ResNet block as torchvision writes it: a class attribute (`expansion = 1`), a stride
/// list built as `[stride] + [1] * (n - 1)`, an empty `nn.Sequential` shortcut.
const RESNET: &str = "\
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(self.expansion * planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class TinyResNet(nn.Module):
    def __init__(self, block=BasicBlock, num_blocks=(1, 2), num_classes=10):
        super().__init__()
        self.in_planes = 8
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = self._make_layer(block, 8, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 16, num_blocks[1], stride=2)
        self.linear = nn.Linear(16 * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        return self.linear(out)
";

#[test]
fn resnet_block_with_class_attribute_and_stride_list() {
    check_capture(
        RESNET,
        "2,3,8,8",
        expect_test::expect![[r#"
            graph(x: f32[s0, 3, s2, s2]):
              %x = input x : f32[s0, 3, s2, s2]
              %conv1_weight = param conv1.weight : f32[8, 3, 3, 3]
              %conv2d = conv2d(%x, %conv1_weight, stride=[1, 1], padding=[1, 1], dilation=[1, 1]) : f32[s0, 8, s2, s2]  # 47:31
              %bn1_running_mean = param bn1.running_mean : f32[8]
              %bn1_running_var = param bn1.running_var : f32[8]
              %bn1_weight = param bn1.weight : f32[8]
              %bn1_bias = param bn1.bias : f32[8]
              %batch_norm = batch_norm(%conv2d, %bn1_running_mean, %bn1_running_var, %bn1_weight, %bn1_bias, eps=0.00001) : f32[s0, 8, s2, s2]  # 47:22
              %relu = relu(%batch_norm) : f32[s0, 8, s2, s2]  # 47:15
              %layer1_0_conv1_weight = param layer1.0.conv1.weight : f32[8, 8, 3, 3]
              %conv2d_1 = conv2d(%relu, %layer1_0_conv1_weight, stride=[1, 1], padding=[1, 1], dilation=[1, 1]) : f32[s0, 8, s2, s2]  # 23:31
              %layer1_0_bn1_running_mean = param layer1.0.bn1.running_mean : f32[8]
              %layer1_0_bn1_running_var = param layer1.0.bn1.running_var : f32[8]
              %layer1_0_bn1_weight = param layer1.0.bn1.weight : f32[8]
              %layer1_0_bn1_bias = param layer1.0.bn1.bias : f32[8]
              %batch_norm_1 = batch_norm(%conv2d_1, %layer1_0_bn1_running_mean, %layer1_0_bn1_running_var, %layer1_0_bn1_weight, %layer1_0_bn1_bias, eps=0.00001) : f32[s0, 8, s2, s2]  # 23:22
              %relu_1 = relu(%batch_norm_1) : f32[s0, 8, s2, s2]  # 23:15
              %layer1_0_conv2_weight = param layer1.0.conv2.weight : f32[8, 8, 3, 3]
              %conv2d_2 = conv2d(%relu_1, %layer1_0_conv2_weight, stride=[1, 1], padding=[1, 1], dilation=[1, 1]) : f32[s0, 8, s2, s2]  # 24:24
              %layer1_0_bn2_running_mean = param layer1.0.bn2.running_mean : f32[8]
              %layer1_0_bn2_running_var = param layer1.0.bn2.running_var : f32[8]
              %layer1_0_bn2_weight = param layer1.0.bn2.weight : f32[8]
              %layer1_0_bn2_bias = param layer1.0.bn2.bias : f32[8]
              %batch_norm_2 = batch_norm(%conv2d_2, %layer1_0_bn2_running_mean, %layer1_0_bn2_running_var, %layer1_0_bn2_weight, %layer1_0_bn2_bias, eps=0.00001) : f32[s0, 8, s2, s2]  # 24:15
              %add = add(%batch_norm_2, %relu) : f32[s0, 8, s2, s2]  # 25:23
              %relu_2 = relu(%add) : f32[s0, 8, s2, s2]  # 25:16
              %layer2_0_conv1_weight = param layer2.0.conv1.weight : f32[16, 8, 3, 3]
              %conv2d_3 = conv2d(%relu_2, %layer2_0_conv1_weight, stride=[2, 2], padding=[1, 1], dilation=[1, 1]) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 23:31
              %layer2_0_bn1_running_mean = param layer2.0.bn1.running_mean : f32[16]
              %layer2_0_bn1_running_var = param layer2.0.bn1.running_var : f32[16]
              %layer2_0_bn1_weight = param layer2.0.bn1.weight : f32[16]
              %layer2_0_bn1_bias = param layer2.0.bn1.bias : f32[16]
              %batch_norm_3 = batch_norm(%conv2d_3, %layer2_0_bn1_running_mean, %layer2_0_bn1_running_var, %layer2_0_bn1_weight, %layer2_0_bn1_bias, eps=0.00001) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 23:22
              %relu_3 = relu(%batch_norm_3) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 23:15
              %layer2_0_conv2_weight = param layer2.0.conv2.weight : f32[16, 16, 3, 3]
              %conv2d_4 = conv2d(%relu_3, %layer2_0_conv2_weight, stride=[1, 1], padding=[1, 1], dilation=[1, 1]) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 24:24
              %layer2_0_bn2_running_mean = param layer2.0.bn2.running_mean : f32[16]
              %layer2_0_bn2_running_var = param layer2.0.bn2.running_var : f32[16]
              %layer2_0_bn2_weight = param layer2.0.bn2.weight : f32[16]
              %layer2_0_bn2_bias = param layer2.0.bn2.bias : f32[16]
              %batch_norm_4 = batch_norm(%conv2d_4, %layer2_0_bn2_running_mean, %layer2_0_bn2_running_var, %layer2_0_bn2_weight, %layer2_0_bn2_bias, eps=0.00001) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 24:15
              %layer2_0_shortcut_0_weight = param layer2.0.shortcut.0.weight : f32[16, 8, 1, 1]
              %conv2d_5 = conv2d(%relu_2, %layer2_0_shortcut_0_weight, stride=[2, 2], padding=[0, 0], dilation=[1, 1]) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 25:29
              %layer2_0_shortcut_1_running_mean = param layer2.0.shortcut.1.running_mean : f32[16]
              %layer2_0_shortcut_1_running_var = param layer2.0.shortcut.1.running_var : f32[16]
              %layer2_0_shortcut_1_weight = param layer2.0.shortcut.1.weight : f32[16]
              %layer2_0_shortcut_1_bias = param layer2.0.shortcut.1.bias : f32[16]
              %batch_norm_5 = batch_norm(%conv2d_5, %layer2_0_shortcut_1_running_mean, %layer2_0_shortcut_1_running_var, %layer2_0_shortcut_1_weight, %layer2_0_shortcut_1_bias, eps=0.00001) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 25:29
              %add_1 = add(%batch_norm_4, %batch_norm_5) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 25:23
              %relu_4 = relu(%add_1) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 25:16
              %layer2_1_conv1_weight = param layer2.1.conv1.weight : f32[16, 16, 3, 3]
              %conv2d_6 = conv2d(%relu_4, %layer2_1_conv1_weight, stride=[1, 1], padding=[1, 1], dilation=[1, 1]) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 23:31
              %layer2_1_bn1_running_mean = param layer2.1.bn1.running_mean : f32[16]
              %layer2_1_bn1_running_var = param layer2.1.bn1.running_var : f32[16]
              %layer2_1_bn1_weight = param layer2.1.bn1.weight : f32[16]
              %layer2_1_bn1_bias = param layer2.1.bn1.bias : f32[16]
              %batch_norm_6 = batch_norm(%conv2d_6, %layer2_1_bn1_running_mean, %layer2_1_bn1_running_var, %layer2_1_bn1_weight, %layer2_1_bn1_bias, eps=0.00001) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 23:22
              %relu_5 = relu(%batch_norm_6) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 23:15
              %layer2_1_conv2_weight = param layer2.1.conv2.weight : f32[16, 16, 3, 3]
              %conv2d_7 = conv2d(%relu_5, %layer2_1_conv2_weight, stride=[1, 1], padding=[1, 1], dilation=[1, 1]) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 24:24
              %layer2_1_bn2_running_mean = param layer2.1.bn2.running_mean : f32[16]
              %layer2_1_bn2_running_var = param layer2.1.bn2.running_var : f32[16]
              %layer2_1_bn2_weight = param layer2.1.bn2.weight : f32[16]
              %layer2_1_bn2_bias = param layer2.1.bn2.bias : f32[16]
              %batch_norm_7 = batch_norm(%conv2d_7, %layer2_1_bn2_running_mean, %layer2_1_bn2_running_var, %layer2_1_bn2_weight, %layer2_1_bn2_bias, eps=0.00001) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 24:15
              %add_2 = add(%batch_norm_7, %relu_4) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 25:23
              %relu_6 = relu(%add_2) : f32[s0, 16, (s2 - 1)//2 + 1, (s2 - 1)//2 + 1]  # 25:16
              %avg_pool2d = avg_pool2d(%relu_6, kernel=[4, 4], stride=[4, 4], padding=[0, 0]) : f32[s0, 16, ((s2 - 1)//2 - 3)//4 + 1, ((s2 - 1)//2 - 3)//4 + 1]  # 49:15
              %reshape = reshape(%avg_pool2d) : f32[s0, 16*(((s2 - 1)//2 - 3)//4)**2 + 32*(((s2 - 1)//2 - 3)//4) + 16]  # 50:15
              %linear_weight = param linear.weight : f32[10, 16]
              %linear_bias = param linear.bias : f32[10]
              %linear = linear(%reshape, %linear_weight, %linear_bias) : f32[s0, 10]  # 51:16
              return (%linear)
            guard s1 == 3 (conv2d at line 47, col 31)
            guard (s2 - 1)//2 + 1 != 1 (conv2d at line 23, col 31)
            guard (s2 - 1)//2 + 1 >= 4 (avg_pool2d at line 49, col 15)
            guard ((s2 - 1)//2 - 3)//4 + 1 == 1 (reshape at line 50, col 15)
            guard (((s2 - 1)//2 - 3)//4)**2 + 2*(((s2 - 1)//2 - 3)//4) + 1 == 1 (reshape at line 50, col 15)
            event @0 create_symbol s0 = 2 for L['x'].size()[0] [2, int_oo] (dynamic=True)
            event @0 create_symbol s1 = 3 for L['x'].size()[1] [2, int_oo] (dynamic=True)
            event @0 create_symbol s2 = 8 for L['x'].size()[2] [2, int_oo] (dynamic=True)
            event @0 duck sizing: L['x'].size()[3] reuses s2 (same size)
            event @2 eval s1 == 3 [guard added] (conv2d at line 47, col 31)
            event @2 set_replacement s1 = 3 (range_refined_to_singleton)
            event @2 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 47, col 31)
            event @2 eval s2 != 1 [statically known, no guard] (conv2d at line 47, col 31)
            event @2 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 47, col 31)
            event @2 eval s2 != 1 [statically known, no guard] (conv2d at line 47, col 31)
            event @8 eval s0 != 1 [statically known, no guard] (relu at line 47, col 15)
            event @8 eval s2 != 1 [statically known, no guard] (relu at line 47, col 15)
            event @10 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 23, col 31)
            event @10 eval s2 != 1 [statically known, no guard] (conv2d at line 23, col 31)
            event @10 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 23, col 31)
            event @10 eval s2 != 1 [statically known, no guard] (conv2d at line 23, col 31)
            event @16 eval s0 != 1 [statically known, no guard] (relu at line 23, col 15)
            event @16 eval s2 != 1 [statically known, no guard] (relu at line 23, col 15)
            event @18 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 24, col 24)
            event @18 eval s2 != 1 [statically known, no guard] (conv2d at line 24, col 24)
            event @18 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 24, col 24)
            event @18 eval s2 != 1 [statically known, no guard] (conv2d at line 24, col 24)
            event @24 eval s0 != 1 [statically known, no guard] (add at line 25, col 23)
            event @24 eval s2 != 1 [statically known, no guard] (add at line 25, col 23)
            event @25 eval s0 != 1 [statically known, no guard] (relu at line 25, col 16)
            event @25 eval s2 != 1 [statically known, no guard] (relu at line 25, col 16)
            event @27 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 23, col 31)
            event @27 eval (s2 - 1)//2 + 1 != 1 [guard added] (conv2d at line 23, col 31)
            event @27 eval s2 + 2 >= 3 [statically known, no guard] (conv2d at line 23, col 31)
            event @33 eval s0 != 1 [statically known, no guard] (relu at line 23, col 15)
            event @35 eval (s2 - 1)//2 + 3 >= 3 [statically known, no guard] (conv2d at line 24, col 24)
            event @42 eval s2 >= 1 [statically known, no guard] (conv2d at line 25, col 29)
            event @48 eval s0 != 1 [statically known, no guard] (add at line 25, col 23)
            event @49 eval s0 != 1 [statically known, no guard] (relu at line 25, col 16)
            event @51 eval (s2 - 1)//2 + 3 >= 3 [statically known, no guard] (conv2d at line 23, col 31)
            event @57 eval s0 != 1 [statically known, no guard] (relu at line 23, col 15)
            event @59 eval (s2 - 1)//2 + 3 >= 3 [statically known, no guard] (conv2d at line 24, col 24)
            event @65 eval s0 != 1 [statically known, no guard] (add at line 25, col 23)
            event @66 eval s0 != 1 [statically known, no guard] (relu at line 25, col 16)
            event @67 eval (s2 - 1)//2 + 1 >= 4 [guard added] (avg_pool2d at line 49, col 15)
            event @67 range of s2 refined to [7, int_oo]
            event @67 eval (s2 - 1)//2 + 1 >= 4 [statically known, no guard] (avg_pool2d at line 49, col 15)
            event @68 eval ((s2 - 1)//2 - 3)//4 + 1 == 1 [guard added] (reshape at line 50, col 15)
            event @68 eval (((s2 - 1)//2 - 3)//4)**2 + 2*(((s2 - 1)//2 - 3)//4) + 1 == 1 [guard added] (reshape at line 50, col 15)
        "#]],
    );
}

/// A module-level dict config, a dict of functions, and `hasattr` on the library.
const DICT_CONFIG: &str = "\
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = {'d_in': 32, 'd_hidden': 64, 'activation': 'gelu'}
ACTIVATIONS = {'relu': F.relu, 'gelu': F.gelu}


class ConfiguredMLP(nn.Module):
    def __init__(self, config=CONFIG):
        super().__init__()
        self.fc1 = nn.Linear(config['d_in'], config['d_hidden'])
        self.fc2 = nn.Linear(config['d_hidden'], config['d_in'])
        self.act = ACTIVATIONS[config['activation']]
        self.flash = hasattr(F, 'grid_sample')

    def forward(self, x):
        h = self.act(self.fc1(x))
        return self.fc2(h) if not self.flash else h
";

#[test]
fn module_level_dict_config() {
    check_capture(
        DICT_CONFIG,
        "8,32",
        expect_test::expect![[r#"
            graph(x: f32[s0, 32]):
              %x = input x : f32[s0, 32]
              %fc1_weight = param fc1.weight : f32[64, 32]
              %fc1_bias = param fc1.bias : f32[64]
              %linear = linear(%x, %fc1_weight, %fc1_bias) : f32[s0, 64]  # 18:22
              %gelu = gelu(%linear) : f32[s0, 64]  # 18:13
              return (%gelu)
            guard s1 == 32 (linear at line 18, col 22)
            event @0 create_symbol s0 = 8 for L['x'].size()[0] [2, int_oo] (dynamic=True)
            event @0 create_symbol s1 = 32 for L['x'].size()[1] [2, int_oo] (dynamic=True)
            event @3 eval s1 == 32 [guard added] (linear at line 18, col 22)
            event @3 set_replacement s1 = 32 (range_refined_to_singleton)
            event @4 eval s0 != 1 [statically known, no guard] (gelu at line 18, col 13)
        "#]],
    );
}

/// nanoGPT's style: a `@dataclass` config with `typing` annotations, and an `assert` on a
/// size that becomes a guard.
const DATACLASS_CONFIG: &str = "\
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class BlockConfig:
    block_size: int = 64
    n_embd: int = 32
    bias: Optional[bool] = True


class Block(nn.Module):
    def __init__(self, config: BlockConfig = BlockConfig()):
        super().__init__()
        self.config = config
        self.ln = nn.LayerNorm(config.n_embd)
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)

    def forward(self, x):
        b, t, c = x.size()
        assert t <= self.config.block_size, f'sequence of {t} is longer than {self.config.block_size}'
        return x + self.proj(F.gelu(self.fc(self.ln(x))))
";

#[test]
fn dataclass_config_and_assert_on_a_size() {
    check_capture(
        DATACLASS_CONFIG,
        "2,16,32",
        expect_test::expect![[r#"
            graph(x: f32[s0, s1, 32]):
              %x = input x : f32[s0, s1, 32]
              %ln_weight = param ln.weight : f32[32]
              %ln_bias = param ln.bias : f32[32]
              %layer_norm = layer_norm(%x, %ln_weight, %ln_bias, dims=1, eps=0.00001) : f32[s0, s1, 32]  # 27:45
              %fc_weight = param fc.weight : f32[128, 32]
              %fc_bias = param fc.bias : f32[128]
              %linear = linear(%layer_norm, %fc_weight, %fc_bias) : f32[s0, s1, 128]  # 27:37
              %gelu = gelu(%linear) : f32[s0, s1, 128]  # 27:30
              %proj_weight = param proj.weight : f32[32, 128]
              %proj_bias = param proj.bias : f32[32]
              %linear_1 = linear(%gelu, %proj_weight, %proj_bias) : f32[s0, s1, 32]  # 27:20
              %add = add(%x, %linear_1) : f32[s0, s1, 32]  # 27:16
              return (%add)
            guard s1 <= 64 ('assert' on sizes at line 26, col 9)
            guard s2 == 32 (layer_norm at line 27, col 45)
            event @0 create_symbol s0 = 2 for L['x'].size()[0] [2, int_oo] (dynamic=True)
            event @0 create_symbol s1 = 16 for L['x'].size()[1] [2, int_oo] (dynamic=True)
            event @0 create_symbol s2 = 32 for L['x'].size()[2] [2, int_oo] (dynamic=True)
            event @1 eval s1 <= 64 [guard added] ('assert' on sizes at line 26, col 9)
            event @1 range of s1 refined to [2, 64]
            event @3 eval s0 != 1 [statically known, no guard] (layer_norm at line 27, col 45)
            event @3 eval s1 != 1 [statically known, no guard] (layer_norm at line 27, col 45)
            event @3 eval s2 != 1 [statically known, no guard] (layer_norm at line 27, col 45)
            event @3 eval s2 == 32 [guard added] (layer_norm at line 27, col 45)
            event @3 set_replacement s2 = 32 (range_refined_to_singleton)
            event @7 eval s0 != 1 [statically known, no guard] (gelu at line 27, col 30)
            event @7 eval s1 != 1 [statically known, no guard] (gelu at line 27, col 30)
            event @11 eval s0 != 1 [statically known, no guard] (add at line 27, col 16)
            event @11 eval s1 != 1 [statically known, no guard] (add at line 27, col 16)
        "#]],
    );
}

/// Python control flow the default front end refuses: a `while` loop on a size, and
/// `range()` of a size, which specialises it (a guard `s == value`, as Dynamo does).
const SIZE_LOOPS: &str = "\
import torch


def f(x):
    n = x.shape[0]
    halvings = 0
    while n > 1:
        n = n // 2
        halvings += 1
    for i in range(x.shape[1]):
        x = x + i
    return x * halvings
";

#[test]
fn while_loop_and_range_of_a_size() {
    check_capture(
        SIZE_LOOPS,
        "8,3",
        expect_test::expect![[r#"
            graph(x: f32[s0, 3]):
              %x = input x : f32[s0, 3]
              %add = add(%x, 0) : f32[s0, 3]  # 11:13
              %add_1 = add(%add, 1) : f32[s0, 3]  # 11:13
              %add_2 = add(%add_1, 2) : f32[s0, 3]  # 11:13
              %mul = mul(%add_2, 3) : f32[s0, 3]  # 12:12
              return (%mul)
            guard s0//2 > 1 ('while' on sizes at line 7, col 5)
            guard s0//4 > 1 ('while' on sizes at line 7, col 5)
            guard s0//8 <= 1 ('while' on sizes at line 7, col 5)
            guard s1 == 3 ('int()' on sizes at line 10, col 14)
            event @0 create_symbol s0 = 8 for L['x'].size()[0] [2, int_oo] (dynamic=True)
            event @0 create_symbol s1 = 3 for L['x'].size()[1] [2, int_oo] (dynamic=True)
            event @1 eval s0 > 1 [statically known, no guard] ('while' on sizes at line 7, col 5)
            event @1 eval s0//2 > 1 [guard added] ('while' on sizes at line 7, col 5)
            event @1 range of s0 refined to [4, int_oo]
            event @1 eval s0//4 > 1 [guard added] ('while' on sizes at line 7, col 5)
            event @1 range of s0 refined to [8, int_oo]
            event @1 eval s0//8 <= 1 [guard added] ('while' on sizes at line 7, col 5)
            event @1 range of s0 refined to [8, 15]
            event @1 eval s1 == 3 [guard added] ('int()' on sizes at line 10, col 14)
            event @1 set_replacement s1 = 3 (range_refined_to_singleton)
            event @1 eval s0 != 1 [statically known, no guard] (add at line 11, col 13)
            event @2 eval s0 != 1 [statically known, no guard] (add at line 11, col 13)
            event @3 eval s0 != 1 [statically known, no guard] (add at line 11, col 13)
            event @4 eval s0 != 1 [statically known, no guard] (mul at line 12, col 12)
        "#]],
    );
}

/// Errors in the model, each at the user's line:col.
#[test]
fn model_errors_name_their_line_and_column() {
    let programs = [
        (
            "import torch\n\n\ndef f(x):\n    assert x.shape[0] > 4\n    return x\n",
            "3",
        ),
        ("import torch\n\n\ndef f(x):\n    return y + x\n", "3"),
        (
            "import torch\n\n\ndef g(x):\n    if x.sum() > 0:\n        return x\n    return -x\n\n\ndef f(x):\n    return g(x * 2)\n",
            "3",
        ),
        (
            "import torch\n\n\ndef f(x):\n    return x[0, 0, 0]\n",
            "2,3",
        ),
        ("import torch\n\n\ndef f(x):\n    return (x, 3)\n", "2,3"),
        ("import torch\n\n\ndef f(x):\n    return x +\n", "2"),
    ];
    let reports: Vec<String> = programs
        .iter()
        .map(|(source, case)| capture(source, case, DimPolicy::Duck))
        .collect();
    expect_test::expect![[r#"
        error: line 5, col 5: AssertionError: the assertion failed for these input sizes
        error: line 5, col 12: name 'y' is not defined
        graph(x: f32[s0]):
          %x = input x : f32[s0]
          %mul = mul(%x, 2) : f32[s0]  # 11:14
          return (%mul)
        event @0 create_symbol s0 = 3 for L['x'].size()[0] [2, int_oo] (dynamic=True)
        event @1 eval s0 != 1 [statically known, no guard] (mul at line 11, col 14)

        error: line 5, col 12: IndexError: too many indices for tensor of dimension 2
        error: line 4, col 1: returning an int from forward is not supported (return a tensor, or tuples, lists and dicts (with string keys) of tensors and None)
        error: line 5, col 15: syntax error: Expected an expression"#]].assert_eq(&reports.join("\n"));
}

/// An endless loop at module level (an assignment, so it runs) is stopped by the step
/// budget and reported at its line; `parse` itself never hangs.
#[test]
fn an_endless_loop_at_module_level_is_stopped() {
    let source = "import torch\n\nN = 0\nwhile_true = [N for N in iter(int, 1)]\n\n\ndef f(x):\n    return x\n";
    let program = frontend::parse(source).expect("an assignment that fails is skipped");
    let skipped: Vec<String> = program
        .skipped()
        .iter()
        .map(|s| format!("{}: {}", s.span, s.reason))
        .collect();
    expect_test::expect!["line 4, col 1: not evaluated: line 4, col 26: the model ran more than 200000 lines of Python without finishing (an endless loop?); Tailor stops a run there"].assert_eq(&skipped.join("\n"));
}

/// A module-level `try` that only imports and assigns is setup (Whisper's
/// `SDPA_AVAILABLE`), run as an assignment, also where its handler warns or raises
/// (pytorch-tcn's `weight_norm` import); one whose body does anything else is driver code.
#[test]
fn a_try_that_only_imports_and_assigns_runs_at_module_level() {
    let source = "import torch\n\ntry:\n    from torch.nn.functional import not_there\n    FOUND = True\nexcept ImportError:\n    FOUND = False\n\ntry:\n    print('driver')\nexcept Exception:\n    pass\n\n\ndef f(x):\n    return x * 2 if not FOUND else x\n\n\ntry:\n    from torch.nn.functional import not_here\nexcept ImportError:\n    import warnings\n    warnings.warn('falling back')\n    not_here = None\n";
    let program = frontend::parse(source).expect("the file parses");
    let skipped: Vec<String> = program
        .skipped()
        .iter()
        .map(|s| format!("{}: {}", s.span, s.reason))
        .collect();
    expect_test::expect!["line 9, col 1: driver code: Tailor compiles the model and runs only definitions and assignments at module level"].assert_eq(&skipped.join("\n"));
    // FOUND is False: forward doubles.
    check_capture(
        source,
        "3",
        expect_test::expect![[r#"
        graph(x: f32[s0]):
          %x = input x : f32[s0]
          %mul = mul(%x, 2) : f32[s0]  # 16:12
          return (%mul)
        event @0 create_symbol s0 = 3 for L['x'].size()[0] [2, int_oo] (dynamic=True)
        event @1 eval s0 != 1 [statically known, no guard] (mul at line 16, col 12)
    "#]],
    );
}

/// A file as people paste it: imports of modules Tailor's Python lacks (`argparse`,
/// `torchvision`, `torch.optim`) give stand-ins, driver code that calls them is skipped with
/// the reason, and the model captures; calling a stand-in inside `forward` is an error
/// naming it.
const WITH_DRIVER_IMPORTS: &str = "\
import argparse
import torch
import torch.nn as nn
import torch.optim as optim
from torchvision import datasets, transforms

parser = argparse.ArgumentParser(description='PyTorch Example')


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(16, 8)

    def forward(self, x):
        return torch.relu(self.fc1(x))


class Augmented(nn.Module):
    def forward(self, x):
        return transforms.Normalize((0.1307,), (0.3081,))(x)


def main():
    model = Net()
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)


if __name__ == '__main__':
    main()
";

#[test]
fn imports_of_absent_modules_give_stand_ins() {
    let program = frontend::parse(WITH_DRIVER_IMPORTS).expect("the stand-ins import");
    let skipped: Vec<String> = program
        .skipped()
        .iter()
        .map(|s| format!("{}: {}", s.span, s.reason))
        .collect();
    expect_test::expect![[r#"
        line 1, col 1: Tailor's Python has no module 'argparse': its names are stand-ins, and calling one is an error
        line 4, col 1: Tailor's Python has no module 'torch.optim': its names are stand-ins, and calling one is an error
        line 5, col 1: Tailor's Python has no module 'torchvision': its names are stand-ins, and calling one is an error
        line 7, col 1: not evaluated: line 7, col 10: argparse.ArgumentParser is not supported (Tailor's Python has no module 'argparse': only the model's own code runs)
        line 29, col 1: driver code: Tailor compiles the model and runs only definitions and assignments at module level"#]].assert_eq(&skipped.join("\n"));
    let capture = |entry: &str| {
        let run = || {
            let entry = program.entry(Some(entry))?;
            let mut env = ShapeEnv::new();
            let shapes = input_shapes(&mut env, &entry.inputs, "4,16", DimPolicy::Duck);
            frontend::capture(&program, &entry, &shapes, &mut env)
        };
        match run() {
            Ok(segment) => segment.graph.to_string(),
            Err(err) => format!("error: {err}"),
        }
    };
    expect_test::expect![[r#"
        graph(x: f32[s0, 16]):
          %x = input x : f32[s0, 16]
          %fc1_weight = param fc1.weight : f32[8, 16]
          %fc1_bias = param fc1.bias : f32[8]
          %linear = linear(%x, %fc1_weight, %fc1_bias) : f32[s0, 8]  # 16:27
          %relu = relu(%linear) : f32[s0, 8]  # 16:16
          return (%relu)
        error: line 21, col 16: torchvision.transforms.Normalize is not supported (Tailor's Python has no module 'torchvision': only the model's own code runs)"#]].assert_eq(&format!("{}{}", capture("Net"), capture("Augmented")));
}

/// A bound on `coeff * (s // d) + c` narrows the range of `s` to exactly the sizes that
/// satisfy it (checked against every size up to 300, for both signs of the coefficient and
/// every comparison), so a guard the range implies is not kept as well.
#[test]
fn floor_division_bounds_narrow_the_symbols_range_exactly() {
    use tailor::shape::{Asker, Origin};
    use tailor::symbolic::{CmpOp, Expr, Rel};
    let origin = Origin {
        what: Asker::Op("test".into()),
        span: None,
    };
    for hint in [5_i64, 17, 48, 130] {
        for divisor in [2_i64, 3, 16] {
            for coeff in [-3_i64, -1, 1, 2] {
                for constant in [-9_i64, -2, 0, 4, 7] {
                    for op in [CmpOp::Ge, CmpOp::Gt, CmpOp::Le, CmpOp::Lt, CmpOp::Eq] {
                        let mut env = ShapeEnv::new();
                        let source = DimSource::dim("x", 0);
                        let size = env
                            .add_input_dim(source, hint, DimPolicy::Dynamic, None, "dynamic=True")
                            .expect("no marks");
                        let sym = size.as_sym().expect("a dynamic size is a symbol");
                        let lhs = size.floor_div(&Expr::int(divisor)) * coeff + constant;
                        let rel = Rel::new(lhs, op, Expr::int(0));
                        let holds = env.evaluate(&rel, &origin);
                        let decided = if holds { rel.clone() } else { rel.negate() };
                        let range = env.range(sym);
                        // A failed equality narrows nothing; every other outcome exactly.
                        let exact = decided.op != CmpOp::Ne;
                        for s in 2..=300 {
                            let truth = decided.op.holds((s / divisor) * coeff + constant, 0);
                            assert!(!truth || range.contains(s), "{decided} at {s}: {range}");
                            if exact {
                                assert_eq!(range.contains(s), truth, "{decided} at {s}: {range}");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A keyword-only parameter of `forward` (`def forward(self, *, x, mask=None)`, labml's
/// gMLP block) is an input, passed by name as PyTorch's caller passes it; one with a
/// default is not.
#[test]
fn keyword_only_parameters_are_inputs() {
    let source = "\
import torch.nn as nn


class Block(nn.Module):
    def forward(self, y, *, x, mask=None):
        return y - x
";
    let program = frontend::parse(source).unwrap();
    let entry = program.entry(None).unwrap();
    assert_eq!(entry.inputs, ["y", "x"]);
    check_capture(
        source,
        "2,3;2,3",
        expect_test::expect![[r#"
        graph(y: f32[s0, s1], x: f32[s0, s1]):
          %y = input y : f32[s0, s1]
          %x = input x : f32[s0, s1]
          %sub = sub(%y, %x) : f32[s0, s1]  # 6:16
          return (%sub)
        event @0 create_symbol s0 = 2 for L['y'].size()[0] [2, int_oo] (dynamic=True)
        event @0 create_symbol s1 = 3 for L['y'].size()[1] [2, int_oo] (dynamic=True)
        event @0 duck sizing: L['x'].size()[0] reuses s0 (same size)
        event @0 duck sizing: L['x'].size()[1] reuses s1 (same size)
        event @2 eval s0 != 1 [statically known, no guard] (sub at line 6, col 16)
        event @2 eval s1 != 1 [statically known, no guard] (sub at line 6, col 16)
    "#]],
    );
}

/// A file that builds its model at module level (`model = Transformer(dim=12)`, a class
/// that needs arguments) compiles that instance, unnamed or by its name: its weights are
/// the ones that construction made. (Module-level calls that are not assignments, such as
/// `nn.init.zeros_(model.proj.bias)`, are driver code the loader skips, as before.)
#[test]
fn a_model_the_file_builds_at_module_level_is_the_entry() {
    let source = "import torch\nimport torch.nn as nn\n\n\nclass Transformer(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n        self.proj = nn.Linear(dim, dim)\n\n    def forward(self, x):\n        return self.proj(x)\n\n\nmodel = Transformer(dim=12)\n";
    for name in [None, Some("model")] {
        let program = frontend::parse(source).unwrap();
        let entry = program.entry(name).unwrap();
        assert_eq!(entry.name, "model");
        assert_eq!(entry.inputs, ["x"]);
        let mut env = ShapeEnv::new();
        let args = input_shapes(&mut env, &entry.inputs, "2,12", DimPolicy::Static);
        let segment = frontend::capture(&program, &entry, &args, &mut env).unwrap();
        let weight = segment
            .graph
            .nodes
            .iter()
            .find(|node| node.name.contains("weight"))
            .expect("the weight is a node");
        assert_eq!(tailor::graph::shape_to_string(&weight.shape), "[12, 12]");
    }
    let Err(error) = frontend::parse(source).unwrap().entry(Some("Transformer")) else {
        panic!("the class needs an argument");
    };
    let message = error.to_string();
    assert!(message.contains("`model = Transformer(...)`"), "{message}");
}
