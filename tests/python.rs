//! The Python front end against the default one (feature `python`): every program of the
//! presets, the conformance scenarios and the kernel tests is captured by both, with every
//! input dim dynamic (`dynamic=True`, duck sizing) and with every dim static
//! (`dynamic=False`), and the graph text and the `ShapeEnv`'s guards and events must be
//! identical. Then programs the default front end rejects, which real Python runs.

#[path = "it/models.rs"]
#[allow(
    dead_code,
    reason = "shared with the it binary, which uses every model"
)]
mod models;

use tailor::frontend::{self, FrontendError, python};
use tailor::graph::Shape;
use tailor::shape::{DimPolicy, DimSource, ShapeEnv};

/// What a capture produced, as text: the graph, then every guard and event.
fn report(result: Result<(tailor::graph::Graph, ShapeEnv), FrontendError>) -> String {
    match result {
        Err(err) => format!("error: {err}"),
        Ok((graph, env)) => {
            let mut text = graph.to_string();
            for guard in env.guards() {
                text.push_str(&format!("guard {} ({})\n", guard.rel, guard.origin));
            }
            for (node, event) in env.events() {
                text.push_str(&format!("event @{node} {event}\n"));
            }
            text
        }
    }
}

/// The input shapes of one case (`8,64;64`) under `policy`.
fn input_shapes(env: &mut ShapeEnv, names: &[String], case: &str, policy: DimPolicy) -> Vec<Shape> {
    let why = match policy {
        DimPolicy::Static => "dynamic=False",
        _ => "dynamic=True",
    };
    names
        .iter()
        .zip(models::sizes(case))
        .map(|(name, dims)| {
            dims.iter()
                .enumerate()
                .map(|(dim, &value)| {
                    let source = DimSource {
                        input: name.clone(),
                        dim,
                    };
                    env.add_input_dim(source, value as i64, policy, None, why)
                        .expect("no marks, so no range error")
                })
                .collect()
        })
        .collect()
}

fn capture_default(source: &str, case: &str, policy: DimPolicy) -> String {
    let run = || {
        let program = frontend::parse(source)?;
        let entry = program.entry(None)?;
        let mut env = ShapeEnv::new();
        let shapes = input_shapes(&mut env, &entry.inputs, case, policy);
        let graph = frontend::capture(&program, &entry, &shapes, &mut env)?;
        Ok((graph, env))
    };
    report(run())
}

fn capture_python(source: &str, case: &str, policy: DimPolicy) -> String {
    let run = || {
        let program = python::parse(source)?;
        let entry = program.entry(None)?;
        let mut env = ShapeEnv::new();
        let shapes = input_shapes(&mut env, &entry.inputs, case, policy);
        let graph = python::capture(&program, &entry, &shapes, &mut env)?;
        Ok((graph, env))
    };
    report(run())
}

/// The captures of `source` at every case under every policy where the two front ends
/// differ, as `(what, python, default)`.
fn differences(name: &str, source: &str, cases: &[&str]) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for case in cases {
        for policy in [DimPolicy::Duck, DimPolicy::Dynamic, DimPolicy::Static] {
            let expected = capture_default(source, case, policy);
            let got = capture_python(source, case, policy);
            if got != expected {
                found.push((format!("{name} at {case} ({policy:?})"), got, expected));
            }
        }
    }
    found
}

#[track_caller]
fn check_same(programs: &[(&str, &str, &[&str])]) {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, source, cases) in programs {
        compared += cases.len() * 3;
        failures.extend(differences(name, source, cases));
    }
    let report: Vec<String> = failures
        .iter()
        .map(|(what, got, expected)| {
            format!("== {what}\n-- python:\n{got}\n-- default:\n{expected}")
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {compared} captures differ:\n{}",
        failures.len(),
        report.join("\n")
    );
}

#[test]
fn simplenet_captures_identically() {
    check_same(&[("simplenet", models::SIMPLENET, &["8,64", "1,64"])]);
}

/// The presets (`models/*.py`) and the kernel tests' programs, at every size they are
/// checked at.
#[test]
fn every_model_captures_identically() {
    let all = models::all();
    let programs: Vec<(&str, &str, &[&str])> = all
        .iter()
        .map(|m| (m.name, m.source.as_str(), m.cases))
        .collect();
    check_same(&programs);
}

/// The conformance scenarios' programs, at sizes of their calls (errors included: a
/// mismatch must be the same error).
#[test]
fn every_conformance_program_captures_identically() {
    check_same(&[
        ("add_one", models::ADD_ONE, &["3", "1", "0", "5,2"]),
        ("sum_rows", models::SUM_ROWS, &["8,16", "1,16", "32,16"]),
        (
            "specialize",
            models::SPECIALIZE,
            &["10", "20", "30", "40", "2"],
        ),
        ("branch_gt5", models::BRANCH_GT5, &["8", "3", "5", "100"]),
        (
            "linear_64_32",
            models::LINEAR_64_32,
            &["8,64", "1,64", "8,32"],
        ),
        ("add_xy", models::ADD_XY, &["3;3", "5;6", "6;1", "1;4"]),
        ("view_4", models::VIEW_4, &["8", "12", "10"]),
        (
            "matmul",
            models::MATMUL,
            &["3,4;4,5", "2,3,8;8,5", "3,4;5,6"],
        ),
        (
            "conv1d_k5_s2",
            models::CONV1D_K5_S2,
            &["2,4,50", "2,4,4", "2,4,3"],
        ),
        ("conv1d_k3_s1", models::CONV1D_K3_S1, &["2,4,16", "1,4,1"]),
        (
            "sequence",
            models::SEQUENCE,
            &["2,8,32", "1,1,32", "3,5,16"],
        ),
        (
            "simplenet",
            models::SIMPLENET,
            &["64,64", "8,64", "4,10,64", "8,32"],
        ),
    ]);
}
