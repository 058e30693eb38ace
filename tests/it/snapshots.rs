//! Snapshots of what the page shows: whole `explain` traces (`tests/data/trace/*.txt`) and
//! the guard lines of one compilation, as PyTorch prints them (pytorch-semantics.md §5.2,
//! §6.4). Update with `UPDATE_EXPECT=1 cargo test --test it`, then review every line
//! against the semantics document before committing.

use crate::models;
use expect_test::{Expect, ExpectFile, expect, expect_file};
use tailor::{CallMarks, CompileConfig, DynamicMode, MarkDynamic, Options, SymbolNaming};

fn options(dynamic: DynamicMode, marks: &[(&str, usize)]) -> Options {
    Options {
        entry: None,
        config: CompileConfig {
            dynamic,
            ..CompileConfig::default()
        },
        marks: CallMarks {
            dynamic: marks
                .iter()
                .map(|&(input, dim)| MarkDynamic {
                    input: input.into(),
                    dim,
                    min: None,
                    max: None,
                })
                .collect(),
            ..CallMarks::default()
        },
        symbol_names: SymbolNaming::Tailor,
    }
}

#[track_caller]
fn check_trace(model: &str, input: &str, options: Options, expect: ExpectFile) {
    let trace = tailor::explain(model, input, &options).unwrap();
    expect.assert_eq(&trace.to_string());
}

#[track_caller]
fn check_guards(model: &str, input: &str, options: Options, expect: Expect) {
    let mut cache = tailor::load(model, None).unwrap();
    let call = tailor::spec::parse_shapes(input, &cache.entry_point().inputs).unwrap();
    let event = cache.call(0, &options.config, &call, &options.marks, &|| 0.0);
    assert_eq!(event.action, tailor::Action::Compile, "{event:?}");
    let entry = cache.entries()[0];
    expect.assert_eq(&(entry.guards.source_lines().join("\n") + "\n"));
}

// ---- the material's SimpleNet at x=8,64 under each mode ----

#[test]
fn trace_simplenet_default() {
    check_trace(
        models::SIMPLENET,
        "x=8,64",
        options(DynamicMode::Auto, &[]),
        expect_file!["../data/trace/simplenet_default.txt"],
    );
}

#[test]
fn trace_simplenet_dynamic_true() {
    check_trace(
        models::SIMPLENET,
        "x=8,64",
        options(DynamicMode::True, &[]),
        expect_file!["../data/trace/simplenet_dynamic_true.txt"],
    );
}

#[test]
fn trace_simplenet_dynamic_false() {
    check_trace(
        models::SIMPLENET,
        "x=8,64",
        options(DynamicMode::False, &[]),
        expect_file!["../data/trace/simplenet_dynamic_false.txt"],
    );
}

#[test]
fn guards_simplenet_default() {
    check_guards(
        models::SIMPLENET,
        "x=8,64",
        options(DynamicMode::Auto, &[]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[8, 64], stride=[64, 1])
            DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False
        "#]],
    );
}

#[test]
fn guards_simplenet_dynamic_true() {
    check_guards(
        models::SIMPLENET,
        "x=8,64",
        options(DynamicMode::True, &[]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, 64], stride=[64, 1])
            DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False
            2 <= L['x'].size()[0]
        "#]],
    );
}

#[test]
fn guards_simplenet_dynamic_false() {
    check_guards(
        models::SIMPLENET,
        "x=8,64",
        options(DynamicMode::False, &[]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[8, 64], stride=[64, 1])
            DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False
        "#]],
    );
}

// ---- the (B, L, D) sequence example ----

/// PyTorch's symbol names (`--symbol-names pytorch`) up to the guards, a note that maps
/// them to the numbers the kernels keep, and kernels exactly as under Tailor's names.
#[test]
fn trace_matmul_pytorch_symbol_names() {
    let named = Options {
        symbol_names: SymbolNaming::PyTorch,
        ..options(DynamicMode::True, &[])
    };
    check_trace(
        models::MATMUL,
        "a=8,16;b=16,4",
        named.clone(),
        expect_file!["../data/trace/matmul_pytorch_names.txt"],
    );
    let named = tailor::explain(models::MATMUL, "a=8,16;b=16,4", &named).unwrap();
    let numbered = tailor::explain(
        models::MATMUL,
        "a=8,16;b=16,4",
        &options(DynamicMode::True, &[]),
    )
    .unwrap();
    let kernels = |trace: &tailor::Trace| {
        trace
            .stages
            .iter()
            .skip_while(|stage| stage.id != "guards")
            .skip(1)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(!kernels(&numbered).is_empty());
    assert_eq!(kernels(&named), kernels(&numbered));
}

#[test]
fn trace_sequence_dynamic_true() {
    check_trace(
        models::SEQUENCE,
        "x=4,16,32",
        options(DynamicMode::True, &[]),
        expect_file!["../data/trace/sequence_dynamic_true.txt"],
    );
}

#[test]
fn trace_sequence_mark_batch_and_length() {
    check_trace(
        models::SEQUENCE,
        "x=4,16,32",
        options(DynamicMode::Auto, &[("x", 0), ("x", 1)]),
        expect_file!["../data/trace/sequence_mark_dynamic_b_l.txt"],
    );
}

#[test]
fn guards_sequence_dynamic_true() {
    check_guards(
        models::SEQUENCE,
        "x=4,16,32",
        options(DynamicMode::True, &[]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, None, 32], stride=[None, 32, 1])
            DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False
            L['x'].stride()[0] == 32*L['x'].size()[1]
            2 <= L['x'].size()[0]
            2 <= L['x'].size()[1]
        "#]],
    );
}

#[test]
fn guards_sequence_mark_batch_and_length() {
    check_guards(
        models::SEQUENCE,
        "x=4,16,32",
        options(DynamicMode::Auto, &[("x", 0), ("x", 1)]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, None, 32], stride=[None, 32, 1])
            L['x'].stride()[0] == 32*L['x'].size()[1]
            2 <= L['x'].size()[0]
            2 <= L['x'].size()[1]
        "#]],
    );
}

// ---- Conv1d: same-length (k3 s1 p1) and floor-division (k5 s2 p1) output ----

#[test]
fn trace_conv1d_same_length() {
    check_trace(
        models::CONV1D_K3_S1,
        "x=2,4,50",
        options(DynamicMode::True, &[]),
        expect_file!["../data/trace/conv1d_k3_s1_p1.txt"],
    );
}

#[test]
fn trace_conv1d_stride_two() {
    check_trace(
        models::CONV1D_K5_S2,
        "x=2,4,50",
        options(DynamicMode::True, &[]),
        expect_file!["../data/trace/conv1d_k5_s2_p1.txt"],
    );
}

#[test]
fn guards_conv1d_same_length() {
    check_guards(
        models::CONV1D_K3_S1,
        "x=2,4,50",
        options(DynamicMode::True, &[]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, 4, None], stride=[None, None, 1])
            DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False
            L['x'].stride()[0] == 4*L['x'].size()[2]
            L['x'].stride()[1] == L['x'].size()[2]
            2 <= L['x'].size()[0]
            2 <= L['x'].size()[2]
        "#]],
    );
}

#[test]
fn guards_conv1d_stride_two() {
    check_guards(
        models::CONV1D_K5_S2,
        "x=2,4,50",
        options(DynamicMode::True, &[]),
        expect![[r#"
            TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, 4, None], stride=[None, None, 1])
            DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['x'], '_dynamo_dynamic_indices') == False
            L['x'].stride()[0] == 4*L['x'].size()[2]
            L['x'].stride()[1] == L['x'].size()[2]
            (1 + (((-3) + L['x'].size()[2]) // 2)) != 1
            2 <= L['x'].size()[0]
            3 <= L['x'].size()[2]
        "#]],
    );
}
