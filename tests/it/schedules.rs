//! Snapshots of the `Schedule` text of every preset in `models/`: the kernels, their
//! dispatch formulas and the memory plan that `lower` makes for a guard-cache entry. A
//! change in fusion, index arithmetic or the memory plan shows up here as a diff. Update
//! with `UPDATE_EXPECT=1 cargo test --test it schedules`, then review the diff before
//! committing.

use expect_test::{Expect, expect};
use tailor::{CallMarks, CompileConfig, DynamicMode};

/// The presets of `src/web/presets.rs`: the file stem under `models/` and the first call's
/// input shapes the page starts from.
const PRESETS: &[(&str, &str)] = &[
    ("simplenet", "x=8,64"),
    ("bert_block", "x=2,128,64"),
    ("yolo_stack", "image=1,3,320,320"),
    ("conv1d", "x=1,4,50"),
    ("add_one", "x=3"),
    ("break_net", "x=8,64"),
    ("tagger", "ids=2,12:int64"),
];

/// The schedule text of preset `name` compiled for its default shapes under `dynamic`.
fn schedule_text(name: &str, dynamic: DynamicMode) -> String {
    let &(_, shapes) = PRESETS
        .iter()
        .find(|(preset, _)| *preset == name)
        .unwrap_or_else(|| panic!("no preset {name}"));
    let path = format!("{}/models/{name}.py", env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(path).expect("the preset exists");
    let mut cache = tailor::load(&source, None).expect("the preset loads");
    let call = tailor::spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes");
    let config = CompileConfig {
        dynamic,
        ..CompileConfig::default()
    };
    let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    let id = event
        .entry
        .unwrap_or_else(|| panic!("{name} compiles: {:?}", event.error));
    let entry = cache.entry(id).expect("the entry exists");
    let schedule = tailor::lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("lowers");
    schedule.to_string()
}

#[track_caller]
fn check(name: &str, dynamic: DynamicMode, expect: Expect) {
    expect.assert_eq(&schedule_text(name, dynamic));
}

#[test]
fn every_model_file_is_a_preset() {
    let dir = format!("{}/models", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("models/ exists")
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.to_str()?.strip_suffix(".py").map(str::to_string))
        .collect();
    files.sort();
    let mut presets: Vec<&str> = PRESETS.iter().map(|&(name, _)| name).collect();
    presets.sort();
    assert_eq!(files, presets);
}

#[test]
fn simplenet_dynamic_true() {
    check(
        "simplenet",
        DynamicMode::True,
        expect![[r#"
        kernels (2):
          k0_linear_relu: linear + relu
            gemm (Tiled) batch 1, m s0, n 128, k 64
            a = in0[64*row + kk]
            b = p_layers_0_weight[64*col + kk]
            t0[128*row + col] = relu(acc + p_layers_0_bias[col])   (acc = sum over kk of a * b)
            dispatch 2*((s0 + 63)//64) workgroups x 64 threads
          k1_linear_1: linear_1
            gemm (Tiled) batch 1, m s0, n 64, k 128
            a = t0[128*row + kk]
            b = p_layers_2_weight[128*col + kk]
            out0[64*row + col] = acc + p_layers_2_bias[col]   (acc = sum over kk of a * b)
            dispatch (s0 + 63)//64 workgroups x 64 threads
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
    "#]],
    );
}

#[test]
fn simplenet_dynamic_false() {
    check(
        "simplenet",
        DynamicMode::False,
        expect![[r#"
        kernels (2):
          k0_linear_relu: linear + relu
            gemm (Tiled) batch 1, m 8, n 128, k 64
            a = in0[64*row + kk]
            b = p_layers_0_weight[64*col + kk]
            t0[128*row + col] = relu(acc + p_layers_0_bias[col])   (acc = sum over kk of a * b)
            dispatch 2 workgroups x 64 threads
          k1_linear_1: linear_1
            gemm (Tiled) batch 1, m 8, n 64, k 128
            a = t0[128*row + kk]
            b = p_layers_2_weight[128*col + kk]
            out0[64*row + col] = acc + p_layers_2_bias[col]   (acc = sum over kk of a * b)
            dispatch 1 workgroups x 64 threads
        memory plan:
          in0                      input 0    512 elements
          p_layers_0_weight        parameter  8192 elements
          p_layers_0_bias          parameter  128 elements
          p_layers_2_weight        parameter  8192 elements
          p_layers_2_bias          parameter  64 elements
          out0                     output 0   512 elements
              holds %linear_1 from k1 until the caller
          t0                       temporary  1024 elements
              holds %relu from k0 until k1
        notes:
          fused relu into linear
    "#]],
    );
}

#[test]
fn bert_block_dynamic_true() {
    check(
        "bert_block",
        DynamicMode::True,
        expect![[r#"
        kernels (9):
          k0_layer_norm: layer_norm
            layer_norm over e < 64 for each row < s0*s1
            x = in0[64*row + e]
            t0[64*row + e] = (acc * p_norm1_weight[e]) + p_norm1_bias[e]   (acc = (x - mean) / sqrt(var + 1e-5))
            dispatch s0*s1 workgroups x 64 threads
          k1_linear: linear
            gemm (Tiled) batch 1, m s0*s1, n 192, k 64
            a = t0[64*row + kk]
            b = p_qkv_weight[64*col + kk]
            t1[192*row + col] = acc + p_qkv_bias[col]   (acc = sum over kk of a * b)
            dispatch 3*((s0*s1 + 63)//64) workgroups x 64 threads
          k2_matmul_div: matmul + div
            gemm (Tiled) batch 4*s0, m s1, n s1, k 16
            a = t1[192*s1*(bat//4) + 192*s1*(row//s1) + kk + 16*(bat % 4) + 192*(row % s1)]
            b = t1[192*s1*(bat//4) + 192*s1*(col//s1) + kk + 16*(bat % 4) + 192*(col % s1) + 64]
            t0[s1**2*bat + s1*row + col] = acc / 4.0   (acc = sum over kk of a * b)
            dispatch 4*s0*((s1 + 63)//64)**2 workgroups x 64 threads
          k3_softmax: softmax
            softmax over e < s1 for each row < 4*s0*s1
            x = t0[s1*row + e]
            t2[s1*row + e] = acc   (acc = exp(x - max) / sum exp(x - max))
            dispatch 4*s0*s1 workgroups x 64 threads
          k4_matmul_1: matmul_1
            gemm (Tiled) batch 4*s0, m s1, n 16, k s1
            a = t2[4*s1**2*(bat//4) + s1**2*(bat % 4) + s1*row + kk]
            b = t1[192*s1*(bat//4) + 192*s1*(kk//s1) + col + 16*(bat % 4) + 192*(kk % s1) + 128]
            t0[16*s1*bat + 16*row + col] = acc   (acc = sum over kk of a * b)
            dispatch 4*s0*((s1 + 63)//64) workgroups x 64 threads
          k5_linear_1_add: linear_1 + add
            gemm (Tiled) batch 1, m s0*s1, n 64, k 64
            a = t0[64*s1*(row//s1) + 16*s1*(kk//16) + 16*(row % s1) + kk % 16]
            b = p_proj_weight[64*col + kk]
            t1[64*row + col] = in0[64*row + col] + (acc + p_proj_bias[col])   (acc = sum over kk of a * b)
            dispatch (s0*s1 + 63)//64 workgroups x 64 threads
          k6_layer_norm_1: layer_norm_1
            layer_norm over e < 64 for each row < s0*s1
            x = t1[64*row + e]
            t0[64*row + e] = (acc * p_norm2_weight[e]) + p_norm2_bias[e]   (acc = (x - mean) / sqrt(var + 1e-5))
            dispatch s0*s1 workgroups x 64 threads
          k7_linear_2_gelu: linear_2 + gelu
            gemm (Tiled) batch 1, m s0*s1, n 128, k 64
            a = t0[64*row + kk]
            b = p_mlp_0_weight[64*col + kk]
            t2[128*row + col] = gelu(acc + p_mlp_0_bias[col])   (acc = sum over kk of a * b)
            dispatch 2*((s0*s1 + 63)//64) workgroups x 64 threads
          k8_linear_3_add_1: linear_3 + add_1
            gemm (Tiled) batch 1, m s0*s1, n 64, k 128
            a = t2[128*row + kk]
            b = p_mlp_2_weight[128*col + kk]
            out0[64*row + col] = t1[64*row + col] + (acc + p_mlp_2_bias[col])   (acc = sum over kk of a * b)
            dispatch (s0*s1 + 63)//64 workgroups x 64 threads
        memory plan:
          in0                      input 0    64*s0*s1 elements
          p_norm1_weight           parameter  64 elements
          p_norm1_bias             parameter  64 elements
          p_qkv_weight             parameter  12288 elements
          p_qkv_bias               parameter  192 elements
          p_proj_weight            parameter  4096 elements
          p_proj_bias              parameter  64 elements
          p_norm2_weight           parameter  64 elements
          p_norm2_bias             parameter  64 elements
          p_mlp_0_weight           parameter  8192 elements
          p_mlp_0_bias             parameter  128 elements
          p_mlp_2_weight           parameter  8192 elements
          p_mlp_2_bias             parameter  64 elements
          out0                     output 0   64*s0*s1 elements
              holds %add_1 from k8 until the caller
          t0                       temporary  Max(64*s0*s1, 4*s0*s1**2) elements
              holds %layer_norm from k0 until k1
              holds %div from k2 until k3
              holds %matmul_1 from k4 until k5
              holds %layer_norm_1 from k6 until k7
          t1                       temporary  192*s0*s1 elements
              holds %linear from k1 until k4
              holds %add from k5 until k8
          t2                       temporary  Max(128*s0*s1, 4*s0*s1**2) elements
              holds %softmax from k3 until k4
              holds %gelu from k7 until k8
        notes:
          fused div into matmul
          fused add into linear_1
          fused gelu into linear_2
          fused add_1 into linear_3
    "#]],
    );
}

#[test]
fn yolo_stack_dynamic_true() {
    check(
        "yolo_stack",
        DynamicMode::True,
        expect![[r#"
        kernels (4):
          k0_conv2d_batch_norm_silu: conv2d + batch_norm + silu
            let z0 = (s1 - 1)//2 + 1
            gemm (Tiled) batch 1, m z0**2, n 8, k 27
            a = (in0[3*s1**2*(row//z0**2) + s1**2*(kk//9) + 2*s1*((row % z0**2)//z0) + s1*((kk % 9)//3) - s1 + kk % 3 + 2*((row % z0**2) % z0) - 1] if 0 <= 2*((row % z0**2)//z0) + (kk % 9)//3 - 1 < s1 and 0 <= kk % 3 + 2*((row % z0**2) % z0) - 1 < s1 else 0)
            b = p_conv2d_weight_bn[27*col + kk]
            t0[col*z0**2 + 8*z0**2*(row//z0**2) + row % z0**2] = silu(acc + p_conv2d_bias_bn[col])   (acc = sum over kk of a * b)
            dispatch (((s1 - 1)//2)**2 + 2*((s1 - 1)//2))//64 + 1 workgroups x 64 threads
          k1_conv2d_1_batch_norm_1_silu_1: conv2d_1 + batch_norm_1 + silu_1
            let z0 = (s1 - 1)//2 + 1
            let z1 = (s1 - 1)//4 + 1
            gemm (Tiled) batch 1, m z1**2, n 16, k 72
            a = (t0[8*z0**2*(row//z1**2) + z0**2*(kk//9) + 2*z0*((row % z1**2)//z1) + z0*((kk % 9)//3) - z0 + kk % 3 + 2*((row % z1**2) % z1) - 1] if 0 <= 2*((row % z1**2)//z1) + (kk % 9)//3 - 1 < z0 and 0 <= kk % 3 + 2*((row % z1**2) % z1) - 1 < z0 else 0)
            b = p_conv2d_1_weight_bn[72*col + kk]
            t1[col*z1**2 + 16*z1**2*(row//z1**2) + row % z1**2] = silu(acc + p_conv2d_1_bias_bn[col])   (acc = sum over kk of a * b)
            dispatch (((s1 - 1)//4)**2 + 2*((s1 - 1)//4))//64 + 1 workgroups x 64 threads
          k2_max_pool2d: max_pool2d
            let z0 = (s1 - 1)//4 + 1
            let z1 = ((s1 - 1)//4 - 1)//2 + 1
            max pool 2x2 over gid < 16*z1**2
            x = t1[z0**2*(gid//z1**2) + ky*z0 + 2*z0*((gid % z1**2)//z1) + kx + 2*((gid % z1**2) % z1)]
            t0[gid] = acc
            dispatch (16*(((s1 - 1)//4 - 1)//2)**2 + 32*(((s1 - 1)//4 - 1)//2) + 271)//256 workgroups x 256 threads
          k3_conv2d_2: conv2d_2
            let z0 = ((s1 - 1)//4 - 1)//2 + 1
            gemm (Tiled) batch 1, m z0**2, n 6, k 16
            a = t0[kk*z0**2 + 16*z0**2*(row//z0**2) + z0*((row % z0**2)//z0) + (row % z0**2) % z0]
            b = p_head_weight[16*col + kk]
            out0[col*z0**2 + 6*z0**2*(row//z0**2) + row % z0**2] = acc + p_head_bias[col]   (acc = sum over kk of a * b)
            dispatch ((((s1 - 1)//4 - 1)//2)**2 + 2*(((s1 - 1)//4 - 1)//2))//64 + 1 workgroups x 64 threads
        memory plan:
          in0                      input 0    3*s1**2 elements
          p_conv2d_weight_bn       parameter  216 elements
          p_conv2d_bias_bn         parameter  8 elements
          p_conv2d_1_weight_bn     parameter  1152 elements
          p_conv2d_1_bias_bn       parameter  16 elements
          p_head_weight            parameter  96 elements
          p_head_bias              parameter  6 elements
          out0                     output 0   6*(((s1 - 1)//4 - 1)//2)**2 + 12*(((s1 - 1)//4 - 1)//2) + 6 elements
              holds %conv2d_2 from k3 until the caller
          t0                       temporary  Max(8*((s1 - 1)//2)**2 + 16*((s1 - 1)//2) + 8, 16*(((s1 - 1)//4 - 1)//2)**2 + 32*(((s1 - 1)//4 - 1)//2) + 16) elements
              holds %silu from k0 until k1
              holds %max_pool2d from k2 until k3
          t1                       temporary  16*((s1 - 1)//4)**2 + 32*((s1 - 1)//4) + 16 elements
              holds %silu_1 from k1 until k2
        notes:
          fused batch_norm, silu into conv2d
          folded batch_norm into the weights and bias of conv2d
          fused batch_norm_1, silu_1 into conv2d_1
          folded batch_norm_1 into the weights and bias of conv2d_1
    "#]],
    );
}

#[test]
fn conv1d_dynamic_true() {
    check(
        "conv1d",
        DynamicMode::True,
        expect![[r#"
        kernels (1):
          k0_conv1d_relu: conv1d + relu
            gemm (Tiled) batch 1, m s1, n 8, k 12
            a = (in0[4*s1*(row//s1) + s1*(kk//3) + row % s1 + kk % 3 - 1] if 0 <= row % s1 + kk % 3 - 1 < s1 else 0)
            b = p_conv_weight[12*col + kk]
            out0[s1*col + 8*s1*(row//s1) + row % s1] = relu(acc + p_conv_bias[col])   (acc = sum over kk of a * b)
            dispatch (s1 + 63)//64 workgroups x 64 threads
        memory plan:
          in0                      input 0    4*s1 elements
          p_conv_weight            parameter  96 elements
          p_conv_bias              parameter  8 elements
          out0                     output 0   8*s1 elements
              holds %relu from k0 until the caller
        notes:
          fused relu into conv1d
    "#]],
    );
}

#[test]
fn add_one_dynamic_true() {
    check(
        "add_one",
        DynamicMode::True,
        expect![[r#"
        kernels (1):
          k0_add: add
            map over gid < s0
            out0[gid] = in0[gid] + 1.0
            dispatch (s0 + 255)//256 workgroups x 256 threads
        memory plan:
          in0                      input 0    s0 elements
          out0                     output 0   s0 elements
              holds %add from k0 until the caller
    "#]],
    );
}

/// int64 token ids: the note says how the kernels hold them; the lookups read the ids as
/// row numbers, and the count is a sum of a comparison.
#[test]
fn tagger_dynamic_true() {
    check(
        "tagger",
        DynamicMode::True,
        expect![[r#"
        kernels (8):
          k0_arange: arange
            map over gid < s1
            t0[gid] = 0.0 + (1.0 * float(gid))
            dispatch (s1 + 255)//256 workgroups x 256 threads
          k1_embedding: embedding
            map over gid < 32*s0*s1
            t1[gid] = p_tokens_weight[(int(|in0[gid//32]|) % 50) * 32 + gid % 32]
            dispatch (32*s0*s1 + 255)//256 workgroups x 256 threads
          k2_embedding_1: embedding_1
            map over gid < 32*s1
            t2[gid] = p_positions_weight[(int(|t0[gid//32]|) % 64) * 32 + gid % 32]
            dispatch (32*s1 + 255)//256 workgroups x 256 threads
          k3_add: add
            map over gid < 32*s0*s1
            t0[gid] = t1[gid] + t2[gid % 32 + 32*((gid//32) % s1)]
            dispatch (32*s0*s1 + 255)//256 workgroups x 256 threads
          k4_layer_norm: layer_norm
            layer_norm over e < 32 for each row < s0*s1
            x = t0[32*row + e]
            t1[32*row + e] = (acc * p_norm_weight[e]) + p_norm_bias[e]   (acc = (x - mean) / sqrt(var + 1e-5))
            dispatch s0*s1 workgroups x 64 threads
          k5_linear: linear
            gemm (Tiled) batch 1, m s0*s1, n 5, k 32
            a = t1[32*row + kk]
            b = p_head_weight[32*col + kk]
            out0[5*row + col] = acc + p_head_bias[col]   (acc = sum over kk of a * b)
            dispatch (s0*s1 + 63)//64 workgroups x 64 threads
          k6_gt: gt
            map over gid < s0*s1
            t0[gid] = in0[gid] > 10.0
            dispatch (s0*s1 + 255)//256 workgroups x 256 threads
          k7_sum: sum
            sum over e < s1 for each row < s0
            x = t0[s1*row + e]
            out1[row] = acc   (acc = sum of x)
            dispatch s0 workgroups x 64 threads
        memory plan:
          in0                      input 0    s0*s1 elements
          p_tokens_weight          parameter  1600 elements
          p_positions_weight       parameter  2048 elements
          p_norm_weight            parameter  32 elements
          p_norm_bias              parameter  32 elements
          p_head_weight            parameter  160 elements
          p_head_bias              parameter  5 elements
          out0                     output 0   5*s0*s1 elements
              holds %linear from k5 until the caller
          out1                     output 1   s0 elements
              holds %sum from k7 until the caller
          t0                       temporary  Max(s0*s1, Max(32*s0*s1, s1)) elements
              holds %arange from k0 until k2
              holds %add from k3 until k4
              holds %gt from k6 until k7
          t1                       temporary  32*s0*s1 elements
              holds %embedding from k1 until k3
              holds %layer_norm from k4 until k5
          t2                       temporary  32*s1 elements
              holds %embedding_1 from k2 until k3
        notes:
          ids (int64), arange (int64) computed and stored as float32: WGSL has no 64-bit integers, and whole numbers within ±2^24 are exact
    "#]],
    );
}
