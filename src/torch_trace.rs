//! PyTorch's structured trace, read: the log `TORCH_TRACE=DIR python script.py` writes (the
//! one tlparse renders), as the compiles it records.
//!
//! In: the text of one trace log. Out: a [`TorchTrace`]: per `[frame/compile]`, in the order
//! first seen, the function compiled, the recompile reasons, the symbols created, the guards,
//! the graph break and the sizes of what its graph returned; and how many records of each
//! kind were not read. Invariant: a record kind this module does not read (Inductor's
//! artifacts, timing events, kinds a newer PyTorch adds) is counted and skipped, never an
//! error; a line that is not a record, or whose JSON does not parse (a trace cut short), is
//! an error naming the line.
//!
//! Why not the `tlparse` crate: it renders a trace to HTML and keeps no parsed compiles to
//! hand back, and its dependencies (syntect with the Oniguruma C library, indicatif, opener,
//! clap) do not build for wasm32, where the page needs this. The format itself is small:
//! one glog-style line per record (`V1207 18:43:45.006000 13534 torch/_dynamo/utils.py:2473]`)
//! with a JSON envelope after the `] `, then its payload on the lines after it, each
//! starting with a tab.

use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What a trace recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TorchTrace {
    /// PyTorch's version (`torch_version` artifact), when recorded.
    pub version: Option<String>,
    /// The compiles, in the order their first record came.
    pub compiles: Vec<CompileRecord>,
    /// Records not read, by kind (`chromium_event`, `artifact:inductor_output_code`, …).
    pub skipped: BTreeMap<String, usize>,
}

/// One `[frame/compile]`: a compilation Dynamo tried of one frame, as a trace records it
/// (and as `script::ScriptRun::compiles` gives Tailor's, to set beside it).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CompileRecord {
    /// Dynamo's frame id.
    pub frame: u32,
    /// The compile's number within the frame.
    pub compile: u32,
    /// The code compiled (`forward`, `torch_dynamo_resume_in_forward_at_17`).
    pub function: String,
    /// Its first line.
    pub first_line: Option<u32>,
    /// The sizes of the call's tensor arguments, as `L['x'] [16, 64]` (the compiled code's
    /// locals; the module's parameters apart).
    pub inputs: Vec<String>,
    /// Why it recompiled: each failing entry's first failing guard (`0/0: tensor 'x' size
    /// mismatch at index 0. expected 8, actual 16`), comments dropped.
    pub recompile_reasons: Vec<String>,
    /// The symbols created, as `s77 = 16 for L['x'].size()[0] [2, int_oo]`.
    pub symbols: Vec<String>,
    /// The guard tree's guards, each `KIND: text` without the tree's drawing or comments.
    pub guards: Vec<String>,
    /// The graph break that ended its graph: `Graph break in user code at FILE:LINE`, then
    /// the reason's lines.
    pub graph_break: Option<String>,
    /// The sizes of what its graph returned, as PyTorch writes them (`[s77, 64]`).
    pub outputs: Vec<String>,
    /// Why the compilation failed (`fail_type: fail_reason`), when it did.
    pub failure: Option<String>,
}

/// A trace that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceError {
    /// A line that is neither a record nor a payload line.
    #[error(
        "line {line}: not a structured trace record (`V… FILE:LINE] {{JSON}}`, or a payload line starting with a tab): {text}"
    )]
    NotARecord {
        /// 1-based.
        line: usize,
        /// The line's start.
        text: String,
    },
    /// A record whose JSON envelope does not parse: a trace cut short, or edited.
    #[error("line {line}: the record's JSON does not parse ({detail}); is the trace cut short?")]
    BadJson {
        /// 1-based.
        line: usize,
        /// serde_json's words.
        detail: String,
    },
    /// No record of any compile.
    #[error(
        "the trace records no compile (no dynamo_start): was it written by TORCH_TRACE while torch.compile ran?"
    )]
    NoCompiles,
}

/// Keys of an envelope that say where a record belongs, not what it is.
const PLACE_KEYS: [&str; 5] = [
    "frame_id",
    "frame_compile_id",
    "attempt",
    "has_payload",
    "rank",
];

/// Reads a trace log.
pub fn parse(text: &str) -> Result<TorchTrace, TraceError> {
    let mut trace = TorchTrace::default();
    let mut attempts = BTreeMap::new();
    let mut closed = BTreeSet::new();
    let mut described = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let number = i + 1;
        i += 1;
        if line.trim().is_empty() {
            continue;
        }
        let Some(json) = envelope_text(line) else {
            return Err(TraceError::NotARecord {
                line: number,
                text: line.chars().take(80).collect(),
            });
        };
        let envelope: serde_json::Map<String, Value> =
            serde_json::from_str(json).map_err(|err| TraceError::BadJson {
                line: number,
                detail: err.to_string(),
            })?;
        let mut payload = Vec::new();
        while i < lines.len() && lines[i].starts_with('\t') {
            payload.push(&lines[i][1..]);
            i += 1;
        }
        read_record(
            &mut trace,
            &mut Seen {
                attempts: &mut attempts,
                closed: &mut closed,
                described: &mut described,
            },
            &envelope,
            &payload.join("\n"),
        );
    }
    if trace.compiles.is_empty() {
        return Err(TraceError::NoCompiles);
    }
    Ok(trace)
}

/// The JSON after a record line's `] `, if the line is a record.
fn envelope_text(line: &str) -> Option<&str> {
    let level = line.chars().next()?;
    if !matches!(level, 'V' | 'I' | 'W' | 'E' | 'C') {
        return None;
    }
    let start = line.find("] {")?;
    Some(&line[start + 2..])
}

/// What earlier records said that later ones refer to.
struct Seen<'a> {
    /// The latest attempt seen of each compile (by its index in `compiles`): Dynamo
    /// restarts a frame's analysis at a graph break, and only the last attempt's symbols are
    /// the compile's.
    attempts: &'a mut BTreeMap<usize, u64>,
    /// The compiles whose `compilation_metrics` closed them: after `torch._dynamo.reset()`
    /// ids start again from `0/0`, and a `dynamo_start` of a closed id is a new compile.
    closed: &'a mut BTreeSet<usize>,
    /// The sizes of each tensor described, by (describer, tensor id), which a
    /// `describe_source` record then names.
    described: &'a mut BTreeMap<(u64, u64), String>,
}

/// Files one record under its compile, or counts it as skipped.
fn read_record(
    trace: &mut TorchTrace,
    seen: &mut Seen<'_>,
    envelope: &serde_json::Map<String, Value>,
    payload: &str,
) {
    let Some((kind, body)) = envelope
        .iter()
        .find(|(key, _)| !PLACE_KEYS.contains(&key.as_str()))
    else {
        return;
    };
    let artifact = match kind.as_str() {
        "artifact" => body.get("name").and_then(Value::as_str),
        _ => None,
    };
    let place = (
        envelope.get("frame_id").and_then(Value::as_u64),
        envelope.get("frame_compile_id").and_then(Value::as_u64),
    );
    let starts = kind == "dynamo_start";
    let compile = |trace: &mut TorchTrace, closed: &BTreeSet<usize>| -> Option<usize> {
        let (Some(frame), Some(compile)) = place else {
            return None;
        };
        let (frame, compile) = (frame as u32, compile as u32);
        let last = trace
            .compiles
            .iter()
            .rposition(|c| c.frame == frame && c.compile == compile);
        Some(
            match last.filter(|index| !(starts && closed.contains(index))) {
                Some(index) => index,
                None => {
                    trace.compiles.push(CompileRecord {
                        frame,
                        compile,
                        ..CompileRecord::default()
                    });
                    trace.compiles.len() - 1
                }
            },
        )
    };
    let read = match (kind.as_str(), artifact) {
        ("artifact", Some("torch_version")) => {
            trace.version = serde_json::from_str::<Value>(payload)
                .ok()
                .and_then(|v| v.get("pytorch_version")?.as_str().map(str::to_string));
            true
        }
        ("dynamo_start", _) => compile(trace, seen.closed).is_some_and(|index| {
            let frames = body.get("stack").and_then(Value::as_array);
            if let Some(last) = frames.and_then(|frames| frames.last()) {
                let c = &mut trace.compiles[index];
                c.function = text_of(last.get("name"));
                c.first_line = last.get("line").and_then(Value::as_u64).map(|l| l as u32);
            }
            true
        }),
        ("artifact", Some("recompile_reasons")) => {
            compile(trace, seen.closed).is_some_and(|index| {
                trace.compiles[index].recompile_reasons = recompile_reasons(payload);
                true
            })
        }
        ("create_symbol", _) => compile(trace, seen.closed).is_some_and(|index| {
            let attempt = envelope.get("attempt").and_then(Value::as_u64).unwrap_or(0);
            let latest = seen.attempts.entry(index).or_insert(attempt);
            if attempt > *latest {
                *latest = attempt;
                trace.compiles[index].symbols.clear();
            }
            trace.compiles[index].symbols.push(format!(
                "{} = {} for {} {}",
                text_of(body.get("symbol")),
                text_of(body.get("val")),
                text_of(body.get("source")),
                text_of(body.get("vr"))
            ));
            true
        }),
        ("describe_tensor", _) => {
            let key = described_key(body);
            let sizes = body.get("size").and_then(Value::as_array);
            let sizes: Vec<String> = sizes
                .into_iter()
                .flatten()
                .map(|d| text_of(Some(d)))
                .collect();
            seen.described
                .insert(key, format!("[{}]", sizes.join(", ")));
            true
        }
        ("describe_source", _) => {
            let key = described_key(body);
            let source = text_of(body.get("source"));
            let argument = source.starts_with("L['") && !source.starts_with("L['self']");
            if let (true, Some(sizes), Some(index)) = (
                argument,
                seen.described.get(&key).cloned(),
                compile(trace, seen.closed),
            ) {
                let input = format!("{source} {sizes}");
                if !trace.compiles[index].inputs.contains(&input) {
                    trace.compiles[index].inputs.push(input);
                }
            }
            true
        }
        ("dynamo_cpp_guards_str", _) => compile(trace, seen.closed).is_some_and(|index| {
            trace.compiles[index].guards = tree_guards(payload);
            true
        }),
        ("artifact", Some("dynamo_graph_break_reason")) => {
            compile(trace, seen.closed).is_some_and(|index| {
                trace.compiles[index].graph_break = Some(graph_break_summary(payload));
                true
            })
        }
        ("dynamo_output_graph", _) => compile(trace, seen.closed).is_some_and(|index| {
            trace.compiles[index].outputs = returned_sizes(body.get("sizes"), payload);
            true
        }),
        ("compilation_metrics", _) => compile(trace, seen.closed).is_some_and(|index| {
            seen.closed.insert(index);
            let c = &mut trace.compiles[index];
            if let Some(name) = body.get("co_name").and_then(Value::as_str) {
                c.function = name.to_string();
            }
            if let Some(line) = body.get("co_firstlineno").and_then(Value::as_u64) {
                c.first_line = Some(line as u32);
            }
            let fail_type = body.get("fail_type").and_then(Value::as_str);
            c.failure = fail_type.map(|kind| {
                let reason = body.get("fail_reason").and_then(Value::as_str);
                format!("{kind}: {}", reason.unwrap_or_default())
            });
            true
        }),
        _ => false,
    };
    if !read {
        let name = match artifact {
            Some(name) => format!("artifact:{name}"),
            None => kind.clone(),
        };
        *trace.skipped.entry(name).or_default() += 1;
    }
}

/// Which tensor a `describe_tensor` or `describe_source` record is about.
fn described_key(body: &Value) -> (u64, u64) {
    let number = |key: &str| body.get(key).and_then(Value::as_u64).unwrap_or(0);
    (number("describer_id"), number("id"))
}

/// A JSON string as its text, any other value as JSON.
fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The `recompile_reasons` artifact: a JSON string or list of strings, each reason's
/// trailing `  # …` comment (where PyTorch found the guard) dropped.
fn recompile_reasons(payload: &str) -> Vec<String> {
    let reasons = match serde_json::from_str::<Value>(payload) {
        Ok(Value::Array(items)) => items.iter().map(|i| text_of(Some(i))).collect(),
        Ok(Value::String(text)) => vec![text],
        _ => vec![payload.to_string()],
    };
    reasons
        .iter()
        .map(|reason| without_comment(reason).to_string())
        .collect()
}

/// `text` without a trailing `  # comment`.
pub fn without_comment(text: &str) -> &str {
    text.find("  #").map_or(text, |at| &text[..at]).trim_end()
}

/// The guards of a `TREE_GUARD_MANAGER` dump, `KIND: text` each: the tree's drawing
/// (`| +- `), the managers that only lead to guards and the comments are dropped.
fn tree_guards(payload: &str) -> Vec<String> {
    payload
        .lines()
        .map(|line| line.trim_start_matches(['|', '+', '-', ' ']))
        .filter_map(|line| {
            let (kind, _) = line.split_once(": ")?;
            let is_guard = !kind.is_empty()
                && kind
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            is_guard.then(|| without_comment(line).to_string())
        })
        .collect()
}

/// The first lines of a graph break's log: where it is and why (`Graph Break Reason: …`, and
/// the headline after it where the reason is the call being traced), up to the explanation.
pub fn graph_break_summary(log: &str) -> String {
    log.lines()
        .take_while(|line| {
            !line.trim_start().starts_with("Explanation:") && !line.starts_with("User code")
        })
        .filter(|line| !line.trim().is_empty())
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The sizes of what the graph returns: the names in the code's `return (…)` looked up in
/// the record's sizes.
fn returned_sizes(sizes: Option<&Value>, code: &str) -> Vec<String> {
    let Some(sizes) = sizes.and_then(Value::as_object) else {
        return Vec::new();
    };
    let Some(returned) = code
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("return "))
    else {
        return Vec::new();
    };
    let returned = returned.split(';').next().unwrap_or_default();
    returned
        .trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
        .split(',')
        .map(str::trim)
        .filter_map(|name| {
            let dims = sizes.get(name)?.as_array()?;
            let dims: Vec<String> = dims.iter().map(|d| text_of(Some(d))).collect();
            Some(format!("[{}]", dims.join(", ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDS: &str = "V1207 18:43:45.007000 13534 torch/_logging/_internal.py:1390] {\"artifact\": {\"name\": \"torch_version\", \"encoding\": \"json\"}, \"has_payload\": \"e8\"}
\t{
\t\"pytorch_version\": \"2.15.0+cpu\"
\t}
V1207 18:43:45.013000 13534 torch/_dynamo/convert_frame.py:309] {\"dynamo_start\": {\"stack\": [{\"line\": 17, \"name\": \"forward\", \"filename\": 4}]}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0}
V1207 18:43:45.014000 13534 torch/_dynamo/utils.py:2473] {\"chromium_event\": {}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0, \"has_payload\": \"3e\"}
\t{}
V1207 18:43:45.015000 13534 torch/_logging/_internal.py:1390] {\"artifact\": {\"name\": \"recompile_reasons\", \"encoding\": \"json\"}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0, \"has_payload\": \"2f\"}
\t[
\t\"0/0: 2 <= x.size()[0] <= 15  # return F.conv2d(  # nn/modules/conv.py:560\"
\t]
V1207 18:43:45.016000 13534 torch/fx/experimental/symbolic_shapes.py:6075] {\"create_symbol\": {\"symbol\": \"s77\", \"val\": \"16\", \"vr\": \"[2, int_oo]\", \"source\": \"L['x'].size()[0]\"}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0}
V1207 18:43:45.017000 13534 torch/_dynamo/output_graph.py:1] {\"dynamo_output_graph\": {\"sizes\": {\"l_x_\": [\"s77\", 64], \"out\": [\"s77\", 8]}}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0, \"has_payload\": \"71\"}
\tclass GraphModule(torch.nn.Module):
\t    def forward(self, s77: \"Sym(s77)\", L_x_: \"f32[s77, 64][64, 1]cpu\"):
\t        return (out,)
V1207 18:43:45.018000 13534 torch/_dynamo/guards.py:1] {\"dynamo_cpp_guards_str\": {}, \"frame_id\": 0, \"frame_compile_id\": 1, \"attempt\": 0, \"has_payload\": \"e0\"}
\t
\tTREE_GUARD_MANAGER:
\t+- RootGuardManager
\t| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=1), type=<class 'torch.Tensor'>
\t| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, 64], stride=[64, 1])  # return F.linear(  # nn/modules/linear.py:134
\t| +- LAMBDA_GUARD: 2 <= L['x'].size()[0]  # return F.linear(
\t
\tGuard latency = 136.01 us
";

    #[test]
    fn a_trace_gives_its_compiles_and_counts_what_it_skipped() {
        let trace = parse(RECORDS).expect("parses");
        assert_eq!(trace.version.as_deref(), Some("2.15.0+cpu"));
        assert_eq!(trace.compiles.len(), 1);
        let compile = &trace.compiles[0];
        assert_eq!((compile.frame, compile.compile), (0, 1));
        assert_eq!(compile.function, "forward");
        assert_eq!(compile.recompile_reasons, ["0/0: 2 <= x.size()[0] <= 15"]);
        assert_eq!(
            compile.symbols,
            ["s77 = 16 for L['x'].size()[0] [2, int_oo]"]
        );
        assert_eq!(compile.outputs, ["[s77, 8]"]);
        assert_eq!(
            compile.guards,
            [
                "TENSOR_MATCH: check_tensor(L['x'], Tensor, torch.float32, size=[None, 64], stride=[64, 1])",
                "LAMBDA_GUARD: 2 <= L['x'].size()[0]"
            ]
        );
        assert_eq!(trace.skipped.get("chromium_event"), Some(&1));
    }

    #[test]
    fn a_trace_cut_short_names_its_line() {
        let cut = &RECORDS[..RECORDS.find("\"symbol\": \"s77\"").expect("present")];
        let err = parse(cut).expect_err("cut mid-record");
        assert!(matches!(err, TraceError::BadJson { line: 12, .. }), "{err}");
        let err = parse("hello\n").expect_err("not a trace");
        assert!(
            matches!(err, TraceError::NotARecord { line: 1, .. }),
            "{err}"
        );
        assert_eq!(parse(""), Err(TraceError::NoCompiles));
    }
}
