//! The reports of `tailor run`: text for people, one JSON object for tools.
//!
//! In: the parsed [`RunArgs`] (for the text header) and the [`RunResults`]. Out: the
//! report, ending in a newline, for stdout.
//!
//! Invariant: the JSON report has DESIGN.md §6's keys — `compiles`, `calls` (shapes,
//! action, entry — a position in `entries` —, reasons, and error/warning/outputs when
//! present), `entries` (inputs, guards) — plus `device`, PyTorch's compile ids (`id` of an
//! entry, `compile_id` of a call that compiled or failed to) and, on the GPU, `adapter`;
//! other tools parse it, so keys are only ever added. Both reports print calls and entries in order, with no timings, so a
//! run's report is the same every time.

use crate::args::RunArgs;
use crate::run::RunResults;
use serde_json::{Value, json};
use tailor::SymbolNaming;
use tailor::cache::{Action, DimSpec, ValueSpec};
use tailor::session::executor::Device;
use tailor::symbolic::SymbolNames;
use tailor::{CallEvent, CallShapes};

/// The run as one JSON object on one line, its entries' symbols named by `naming`.
pub fn json(results: &RunResults, naming: SymbolNaming) -> String {
    // `entry` is a position in `entries` (compile order); PyTorch's compile id, which a
    // failed compilation also uses up, is each entry's `id` and each call's `compile_id`.
    let compiled = results.cache.entries();
    let position = |id: usize| compiled.iter().position(|e| e.id == id);
    let calls: Vec<Value> = results
        .calls
        .iter()
        .map(|(event, outputs)| {
            let shapes: serde_json::Map<String, Value> = event
                .shapes
                .iter()
                .map(|(n, d)| (n.clone(), json!(d)))
                .collect();
            let mut object = json!({
                "shapes": shapes,
                "action": event.action.to_string(),
                "entry": event.entry.and_then(position),
                "reasons": event.reasons.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(),
            });
            let fields = object.as_object_mut().expect("an object");
            if let Some(id) = event.compile_id {
                fields.insert("compile_id".into(), json!(id));
            }
            if let Some(error) = &event.error {
                fields.insert("error".into(), json!(error));
            }
            if let Some(warning) = &event.warning {
                fields.insert("warning".into(), json!(warning));
            }
            if let Some(skipped) = &event.skipped {
                fields.insert("skipped".into(), json!(skipped));
            }
            if !event.breaks.is_empty() {
                fields.insert("graph_breaks".into(), breaks_json(event));
            }
            match outputs {
                Ok(outputs) if event.action != Action::Error => {
                    let shapes: Vec<&Vec<usize>> =
                        outputs.tensors.iter().map(|t| &t.shape).collect();
                    fields.insert("output_shapes".into(), json!(shapes));
                    if let Some(err) = outputs.max_abs_err {
                        fields.insert("max_abs_err".into(), json!(err));
                    }
                }
                Err(err) => {
                    fields.insert("error".into(), json!(err.to_string()));
                }
                Ok(_) => {}
            }
            object
        })
        .collect();
    let entries: Vec<Value> = compiled
        .iter()
        .map(|entry| {
            let names = entry.env.symbol_names(naming);
            let mut inputs: serde_json::Map<String, Value> = entry
                .inputs
                .iter()
                .map(|(n, dims)| (n.clone(), dims_json(&named_dims(dims, &names))))
                .collect();
            for (name, value) in &entry.values {
                let value = match value {
                    ValueSpec::Int(dim) => ValueSpec::Int(dim.named(&names)),
                    ValueSpec::Bool(b) => ValueSpec::Bool(*b),
                    ValueSpec::Float(f) => ValueSpec::Float(*f),
                };
                inputs.insert(name.clone(), json!(value));
            }
            json!({ "id": entry.id, "inputs": inputs, "guards": entry.guards.source_lines() })
        })
        .collect();
    let mut report = json!({
        "compiles": results.cache.compiles(),
        "device": results.device,
        "calls": calls,
        "entries": entries,
    });
    if let Some((name, backend)) = &results.adapter {
        report["adapter"] = json!({ "name": name, "backend": backend });
    }
    format!("{report}\n")
}

/// A call's graph breaks: each break's place and reason, and the call of the resume
/// function after it (its frame id, action, compile id and guard failures).
fn breaks_json(event: &CallEvent) -> Value {
    json!(
        event
            .breaks
            .iter()
            .map(|resume| {
                let call = &resume.call;
                json!({
                    "line": resume.graph_break.span.line,
                    "col": resume.graph_break.span.col,
                    "reason": resume.graph_break.reason.to_string().lines().next().unwrap_or(""),
                    "resume": resume.function,
                    "frame": call.frame,
                    "action": call.action.to_string(),
                    "entry": call.entry,
                    "compile_id": call.compile_id,
                    "reasons": call.reasons.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(),
                    "error": call.error,
                })
            })
            .collect::<Vec<_>>()
    )
}

fn dims_json(dims: &[DimSpec]) -> Value {
    serde_json::to_value(dims).expect("dim specs serialize")
}

/// `dims` with their symbols shown with `names`.
fn named_dims(dims: &[DimSpec], names: &SymbolNames) -> Vec<DimSpec> {
    dims.iter().map(|dim| dim.named(names)).collect()
}

/// The run as text: the device when chosen or checked, each call with its guard
/// failures, warnings, errors and outputs, then each entry with its guards.
pub fn text(args: &RunArgs, results: &RunResults) -> String {
    let cache = &results.cache;
    let mut out = String::new();
    if args.device != Device::Auto || args.check {
        let adapter = results
            .adapter
            .as_ref()
            .map_or(String::new(), |(name, backend)| {
                format!(" ({name}, {backend})")
            });
        out.push_str(&format!("device: {}{adapter}\n", results.device));
    }
    out.push_str(&format!(
        "{} (dynamic={})\n",
        cache.entry_point().name,
        args.model.config.dynamic
    ));
    for (i, (event, outputs)) in results.calls.iter().enumerate() {
        let shapes = CallShapes::with_args(event.shapes.clone()).to_spec();
        let entry = event
            .entry
            .map_or(String::new(), |e| format!(" entry 0/{e}"));
        out.push_str(&format!(
            "call {:>2}  {shapes:<20} {}{entry}\n",
            i + 1,
            event.action
        ));
        for (id, reason) in &event.reasons {
            out.push_str(&format!("          guard failed 0/{id}: {reason}\n"));
        }
        if let Some(warning) = &event.warning {
            out.push_str(&format!(
                "          warning: {}\n",
                warning.replace('\n', "\n          ")
            ));
        }
        if let Some(skipped) = &event.skipped {
            out.push_str(&format!("          skipped: {skipped}\n"));
        }
        if let Some(error) = &event.error {
            out.push_str(&format!("          error: {error}\n"));
        }
        for resume in &event.breaks {
            let call = &resume.call;
            let entry = call
                .entry
                .map_or(String::new(), |e| format!(" entry {}/{e}", call.frame));
            let reason = resume.graph_break.reason.to_string();
            out.push_str(&format!(
                "          graph break at {}: {}\n          then {} {}{entry}\n",
                resume.graph_break.span,
                reason.lines().last().unwrap_or_default().trim(),
                resume.function,
                call.action
            ));
            for (id, reason) in &call.reasons {
                out.push_str(&format!(
                    "            guard failed {}/{id}: {reason}\n",
                    call.frame
                ));
            }
            if let Some(error) = &call.error {
                out.push_str(&format!("            error: {error}\n"));
            }
        }
        match outputs {
            Ok(outputs) if !outputs.tensors.is_empty() => {
                let shapes: Vec<String> = outputs
                    .tensors
                    .iter()
                    .map(|t| format!("{:?}", t.shape))
                    .collect();
                let check = outputs
                    .max_abs_err
                    .map_or(String::new(), |e| format!("  max_abs_err {e:.3e}"));
                out.push_str(&format!("          output {}{check}\n", shapes.join(", ")));
            }
            Err(err) => out.push_str(&format!("          run error: {err}\n")),
            Ok(_) => {}
        }
    }
    out.push_str(&format!("compiles: {}\n", cache.compiles()));
    for entry in cache.entries() {
        let names = entry.env.symbol_names(args.model.symbol_names);
        let inputs: Vec<String> = entry
            .inputs
            .iter()
            .map(|(n, dims)| {
                let dims: Vec<String> = named_dims(dims, &names)
                    .iter()
                    .map(|d| match d {
                        DimSpec::Static(v) => v.to_string(),
                        DimSpec::Dynamic { sym, .. } => sym.clone(),
                    })
                    .collect();
                format!("{n}=[{}]", dims.join(", "))
            })
            .collect();
        out.push_str(&format!("entry 0/{}: {}\n", entry.id, inputs.join(" ")));
        for line in entry.guards.source_lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}
