//! Python int and bool arguments against real PyTorch: `tests/data/models/python_values.py`
//! is called with the scenarios `scripts/pytorch/check_values.py` ran on PyTorch 2.15 and
//! recorded in `tests/data/pytorch/values.txt`: each call's action (compile, hit, eager,
//! error), every recompile's failure reasons in lookup order, and the newest entry's value
//! guards (`EQUALS_MATCH`, `TYPE_MATCH`, `TRUE_MATCH`/`FALSE_MATCH`) and shape guards.
//! Tailor must give the same; shape guards are compared as a set, since PyTorch orders its
//! lambda by first use. Every call that runs is also run on the CPU backend and compared
//! with the graph reference.

use std::rc::Rc;
use tailor::cache::{Action, CodeCache};
use tailor::config::{CallMarks, CompileConfig, DynamicMode};
use tailor::guard::{GuardKind, ValueMatch};
use tailor::session::executor::{self, Backend, Device, Executor, RunOptions};
use tailor::spec;

/// One recorded scenario: a function, a mode, its calls with PyTorch's actions and
/// reasons, and the newest entry's guards.
struct Scenario {
    function: String,
    dynamic: DynamicMode,
    calls: Vec<(String, String)>,
    guards: Vec<String>,
}

fn recorded() -> Vec<Scenario> {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/tests/data/pytorch/values.txt"))
        .expect("PyTorch's record exists");
    let mut scenarios: Vec<Scenario> = Vec::new();
    for line in text.lines() {
        if let Some(header) = line.strip_prefix("== ") {
            let (function, dynamic) = header.split_once(" dynamic=").expect("== f dynamic=M");
            scenarios.push(Scenario {
                function: function.to_string(),
                dynamic: dynamic.parse().expect("a dynamic mode"),
                calls: Vec::new(),
                guards: Vec::new(),
            });
            continue;
        }
        let scenario = scenarios.last_mut().expect("a scenario header comes first");
        if let Some(guard) = line.strip_prefix("  ") {
            scenario.guards.push(guard.to_string());
        } else {
            let (call, outcome) = line.split_once(": ").expect("CALL: ACTION [REASONS]");
            scenario.calls.push((call.to_string(), outcome.to_string()));
        }
    }
    scenarios
}

/// A call's outcome in the record's form: the action letter, then for a recompile the
/// reasons of every entry in lookup order (`C  0/0: n == 2 | …`).
fn outcome(action: Action, reasons: &[String]) -> String {
    let letter = match action {
        Action::Compile => "C",
        Action::Hit => "H",
        Action::Eager => "E",
        Action::Error => "X",
    };
    if action == Action::Compile && !reasons.is_empty() {
        format!("{letter}  {}", reasons.join(" | "))
    } else {
        letter.to_string()
    }
}

/// The newest entry's guards in the record's form, shape guards sorted.
fn guard_lines(cache: &CodeCache) -> Vec<String> {
    let entries = cache.entries();
    let Some(entry) = entries.last() else {
        return Vec::new();
    };
    let mut lines: Vec<String> = entry
        .guards
        .values
        .iter()
        .map(|value| {
            let source = format!("L['{}']", value.input);
            match value.expected {
                ValueMatch::Int(Some(v)) => format!("EQUALS_MATCH {source} == {v}"),
                ValueMatch::Int(None) => format!("TYPE_MATCH {source} int"),
                ValueMatch::Bool(true) => format!("TRUE_MATCH {source} == True"),
                ValueMatch::Bool(false) => format!("FALSE_MATCH {source} == False"),
                ValueMatch::Float(_) => value.to_string(),
            }
        })
        .collect();
    let mut shape: Vec<String> = entry
        .guards
        .printed()
        .iter()
        .filter(|g| g.kind != GuardKind::DimensionMarking)
        .map(|g| format!("LAMBDA {}", g.source))
        .collect();
    shape.sort();
    lines.extend(shape);
    lines
}

fn sorted_guards(guards: &[String]) -> Vec<String> {
    let (mut shape, values): (Vec<String>, Vec<String>) = guards
        .iter()
        .cloned()
        .partition(|g| g.starts_with("LAMBDA "));
    shape.sort();
    values.into_iter().chain(shape).collect()
}

#[test]
fn python_ints_and_bools_take_pytorchs_actions_reasons_and_guards() {
    let root = env!("CARGO_MANIFEST_DIR");
    let source = std::fs::read_to_string(format!("{root}/tests/data/models/python_values.py"))
        .expect("the model file exists");
    let backend = pollster::block_on(Backend::open(Device::Cpu, Box::new(|| 0.0)))
        .expect("the CPU always opens");
    let mut executor = Executor::new(Rc::new(backend), Rc::new(|| 0.0));
    let scenarios = recorded();
    assert!(scenarios.len() >= 20, "{} scenarios", scenarios.len());
    let mut mismatches = Vec::new();
    for scenario in &scenarios {
        let what = format!("{} dynamic={}", scenario.function, scenario.dynamic);
        let mut cache = tailor::load(&source, Some(&scenario.function)).expect("the file loads");
        // Kernels are kept by entry id: a new cache starts from none.
        executor.clear();
        let config = CompileConfig {
            dynamic: scenario.dynamic,
            ..CompileConfig::default()
        };
        for (i, (text, expected)) in scenario.calls.iter().enumerate() {
            let call = spec::parse_shapes(text, &cache.entry_point().inputs).expect("parses");
            let event = cache
                .call(0, &config, &call, &CallMarks::default(), &|| 0.0)
                .clone();
            let reasons: Vec<String> = event
                .reasons
                .iter()
                .map(|(id, reason)| format!("0/{id}: {reason}"))
                .collect();
            let got = outcome(event.action, &reasons);
            if got != *expected {
                let error = event.error.as_deref().unwrap_or("");
                mismatches.push(format!(
                    "{what} {text}: PyTorch {expected}, Tailor {got} {error}"
                ));
            }
            if !matches!(event.action, Action::Compile | Action::Hit | Action::Eager) {
                continue;
            }
            let inputs = executor::call_inputs(&call, Vec::new(), i as u64).unwrap();
            let options = RunOptions {
                check: true,
                timing: false,
            };
            let job = executor
                .start_call(&cache, &event, &call, inputs.clone(), options)
                .unwrap_or_else(|err| panic!("{what} {text}: {err}"));
            let ran = pollster::block_on(executor.execute(job))
                .unwrap_or_else(|err| panic!("{what} {text}: {err}"));
            let err = ran.max_abs_err.expect("checked against the reference");
            assert!(err < 1e-4, "{what} {text}: max_abs_err {err}");
            if scenario.function == "scale" && call.ints().len() == 1 {
                // Independently of the reference: x * n, element by element.
                let n = call.ints()[0] as f32;
                let expected: Vec<f32> = inputs[0].data.iter().map(|v| v * n).collect();
                assert_eq!(ran.outputs[0].data, expected, "{what} {text}");
            }
        }
        let got = guard_lines(&cache);
        let expected = sorted_guards(&scenario.guards);
        if got != expected {
            mismatches.push(format!(
                "{what} guards:\n  PyTorch {expected:?}\n  Tailor  {got:?}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n"));
}

#[test]
fn int_and_bool_arguments_print_as_pytorch_guards() {
    let root = env!("CARGO_MANIFEST_DIR");
    let source = std::fs::read_to_string(format!("{root}/tests/data/models/python_values.py"))
        .expect("the model file exists");
    let mut cache = tailor::load(&source, Some("flag")).expect("the file loads");
    let config = CompileConfig::default();
    let call = spec::parse_shapes("x=3;b=True", &cache.entry_point().inputs).expect("parses");
    cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    let lines = cache.entries()[0].guards.source_lines();
    assert_eq!(lines[0], "TRUE_MATCH: L['b'] == True");
    let mut cache = tailor::load(&source, Some("branch")).expect("the file loads");
    for n in [2, 5] {
        let call = spec::parse_shapes(&format!("x=3;n=int({n})"), &cache.entry_point().inputs)
            .expect("parses");
        cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    }
    let entries = cache.entries();
    assert_eq!(
        entries[0].guards.source_lines()[0],
        "EQUALS_MATCH: L['n'] == 2"
    );
    let dynamic = entries[1].guards.to_string();
    assert!(
        dynamic.contains("TYPE_MATCH: ___check_type_id(L['n'], <class 'int'>)"),
        "{dynamic}"
    );
    assert!(dynamic.contains("4 <= L['n']"), "{dynamic}");
    assert!(
        entries[1]
            .graph
            .to_string()
            .starts_with("graph(x: f32[3], n: Sym(s0)):")
    );
}
