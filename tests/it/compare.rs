//! PyTorch's own traces beside Tailor's runs of the same scripts (`tailor compare`): each
//! `tests/data/traces/NAME.py` was run under PyTorch 2.15 with `TORCH_TRACE`, its log kept as
//! `NAME.log` (`scripts/pytorch/record_traces.py`). Tailor runs the script and sets its
//! compiles beside the trace's: where Tailor models PyTorch, every compile agrees in full
//! (its id, recompile reasons, guards on the arguments, symbols, graph break and output
//! sizes); `conv_batches` is a known difference, and the test holds the comparison to it.

use std::rc::Rc;
use std::time::Instant;
use tailor::compare::{self, Comparison};
use tailor::config::Logs;
use tailor::script::{self, ScriptOptions};
use tailor::session::executor::Backend;
use tailor::{SymbolNaming, torch_trace};

/// The comparison of `tests/data/traces/{name}`'s trace with Tailor's run of its script.
fn compared(name: &str) -> Comparison {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |ext: &str| {
        std::fs::read_to_string(format!("{root}/tests/data/traces/{name}.{ext}"))
            .expect("the recorded file exists")
    };
    let trace = torch_trace::parse(&read("log")).expect("PyTorch's trace parses");
    let start = Instant::now();
    let options = ScriptOptions {
        logs: Logs::default(),
        path: format!("tests/data/traces/{name}.py"),
        backend: Rc::new(Backend::cpu()),
        clock: Rc::new(move || start.elapsed().as_secs_f64() * 1e3),
        symbol_names: SymbolNaming::PyTorch,
    };
    let run = script::run(&read("py"), options);
    assert!(run.error.is_none(), "{name}.py: {:?}", run.error);
    compare::compare(&trace, &run.compiles, &run.frame_calls)
}

#[track_caller]
fn assert_agrees(name: &str, compiles: usize) {
    let comparison = compared(name);
    assert_eq!(
        comparison.compiles_agreeing(),
        (compiles, compiles),
        "{name}:\n{comparison}"
    );
    let (both, all) = comparison.guards_agreeing();
    assert!(both > 0 && both == all, "{name}:\n{comparison}");
}

#[test]
fn simplenet_under_each_mode_agrees_with_pytorchs_trace() {
    assert_agrees("simplenet_auto", 2);
    assert_agrees("simplenet_static", 3);
    assert_agrees("simplenet_dynamic", 1);
}

#[test]
fn graph_breaks_and_their_resume_functions_agree_with_pytorchs_trace() {
    assert_agrees("break_net", 6);
}

#[test]
fn a_marked_range_agrees_with_pytorchs_trace() {
    assert_agrees("mark_dynamic", 2);
}

/// After `torch._dynamo.reset()` compile ids start again from 0/0 on both sides; the n-th
/// 0/0 is matched with the n-th.
#[test]
fn compiles_after_a_reset_are_matched_in_order() {
    let comparison = compared("reset");
    let ids: Vec<&str> = comparison.compiles.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["0/0", "0/1", "0/0"], "{comparison}");
    assert_eq!(comparison.compiles_agreeing(), (3, 3), "{comparison}");
}

/// PyTorch's CPU convolution guards `2 <= batch <= 15` when it picks its kernel; Tailor guards
/// only `2 <= batch`, so PyTorch's third compile (batch 16) is PyTorch's alone, where Tailor
/// hit its second entry, and the two guards are the difference the comparison shows in the
/// second.
#[test]
fn the_convolutions_batch_guard_is_shown_as_pytorchs_alone() {
    let comparison = compared("conv_batches");
    let ids: Vec<(&str, bool, bool)> = comparison
        .compiles
        .iter()
        .map(|c| (c.id.as_str(), c.pytorch, c.tailor))
        .collect();
    assert_eq!(
        ids,
        [
            ("0/0", true, true),
            ("0/1", true, true),
            ("0/2", true, false)
        ],
        "{comparison}"
    );
    let second = &comparison.compiles[1];
    assert_eq!(
        second.guards.only_pytorch,
        ["2 <= L['x'].size()[0] <= 15"],
        "{comparison}"
    );
    assert_eq!(
        second.guards.only_tailor,
        ["2 <= L['x'].size()[0]"],
        "{comparison}"
    );
    assert_eq!(
        comparison.compiles[2]
            .tailor_instead
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("hit [0/1]"),
        "{comparison}"
    );
    let text = comparison.to_string();
    assert!(
        text.contains("[0/2] forward: PyTorch compiled, Tailor did not"),
        "{text}"
    );
}
