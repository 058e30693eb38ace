//! Lowering and fusion, checked numerically without a GPU: the kernel interpreter
//! (`runtime::cpu`, which runs the fused kernels, shared buffers and all) against the graph
//! reference (`graph::eval`), for every op and every preset model.
//!
//! Tolerance: every element within `1e-4 * max(1, |reference|)`. The interpreter sums in
//! the same order as the reference except where fusion or folding changes the arithmetic
//! (a bias added after the dot product instead of before it, BatchNorm folded into conv
//! weights), which moves results by a few ulps.

use expect_test::expect;
use tailor::cache::DynamicMode;
use tailor::graph::{self, Graph, Tensor};
use tailor::lower::{self, Schedule};
use tailor::symbolic::Bindings;
use tailor::{CallMarks, CompileConfig, runtime, spec};

/// Relative tolerance of the kernel interpreter against the reference.
pub const CPU_TOLERANCE: f32 = 1e-4;

/// A compiled cache entry and its schedule.
pub struct Compiled {
    /// The entry's graph (the reference runs it).
    pub graph: Graph,
    /// Its lowering.
    pub schedule: Schedule,
}

/// Compiles `source` once for `shapes` (`x=8,64`) under `dynamic`, and lowers the entry.
pub fn compile(source: &str, shapes: &str, dynamic: DynamicMode) -> Compiled {
    let mut cache = tailor::load(source, None).expect("the model loads");
    let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes parse");
    let config = CompileConfig {
        dynamic,
        ..CompileConfig::default()
    };
    let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    let id = event
        .entry
        .unwrap_or_else(|| panic!("compiles: {:?}", event.error));
    let entry = cache.entry(id).expect("the entry exists");
    let schedule = lower::lower(&entry.graph, &|sym| entry.env.range(sym)).expect("lowers");
    Compiled {
        graph: entry.graph.clone(),
        schedule,
    }
}

/// Seeded inputs for a call with these sizes (one list per graph input).
pub fn inputs(shapes: &[Vec<usize>], seed: u64) -> Vec<Tensor> {
    let named: Vec<(String, Vec<usize>)> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("input{i}"), s.clone()))
        .collect();
    graph::random_inputs(&named, seed)
}

/// The reference result of `graph` on `inputs`.
pub fn reference(graph: &Graph, inputs: &[Tensor]) -> Vec<Tensor> {
    let mut bindings = Bindings::new();
    for (&id, tensor) in graph.inputs.iter().zip(inputs) {
        for (dim, &size) in graph.shape(id).iter().zip(&tensor.shape) {
            if let Some(sym) = dim.as_sym() {
                bindings.set(sym, size as i64);
            }
        }
    }
    graph::eval(graph, &bindings, inputs).expect("the reference runs")
}

/// Panics unless every element of `actual` is within `tolerance * max(1, |expected|)`.
#[track_caller]
pub fn assert_close(what: &str, actual: &[Tensor], expected: &[Tensor], tolerance: f32) {
    assert_eq!(actual.len(), expected.len(), "{what}: number of outputs");
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(a.shape, e.shape, "{what}: output shape");
        for (i, (x, y)) in a.data.iter().zip(&e.data).enumerate() {
            let limit = tolerance * y.abs().max(1.0);
            assert!(
                (x - y).abs() <= limit,
                "{what}: element {i} is {x}, the reference says {y} (tolerance {limit})"
            );
        }
    }
}

/// Parses `8,64;3` style size lists: one list per input.
pub fn sizes(text: &str) -> Vec<Vec<usize>> {
    text.split(';')
        .map(|input| {
            input
                .split(',')
                .map(|d| d.trim().parse().expect("a size"))
                .collect()
        })
        .collect()
}

/// `x=8,64;y=3` for a model with inputs `names`.
pub fn spec_of(names: &[&str], text: &str) -> String {
    names
        .iter()
        .zip(text.split(';'))
        .map(|(n, dims)| format!("{n}={dims}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Compiles `source` for each size list in `cases` (under `dynamic=True`) and compares the
/// interpreter with the reference at those sizes; then compiles one dynamic entry at the
/// first case and runs it at every case whose sizes it accepts.
#[track_caller]
fn check(source: &str, names: &[&str], cases: &[&str]) {
    for (n, case) in cases.iter().enumerate() {
        let compiled = compile(source, &spec_of(names, case), DynamicMode::True);
        let inputs = inputs(&sizes(case), n as u64);
        let actual = runtime::cpu::run(&compiled.schedule, &inputs)
            .unwrap_or_else(|e| panic!("{case}: {e}\n{}", compiled.schedule));
        let expected = reference(&compiled.graph, &inputs);
        assert_close(case, &actual, &expected, CPU_TOLERANCE);
    }
    let shared = compile(source, &spec_of(names, cases[0]), DynamicMode::True);
    for case in cases {
        let inputs = inputs(&sizes(case), 7);
        let Ok(actual) = runtime::cpu::run(&shared.schedule, &inputs) else {
            continue; // a specialised size (1, or a static dim) this entry does not accept
        };
        let expected = reference(&shared.graph, &inputs);
        assert_close(
            &format!("shared entry at {case}"),
            &actual,
            &expected,
            CPU_TOLERANCE,
        );
    }
}

const PRELUDE: &str = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

fn module(init: &str, forward: &str) -> String {
    format!(
        "{PRELUDE}\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n{}\n    def forward(self, x):\n{}\n",
        indent(if init.is_empty() { "pass" } else { init }),
        indent(forward)
    )
}

fn function(params: &str, body: &str) -> String {
    format!("{PRELUDE}\ndef f({params}):\n{}\n", indent(body))
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("        {l}\n")).collect()
}

/// The sizes every op is checked at: 1, 3, 7, 64, 127, 513, and non-square shapes.
const ROWS: &[&str] = &["8,64", "1,64", "3,64", "7,64", "64,64", "127,64", "513,64"];

#[test]
fn linear_with_bias_and_relu_is_one_kernel() {
    let source = module(
        "self.fc = nn.Linear(64, 37)",
        "return torch.relu(self.fc(x))",
    );
    check(&source, &["x"], ROWS);
    let compiled = compile(&source, "x=8,64", DynamicMode::True);
    assert_eq!(compiled.schedule.kernels.len(), 1);
}

#[test]
fn linear_without_bias_over_three_dims() {
    let source = module(
        "self.fc = nn.Linear(7, 5, bias=False)",
        "return self.fc(x) * 2 + 1",
    );
    check(&source, &["x"], &["2,3,7", "1,1,7", "3,127,7", "5,64,7"]);
}

#[test]
fn matmul_broadcasts_batch_and_vectors() {
    let source = function("a, b", "return a @ b");
    check(
        &source,
        &["a", "b"],
        &[
            "3,7,5;5,9",
            "2,1,7,5;3,5,9",
            "7;7,3",
            "4,7;7",
            "64,127;127,33",
            "1,513;513,3",
        ],
    );
}

#[test]
fn matmul_of_transposed_views_reads_in_place() {
    let source = function("a, b", "return a.transpose(0, 1) @ b.t() - 0.5");
    check(
        &source,
        &["a", "b"],
        &["5,3;7,5", "64,127;33,64", "3,1;2,3"],
    );
}

#[test]
fn conv1d_with_padding_and_dilation() {
    let source = module(
        "self.conv = nn.Conv1d(3, 6, kernel_size=3, stride=2, padding=2, dilation=2)",
        "return F.silu(self.conv(x))",
    );
    check(
        &source,
        &["x"],
        &["2,3,16", "1,3,7", "3,3,64", "2,3,127", "1,3,513"],
    );
}

#[test]
fn conv2d_non_square_without_bias() {
    let source = module(
        "self.conv = nn.Conv2d(2, 5, kernel_size=(3, 2), stride=(1, 2), padding=(1, 0), bias=False)",
        "return self.conv(x)",
    );
    check(
        &source,
        &["x"],
        &["2,2,7,9", "1,2,3,4", "1,2,64,33", "1,2,20,127"],
    );
}

#[test]
fn batch_norm_folds_into_the_conv() {
    let source = module(
        "self.conv = nn.Conv2d(3, 4, 3, padding=1)\nself.bn = nn.BatchNorm2d(4)",
        "return torch.relu(self.bn(self.conv(x)))",
    );
    check(
        &source,
        &["x"],
        &["1,3,8,8", "2,3,7,5", "1,3,64,64", "1,3,3,127"],
    );
    let compiled = compile(&source, "x=1,3,8,8", DynamicMode::True);
    assert_eq!(compiled.schedule.kernels.len(), 1);
    assert!(
        compiled
            .schedule
            .to_string()
            .contains("folded batch_norm into")
    );
}

#[test]
fn batch_norm_after_linear_is_an_epilogue() {
    let source = module(
        "self.fc = nn.Linear(6, 4)\nself.bn = nn.BatchNorm1d(4)",
        "return self.bn(self.fc(x))",
    );
    check(&source, &["x"], &["8,6", "1,6", "3,6", "127,6"]);
}

#[test]
fn layer_norm_then_softmax_and_reductions() {
    let source = module(
        "self.norm = nn.LayerNorm(64)",
        "z = F.softmax(self.norm(x) * 3, dim=-1)\nreturn z.sum(dim=1, keepdim=True), z.mean(dim=0), x.amax(dim=-1)",
    );
    check(&source, &["x"], ROWS);
}

#[test]
fn softmax_and_reductions_of_any_size() {
    let source = function(
        "x",
        "return F.softmax(x, dim=-1), x.sum(dim=0), x.mean(dim=1, keepdim=True), x.amax(dim=0)",
    );
    check(
        &source,
        &["x"],
        &["4,6", "1,5", "3,7", "64,64", "7,127", "2,513"],
    );
}

#[test]
fn softmax_over_a_middle_dim() {
    let source = function(
        "x",
        "return torch.softmax(x, dim=1) + x.sum(dim=2, keepdim=True), x.sum(dim=(0, 2))",
    );
    check(&source, &["x"], &["2,5,3", "3,7,4", "2,127,3"]);
}

#[test]
fn layer_norm_module_over_two_dims() {
    let source = module("self.norm = nn.LayerNorm((3, 4))", "return self.norm(x)");
    check(&source, &["x"], &["5,3,4", "1,3,4", "127,3,4"]);
}

#[test]
fn pooling_with_padding() {
    let source = module(
        "self.pool = nn.MaxPool2d(3, stride=2, padding=1)\nself.avg = nn.AvgPool2d(2)",
        "return self.pool(x), self.avg(x)",
    );
    check(
        &source,
        &["x"],
        &["1,2,8,8", "2,3,7,9", "1,1,64,33", "1,1,3,127"],
    );
}

#[test]
fn views_slices_and_cat() {
    let source = function(
        "x",
        "a = x[:, 1:]\nb = x[..., 0]\nc = x.reshape(-1)\nd = torch.cat([x, x * 2], dim=1)\nreturn a.flatten(), b + 1, c, d, x.permute(1, 0)",
    );
    check(&source, &["x"], &["4,6", "3,7", "64,64", "7,127", "2,513"]);
}

#[test]
fn elementwise_functions_and_scalars() {
    let source = function(
        "x, y",
        "u = F.gelu(x) + torch.sigmoid(y) * torch.tanh(x)\nv = 2 - torch.exp(-x) / torch.sqrt(x * x + 1)\nreturn u, v / x.shape[1], F.silu(v) + y",
    );
    check(
        &source,
        &["x", "y"],
        &["4,6;6", "1,1;1", "3,7;7", "64,127;127", "513,3;3"],
    );
}

#[test]
fn embedding_lookup() {
    let source = module("self.emb = nn.Embedding(10, 4)", "return self.emb(x) * 2");
    check(&source, &["x"], &["3,5", "1,1", "7,2", "64,3"]);
}

#[test]
fn returning_an_input_copies_it() {
    let source = function("x, y", "return x, y.t()");
    check(&source, &["x", "y"], &["3,4;5,6", "1,2;3,1"]);
}

fn preset(name: &str) -> String {
    std::fs::read_to_string(format!("{}/models/{name}.py", env!("CARGO_MANIFEST_DIR")))
        .expect("the preset exists")
}

#[test]
fn simplenet_preset() {
    check(
        &preset("simplenet"),
        &["x"],
        &["8,64", "1,64", "3,64", "7,64", "64,64", "127,64", "513,64"],
    );
}

#[test]
fn bert_block_preset() {
    check(
        &preset("bert_block"),
        &["x"],
        &[
            "2,8,64", "1,1,64", "1,3,64", "2,7,64", "1,64,64", "1,127,64",
        ],
    );
}

#[test]
fn yolo_stack_preset() {
    check(
        &preset("yolo_stack"),
        &["image"],
        &["1,3,32,32", "1,3,7,7", "2,3,33,47", "1,3,64,64"],
    );
}

#[test]
fn conv1d_preset() {
    check(
        &preset("conv1d"),
        &["x"],
        &["2,4,16", "1,4,1", "3,4,7", "2,4,127", "1,4,513"],
    );
}

#[test]
fn add_one_preset() {
    check(
        &preset("add_one"),
        &["x"],
        &["3,5", "1,1", "7,3", "64,127", "513,2"],
    );
}

#[test]
fn simplenet_schedule_text() {
    let compiled = compile(&preset("simplenet"), "x=8,64", DynamicMode::True);
    expect![[r#"
        kernels (2):
          k0_linear_relu: linear + relu
            gemm (Tiled) batch 1, m s0, n 128, k 64
            a = in0[64*row + kk]
            b = p_layers_0_weight[64*col + kk]
            t0[128*row + col] = relu(acc + p_layers_0_bias[col])   (acc = sum over kk of a * b)
            dispatch 4*((s0 + 31)//32) workgroups x 64 threads
          k1_linear_1: linear_1
            gemm (Tiled) batch 1, m s0, n 64, k 128
            a = t0[128*row + kk]
            b = p_layers_2_weight[128*col + kk]
            out0[64*row + col] = acc + p_layers_2_bias[col]   (acc = sum over kk of a * b)
            dispatch 2*((s0 + 31)//32) workgroups x 64 threads
        memory plan:
          in0                      input 0    64*s0 elements
          p_layers_0_weight        parameter  8192 elements
          p_layers_0_bias          parameter  128 elements
          p_layers_2_weight        parameter  8192 elements
          p_layers_2_bias          parameter  64 elements
          out0                     output 0   64*s0 elements
              holds %linear_1 from k1 until the caller
          t0                       temporary  128*s0 elements
              holds %relu from k0 until k1
        notes:
          fused relu into linear
    "#]]
    .assert_eq(&compiled.schedule.to_string());
}
