//! Weights and call values from `.safetensors` files, checked against real PyTorch.
//!
//! In: `tests/data/weights/NAME.{weights,inputs,outputs}.safetensors`, which
//! `scripts/pytorch/record_weights.py` wrote with PyTorch 2.15 (the model's `state_dict`,
//! forward's arguments, the returned leaves as `out0`, …), and files made here that break
//! one rule each. Out: Tailor's outputs on the CPU backend and on the reference
//! (`graph::eval`) agree with PyTorch's within [`REL_TOL`]: `|tailor - torch| <= REL_TOL *
//! max(1, |torch|)` for every element (relative above 1, absolute below); and each bad
//! file is the error that names what is wrong. Invariant: nothing here needs PyTorch.

use expect_test::{Expect, expect};
use safetensors::Dtype;
use safetensors::tensor::TensorView;
use std::path::PathBuf;
use std::process::Command;
use std::rc::Rc;
use tailor::cache::CodeCache;
use tailor::graph::Tensor;
use tailor::session::Session;
use tailor::session::executor::{self, Backend, RunOptions};
use tailor::{CallMarks, CompileConfig, weights};

/// How far Tailor's outputs may be from PyTorch's, relative to `max(1, |torch|)`.
const REL_TOL: f32 = 1e-4;

fn data(file: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/weights");
    std::fs::read(path.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn source(path: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// The float32 and int64 tensors of a safetensors file (the int64 values as floats), with
/// their dtypes, in key order.
fn typed_tensors(bytes: &[u8]) -> Vec<(String, Tensor, Dtype)> {
    let file = safetensors::SafeTensors::deserialize(bytes).expect("a safetensors file");
    let mut tensors: Vec<(String, Tensor, Dtype)> = file
        .iter()
        .map(|(name, view)| {
            let data: Vec<f32> = match view.dtype() {
                Dtype::F32 => view
                    .data()
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
                Dtype::I64 => view
                    .data()
                    .chunks_exact(8)
                    .map(|b| i64::from_le_bytes(b.try_into().unwrap()) as f32)
                    .collect(),
                other => panic!("{name} is {other:?}"),
            };
            let shape = view.shape().to_vec();
            (name.to_string(), Tensor { shape, data }, view.dtype())
        })
        .collect();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    tensors
}

/// The float32 tensors of a safetensors file, in key order.
fn tensors(bytes: &[u8]) -> Vec<(String, Tensor)> {
    let file = safetensors::SafeTensors::deserialize(bytes).expect("a safetensors file");
    let mut tensors: Vec<(String, Tensor)> = file
        .iter()
        .map(|(name, view)| {
            assert_eq!(view.dtype(), Dtype::F32, "{name}");
            let data = view.data().chunks_exact(4);
            let data = data.map(|b| f32::from_le_bytes(b.try_into().unwrap()));
            let shape = view.shape().to_vec();
            let tensor = Tensor {
                shape,
                data: data.collect(),
            };
            (name.to_string(), tensor)
        })
        .collect();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    tensors
}

/// The largest `|actual - expected| / max(1, |expected|)` over every element.
fn worst_error(actual: &[Tensor], expected: &[Tensor]) -> f32 {
    assert_eq!(actual.len(), expected.len(), "one output per returned leaf");
    let mut worst = 0.0f32;
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(a.shape, e.shape);
        for (x, y) in a.data.iter().zip(&e.data) {
            let err = (x - y).abs() / y.abs().max(1.0);
            worst = if err.is_nan() {
                f32::INFINITY
            } else {
                worst.max(err)
            };
        }
    }
    worst
}

/// The model in `path` with `name`'s recorded weights loaded.
fn loaded(name: &str, path: &str) -> CodeCache {
    let mut cache = tailor::load(&source(path), None).unwrap();
    cache
        .load_state(&data(&format!("{name}.weights.safetensors")))
        .unwrap();
    cache
}

/// Runs `name`'s recorded call of the model in `path` with the recorded weights, on the CPU
/// backend with the reference, and compares both with PyTorch's recorded outputs.
#[track_caller]
fn check_against_pytorch(name: &str, path: &str) {
    check_cache_against_pytorch(name, loaded(name, path));
}

/// Runs `name`'s recorded call through `cache` in a session on the CPU backend, with the
/// reference, and compares both with PyTorch's recorded outputs.
#[track_caller]
fn check_cache_against_pytorch(name: &str, cache: CodeCache) {
    let entry = cache.entry_point().clone();
    let inputs = data(&format!("{name}.inputs.safetensors"));
    let weights::CallValues { call, values } =
        weights::read_call(&entry.name, &entry.inputs, &inputs).unwrap();
    let inputs = executor::call_inputs(&call, values, 0).unwrap();
    let mut session = Session::new(cache, Rc::new(Backend::cpu()), Rc::new(|| 0.0));
    let options = RunOptions {
        check: true,
        timing: false,
    };
    let config = CompileConfig::default();
    let marks = CallMarks::default();
    let (_, ran) = pollster::block_on(session.call(0, &config, &call, &marks, inputs, options));
    let outcome = ran.unwrap();
    let expected: Vec<Tensor> = typed_tensors(&data(&format!("{name}.outputs.safetensors")))
        .into_iter()
        .map(|(_, t, _)| t)
        .collect();
    let cpu = worst_error(&outcome.outputs, &expected);
    let reference = worst_error(outcome.expected.as_deref().unwrap(), &expected);
    println!("{name}: max relative error vs PyTorch: cpu {cpu:.3e}, reference {reference:.3e}");
    assert!(
        cpu <= REL_TOL,
        "{name}: the CPU backend is {cpu} from PyTorch"
    );
    assert!(
        reference <= REL_TOL,
        "{name}: the reference is {reference} from PyTorch"
    );
}

/// A sibling cache (the page's step-through beside its calls) compiles anew over the same
/// module, loaded weights included, without running the file again.
#[test]
fn a_sibling_cache_shares_the_module_and_its_loaded_weights() {
    let mut cache = loaded("simplenet", "models/simplenet.py");
    let call = tailor::spec::parse_shapes("x=8,64", &cache.entry_point().inputs).unwrap();
    let config = CompileConfig::default();
    cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    assert_eq!(cache.entries_mru().len(), 1);
    let sibling = cache.sibling();
    assert!(sibling.entries_mru().is_empty() && sibling.events.is_empty());
    check_cache_against_pytorch("simplenet", sibling);
}

#[test]
fn simplenet_matches_pytorch() {
    check_against_pytorch("simplenet", "models/simplenet.py");
}

#[test]
fn conv_net_with_batch_norm_matches_pytorch() {
    // The file has BatchNorm's int64 num_batches_tracked, which loading skips.
    check_against_pytorch("yolo_stack", "models/yolo_stack.py");
}

#[test]
fn attention_block_matches_pytorch() {
    check_against_pytorch("bert_block", "models/bert_block.py");
}

/// int64 token ids in, through two embeddings; an int64 count out.
#[test]
fn token_ids_through_embeddings_match_pytorch() {
    check_against_pytorch("tagger", "models/tagger.py");
}

/// The CLI writes each output in its own dtype, as PyTorch's file holds it (logits F32,
/// the count I64).
#[test]
fn the_cli_writes_int64_outputs_as_int64() {
    let out = std::env::temp_dir().join(format!(
        "tailor-it-{}-tagger.safetensors",
        std::process::id()
    ));
    let out_path = out.to_str().unwrap();
    let output = tailor(&[
        "run",
        "models/tagger.py",
        "--device",
        "cpu",
        "--weights",
        "tests/data/weights/tagger.weights.safetensors",
        "--inputs",
        "tests/data/weights/tagger.inputs.safetensors",
        "--outputs",
        out_path,
    ]);
    assert!(output.status.success(), "{output:?}");
    let written = typed_tensors(&std::fs::read(&out).unwrap());
    let _ = std::fs::remove_file(&out);
    let expected = typed_tensors(&data("tagger.outputs.safetensors"));
    let dtypes: Vec<Dtype> = written.iter().map(|(_, _, d)| *d).collect();
    assert_eq!(dtypes, [Dtype::F32, Dtype::I64]);
    assert_eq!(
        written[1].1, expected[1].1,
        "the counts are PyTorch's exactly"
    );
    let written: Vec<Tensor> = written.into_iter().map(|(_, t, _)| t).collect();
    let expected: Vec<Tensor> = expected.into_iter().map(|(_, t, _)| t).collect();
    assert!(worst_error(&written, &expected) <= REL_TOL);
}

// ---- files that do not fit -------------------------------------------------------------

/// A safetensors file of `(name, dtype, shape)` tensors, each filled with small values.
fn file(tensors: &[(&str, Dtype, &[usize])]) -> Vec<u8> {
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, dtype, shape)| {
            let n: usize = shape.iter().product();
            vec![0; n * dtype.bitsize() / 8]
        })
        .collect();
    let views = tensors.iter().zip(&bytes).map(|((name, dtype, shape), b)| {
        let view = TensorView::new(*dtype, shape.to_vec(), b).expect("a consistent view");
        (name.to_string(), view)
    });
    safetensors::serialize(views, None).unwrap()
}

/// SimpleNet's state (`models/simplenet.py`): the two Linear layers of its Sequential.
const SIMPLENET_STATE: &[(&str, Dtype, &[usize])] = &[
    ("layers.0.weight", Dtype::F32, &[128, 64]),
    ("layers.0.bias", Dtype::F32, &[128]),
    ("layers.2.weight", Dtype::F32, &[64, 128]),
    ("layers.2.bias", Dtype::F32, &[64]),
];

/// Loads `weights` into `model`'s entry and expects the error's text.
#[track_caller]
fn check_load_error(model: &str, weights: &[u8], expect: Expect) {
    let mut cache = tailor::load(model, None).unwrap();
    let err = cache
        .load_state(weights)
        .expect_err("the weights do not fit");
    expect.assert_eq(&err.to_string());
}

#[test]
fn missing_unexpected_and_misshaped_keys_are_listed_as_pytorch_lists_them() {
    let weights = file(&[
        ("layers.0.weight", Dtype::F32, &[128, 32]),
        ("layers.0.bias", Dtype::F32, &[128]),
        ("layers.1.weight", Dtype::F32, &[64, 128]),
        ("head.bias", Dtype::F32, &[64]),
    ]);
    check_load_error(
        tailor::SIMPLENET_SOURCE,
        &weights,
        expect![[r#"
            error(s) in loading state_dict for SimpleNet:
            	missing key(s) in state_dict: "layers.2.weight", "layers.2.bias"
            	unexpected key(s) in state_dict: "head.bias", "layers.1.weight"
            	size mismatch for layers.0.weight: copying a param with shape [128, 32] from checkpoint, the shape in current model is [128, 64]"#]],
    );
}

#[test]
fn a_tensor_that_is_not_float32_is_named_with_its_dtype() {
    let mut state = SIMPLENET_STATE.to_vec();
    state[1] = ("layers.0.bias", Dtype::F16, &[128]);
    check_load_error(
        tailor::SIMPLENET_SOURCE,
        &file(&state),
        expect![
            "the weights file's tensor 'layers.0.bias' is F16; Tailor's tensors are float32 (F32)"
        ],
    );
}

#[test]
fn num_batches_tracked_is_skipped_only_beside_a_batch_norm() {
    let mut state = SIMPLENET_STATE.to_vec();
    state.push(("layers.0.num_batches_tracked", Dtype::I64, &[]));
    check_load_error(
        tailor::SIMPLENET_SOURCE,
        &file(&state),
        expect![[r#"
            error(s) in loading state_dict for SimpleNet:
            	unexpected key(s) in state_dict: "layers.0.num_batches_tracked""#]],
    );
}

#[test]
fn bytes_that_are_not_safetensors_are_refused() {
    check_load_error(
        tailor::SIMPLENET_SOURCE,
        b"not a safetensors file",
        expect!["the weights file is not a safetensors file: header too large"],
    );
}

#[test]
fn a_function_has_no_state_dict() {
    check_load_error(
        crate::models::ADD_ONE,
        &file(&[]),
        expect!["'f' is a function, not an nn.Module: it has no state_dict to load"],
    );
}

#[test]
fn weights_are_loaded_before_the_first_call() {
    let mut cache = tailor::load(tailor::SIMPLENET_SOURCE, None).unwrap();
    let call = tailor::spec::parse_shapes("x=8,64", &cache.entry_point().inputs).unwrap();
    cache.call(
        0,
        &CompileConfig::default(),
        &call,
        &CallMarks::default(),
        &|| 0.0,
    );
    let err = cache.load_state(&file(SIMPLENET_STATE)).unwrap_err();
    expect!["weights are loaded before the first call, and 'SimpleNet' has been called"]
        .assert_eq(&err.to_string());
}

/// Tied weights (nanoGPT's `lm_head.weight = wte.weight`) and a buffer PyTorch leaves out
/// of `state_dict` (`persistent=False`).
const TIED: &str = "\
import torch
import torch.nn as nn


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 4, bias=False)
        self.head = nn.Linear(4, 4, bias=False)
        self.head.weight = self.embed.weight
        self.register_buffer('scale', torch.ones(4), persistent=False)

    def forward(self, x):
        return self.head(self.embed(x)) * self.scale
";

/// `state_dict()`'s keys of the model in `source`, as the loader matches them.
fn state_keys(source: &str) -> Vec<Vec<String>> {
    let cache: CodeCache = tailor::load(source, None).unwrap();
    let state = cache.program().state(cache.entry_point()).unwrap();
    state.unwrap().into_iter().map(|t| t.names).collect()
}

#[test]
fn a_tied_weight_loads_from_either_key_and_is_missing_under_both() {
    expect![[r#"[["embed.weight", "head.weight"]]"#]].assert_eq(&format!("{:?}", state_keys(TIED)));
    for key in ["embed.weight", "head.weight"] {
        let mut cache = tailor::load(TIED, None).unwrap();
        cache
            .load_state(&file(&[(key, Dtype::F32, &[4, 4])]))
            .unwrap_or_else(|e| panic!("{key}: {e}"));
    }
    check_load_error(
        TIED,
        &file(&[("scale", Dtype::F32, &[4])]),
        expect![[r#"
            error(s) in loading state_dict for Tied:
            	missing key(s) in state_dict: "embed.weight", "head.weight"
            	unexpected key(s) in state_dict: "scale""#]],
    );
}

#[test]
fn state_dict_keys_are_in_pytorchs_order() {
    // Each module's parameters, then its buffers, then its children's (BatchNorm's
    // running statistics after its weight and bias; no num_batches_tracked).
    let keys = state_keys(&source("models/yolo_stack.py"));
    expect![[r#"
        [["stem.0.weight"], ["stem.0.bias"], ["stem.1.weight"], ["stem.1.bias"], ["stem.1.running_mean"], ["stem.1.running_var"], ["down.0.weight"], ["down.0.bias"], ["down.1.weight"], ["down.1.bias"], ["down.1.running_mean"], ["down.1.running_var"], ["head.weight"], ["head.bias"]]"#]]
    .assert_eq(&format!("{keys:?}"));
}

// ---- inputs -----------------------------------------------------------------------------

/// A function of a tensor, an int and a bool.
const MIXED: &str = "\
import torch


def f(x, n, flag):
    return x * n if flag else x
";

#[track_caller]
fn check_inputs(tensors: &[(&str, Dtype, &[usize])], expect: Expect) {
    let cache = tailor::load(MIXED, None).unwrap();
    let entry = cache.entry_point();
    let text = match weights::read_call(&entry.name, &entry.inputs, &file(tensors)) {
        Ok(read) => format!("{} ({} values)", read.call.to_spec(), read.values.len()),
        Err(err) => err.to_string(),
    };
    expect.assert_eq(&text);
}

#[test]
fn inputs_are_arguments_by_name() {
    check_inputs(
        &[
            ("flag", Dtype::BOOL, &[]),
            ("n", Dtype::I64, &[]),
            ("x", Dtype::F32, &[2, 3]),
        ],
        expect!["x=2,3;n=int(0);flag=False (1 values)"],
    );
    check_inputs(
        &[("x", Dtype::F32, &[2, 3]), ("y", Dtype::F32, &[2])],
        expect![
            "the inputs file does not match f's arguments (x, n, flag): missing n, flag; unexpected y"
        ],
    );
    check_inputs(
        &[
            ("flag", Dtype::BOOL, &[]),
            ("n", Dtype::I64, &[2]),
            ("x", Dtype::F32, &[2, 3]),
        ],
        // An int64 tensor is a tensor argument: `f`'s guards then refuse it for the int `n`.
        expect!["x=2,3;n=2:int64;flag=False (2 values)"],
    );
    check_inputs(
        &[
            ("flag", Dtype::BOOL, &[]),
            ("n", Dtype::I64, &[]),
            ("x", Dtype::F64, &[2, 3]),
        ],
        expect![
            "the inputs file's tensor 'x' is F64; Tailor's tensors are float32 (F32), int64 (I64) or bool (BOOL); an int argument is a 0-dim I64, a bool a 0-dim BOOL"
        ],
    );
}

// ---- the command line -----------------------------------------------------------------

fn tailor(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tailor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_cli_writes_the_outputs_pytorch_wrote() {
    let out =
        std::env::temp_dir().join(format!("tailor-it-{}-out.safetensors", std::process::id()));
    let out_path = out.to_str().unwrap();
    let output = tailor(&[
        "run",
        "models/yolo_stack.py",
        "--device",
        "cpu",
        "--weights",
        "tests/data/weights/yolo_stack.weights.safetensors",
        "--inputs",
        "tests/data/weights/yolo_stack.inputs.safetensors",
        "--outputs",
        out_path,
    ]);
    assert!(output.status.success(), "{output:?}");
    let written = tensors(&std::fs::read(&out).unwrap());
    let _ = std::fs::remove_file(&out);
    let expected = tensors(&data("yolo_stack.outputs.safetensors"));
    let names: Vec<&str> = written.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["out0"]);
    let written: Vec<Tensor> = written.into_iter().map(|(_, t)| t).collect();
    let expected: Vec<Tensor> = expected.into_iter().map(|(_, t)| t).collect();
    assert!(worst_error(&written, &expected) <= REL_TOL);
}

#[test]
fn the_cli_reports_weights_that_do_not_fit() {
    let output = tailor(&[
        "run",
        "models/simplenet.py",
        "--weights",
        "tests/data/weights/yolo_stack.weights.safetensors",
        "--call",
        "x=8,64",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("missing key(s) in state_dict: \"layers.0.weight\""),
        "{stderr}"
    );
}

#[test]
fn the_cli_writes_no_outputs_for_a_call_that_does_not_run() {
    let dir = std::env::temp_dir();
    let inputs = dir.join(format!("tailor-it-{}-in.safetensors", std::process::id()));
    let outputs = dir.join(format!("tailor-it-{}-none.safetensors", std::process::id()));
    // SimpleNet's first Linear takes 64 features, not 32.
    std::fs::write(&inputs, file(&[("x", Dtype::F32, &[8, 32])])).unwrap();
    let output = tailor(&[
        "run",
        "models/simplenet.py",
        "--inputs",
        inputs.to_str().unwrap(),
        "--outputs",
        outputs.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&inputs);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the call did not run"), "{stderr}");
    assert!(!outputs.exists(), "no outputs file");
}
