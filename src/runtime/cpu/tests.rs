//! Unit tests of the CPU backend's binding: which kernels read their operands in place,
//! which pack them, and how long the runs of each part are — the fast paths the
//! numerical cross-checks in `tests/it/kernels.rs` cannot see, pinned so that a change in
//! lowering that sends a kernel down the per-element fallback shows up here.

use super::*;
use crate::config::{CompileConfig, DynamicMode};
use crate::graph::random_inputs;
use expect_test::{Expect, expect};

/// Compiles `forward` of a module built by `init` with static sizes `x`, and describes how
/// each kernel runs at those sizes.
#[track_caller]
fn check(init: &str, forward: &str, x: &[usize], expect: Expect) {
    let source = format!(
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        {init}\n    def forward(self, x):\n        {forward}\n"
    );
    let mut cache = crate::session::load(&source, None).expect("loads");
    let dims: Vec<i64> = x.iter().map(|&d| d as i64).collect();
    let call = crate::guard::CallShapes::new(vec![("x".into(), dims)]);
    let config = CompileConfig {
        dynamic: DynamicMode::False,
        ..CompileConfig::default()
    };
    let id = cache
        .call(0, &config, &call, &Default::default(), &|| 0.0)
        .entry
        .expect("compiles");
    let entry = cache.entry(id).expect("entry");
    let schedule = entry.compiled.schedule().expect("lowers").clone();
    let inputs = random_inputs(&[("x".into(), x.to_vec())], 1);
    let lines = Program::new(schedule).describe(&inputs).expect("binds");
    expect.assert_eq(&lines.join("\n"));
}

#[test]
fn a_linear_layer_reads_input_and_weight_in_place() {
    check(
        "self.fc = nn.Linear(64, 32)",
        "return F.relu(self.fc(x))",
        &[8, 64],
        expect![
            "k0_linear_relu: product: a viewed (strides 64, 1; runs of 8 rows), b viewed (strides 1, 64; runs of 64 rows), epilogue along col (runs of 32)"
        ],
    );
}

#[test]
fn a_convolution_packs_its_im2col_along_output_rows() {
    check(
        "self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)",
        "return self.conv(x)",
        &[1, 3, 40, 30],
        expect![
            "k0_conv2d: product: a packed along row (runs of 15), b viewed (strides 1, 27; runs of 27 rows), epilogue along row (runs of 300)"
        ],
    );
}

#[test]
fn a_transposed_view_is_read_in_place_and_a_reshaped_one_is_packed() {
    check(
        "pass",
        "return x.t() @ x.t().reshape(x.shape[0], x.shape[1])",
        &[6, 4],
        expect![
            "k0_matmul: product: a viewed (strides 1, 4; runs of 4 rows), b packed along kk (runs of 1), epilogue along col (runs of 4)"
        ],
    );
}

#[test]
fn a_softmax_over_a_middle_dim_reads_strided_rows() {
    check(
        "pass",
        "return F.softmax(x, dim=1)",
        &[2, 5, 3],
        expect!["k0_softmax: rows: read along e (runs of 5), epilogue along e (runs of 5)"],
    );
}

#[test]
fn pooling_and_a_broadcast_map_run_along_whole_rows() {
    check(
        "self.pool = nn.MaxPool2d(2)",
        "return self.pool(x) + x.mean(3).mean(2).unsqueeze(2).unsqueeze(3)",
        &[1, 4, 8, 6],
        expect![[r#"
            k0_max_pool2d: pool along gid (runs of 3)
            k1_mean: rows: read along e (runs of 6), epilogue along row (runs of 32)
            k2_mean_1: rows: read along e (runs of 8), epilogue along row (runs of 4)
            k3_add: map along gid (runs of 12)"#]],
    );
}
