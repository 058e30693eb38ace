//! Guards that never fail on Tailor's calls but that PyTorch prints, so the page shows the
//! same list: inferred-stride equalities and `NO_TENSOR_ALIASING`.

use crate::models;
use tailor::{CallMarks, CompileConfig, DynamicMode, spec};

/// Calls `model` with each of `calls` under `dynamic` and returns the newest entry's guard
/// lines.
fn last_guards(model: &str, dynamic: DynamicMode, calls: &[&str]) -> Vec<String> {
    let mut cache = tailor::load(model, None).unwrap();
    let names = cache.entry_point().inputs.clone();
    let config = CompileConfig {
        dynamic,
        ..CompileConfig::default()
    };
    for text in calls {
        let call = spec::parse_shapes(text, &names).unwrap();
        cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    }
    let entries = cache.entries();
    entries.last().expect("an entry").guards.source_lines()
}

#[track_caller]
fn check_has_guard(model: &str, dynamic: DynamicMode, calls: &[&str], guard: &str) {
    let lines = last_guards(model, dynamic, calls);
    assert!(
        lines
            .iter()
            .any(|l| l == guard || l.ends_with(&format!(": {guard}"))),
        "missing {guard:?} in {lines:#?}"
    );
}

/// pytorch-semantics.md §1.3 and §5.2 ("contiguous stride"): when a dim is symbolic the
/// strides after it are inferred from sizes and guarded.
#[test]
fn two_dim_dynamic_input_has_a_stride_guard() {
    check_has_guard(
        models::ADD_ONE,
        DynamicMode::Auto,
        &["x=4,4", "x=5,5"],
        "L['x'].stride()[0] == L['x'].size()[1]",
    );
}

/// §5.1: `NO_TENSOR_ALIASING: check_no_aliasing(L['x'], L['y'])` with two tensor inputs.
#[test]
fn two_tensor_inputs_have_a_no_aliasing_guard() {
    check_has_guard(
        models::ADD_XY,
        DynamicMode::Auto,
        &["x=3;y=3"],
        "check_no_aliasing(L['x'], L['y'])",
    );
}
