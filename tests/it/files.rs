//! Model files as they are published, kept verbatim under `tests/data/models/`:
//! `mnist.py` is the PyTorch examples' MNIST (github.com/pytorch/examples, `mnist/main.py`,
//! its driver code abridged), `resnet18_torchvision.py` torchvision's
//! `torchvision/models/resnet.py` reduced to ResNet-18 (BasicBlock only; a no-argument
//! `ResNet18` subclass stands for `resnet18()`, so it is the entry), `nanogpt.py` nanoGPT's
//! `model.py` (github.com/karpathy/nanoGPT) with a `NanoGPT` subclass at a small config
//! appended. The model-zoo files are kept the same way, each with a no-argument entry class
//! appended: kuangliu/pytorch-cifar's MobileNetV2, ShuffleNetV2, DenseNet, VGG (from its
//! module-level config dict) and EfficientNet-B0; the PyTorch examples' super-resolution
//! net (`PixelShuffle`, `init.orthogonal_`) and fast-neural-style `TransformerNet`
//! (`ReflectionPad2d`, `InstanceNorm2d`, `interpolate`) and VAE (`torch.randn_like` in
//! `forward`); minGPT's `model.py` (its `CfgNode`
//! import replaced by the class itself); milesial's U-Net (`unet_parts.py` and
//! `unet_model.py` joined; `F.pad` by symbolic amounts). `fpn.py` is not published as is: a
//! small backbone under torchvision's `FeaturePyramidNetwork` top-down loop (nearest
//! resizes to the finer map's symbolic size), whose own file takes a dict of maps.
//!
//! Each file is called through the guard cache under every `dynamic` mode with the calls
//! real `torch.compile` was given (`scripts/pytorch/check_files.py` recorded its actions in
//! `tests/data/pytorch/files.txt`; Tailor's must be the same), and run on the CPU backend;
//! every result is compared with the graph reference (computed once per
//! call shape: the inputs and the parameters are seeded by name, so every mode sees the
//! same numbers). The captured graph text is a snapshot, and ResNet's `nn.init` loop is
//! checked to set the fills PyTorch's initialisers describe.

use crate::kernels::{CPU_TOLERANCE, assert_close, reference};
use std::rc::Rc;
use tailor::cache::{Action, CodeCache};
use tailor::config::{CallMarks, CompileConfig, DynamicMode};
use tailor::graph::{Init, Op, Tensor};
use tailor::session::executor::{self, Backend, Device, Executor, RunOptions};
use tailor::spec;

const MODES: [DynamicMode; 3] = [DynamicMode::True, DynamicMode::False, DynamicMode::Auto];

/// What real `torch.compile` did with `file` under `dynamic` (recorded by
/// `scripts/pytorch/check_files.py` into `tests/data/pytorch/files.txt`): the calls and
/// the action of each.
fn pytorch_actions(file: &str, entry: &str, dynamic: DynamicMode) -> (Vec<String>, Vec<Action>) {
    let path = format!(
        "{}/tests/data/pytorch/files.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let recorded = std::fs::read_to_string(path).expect("PyTorch's record exists");
    let prefix = format!("{file}.py {entry} dynamic={dynamic} ");
    let line = recorded
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no record of {prefix}"));
    let (calls, actions) = line.split_once(": ").expect("`calls: actions`");
    let actions = actions
        .split(' ')
        .map(|action| match action {
            "C" => Action::Compile,
            "H" => Action::Hit,
            other => panic!("unknown action {other}"),
        })
        .collect();
    (calls.split(' ').map(str::to_string).collect(), actions)
}

fn model_file(name: &str) -> String {
    let path = format!("{}/tests/data/models/{name}.py", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("the model file exists")
}

/// Calls `source`'s `entry` (`None`: the default one) with each of `calls`
/// (`x=2,1,28,28`) under `dynamic`, runs each call on
/// the CPU backend and compares it with `expected[i]` (computed from the first entry that
/// runs call `i` when empty); returns the cache and the cache's actions.
fn run_calls(
    source: &str,
    entry: Option<&str>,
    dynamic: DynamicMode,
    calls: &[&str],
    expected: &mut Vec<Vec<Tensor>>,
) -> (CodeCache, Vec<Action>) {
    let backend = pollster::block_on(Backend::open(Device::Cpu, Box::new(|| 0.0)))
        .expect("the CPU always opens");
    let mut executor = Executor::new(Rc::new(backend), Rc::new(|| 0.0));
    let mut cache = tailor::load(source, entry).expect("the model loads");
    let config = CompileConfig {
        dynamic,
        ..CompileConfig::default()
    };
    let mut actions = Vec::new();
    for (i, shapes) in calls.iter().enumerate() {
        let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes parse");
        let event = cache
            .call(0, &config, &call, &CallMarks::default(), &|| 0.0)
            .clone();
        let inputs = executor::call_inputs(&call, Vec::new(), i as u64).unwrap();
        if expected.len() == i {
            let id = event.entry.expect("the first mode compiles every call");
            let graph = &cache.entry(id).expect("the entry exists").graph;
            expected.push(reference(graph, &inputs));
        }
        let options = RunOptions {
            check: false,
            timing: false,
        };
        let job = executor
            .start_call(&cache, &event, &call, inputs, options)
            .unwrap_or_else(|err| panic!("{dynamic} {shapes}: {err}"));
        let outcome = pollster::block_on(executor.execute(job))
            .unwrap_or_else(|err| panic!("{dynamic} {shapes}: {err}"));
        let what = format!("dynamic={dynamic} {shapes}");
        assert_close(&what, &outcome.outputs, &expected[i], CPU_TOLERANCE);
        actions.push(event.action);
    }
    (cache, actions)
}

/// The graph text of the entry compiled last.
fn last_graph(cache: &CodeCache) -> String {
    let entries = cache.entries();
    entries.last().expect("an entry").graph.to_string()
}

#[test]
fn pytorch_examples_mnist_captures_and_runs_in_every_mode() {
    let source = model_file("mnist");
    let mut expected = Vec::new();
    let mut graphs = Vec::new();
    for mode in MODES {
        let (calls, actions) = pytorch_actions("mnist", "Net", mode);
        let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
        let (cache, got) = run_calls(&source, None, mode, &calls, &mut expected);
        assert_eq!(got, actions, "dynamic={mode}: PyTorch's actions");
        graphs.push(last_graph(&cache));
    }
    // dynamic=True: batch and the (duck-sized) image side symbolic, fc1 pinning the side.
    expect_test::expect![[r#"
        graph(x: f32[s0, 1, s1, s1]):
          %x = input x : f32[s0, 1, s1, s1]
          %conv1_weight = param conv1.weight : f32[32, 1, 3, 3]
          %conv1_bias = param conv1.bias : f32[32]
          %conv2d = conv2d(%x, %conv1_weight, %conv1_bias, stride=[1, 1], padding=[0, 0], dilation=[1, 1]) : f32[s0, 32, s1 - 2, s1 - 2]  # 21:13
          %relu = relu(%conv2d) : f32[s0, 32, s1 - 2, s1 - 2]  # 22:13
          %conv2_weight = param conv2.weight : f32[64, 32, 3, 3]
          %conv2_bias = param conv2.bias : f32[64]
          %conv2d_1 = conv2d(%relu, %conv2_weight, %conv2_bias, stride=[1, 1], padding=[0, 0], dilation=[1, 1]) : f32[s0, 64, s1 - 4, s1 - 4]  # 23:13
          %relu_1 = relu(%conv2d_1) : f32[s0, 64, s1 - 4, s1 - 4]  # 24:13
          %max_pool2d = max_pool2d(%relu_1, kernel=[2, 2], stride=[2, 2], padding=[0, 0]) : f32[s0, 64, s1//2 - 2, s1//2 - 2]  # 25:13
          %reshape = reshape(%max_pool2d) : f32[s0, 64*(s1//2)**2 - 256*(s1//2) + 256]  # 27:13
          %fc1_weight = param fc1.weight : f32[128, 9216]
          %fc1_bias = param fc1.bias : f32[128]
          %linear = linear(%reshape, %fc1_weight, %fc1_bias) : f32[s0, 128]  # 28:13
          %relu_2 = relu(%linear) : f32[s0, 128]  # 29:13
          %fc2_weight = param fc2.weight : f32[10, 128]
          %fc2_bias = param fc2.bias : f32[10]
          %linear_1 = linear(%relu_2, %fc2_weight, %fc2_bias) : f32[s0, 10]  # 31:13
          %log_softmax = log_softmax(%linear_1, dim=1) : f32[s0, 10]  # 32:18
          return (%log_softmax)
    "#]]
    .assert_eq(&graphs[0]);
    // dynamic=False at the last call: every size static.
    assert!(
        graphs[1].starts_with("graph(x: f32[5, 1, 28, 28]):"),
        "{}",
        graphs[1]
    );
    // dynamic=None: the batch became dynamic after it changed, the image stayed static.
    assert!(
        graphs[2].starts_with("graph(x: f32[s0, 1, 28, 28]):"),
        "{}",
        graphs[2]
    );
    // The log-probabilities of each row sum to 1.
    for row in expected[0][0].data.chunks(10) {
        let total: f32 = row.iter().map(|v| v.exp()).sum();
        assert!((total - 1.0).abs() < 1e-5, "{row:?}");
    }
}

/// A model-zoo file's `entry` under every mode with PyTorch's calls: PyTorch's actions
/// (captures only), then the first call run once on the CPU backend against the reference,
/// with its output shapes (the debug-built reference is slow on these nets: one run each).
fn zoo_file(file: &str, entry: &str, output_shapes: &[&[usize]]) {
    zoo_file_run_at(file, entry, None, output_shapes);
}

/// `zoo_file`, with the numeric run at `numeric_call` rather than PyTorch's first call (for
/// a net too slow to run at that size in a debug build).
fn zoo_file_run_at(
    file: &str,
    entry: &str,
    numeric_call: Option<&str>,
    output_shapes: &[&[usize]],
) {
    let source = model_file(file);
    let mut first_call = None;
    for mode in MODES {
        let (calls, actions) = pytorch_actions(file, entry, mode);
        let mut cache = tailor::load(&source, Some(entry)).expect("the model loads");
        let config = CompileConfig {
            dynamic: mode,
            ..CompileConfig::default()
        };
        let got: Vec<Action> = calls
            .iter()
            .map(|shapes| {
                let call =
                    spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes parse");
                let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
                assert!(
                    event.error.is_none(),
                    "{file} {mode} {shapes}: {:?}",
                    event.error
                );
                event.action
            })
            .collect();
        assert_eq!(got, actions, "{file} dynamic={mode}: PyTorch's actions");
        first_call.get_or_insert(calls[0].clone());
    }
    let call = numeric_call
        .map(str::to_string)
        .or(first_call)
        .expect("PyTorch's record has calls");
    let mut expected = Vec::new();
    run_calls(
        &source,
        Some(entry),
        DynamicMode::True,
        &[&call],
        &mut expected,
    );
    let shapes: Vec<&[usize]> = expected[0].iter().map(|t| t.shape.as_slice()).collect();
    assert_eq!(shapes, output_shapes, "{file}: the first call's outputs");
}

#[test]
fn cifar_mobilenetv2_with_depthwise_convolutions() {
    zoo_file("mobilenetv2", "MobileNetV2Cifar", &[&[2, 10]]);
}

#[test]
fn cifar_shufflenetv2_with_channel_shuffles_and_splits() {
    zoo_file("shufflenetv2", "ShuffleNetV2Cifar", &[&[2, 10]]);
}

#[test]
fn cifar_densenet_with_concatenated_features() {
    zoo_file("densenet", "DenseNetCifar", &[&[2, 10]]);
}

#[test]
fn cifar_vgg_from_a_config_dict() {
    zoo_file("vgg", "VGG11", &[&[2, 10]]);
}

#[test]
fn cifar_efficientnet_with_squeeze_and_excitation() {
    zoo_file("efficientnet", "EfficientNetB0Cifar", &[&[2, 10]]);
}

#[test]
fn pytorch_examples_super_resolution_with_pixel_shuffle() {
    zoo_file("super_resolution", "SuperResolution", &[&[2, 1, 96, 96]]);
}

#[test]
fn pytorch_examples_fast_neural_style_with_reflection_pads_and_upsampling() {
    zoo_file("fast_neural_style", "TransformerNet", &[&[2, 3, 32, 32]]);
}

#[test]
fn pytorch_examples_vae_with_a_random_draw_in_forward() {
    zoo_file("vae", "VAE", &[&[2, 784], &[2, 20], &[2, 20]]);
}

/// milesial's U-Net: `Up` pads the upsampled map to its skip connection's size by
/// amounts symbolic under `dynamic=True`, so a size whose pad is 1 (40) hits the entry
/// compiled where it was 0 (48), as in PyTorch.
#[test]
fn milesial_unet_with_symbolic_pads_to_its_skip_connections() {
    // Run at the smallest size four halvings allow: a 48×48 U-Net takes minutes in a
    // debug build.
    zoo_file_run_at("unet", "UNetRGB", Some("x=1,3,16,16"), &[&[1, 2, 16, 16]]);
}

/// The same U-Net with `bilinear=True`: `nn.Upsample(scale_factor=2, mode='bilinear',
/// align_corners=True)` instead of the transposed convolution.
#[test]
fn milesial_unet_bilinear_variant() {
    zoo_file_run_at(
        "unet",
        "UNetBilinear",
        Some("x=1,3,16,16"),
        &[&[1, 2, 16, 16]],
    );
}

/// A feature pyramid whose top-down pathway is torchvision's: nearest resizes to the finer
/// map's symbolic size (5 -> 9 at 36x36, not a whole factor) hit the `dynamic=True` entry,
/// as in PyTorch.
#[test]
fn feature_pyramid_with_nearest_resizes_to_symbolic_sizes() {
    zoo_file(
        "fpn",
        "FPN",
        &[&[2, 16, 16, 16], &[2, 16, 8, 8], &[2, 16, 4, 4]],
    );
}

#[test]
fn mingpt_model_file_with_its_cfgnode() {
    zoo_file("mingpt", "MinGPT", &[&[2, 16, 256]]);
}

#[test]
fn torchvision_resnet18_captures_and_runs_in_every_mode() {
    let source = model_file("resnet18_torchvision");
    let mut expected = Vec::new();
    for mode in MODES {
        let (calls, actions) = pytorch_actions("resnet18_torchvision", "ResNet18", mode);
        let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
        let (cache, got) = run_calls(&source, None, mode, &calls, &mut expected);
        // Batch 1 is specialised in every mode, so batch 2 compiles again (as in PyTorch).
        assert_eq!(got, actions, "dynamic={mode}: PyTorch's actions");
        let graph = last_graph(&cache);
        let tail: Vec<&str> = graph.lines().rev().take(6).collect();
        let tail: String = tail.into_iter().rev().map(|l| format!("{l}\n")).collect();
        let batch = if mode == DynamicMode::False {
            "2"
        } else {
            "s0"
        };
        // AdaptiveAvgPool2d((1, 1)) is captured as the mean it computes.
        let want = format!(
            "  %mean = mean(%relu_16, dims=[2, 3], keepdim=True) : f32[{batch}, 512, 1, 1]  # 185:13\n"
        );
        assert!(tail.starts_with(&want), "dynamic={mode}:\n{tail}");
        assert!(
            tail.ends_with(&format!(
                "  %linear = linear(%reshape, %fc_weight, %fc_bias) : f32[{batch}, 1000]  # 187:13\n  return (%linear)\n"
            )),
            "dynamic={mode}:\n{tail}"
        );
    }
}

#[test]
fn nanogpt_model_file_captures_and_runs_in_every_mode() {
    let source = model_file("nanogpt");
    let mut expected = Vec::new();
    let mut guards = Vec::new();
    let mut graphs = Vec::new();
    for mode in MODES {
        let (calls, actions) = pytorch_actions("nanogpt", "NanoGPT", mode);
        let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
        let (cache, got) = run_calls(&source, None, mode, &calls, &mut expected);
        assert_eq!(got, actions, "dynamic={mode}: PyTorch's actions");
        let entries = cache.entries();
        guards.push(entries.last().expect("an entry").guards.source_lines());
        graphs.push(last_graph(&cache));
    }
    // dynamic=True: the shape guards PyTorch 2.15 prints for this call (TORCH_LOGS=guards),
    // `assert t <= self.config.block_size` bounding the sequence length.
    let shape_guards: Vec<&str> = guards[0]
        .iter()
        .map(String::as_str)
        .filter(|g| g.starts_with("L[") || g.starts_with("2 <="))
        .collect();
    assert_eq!(
        shape_guards,
        [
            "L['idx'].stride()[0] == L['idx'].size()[1]",
            "2 <= L['idx'].size()[0]",
            "2 <= L['idx'].size()[1] <= 64"
        ]
    );
    // Inference returns the last position's logits: (b, 1, vocab).
    assert_eq!(expected[0][0].shape, vec![2, 1, 256]);
    // F.scaled_dot_product_attention(is_causal=True) is one node per layer, as in Dynamo's
    // graph (lowering decomposes it); positions by arange.
    let graph = &graphs[0];
    assert_eq!(
        graph.matches("= scaled_dot_product_attention(").count(),
        2,
        "{graph}"
    );
    assert!(
        graph.contains("is_causal=True) : f32[s0, 4, s1, 16]"),
        "{graph}"
    );
    assert!(!graph.contains("= tril("), "{graph}");
    assert!(graph.contains("= arange() : i64[s1]"), "{graph}");
}

/// nanoGPT's path without flash attention: the causal mask is a buffer made by ops in
/// `__init__` (run eagerly), sliced to the symbolic length in `forward`.
const BUFFER_MASK: &str = "import torch
import torch.nn as nn


class Masked(nn.Module):
    def __init__(self, n=16):
        super().__init__()
        self.register_buffer(\"bias\", torch.tril(torch.ones(n, n)).view(1, n, n))

    def forward(self, x):
        t = x.size(1)
        att = (x @ x.transpose(-2, -1)).masked_fill(self.bias[:, :t, :t] == 0, float(\"-inf\"))
        return torch.softmax(att, dim=-1)
";

#[test]
fn a_buffer_made_by_ops_in_init_holds_its_values() {
    let mut expected = Vec::new();
    for mode in MODES {
        let calls = ["x=2,5,4", "x=2,9,4", "x=3,9,4"];
        let (cache, _) = run_calls(BUFFER_MASK, None, mode, &calls, &mut expected);
        let graph = last_graph(&cache);
        assert!(graph.contains("= param bias : f32[1, 16, 16]"), "{graph}");
    }
    // Row 0 attends only to position 0: the mask held the triangle's values.
    assert_eq!(expected[0][0].data[..5], [1.0, 0.0, 0.0, 0.0, 0.0]);
}

/// The `Init` of parameter `path` in the graph `source` captures at `shapes`.
fn param_init(source: &str, shapes: &str, path: &str) -> Init {
    let mut cache = tailor::load(source, None).expect("the model loads");
    let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes parse");
    let config = CompileConfig::default();
    let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    let id = event.entry.expect("compiles");
    let graph = &cache.entry(id).expect("the entry exists").graph;
    graph
        .nodes
        .iter()
        .find_map(|node| match &node.op {
            Op::Param { path: p, init } if p == path => Some(init.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no parameter {path}"))
}

#[test]
fn resnet_init_loop_sets_the_fills_pytorch_describes() {
    let source = model_file("resnet18_torchvision");
    let shapes = "x=1,3,64,64";
    // kaiming_normal_(mode="fan_out", nonlinearity="relu"): std = sqrt(2 / fan_out), and
    // conv1's fan_out is 64 * 7 * 7.
    let std = (2.0f64 / (64.0 * 49.0)).sqrt();
    let Init::Normal { std: got } = param_init(&source, shapes, "conv1.weight") else {
        panic!("conv1.weight is not normal");
    };
    assert!((got - std).abs() < 1e-12, "{got} vs {std}");
    let std = (2.0f64 / (512.0 * 9.0)).sqrt();
    let Init::Normal { std: got } = param_init(&source, shapes, "layer4.1.conv2.weight") else {
        panic!("layer4.1.conv2.weight is not normal");
    };
    assert!((got - std).abs() < 1e-12, "{got} vs {std}");
    // constant_(m.weight, 1), constant_(m.bias, 0); the Linear keeps its uniform default.
    assert_eq!(
        param_init(&source, shapes, "layer1.0.bn2.weight"),
        Init::Fill(1.0)
    );
    assert_eq!(param_init(&source, shapes, "bn1.bias"), Init::Fill(0.0));
    assert_eq!(
        param_init(&source, shapes, "fc.weight"),
        Init::Uniform {
            bound: 1.0 / 512f64.sqrt()
        }
    );
    // zero_init_residual=True zeroes the last BatchNorm of each block.
    let zeroed = source.replace(
        "zero_init_residual: bool = False) -> None:\n        super().__init__(BasicBlock, [2, 2, 2, 2], num_classes=num_classes, zero_init_residual=zero_init_residual)",
        "zero_init_residual: bool = True) -> None:\n        super().__init__(BasicBlock, [2, 2, 2, 2], num_classes=num_classes, zero_init_residual=zero_init_residual)",
    );
    assert_ne!(zeroed, source);
    assert_eq!(
        param_init(&zeroed, shapes, "layer1.0.bn2.weight"),
        Init::Fill(0.0)
    );
    assert_eq!(
        param_init(&zeroed, shapes, "layer1.0.bn1.weight"),
        Init::Fill(1.0)
    );
}

/// A module whose `__init__` runs `init` on a `Conv2d(4, 6, 3)` called `conv`.
fn conv_with(init: &str) -> String {
    format!(
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(4, 6, 3)\n        {init}\n\n    def forward(self, x):\n        return self.conv(x)\n"
    )
}

#[test]
fn nn_init_functions_give_pytorchs_bounds_and_stds() {
    let shapes = "x=1,4,5,5";
    let weight = |init: &str| param_init(&conv_with(init), shapes, "conv.weight");
    let bias = |init: &str| param_init(&conv_with(init), shapes, "conv.bias");
    let (fan_in, fan_out) = (4.0f64 * 9.0, 6.0f64 * 9.0);
    let close = |got: Init, want: Init| match (&got, &want) {
        (Init::Normal { std: a }, Init::Normal { std: b })
        | (Init::Uniform { bound: a }, Init::Uniform { bound: b }) => {
            assert!((a - b).abs() < 1e-12, "{got:?} vs {want:?}")
        }
        _ => assert_eq!(got, want),
    };
    // leaky_relu with a=0 is relu's gain sqrt(2); fan_in is the default mode.
    close(
        weight("nn.init.kaiming_normal_(self.conv.weight)"),
        Init::Normal {
            std: (2.0 / fan_in).sqrt(),
        },
    );
    close(
        weight("nn.init.kaiming_uniform_(self.conv.weight, a=5 ** 0.5)"),
        Init::Uniform {
            bound: (2.0f64 / 6.0).sqrt() * (3.0 / fan_in).sqrt(),
        },
    );
    close(
        weight("nn.init.xavier_uniform_(self.conv.weight, gain=2.0)"),
        Init::Uniform {
            bound: 2.0 * (6.0 / (fan_in + fan_out)).sqrt(),
        },
    );
    close(
        weight("nn.init.normal_(self.conv.weight, std=0.02)"),
        Init::Normal { std: 0.02 },
    );
    close(
        weight("nn.init.uniform_(self.conv.weight, -0.1, 0.1)"),
        Init::Uniform { bound: 0.1 },
    );
    close(weight("nn.init.uniform_(self.conv.weight)"), Init::Unit);
    close(bias("nn.init.zeros_(self.conv.bias)"), Init::Fill(0.0));
    close(bias("nn.init.ones_(self.conv.bias)"), Init::Fill(1.0));
    close(
        bias("nn.init.constant_(self.conv.bias, 0.5)"),
        Init::Fill(0.5),
    );
    // A normal truncated beyond the fill's reach is the normal fill.
    close(
        weight("nn.init.trunc_normal_(self.conv.weight, std=0.02)"),
        Init::Normal { std: 0.02 },
    );
    // In-place fills of state where it is defined, as `_init_weights` methods write them.
    close(
        weight("self.conv.weight.data.normal_(mean=0.0, std=0.02)"),
        Init::Normal { std: 0.02 },
    );
    close(bias("self.conv.bias.data.zero_()"), Init::Fill(0.0));
    close(bias("self.conv.bias.fill_(0.5)"), Init::Fill(0.5));
    // The initialisers return the tensor they filled, as PyTorch's do.
    close(
        weight("w = nn.init.zeros_(self.conv.weight)\n        nn.init.ones_(w)"),
        Init::Fill(1.0),
    );
}

#[test]
fn nn_init_refuses_what_no_fill_describes() {
    for (init, needle) in [
        (
            "nn.init.normal_(self.conv.weight, mean=1.0)",
            "nn.init.normal_ with a nonzero mean",
        ),
        (
            "nn.init.uniform_(self.conv.weight, 0.5, 2.0)",
            "nn.init.uniform_ over this interval",
        ),
        (
            "nn.init.kaiming_normal_(self.conv.bias)",
            "Fan in and fan out can not be computed",
        ),
        (
            "nn.init.kaiming_normal_(self.conv.weight, mode='fan_avg')",
            "Mode fan_avg not supported",
        ),
        (
            "nn.init.trunc_normal_(self.conv.weight)",
            "nn.init.trunc_normal_ truncated at 38 std or nearer is not supported",
        ),
    ] {
        let err = tailor::load(&conv_with(init), None)
            .err()
            .unwrap_or_else(|| panic!("{init} loads"))
            .to_string();
        assert!(err.contains(needle), "{init}: {err}");
        assert!(crate::mentions(&err, "9:9"), "{init}: {err}");
    }
}
