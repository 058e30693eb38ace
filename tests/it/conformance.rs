//! Cache-policy conformance: call sequences with the compile / hit / eager / error outcome
//! real PyTorch produces (pytorch-semantics.md §1–§5, the scenario table of §9 and §12).
//!
//! Each test is one line of data read by `check`:
//! * `calls`: calls separated by `|`. A call is `SHAPES` (`x=8,64`, `a=3,4;b=4,5`), optionally
//!   preceded by `wN` (the wrapper, i.e. which `torch.compile(...)` is called, default `w0`)
//!   and followed by marks for that call only: `dyn:x:0[:MIN:MAX]` (`mark_dynamic`) and
//!   `static:x:1` (`mark_static`). A trailing `*N` repeats the call N times.
//! * `actions`: one token per call: `C<id>` compiled entry `<id>`, `H<id>` hit entry `<id>`
//!   (ids are compile order, PyTorch's `0/<id>`), `E` eager, `X` error; `*N` repeats.
//! * `last_entry`: the inputs of the newest entry; a number is a static size, `?` a symbol
//!   with the default range `[2, int_oo]`, `?[lo,hi]` a symbol with another range (empty:
//!   not checked).
//! * `reasons`: (call index, guard-failure reason that must be among that call's reasons).
//! * `lookup`: (call index, the entries whose guards failed, in lookup order: `0/2 0/0`).
//! * `guards`: shape-guard lines of the newest entry (tensor matches and the
//!   `hasattr(...)` marking guards left out): `exact` compares the whole list in order,
//!   otherwise each listed line must be present, and a line `not:TEXT` means no guard
//!   contains TEXT.
//!
//! Not expressible here: §9 rows 15–16 (int arguments: `values.rs` checks them against
//! PyTorch's record), row 17 (float arguments: `script.rs` checks `float_args.py` against
//! PyTorch's record), rows 22–23 (`mark_unbacked`,
//! `automatic_dynamic_shapes_mark_as="unbacked"`) and row 24 (dtype changes: every input is
//! float32).

use crate::models;
use tailor::cache::DimSpec;
use tailor::{Action, CallMarks, CompileConfig, DynamicMode, spec};

const AUTO: &[DynamicMode] = &[DynamicMode::Auto];
const TRUE: &[DynamicMode] = &[DynamicMode::True];
const FALSE: &[DynamicMode] = &[DynamicMode::False];
/// The material's demo: `model_dynamic` (wrapper 0) and `model_static` (wrapper 1).
const DEMO_WRAPPERS: &[DynamicMode] = &[DynamicMode::True, DynamicMode::False];

struct Case<'a> {
    model: &'a str,
    modes: &'a [DynamicMode],
    limit: usize,
    calls: &'a str,
    actions: &'a str,
    compiles: usize,
    last_entry: &'a str,
    reasons: &'a [(usize, &'a str)],
    warnings: &'a [(usize, &'a str)],
    errors: &'a [(usize, &'a str)],
    lookup: &'a [(usize, &'a str)],
    guards: &'a [&'a str],
    exact: bool,
}

const BASE: Case<'static> = Case {
    model: models::ADD_ONE,
    modes: AUTO,
    limit: 8,
    calls: "",
    actions: "",
    compiles: 0,
    last_entry: "",
    reasons: &[],
    warnings: &[],
    errors: &[],
    lookup: &[],
    guards: &[],
    exact: false,
};

struct Call {
    wrapper: usize,
    shapes: tailor::CallShapes,
    marks: CallMarks,
}

fn expand(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for token in text
        .split(['|', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        match token.rsplit_once('*') {
            Some((item, n)) => out.extend(std::iter::repeat_n(item, n.parse().unwrap())),
            None => out.push(token),
        }
    }
    out
}

fn parse_calls(text: &str, names: &[String]) -> Vec<Call> {
    let mut calls = Vec::new();
    for call in text.split('|').map(str::trim) {
        let (call, repeat) = match call.rsplit_once('*') {
            Some((call, n)) => (call, n.parse().unwrap()),
            None => (call, 1),
        };
        let mut wrapper = 0;
        let mut shapes = None;
        let mut marks = CallMarks::default();
        for token in call.split_whitespace() {
            if let Some(spec) = token.strip_prefix("dyn:") {
                marks.dynamic.push(spec::parse_mark(spec, names).unwrap());
            } else if let Some(spec) = token.strip_prefix("static:") {
                marks
                    .fixed
                    .push(spec::parse_static_mark(spec, names).unwrap());
            } else if let Some(w) = token.strip_prefix('w') {
                wrapper = w.parse().unwrap();
            } else {
                shapes = Some(spec::parse_shapes(token, names).unwrap());
            }
        }
        let shapes = shapes.unwrap_or_else(|| panic!("no shapes in call '{call}'"));
        for _ in 0..repeat {
            calls.push(Call {
                wrapper,
                shapes: shapes.clone(),
                marks: marks.clone(),
            });
        }
    }
    calls
}

fn render_dims(inputs: &[(String, Vec<DimSpec>)]) -> String {
    let inputs: Vec<String> = inputs
        .iter()
        .map(|(name, dims)| {
            let dims: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    DimSpec::Static(v) => v.to_string(),
                    DimSpec::Dynamic {
                        min: Some(2),
                        max: None,
                        ..
                    } => "?".into(),
                    DimSpec::Dynamic { min, max, .. } => format!(
                        "?[{},{}]",
                        min.map_or("-inf".into(), |v| v.to_string()),
                        max.map_or("inf".into(), |v| v.to_string())
                    ),
                })
                .collect();
            format!("{name}=[{}]", dims.join(", "))
        })
        .collect();
    inputs.join(" ")
}

fn matches_reason(actual: &str, expected: &str) -> bool {
    actual == expected || actual.starts_with(&format!("{expected}  #"))
}

#[track_caller]
fn check(case: Case<'_>) {
    let mut cache = tailor::load(case.model, None).unwrap();
    let names = cache.entry_point().inputs.clone();
    let calls = parse_calls(case.calls, &names);
    let configs: Vec<CompileConfig> = case
        .modes
        .iter()
        .map(|&dynamic| CompileConfig {
            dynamic,
            recompile_limit: case.limit,
            ..CompileConfig::default()
        })
        .collect();
    let mut log = String::new();
    let mut got = Vec::new();
    let mut events = Vec::new();
    for call in &calls {
        let config = &configs[call.wrapper];
        let event = cache
            .call(call.wrapper, config, &call.shapes, &call.marks, &|| 0.0)
            .clone();
        let token = match (event.action, event.entry) {
            (Action::Compile, Some(id)) => format!("C{id}"),
            (Action::Hit, Some(id)) => format!("H{id}"),
            (Action::Eager, None) => "E".into(),
            (Action::Error, None) => "X".into(),
            (action, entry) => panic!("inconsistent event {action:?} with entry {entry:?}"),
        };
        log.push_str(&format!(
            "  w{} {:<16} {token:<4} {:?} {}{}\n",
            call.wrapper,
            call.shapes.to_spec(),
            event.reasons.iter().map(|(_, r)| r).collect::<Vec<_>>(),
            event.error.as_deref().unwrap_or(""),
            event.warning.as_deref().map_or(String::new(), |w| format!(
                " warning: {}",
                w.lines().next().unwrap_or("")
            )),
        ));
        got.push(token);
        events.push(event);
    }
    let expected = expand(case.actions);
    assert_eq!(
        got.join(" "),
        expected.join(" "),
        "actions differ; calls:\n{log}"
    );
    assert_eq!(
        cache.compiles(),
        case.compiles,
        "compile count; calls:\n{log}"
    );
    assert_eq!(cache.entries().len(), case.compiles, "entries kept");
    let last = cache.entries().last().copied();
    if !case.last_entry.is_empty() {
        let last = last.expect("an entry");
        assert_eq!(
            render_dims(&last.inputs),
            case.last_entry,
            "last entry's inputs"
        );
    }
    for &(index, reason) in case.reasons {
        let reasons: Vec<&String> = events[index].reasons.iter().map(|(_, r)| r).collect();
        assert!(
            reasons.iter().any(|r| matches_reason(r, reason)),
            "call {index}: expected reason {reason:?} among {reasons:?}"
        );
    }
    for &(index, order) in case.lookup {
        let got: Vec<String> = events[index]
            .reasons
            .iter()
            .map(|(id, _)| format!("0/{id}"))
            .collect();
        assert_eq!(got.join(" "), order, "call {index}: lookup order");
    }
    for (index, event) in events.iter().enumerate() {
        match case.warnings.iter().find(|(i, _)| *i == index) {
            Some((_, text)) => {
                let warning = event.warning.as_deref().unwrap_or_else(|| {
                    panic!("call {index}: expected a warning containing {text:?}")
                });
                assert!(
                    warning.contains(text),
                    "call {index}: warning {warning:?} lacks {text:?}"
                );
            }
            None => assert_eq!(event.warning, None, "call {index}: unexpected warning"),
        }
        match case.errors.iter().find(|(i, _)| *i == index) {
            Some((_, text)) => {
                let error = event.error.as_deref().unwrap_or_else(|| {
                    panic!("call {index}: expected an error containing {text:?}")
                });
                assert!(
                    crate::mentions(error, text),
                    "call {index}: error {error:?} lacks {text:?}"
                );
            }
            None => assert_eq!(event.error, None, "call {index}: unexpected error"),
        }
    }
    let lines: Vec<String> = last
        .map(|e| e.guards.source_lines())
        .unwrap_or_default()
        .into_iter()
        .filter(|l| {
            !l.starts_with("TENSOR_MATCH")
                && !l.starts_with("NO_TENSOR_ALIASING")
                && !l.contains("_dynamo_dynamic_indices")
                && !l.contains(".stride()")
        })
        .collect();
    if case.exact {
        assert_eq!(lines, case.guards, "shape guards of the last entry");
    }
    for guard in case.guards {
        match guard.strip_prefix("not:") {
            Some(text) => assert!(
                !lines.iter().any(|l| l.contains(text)),
                "no guard should contain {text:?}: {lines:#?}"
            ),
            None => assert!(
                lines.iter().any(|l| l == guard),
                "missing guard {guard:?} in {lines:#?}"
            ),
        }
    }
}

/// `x=N` for each size.
fn sizes(sizes: impl IntoIterator<Item = i64>) -> String {
    sizes
        .into_iter()
        .map(|n| format!("x={n}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

// ---- pytorch-semantics.md §9, row by row ----

#[test]
fn row01_default_second_size_compiles_dynamic() {
    check(Case {
        calls: "x=3 | x=4",
        actions: "C0 C1",
        compiles: 2,
        last_entry: "x=[?]",
        reasons: &[(
            1,
            "tensor 'x' size mismatch at index 0. expected 3, actual 4",
        )],
        guards: &["2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row02_default_later_sizes_hit_the_dynamic_entry() {
    check(Case {
        calls: "x=3 | x=4 | x=5 | x=6",
        actions: "C0 C1 H1 H1",
        compiles: 2,
        last_entry: "x=[?]",
        ..BASE
    });
}

#[test]
fn row03_dynamic_true_one_compile() {
    check(Case {
        modes: TRUE,
        calls: "x=3 | x=4",
        actions: "C0 H0",
        compiles: 1,
        last_entry: "x=[?]",
        guards: &["2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row04_dynamic_false_eight_compiles_then_eager() {
    check(Case {
        modes: FALSE,
        calls: &sizes(1..=9),
        actions: "C0 C1 C2 C3 C4 C5 C6 C7 E",
        compiles: 8,
        last_entry: "x=[8]",
        warnings: &[(8, "torch._dynamo hit config.recompile_limit (8)")],
        ..BASE
    });
}

#[test]
fn row04_limit_warning_names_the_most_recent_entry() {
    check(Case {
        modes: FALSE,
        calls: &sizes(1..=9),
        actions: "C0 C1 C2 C3 C4 C5 C6 C7 E",
        compiles: 8,
        last_entry: "x=[8]",
        reasons: &[(
            8,
            "tensor 'x' size mismatch at index 0. expected 8, actual 9",
        )],
        warnings: &[(
            8,
            "last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 9",
        )],
        ..BASE
    });
}

#[test]
fn row04_repeating_one_to_nine_adds_nothing_and_warns_once() {
    let calls = format!("{} | {}", sizes(1..=9), sizes(1..=9));
    check(Case {
        modes: FALSE,
        calls: &calls,
        actions: "C0 C1 C2 C3 C4 C5 C6 C7 E H0 H1 H2 H3 H4 H5 H6 H7 E",
        compiles: 8,
        last_entry: "x=[8]",
        warnings: &[(8, "hit config.recompile_limit (8)")],
        ..BASE
    });
}

#[test]
fn row05_default_three_two_one_zero_four_compiles() {
    check(Case {
        calls: "x=3 | x=2 | x=1 | x=0",
        actions: "C0 C1 C2 C3",
        compiles: 4,
        last_entry: "x=[0]",
        reasons: &[
            (2, "2 <= x.size()[0]"),
            (
                2,
                "tensor 'x' size mismatch at index 0. expected 3, actual 1",
            ),
            (
                3,
                "tensor 'x' size mismatch at index 0. expected 1, actual 0",
            ),
        ],
        ..BASE
    });
}

#[test]
fn row06_default_one_two_three() {
    check(Case {
        calls: "x=1 | x=2 | x=3",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?]",
        ..BASE
    });
}

#[test]
fn row07_dynamic_true_still_specializes_zero_and_one() {
    check(Case {
        modes: TRUE,
        calls: "x=0 | x=1 | x=2 | x=3",
        actions: "C0 C1 C2 H2",
        compiles: 3,
        last_entry: "x=[?]",
        ..BASE
    });
}

#[test]
fn row08_default_final_eight_runs_the_dynamic_entry() {
    check(Case {
        model: models::SUM_ROWS,
        calls: "x=8,16 | x=16,16 | x=32,16 | x=8,16 | x=16,16",
        actions: "C0 C1 H1 H1 H1",
        compiles: 2,
        last_entry: "x=[?, 16]",
        reasons: &[(
            1,
            "tensor 'x' size mismatch at index 0. expected 8, actual 16",
        )],
        ..BASE
    });
}

#[test]
fn row09_dynamic_false_one_entry_per_batch() {
    check(Case {
        model: models::SUM_ROWS,
        modes: FALSE,
        calls: "x=8,16 | x=16,16 | x=32,16 | x=8,16 | x=16,16",
        actions: "C0 C1 C2 H0 H1",
        compiles: 3,
        last_entry: "x=[32, 16]",
        ..BASE
    });
}

#[test]
fn row10_default_size_one_is_specialized_even_after_a_change() {
    check(Case {
        model: models::SUM_ROWS,
        calls: "x=8,16 | x=1,16 | x=16,16",
        actions: "C0 C1 C2",
        compiles: 3,
        last_entry: "x=[?, 16]",
        ..BASE
    });
}

#[test]
fn row11_mark_dynamic_on_the_first_input_compiles_once() {
    check(Case {
        model: models::SUM_ROWS,
        calls: "x=8,16 dyn:x:0 | x=16,16 | x=32,16",
        actions: "C0 H0 H0",
        compiles: 1,
        last_entry: "x=[?, 16]",
        ..BASE
    });
}

#[test]
fn row12_mark_dynamic_wins_over_dynamic_false() {
    check(Case {
        modes: FALSE,
        calls: "x=8 dyn:x:0 | x=9 | x=10",
        actions: "C0 H0 H0",
        compiles: 1,
        last_entry: "x=[?]",
        ..BASE
    });
}

#[test]
fn row13_default_only_changed_dims_become_dynamic() {
    check(Case {
        calls: "x=3,4 | x=5,4 | x=7,4 | x=7,6",
        actions: "C0 C1 H1 C2",
        compiles: 3,
        last_entry: "x=[?, ?]",
        reasons: &[
            (
                1,
                "tensor 'x' size mismatch at index 0. expected 3, actual 5",
            ),
            (
                3,
                "tensor 'x' size mismatch at index 1. expected 4, actual 6",
            ),
        ],
        ..BASE
    });
}

#[test]
fn row13_second_entry_is_dynamic_in_dim0_only() {
    check(Case {
        calls: "x=3,4 | x=5,4",
        actions: "C0 C1",
        compiles: 2,
        last_entry: "x=[?, 4]",
        ..BASE
    });
}

#[test]
fn row14_dynamic_true_duck_sizing_breaks_on_unequal_dims() {
    check(Case {
        modes: TRUE,
        calls: "x=4,4 | x=4,5 | x=6,7",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?, ?]",
        reasons: &[(1, "x.size()[1] == x.size()[0]")],
        guards: &["not:size()[1] =="],
        ..BASE
    });
}

#[test]
fn row14_duck_sizing_guard_printed() {
    check(Case {
        modes: TRUE,
        calls: "x=4,4",
        actions: "C0",
        compiles: 1,
        last_entry: "x=[?, ?]",
        guards: &["L['x'].size()[1] == L['x'].size()[0]"],
        ..BASE
    });
}

#[test]
fn automatic_dynamic_dims_get_separate_symbols_without_equality() {
    // §1.3: (4,4) then (5,5) under the default; DYNAMIC dims are never duck-sized.
    check(Case {
        calls: "x=4,4 | x=5,5 | x=6,9",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?, ?]",
        guards: &["not:==", "2 <= L['x'].size()[0]", "2 <= L['x'].size()[1]"],
        ..BASE
    });
}

#[test]
fn row18_docs_specialization_example_three_graphs_default() {
    let mut actions = vec!["C0".to_string(), "C1".into(), "H1*19".into(), "C2".into()];
    actions.push("H2*19".into());
    check(Case {
        model: models::SPECIALIZE,
        calls: &sizes(10..=50),
        actions: &actions.join(" "),
        compiles: 3,
        last_entry: "x=[?[31,inf]]",
        reasons: &[(21, "2 <= x.size()[0] <= 30")],
        guards: &["31 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row18_docs_specialization_example_three_graphs_dynamic_true() {
    check(Case {
        model: models::SPECIALIZE,
        modes: TRUE,
        calls: &sizes(10..=50),
        actions: "C0 C1 H1*19 C2 H2*19",
        compiles: 3,
        last_entry: "x=[?[31,inf]]",
        ..BASE
    });
}

#[test]
fn row18_middle_entry_excludes_ten_and_stops_at_thirty() {
    check(Case {
        model: models::SPECIALIZE,
        calls: "x=10 | x=11",
        actions: "C0 C1",
        compiles: 2,
        last_entry: "x=[?[2,30]]",
        guards: &["L['x'].size()[0] != 10", "2 <= L['x'].size()[0] <= 30"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row19_conv1d_stride2_output_length_one_needs_a_second_graph() {
    check(Case {
        model: models::CONV1D_K5_S2,
        modes: TRUE,
        calls: "x=2,4,50 | x=2,4,61 | x=2,4,4 | x=2,4,3 | x=2,4,100",
        actions: "C0 H0 C1 H1 H0",
        compiles: 2,
        reasons: &[(2, "(1 + (((-3) + x.size()[2]) // 2)) != 1")],
        ..BASE
    });
}

#[test]
fn row19_conv1d_stride2_guards() {
    check(Case {
        model: models::CONV1D_K5_S2,
        modes: TRUE,
        calls: "x=2,4,50",
        actions: "C0",
        compiles: 1,
        last_entry: "x=[?, 4, ?[3,inf]]",
        guards: &[
            "(1 + (((-3) + L['x'].size()[2]) // 2)) != 1",
            "2 <= L['x'].size()[0]",
            "3 <= L['x'].size()[2]",
        ],
        ..BASE
    });
}

#[test]
fn row20_linear_weight_pins_the_feature_dim() {
    check(Case {
        model: models::LINEAR_64_32,
        calls: "x=8,64 | x=9,64 | x=10,64",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?, 64]",
        guards: &["2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row20_dynamic_true_specializes_the_feature_dim_to_the_weight() {
    check(Case {
        model: models::LINEAR_64_32,
        modes: TRUE,
        calls: "x=8,64 | x=9,64",
        actions: "C0 H0",
        compiles: 1,
        last_entry: "x=[?, 64]",
        guards: &["2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row21_mark_dynamic_range_then_out_of_range_unmarked() {
    check(Case {
        calls: "x=8 dyn:x:0:2:512 | x=100 | x=600",
        actions: "C0 H0 C1",
        compiles: 2,
        last_entry: "x=[?]",
        reasons: &[(2, "2 <= x.size()[0] <= 512")],
        guards: &["2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn row21_mark_dynamic_range_guard() {
    check(Case {
        calls: "x=8 dyn:x:0:2:512",
        actions: "C0",
        compiles: 1,
        last_entry: "x=[?[2,512]]",
        guards: &["2 <= L['x'].size()[0] <= 512"],
        exact: true,
        ..BASE
    });
}

#[test]
fn mark_dynamic_min_one_is_intersected_with_two() {
    check(Case {
        calls: "x=8 dyn:x:0:1:512",
        actions: "C0",
        compiles: 1,
        last_entry: "x=[?[2,512]]",
        guards: &["2 <= L['x'].size()[0] <= 512"],
        exact: true,
        ..BASE
    });
}

#[test]
fn mark_dynamic_on_size_one_is_silently_specialized() {
    check(Case {
        calls: "x=1 dyn:x:0",
        actions: "C0",
        compiles: 1,
        last_entry: "x=[1]",
        ..BASE
    });
}

// ---- §4: marks ----

#[test]
fn mark_static_three_sizes_default() {
    check(Case {
        calls: "x=3 static:x:0 | x=4 static:x:0 | x=5 static:x:0",
        actions: "C0 C1 C2",
        compiles: 3,
        last_entry: "x=[5]",
        ..BASE
    });
}

#[test]
fn mark_static_three_sizes_dynamic_true() {
    check(Case {
        modes: TRUE,
        calls: "x=3 static:x:0 | x=4 static:x:0 | x=5 static:x:0",
        actions: "C0 C1 C2",
        compiles: 3,
        last_entry: "x=[5]",
        ..BASE
    });
}

#[test]
fn marked_entry_is_reused_by_unmarked_tensors() {
    check(Case {
        calls: "x=3 dyn:x:0 | x=3 | x=4",
        actions: "C0 H0 H0",
        compiles: 1,
        last_entry: "x=[?]",
        ..BASE
    });
}

#[test]
fn unmarked_entry_is_not_reused_by_a_marked_tensor() {
    check(Case {
        calls: "x=3 | x=3 dyn:x:0",
        actions: "C0 C1",
        compiles: 2,
        last_entry: "x=[?]",
        ..BASE
    });
}

// ---- §5.2/§5.4: guards that come from ops ----

#[test]
fn add_two_inputs_both_changing_gives_an_equality_guard() {
    check(Case {
        model: models::ADD_XY,
        calls: "x=3;y=3 | x=5;y=5 | x=7;y=7",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?] y=[?]",
        guards: &[
            "L['y'].size()[0] == L['x'].size()[0]",
            "2 <= L['x'].size()[0]",
        ],
        exact: true,
        ..BASE
    });
}

#[test]
fn add_two_inputs_unequal_sizes_fail_the_equality_guard() {
    check(Case {
        model: models::ADD_XY,
        calls: "x=3;y=3 | x=5;y=5 | x=6;y=1",
        actions: "C0 C1 C2",
        compiles: 3,
        last_entry: "x=[?] y=[1]",
        reasons: &[(2, "y.size()[0] == x.size()[0]")],
        ..BASE
    });
}

#[test]
fn add_two_inputs_that_cannot_broadcast_is_an_error() {
    check(Case {
        model: models::ADD_XY,
        calls: "x=3;y=3 | x=5;y=6 | x=5;y=5",
        // The failed compilation used up id 0/1, as PyTorch's counter does.
        actions: "C0 X C2",
        compiles: 2,
        last_entry: "x=[?] y=[?]",
        errors: &[(1, "5:12")],
        ..BASE
    });
}

#[test]
fn view_minus_one_four_gives_a_divisibility_guard() {
    check(Case {
        model: models::VIEW_4,
        calls: "x=8 | x=12 | x=16",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?]",
        guards: &["(L['x'].size()[0] % 4) == 0", "2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn view_of_a_size_not_divisible_by_four_is_an_error() {
    check(Case {
        model: models::VIEW_4,
        calls: "x=8 | x=12 | x=10 | x=20",
        actions: "C0 C1 X H1",
        compiles: 2,
        last_entry: "x=[?]",
        reasons: &[(2, "(x.size()[0] % 4) == 0")],
        errors: &[(2, "5:12")],
        ..BASE
    });
}

#[test]
fn branch_taken_narrows_the_range() {
    check(Case {
        model: models::BRANCH_GT5,
        modes: TRUE,
        calls: "x=8 | x=100 | x=3 | x=5",
        actions: "C0 H0 C1 H1",
        compiles: 2,
        last_entry: "x=[?[2,5]]",
        reasons: &[(2, "6 <= x.size()[0]")],
        guards: &["2 <= L['x'].size()[0] <= 5"],
        exact: true,
        ..BASE
    });
}

#[test]
fn matmul_inner_dims_are_equated() {
    check(Case {
        model: models::MATMUL,
        calls: "a=3,4;b=4,5 | a=6,7;b=7,8 | a=2,9;b=9,3",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "a=[?, ?] b=[?, ?]",
        guards: &["L['b'].size()[0] == L['a'].size()[1]"],
        ..BASE
    });
}

#[test]
fn duck_sizing_across_tensors() {
    check(Case {
        model: models::MATMUL,
        modes: TRUE,
        calls: "a=2,3,8;b=8,5",
        actions: "C0",
        compiles: 1,
        last_entry: "a=[?, ?, ?] b=[?, ?]",
        guards: &["L['b'].size()[0] == L['a'].size()[2]"],
        ..BASE
    });
}

#[test]
fn duck_sizing_can_pin_the_batch_to_a_weight_size() {
    // §3.3 + §1.4: under dynamic=True a (64, 64) input shares one symbol for both dims, the
    // Linear(64, …) weight then pins it to 64, so the batch is static too; the next batch
    // size recompiles with a DYNAMIC (not duck) batch.
    check(Case {
        model: models::SIMPLENET,
        modes: TRUE,
        calls: "x=64,64 | x=8,64 | x=16,64",
        actions: "C0 C1 H1",
        compiles: 2,
        last_entry: "x=[?, 64]",
        reasons: &[(
            1,
            "tensor 'x' size mismatch at index 0. expected 64, actual 8",
        )],
        ..BASE
    });
}

#[test]
fn lookup_is_most_recently_used_first() {
    // §2.1: a hit moves its entry to the front, a new entry goes to the front.
    check(Case {
        modes: FALSE,
        calls: "x=3 | x=4 | x=5 | x=3 | x=6",
        actions: "C0 C1 C2 H0 C3",
        compiles: 4,
        last_entry: "x=[6]",
        lookup: &[(2, "0/1 0/0"), (4, "0/0 0/2 0/1")],
        ..BASE
    });
}

// ---- §12: the material's demo and other measured facts ----

/// The demo's calls on one wrapper: `benchmark(m, [8], runs=2)`, `benchmark(m, sizes)`
/// (3 runs per size), then 3, 7 and 11 once each.
const DEMO_ONE_WRAPPER: &str = "x=8,64*2 | x=8,64*3 | x=16,64*3 | x=32,64*3 | x=16,64*3 \
    | x=8,64*3 | x=64,64*3 | x=16,64*3 | x=8,64*3 | x=3,64 | x=7,64 | x=11,64";

#[test]
fn demo_dynamic_true_compiles_once() {
    check(Case {
        model: models::SIMPLENET,
        modes: TRUE,
        calls: DEMO_ONE_WRAPPER,
        actions: "C0 H0*28",
        compiles: 1,
        last_entry: "x=[?, 64]",
        guards: &["2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn demo_dynamic_false_compiles_seven_times() {
    check(Case {
        model: models::SIMPLENET,
        modes: FALSE,
        calls: DEMO_ONE_WRAPPER,
        actions: "C0 H0*4 C1 H1*2 C2 H2*2 H1*3 H0*3 C3 H3*2 H1*3 H0*3 C4 C5 C6",
        compiles: 7,
        last_entry: "x=[11, 64]",
        ..BASE
    });
}

#[test]
fn demo_default_compiles_static_then_dynamic() {
    check(Case {
        model: models::SIMPLENET,
        calls: DEMO_ONE_WRAPPER,
        actions: "C0 H0*4 C1 H1*23",
        compiles: 2,
        last_entry: "x=[?, 64]",
        reasons: &[(
            5,
            "tensor 'x' size mismatch at index 0. expected 8, actual 16",
        )],
        ..BASE
    });
}

/// The material's script: `model_dynamic` is wrapper 0, `model_static` wrapper 1, both
/// compiling the same `SimpleNet.forward`.
const DEMO_SHARED: &str = "w0 x=8,64*2 | w1 x=8,64*2 \
    | w0 x=8,64*3 | w0 x=16,64*3 | w0 x=32,64*3 | w0 x=16,64*3 \
    | w0 x=8,64*3 | w0 x=64,64*3 | w0 x=16,64*3 | w0 x=8,64*3 \
    | w1 x=8,64*3 | w1 x=16,64*3 | w1 x=32,64*3 | w1 x=16,64*3 \
    | w1 x=8,64*3 | w1 x=64,64*3 | w1 x=16,64*3 | w1 x=8,64*3 \
    | w0 x=3,64 | w1 x=3,64 | w0 x=7,64 | w1 x=7,64 | w0 x=11,64 | w1 x=11,64";

const DEMO_SHARED_ACTIONS: &str = "C0 H0 C1 H1 H0*24 \
    H1*3 C2 H2*2 C3 H3*2 H2*3 H1*3 C4 H4*2 H2*3 H1*3 \
    H0 C5 H0 C6 H0 C7";

#[test]
fn demo_shared_cache_ends_with_eight_entries() {
    check(Case {
        model: models::SIMPLENET,
        modes: DEMO_WRAPPERS,
        calls: DEMO_SHARED,
        actions: DEMO_SHARED_ACTIONS,
        compiles: 8,
        last_entry: "x=[11, 64]",
        ..BASE
    });
}

#[test]
fn demo_shared_cache_one_more_static_size_runs_eagerly() {
    let calls = format!("{DEMO_SHARED} | w1 x=13,64 | w0 x=13,64 | w1 x=3,64");
    let actions = format!("{DEMO_SHARED_ACTIONS} E H0 H5");
    check(Case {
        model: models::SIMPLENET,
        modes: DEMO_WRAPPERS,
        calls: &calls,
        actions: &actions,
        compiles: 8,
        last_entry: "x=[11, 64]",
        warnings: &[(58, "hit config.recompile_limit (8)")],
        ..BASE
    });
}

#[test]
fn demo_shared_cache_wrappers_never_match_each_others_entries() {
    check(Case {
        model: models::SIMPLENET,
        modes: DEMO_WRAPPERS,
        calls: "w0 x=8,64 | w1 x=8,64",
        actions: "C0 C1",
        compiles: 2,
        last_entry: "x=[8, 64]",
        ..BASE
    });
}

#[test]
fn rank_change_recompiles() {
    check(Case {
        model: models::SIMPLENET,
        calls: "x=16,64 | x=4,10,64",
        actions: "C0 C1",
        compiles: 2,
        last_entry: "x=[?, ?, 64]",
        reasons: &[(1, "tensor 'x' rank mismatch. expected 2, actual 3")],
        ..BASE
    });
}

#[test]
fn wrong_feature_size_after_a_guard_failure_is_raised_not_cached() {
    check(Case {
        model: models::SIMPLENET,
        calls: "x=8,64 | x=8,32 | x=16,64",
        actions: "C0 X C2",
        compiles: 2,
        last_entry: "x=[?, 64]",
        reasons: &[(
            1,
            "tensor 'x' size mismatch at index 1. expected 64, actual 32",
        )],
        errors: &[(1, "18:16")],
        ..BASE
    });
}

#[test]
fn marked_input_outside_its_range_is_an_error() {
    check(Case {
        calls: "x=8 dyn:x:0:2:512 | x=600 dyn:x:0:2:512 | x=9 dyn:x:0:2:512",
        actions: "C0 X H0",
        compiles: 1,
        last_entry: "x=[?[2,512]]",
        errors: &[(1, "600 not in range [2, 512]")],
        ..BASE
    });
}

#[test]
fn custom_recompile_limit() {
    check(Case {
        modes: FALSE,
        limit: 2,
        calls: "x=3 | x=4 | x=5 | x=3",
        actions: "C0 C1 E H0",
        compiles: 2,
        last_entry: "x=[4]",
        warnings: &[(2, "hit config.recompile_limit (2)")],
        ..BASE
    });
}

#[test]
fn eager_mode_still_uses_existing_entries() {
    // §2.3: after the limit, passing entries are still used; only misses run eagerly.
    check(Case {
        limit: 1,
        calls: "x=3 | x=4 | x=3 | x=5",
        actions: "C0 E H0 E",
        compiles: 1,
        last_entry: "x=[3]",
        warnings: &[(1, "hit config.recompile_limit (1)")],
        ..BASE
    });
}

#[test]
fn a_call_past_the_limit_that_fails_when_run_eagerly_is_an_error() {
    // Measured on PyTorch 2.15 with recompile_limit 2: (2, 64) and (3, 64) compile, (4, 32)
    // warns and raises from the eager run (mat1 and mat2 shapes cannot be multiplied), and
    // (5, 64) runs eagerly.
    check(Case {
        model: models::SIMPLENET,
        modes: FALSE,
        limit: 2,
        calls: "x=2,64 | x=3,64 | x=4,32 | x=5,64",
        actions: "C0 C1 X E",
        compiles: 2,
        last_entry: "x=[3, 64]",
        warnings: &[(2, "hit config.recompile_limit (2)")],
        errors: &[(2, "18:16")],
        ..BASE
    });
}

#[test]
fn a_failed_call_remembers_only_the_inputs_its_trace_looked_at() {
    // Measured on PyTorch 2.15: (7, 5) fails at `x.view(3, -1)` before `y` is used, so only
    // x's new size is remembered; (9, 2) then compiles x dynamic and y still static (2).
    check(Case {
        model: models::VIEW_THEN_ADD,
        calls: "x=6;y=2 | x=7;y=5 | x=9;y=2",
        actions: "C0 X C2",
        compiles: 2,
        last_entry: "x=[?] y=[2]",
        reasons: &[(
            2,
            "tensor 'x' size mismatch at index 0. expected 6, actual 9",
        )],
        errors: &[(1, "shape '[3, -1]' is invalid for input of size 7")],
        guards: &["(L['x'].size()[0] % 3) == 0", "2 <= L['x'].size()[0]"],
        exact: true,
        ..BASE
    });
}

#[test]
fn a_maximum_over_an_empty_dim_is_an_error() {
    // PyTorch 2.15: "reducing over zero-size dimension for reduction operation without
    // identity"; the failed compilation uses up 0/0 and leaves its sizes in the
    // automatic-dynamic memory, so (2, 3) compiles 0/1 with a dynamic first dim.
    check(Case {
        model: models::AMAX_DIM0,
        calls: "x=0,3 | x=2,3",
        actions: "X C1",
        compiles: 1,
        last_entry: "x=[?, 3]",
        errors: &[(0, "reducing over zero-size dimension")],
        ..BASE
    });
}

#[test]
fn squeeze_of_a_symbolic_dim_is_a_no_op_and_a_dim_of_one_its_own_entry() {
    // PyTorch 2.15 under dynamic=True: (3, 4) keeps both dims, (3, 1) fails `2 <= x.size()[1]`
    // and drops the 1, (5, 6) hits the first entry.
    check(Case {
        model: models::SQUEEZE_DIM1,
        modes: TRUE,
        calls: "x=3,4 | x=3,1 | x=5,6",
        actions: "C0 C1 H0",
        compiles: 2,
        last_entry: "x=[?, 1]",
        reasons: &[(1, "2 <= x.size()[1]")],
        ..BASE
    });
}

#[test]
fn a_branch_that_narrows_a_specified_range_is_a_constraint_violation() {
    // Measured on PyTorch 2.15 with `if x.shape[0] > 4`: mark_dynamic(x, 0, min=2, max=100)
    // raises "Not all values of … in the specified range L['x'].size()[0] <= 100 satisfy the
    // generated guard 5 <= … and … <= 100"; min=2 alone raises too; a plain mark_dynamic
    // compiles with the narrowed range.
    check(Case {
        model: models::BRANCH_GT5,
        calls: "x=8 dyn:x:0:2:100 | x=8 dyn:x:0:2:inf | x=8 dyn:x:0",
        actions: "X X C2",
        compiles: 1,
        last_entry: "x=[?[6,inf]]",
        errors: &[
            (
                0,
                "in the specified range L['x'].size()[0] <= 100 satisfy the generated guard 6 <= L['x'].size()[0] and L['x'].size()[0] <= 100",
            ),
            (
                1,
                "in the specified range satisfy the generated guard 6 <= L['x'].size()[0] and L['x'].size()[0] <= IntInfinity()",
            ),
        ],
        ..BASE
    });
}

#[test]
fn an_equality_through_a_product_is_solved_and_fixes_a_marked_dim() {
    // Measured on PyTorch 2.15: with x marked dynamic in both dims, `x.view(2, x.shape[1])`
    // equates s0*s1 with 2*s1; the solver divides out s1 (>= 2), so s0 == 2 and the marked
    // dim 0 is specialised: ConstraintViolationError. Unmarked (dynamic=True) it is an entry
    // for size 2 only.
    let model = "import torch\n\n\ndef f(x):\n    return x.view(2, x.shape[1]) + 1\n";
    check(Case {
        model,
        calls: "x=2,5 dyn:x:0 dyn:x:1",
        actions: "X",
        compiles: 0,
        errors: &[(
            0,
            "You marked L['x'].size()[0] as dynamic but your code specialized it to be a constant (2)",
        )],
        ..BASE
    });
    check(Case {
        model,
        modes: TRUE,
        calls: "x=2,5 | x=2,7 | x=3,7",
        actions: "C0 H0 X",
        compiles: 1,
        last_entry: "x=[2, ?]",
        errors: &[(2, "is invalid for input of size 21")],
        ..BASE
    });
}

#[test]
fn an_elementwise_op_asks_whether_a_derived_size_is_one() {
    // Measured on PyTorch 2.15 (dynamic=True): `x[:, 1:] + 1` and `relu(x[:, 1:])` at width 2
    // specialise the slice's width s1 - 1 to 1 (broadcasting asks whether each dim is 1: the
    // first entry is for width 2 only), so width 3 recompiles with
    // `((-1) + L['x'].size()[1]) != 1`, which leaves the range of the width [2, int_oo] (PyTorch
    // refines no range from `!=`), and width 5 hits; a reduction asks nothing.
    for body in [
        "x[:, 1:] + 1",
        "torch.relu(x[:, 1:])",
        "F.layer_norm(x[:, 1:], (x.shape[1] - 1,))",
    ] {
        let model = format!(
            "import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n    return {body}\n"
        );
        check(Case {
            model: &model,
            modes: TRUE,
            calls: "x=4,2 | x=4,3 | x=4,5",
            actions: "C0 C1 H1",
            compiles: 2,
            last_entry: "x=[?, ?]",
            reasons: &[(
                1,
                "tensor 'x' size mismatch at index 1. expected 2, actual 3",
            )],
            guards: &["((-1) + L['x'].size()[1]) != 1"],
            ..BASE
        });
    }
    check(Case {
        model: "import torch\n\n\ndef f(x):\n    return x[:, 1:].sum()\n",
        modes: TRUE,
        calls: "x=4,2 | x=4,3",
        actions: "C0 H0",
        compiles: 1,
        ..BASE
    });
}

#[test]
fn mark_dynamic_with_a_range_is_strict_about_its_own_calls() {
    // The marked entry's guard fails for 600 and the recompile of a marked input rejects it.
    check(Case {
        calls: "x=600 dyn:x:0:2:512",
        actions: "X",
        compiles: 0,
        last_entry: "",
        errors: &[(0, "600 not in range [2, 512]")],
        ..BASE
    });
}

#[test]
fn layer_norm_over_a_symbolic_last_dim_compiles_once() {
    // `F.layer_norm(x, (x.shape[-1],))` passes a SymInt as normalized_shape; PyTorch accepts it.
    let source = "import torch.nn.functional as F\n\ndef f(x):\n    return F.layer_norm(x, (x.shape[-1],))\n";
    let mut cache = tailor::load(source, None).unwrap();
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    for spec_text in ["x=4,16", "x=5,17"] {
        let call = spec::parse_shapes(spec_text, &cache.entry_point().inputs).unwrap();
        let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
        assert_eq!(event.error, None);
    }
    assert_eq!(cache.compiles(), 1);
}

#[test]
fn halving_pools_bound_the_size_from_below_as_pytorch_does() {
    // U-Net's four 2×2 max pools ask `s2//2 >= 2`, …, `s2//16 >= 1`: PyTorch's solver turns
    // each floor-division bound into a range of the symbol, so only range guards remain
    // (`16 <= …`, none with a `//`), and 16×17 hits.
    check(Case {
        model: "import torch.nn.functional as F\n\ndef f(x):\n    for _ in range(4):\n        x = F.max_pool2d(x, 2)\n    return x\n",
        modes: TRUE,
        calls: "x=2,3,48,40 | x=2,3,16,17",
        actions: "C0 H0",
        compiles: 1,
        guards: &[
            "2 <= L['x'].size()[0]",
            "2 <= L['x'].size()[1]",
            "16 <= L['x'].size()[2]",
            "16 <= L['x'].size()[3]",
            "not://",
        ],
        ..BASE
    });
}
