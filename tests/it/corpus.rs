//! The corpus of published model files (issue 37): each entry of `tests/corpus/manifest.json`
//! is a file (or a few joined) from a package on the registry, with the lines that build it
//! small and its calls. `scripts/corpus/fetch.py` brings the files into `tests/corpus/files/`;
//! `scripts/pytorch/record_corpus.py` recorded what PyTorch 2.15 did with each under every
//! `dynamic` mode the entry names (`tests/data/pytorch/corpus.txt`: per call, compiled or
//! hit, and the shapes of what it returned; the graphs a counting backend saw).
//!
//! Here every entry runs through the library as a learner's file does: `tailor::load` with
//! the build lines' `Entry` class, a `Session` on the CPU backend, and the calls (inputs
//! seeded; token ids below 16). An entry works when every call's action, every output's
//! shape and the graph count (graph breaks' graphs included) are PyTorch's. Each entry's
//! `tailor` field says what Tailor does today, `works` or `fails: ` and the first line of
//! what went wrong, and the test fails wherever that is no longer the truth, either way (a
//! ratchet: a fix must update the manifest). `TAILOR_CORPUS_BLESS=1` rewrites the fields
//! to what this run found. The rate is printed at the end; docs/corpus.md has the table.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::time::Instant;
use tailor::cache::Action;
use tailor::config::{CallMarks, CompileConfig, DynamicMode};
use tailor::graph::Op;
use tailor::session::Session;
use tailor::session::executor::{self, Backend, RunOptions};
use tailor::spec;

const MANIFEST: &str = "tests/corpus/manifest.json";
const RECORD: &str = "tests/data/pytorch/corpus.txt";
const FETCH: &str = "python3 scripts/corpus/fetch.py";

fn path(relative: &str) -> String {
    format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"))
}

/// What one entry's calls did under one mode: PyTorch's record, or Tailor's run.
#[derive(Debug, PartialEq)]
struct Outcome {
    /// `C` (at least one graph compiled) or `H` per call.
    actions: Vec<String>,
    /// Graphs compiled over all the calls, every frame's.
    graphs: usize,
    /// Per call, the shapes of the returned tensors in order.
    outputs: Vec<Vec<Vec<usize>>>,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outputs: Vec<String> = self
            .outputs
            .iter()
            .map(|call| {
                let shapes: Vec<String> = call.iter().map(|s| format!("{s:?}")).collect();
                format!("[{}]", shapes.join(", "))
            })
            .collect();
        write!(
            f,
            "{}, {} graphs, outputs {}",
            self.actions.join(" "),
            self.graphs,
            outputs.join(" ")
        )
    }
}

/// PyTorch's record: (entry id, `dynamic=` as printed) -> outcome.
fn pytorch_record() -> BTreeMap<(String, String), Outcome> {
    let text = std::fs::read_to_string(path(RECORD)).expect("PyTorch's corpus record exists");
    let mut record = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (head, rest) = line.split_once(": ").expect("`ID dynamic=MODE: …`");
        let (id, mode) = head.split_once(" dynamic=").expect("`ID dynamic=MODE`");
        let parts: Vec<&str> = rest.split(" | ").collect();
        let [actions, graphs, outputs] = parts.as_slice() else {
            panic!("{RECORD}: malformed line {line}");
        };
        let graphs = graphs.strip_prefix("graphs=").expect("graphs=N");
        let outputs = outputs.strip_prefix("outputs=").expect("outputs=JSON");
        let outcome = Outcome {
            actions: actions.split(' ').map(str::to_string).collect(),
            graphs: graphs.parse().expect("a count"),
            outputs: serde_json::from_str(outputs).expect("shapes as JSON"),
        };
        record.insert((id.to_string(), mode.to_string()), outcome);
    }
    record
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

/// The entry's source as `record_corpus.py` builds it: its files in order with its edits
/// applied, then its build lines. `None` when a file is not fetched.
fn source_of(entry: &Value) -> Option<String> {
    let id = entry["id"].as_str().expect("an id");
    let archive = entry["archive"].as_str().expect("an archive");
    let edits = entry["edits"].as_array().cloned().unwrap_or_default();
    let mut texts = Vec::new();
    for file in strings(&entry["files"]) {
        let mut text =
            std::fs::read_to_string(path(&format!("tests/corpus/files/{archive}/{file}"))).ok()?;
        for edit in edits.iter().filter(|e| e["file"] == file.as_str()) {
            let old = edit["old"].as_str().expect("old text");
            let new = edit["new"].as_str().expect("new text");
            assert_eq!(text.matches(old).count(), 1, "{id}: edit {old:?}");
            text = text.replacen(old, new, 1);
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        texts.push(text);
    }
    Some(format!(
        "{}\n\n{}\n",
        texts.join("\n"),
        strings(&entry["build"]).join("\n")
    ))
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// Runs the entry's calls under `mode` through a session on the CPU backend.
fn run_mode(source: &str, calls: &[String], mode: DynamicMode) -> Result<Outcome, String> {
    let cache = tailor::load(source, Some("Entry")).map_err(|e| first_line(&e.to_string()))?;
    let clock: Rc<dyn Fn() -> f64> = Rc::new(|| 0.0);
    let mut session = Session::new(cache, Rc::new(Backend::cpu()), clock);
    let config = CompileConfig {
        dynamic: mode,
        ..CompileConfig::default()
    };
    let mut outcome = Outcome {
        actions: Vec::new(),
        graphs: 0,
        outputs: Vec::new(),
    };
    for (i, text) in calls.iter().enumerate() {
        let call = spec::parse_shapes(text, &session.cache.entry_point().inputs)
            .map_err(|e| first_line(&e.to_string()))?;
        let inputs = executor::call_inputs(&call, Vec::new(), i as u64 + 1)
            .map_err(|e| first_line(&e.to_string()))?;
        let options = RunOptions::default();
        let marks = CallMarks::default();
        let (event, ran) =
            pollster::block_on(session.call(0, &config, &call, &marks, inputs, options));
        if let Some(failed) = event.first_error() {
            return Err(first_line(failed.error.as_deref().unwrap_or("an error")));
        }
        let ran = ran.map_err(|e| first_line(&e.to_string()))?;
        // A counting backend sees a graph only where it computes something: Dynamo hands
        // no graph without ops to the backend (a frame that breaks at its first line).
        let compiled = event
            .frames()
            .filter(|f| f.action == Action::Compile)
            .filter_map(|f| session.cache.frame_entry(f.frame, f.entry?))
            .filter(|entry| {
                entry.graph.nodes.iter().any(|node| {
                    !matches!(node.op, Op::Input { .. } | Op::Constant { .. } | Op::Output)
                })
            })
            .count();
        let action = match event.action {
            _ if compiled > 0 => "C",
            Action::Hit => "H",
            other => return Err(format!("call {} ran {other}", i + 1)),
        };
        outcome.actions.push(action.to_string());
        outcome.graphs += compiled;
        outcome
            .outputs
            .push(ran.outputs.iter().map(|t| t.shape.clone()).collect());
    }
    Ok(outcome)
}

/// `works`, or `fails: ` and the first thing that went wrong or disagreed with PyTorch.
fn status_of(
    id: &str,
    source: &str,
    entry: &Value,
    record: &BTreeMap<(String, String), Outcome>,
) -> String {
    let calls = strings(&entry["calls"]);
    for mode in strings(&entry["dynamic"]) {
        let mode: DynamicMode = mode.parse().expect("a dynamic mode");
        let key = (id.to_string(), mode.to_string());
        let pytorch = record.get(&key).unwrap_or_else(|| {
            panic!("no PyTorch record of {id} dynamic={mode} in {RECORD}: run scripts/pytorch/record_corpus.py {id}")
        });
        let ran = catch_unwind(AssertUnwindSafe(|| run_mode(source, &calls, mode)));
        let tailor = match ran {
            Ok(Ok(tailor)) => tailor,
            Ok(Err(message)) => return format!("fails: {message}"),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                return format!("fails: panic: {}", first_line(&message));
            }
        };
        if &tailor != pytorch {
            return format!("fails: dynamic={mode}: {tailor}; PyTorch: {pytorch}");
        }
    }
    "works".to_string()
}

/// Rewrites each entry's `"tailor"` line (the entry's last field) to what this run found.
fn bless(statuses: &BTreeMap<String, String>) {
    let manifest = std::fs::read_to_string(path(MANIFEST)).expect("the manifest exists");
    let mut current = None;
    let mut out = String::new();
    for line in manifest.lines() {
        if let Some(id) = line.trim().strip_prefix("\"id\": ") {
            current = serde_json::from_str::<String>(id.trim_end_matches(',')).ok();
        }
        match (&current, line.trim().starts_with("\"tailor\": ")) {
            (Some(id), true) if statuses.contains_key(id) => {
                let status = serde_json::to_string(&statuses[id]).expect("a string");
                writeln!(out, "      \"tailor\": {status}").expect("a string");
            }
            _ => writeln!(out, "{line}").expect("a string"),
        }
    }
    std::fs::write(path(MANIFEST), out).expect("the manifest is writable");
}

#[test]
fn corpus_entries_do_what_the_manifest_says() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(path(MANIFEST)).expect("manifest"))
            .expect("the manifest is JSON");
    let entries = manifest["entries"].as_array().expect("entries");
    let record = pytorch_record();
    let bless_now = std::env::var_os("TAILOR_CORPUS_BLESS").is_some_and(|v| v != "0");
    // For local work: only the entries named (comma-separated ids); blessing then rewrites
    // only theirs.
    let only = std::env::var("TAILOR_CORPUS_ONLY").ok();
    let chosen = |id: &str| {
        only.as_ref()
            .is_none_or(|ids| ids.split(',').any(|o| o == id))
    };
    let mut statuses = BTreeMap::new();
    let mut wrong = Vec::new();
    let start = Instant::now();
    for entry in entries {
        let id = entry["id"].as_str().expect("an id");
        if !chosen(id) {
            continue;
        }
        let source = source_of(entry).unwrap_or_else(|| {
            panic!("the corpus's files are not fetched ({id} has none): run `{FETCH}` first")
        });
        let entry_start = Instant::now();
        let status = status_of(id, &source, entry, &record);
        println!(
            "{id}: {status} ({:.1} s)",
            entry_start.elapsed().as_secs_f64()
        );
        let claimed = entry["tailor"].as_str().unwrap_or("");
        if claimed != status {
            wrong.push(format!(
                "{id}: the manifest says {claimed:?}, Tailor {status:?}"
            ));
        }
        statuses.insert(id.to_string(), status);
    }
    let works = statuses.values().filter(|s| *s == "works").count();
    println!(
        "corpus: {works} of {} entries work ({:.0} s)",
        statuses.len(),
        start.elapsed().as_secs_f64()
    );
    if bless_now {
        bless(&statuses);
    } else {
        assert!(
            wrong.is_empty(),
            "the manifest's `tailor` fields are not the truth (TAILOR_CORPUS_BLESS=1 rewrites them):\n{}",
            wrong.join("\n")
        );
    }
}
