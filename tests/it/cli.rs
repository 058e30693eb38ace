//! The `tailor` command line as other tools use it: `run --json` prints exactly one JSON
//! object with DESIGN.md §6's keys (extra keys allowed), `explain` prints the trace (with
//! `--json`, as one object of stages).

use crate::models;
use serde_json::{Value, json};
use std::process::Command;

const SIMPLENET_FILE: &str = "models/simplenet.py";

/// Runs `tailor run … --json`, checks the §6 schema and returns the report.
#[track_caller]
fn run_json(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .arg("run")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    // `from_slice` rejects anything but one value (and whitespace) on stdout.
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {output:?}"));
    check_schema(&report);
    report
}

fn is_dim(dim: &Value) -> bool {
    match dim {
        Value::Number(n) => n.as_u64().is_some(),
        Value::Object(o) => {
            o["sym"].is_string()
                && o["min"].as_i64().is_some()
                && (o["max"].is_null() || o["max"].as_i64().is_some())
        }
        _ => false,
    }
}

#[track_caller]
fn check_schema(report: &Value) {
    let compiles = report["compiles"].as_u64().expect("compiles is an integer");
    let calls = report["calls"].as_array().expect("calls is an array");
    let entries = report["entries"].as_array().expect("entries is an array");
    assert_eq!(compiles as usize, entries.len(), "one entry per compile");
    for call in calls {
        let shapes = call["shapes"].as_object().expect("shapes is an object");
        for value in shapes.values() {
            // A tensor's sizes, or a Python int or bool argument.
            if value.is_i64() || value.is_boolean() {
                continue;
            }
            let dims = value.as_array().expect("a shape is an array");
            assert!(dims.iter().all(|d| d.as_u64().is_some()), "{dims:?}");
        }
        let action = call["action"].as_str().expect("action is a string");
        assert!(
            ["compile", "hit", "eager", "error"].contains(&action),
            "{action}"
        );
        match action {
            "compile" | "hit" => {
                let entry = call["entry"].as_u64().expect("entry is an id");
                assert!((entry as usize) < entries.len());
            }
            _ => assert!(call["entry"].is_null(), "{call}"),
        }
        if action == "error" {
            assert!(call["error"].is_string(), "an error call says why: {call}");
        }
        let reasons = call["reasons"].as_array().expect("reasons is an array");
        assert!(reasons.iter().all(Value::is_string), "{reasons:?}");
    }
    for entry in entries {
        let inputs = entry["inputs"].as_object().expect("inputs is an object");
        for value in inputs.values() {
            // An int argument is one dim (a number or a symbol); a bool is a bool.
            if is_dim(value) || value.is_boolean() {
                continue;
            }
            let dims = value.as_array().expect("dims is an array");
            assert!(dims.iter().all(is_dim), "{dims:?}");
        }
        let guards = entry["guards"].as_array().expect("guards is an array");
        assert!(guards.iter().all(Value::is_string), "{guards:?}");
    }
}

fn actions(report: &Value) -> Vec<&str> {
    report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].as_str().unwrap())
        .collect()
}

#[test]
fn json_follows_the_design_example() {
    let report = run_json(&[
        SIMPLENET_FILE,
        "--call",
        "x=8,64",
        "--call",
        "x=16,64",
        "--call",
        "x=32,64",
    ]);
    assert_eq!(report["compiles"], 2);
    assert_eq!(actions(&report), ["compile", "compile", "hit"]);
    let calls = &report["calls"];
    assert_eq!(calls[0]["shapes"], json!({"x": [8, 64]}));
    assert_eq!(calls[0]["entry"], 0);
    assert_eq!(calls[0]["reasons"], json!([]));
    assert_eq!(calls[1]["entry"], 1);
    assert_eq!(
        calls[1]["reasons"],
        json!(["tensor 'x' size mismatch at index 0. expected 8, actual 16"])
    );
    assert_eq!(calls[2]["entry"], 1);
    assert_eq!(calls[2]["reasons"], json!([]));
    let entries = &report["entries"];
    assert_eq!(entries[0]["inputs"], json!({"x": [8, 64]}));
    assert_eq!(
        entries[1]["inputs"],
        json!({"x": [{"sym": "s0", "min": 2, "max": null}, 64]})
    );
    let guards = entries[1]["guards"].as_array().unwrap();
    assert!(
        guards.contains(&json!("2 <= L['x'].size()[0]")),
        "{guards:?}"
    );
}

#[test]
fn json_bounded_mark_has_a_max() {
    let report = run_json(&[
        SIMPLENET_FILE,
        "--mark-dynamic",
        "x:0:2:512",
        "--call",
        "x=8,64",
    ]);
    assert_eq!(
        report["entries"][0]["inputs"]["x"],
        json!([{"sym": "s0", "min": 2, "max": 512}, 64])
    );
    let guards = report["entries"][0]["guards"].as_array().unwrap();
    assert!(guards.contains(&json!("2 <= L['x'].size()[0] <= 512")));
}

#[test]
fn json_inf_max_is_null() {
    let report = run_json(&[
        SIMPLENET_FILE,
        "--mark-dynamic",
        "x:0:2:inf",
        "--call",
        "x=8,64",
    ]);
    assert_eq!(
        report["entries"][0]["inputs"]["x"][0],
        json!({"sym": "s0", "min": 2, "max": null})
    );
}

#[test]
fn json_dynamic_true_static_feature_dim_is_an_integer() {
    let report = run_json(&[
        SIMPLENET_FILE,
        "--dynamic",
        "true",
        "--call",
        "x=8,64",
        "--call",
        "x=3,64",
    ]);
    assert_eq!(actions(&report), ["compile", "hit"]);
    assert_eq!(report["entries"][0]["inputs"]["x"][1], 64);
    assert!(report["entries"][0]["inputs"]["x"][0].is_object());
}

#[test]
fn json_eager_after_the_recompile_limit() {
    let report = run_json(&[
        SIMPLENET_FILE,
        "--dynamic",
        "false",
        "--recompile-limit",
        "2",
        "--call",
        "x=8,64",
        "--call",
        "x=16,64",
        "--call",
        "x=32,64",
        "--call",
        "x=8,64",
    ]);
    assert_eq!(report["compiles"], 2);
    assert_eq!(actions(&report), ["compile", "compile", "eager", "hit"]);
    let warning = report["calls"][2]["warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("hit config.recompile_limit (2)"),
        "{warning}"
    );
}

#[test]
fn json_error_call_has_an_error_and_no_entry() {
    let report = run_json(&[SIMPLENET_FILE, "--call", "x=8,32", "--call", "x=8,64"]);
    assert_eq!(actions(&report), ["error", "compile"]);
    assert_eq!(report["compiles"], 1);
    // The failed compilation used up compile id 0, as in PyTorch; `entry` stays a position.
    assert_eq!(report["calls"][0]["compile_id"], 0);
    assert_eq!(report["calls"][1]["compile_id"], 1);
    assert_eq!(report["calls"][1]["entry"], 0);
    assert_eq!(report["entries"][0]["id"], 1);
    let error = report["calls"][0]["error"].as_str().unwrap();
    assert!(crate::mentions(error, "18:16"), "{error}");
}

#[test]
fn json_int_arguments_are_values_then_symbols() {
    let path = format!(
        "{}/tests/data/models/python_values.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let report = run_json(&[
        &path,
        "--entry",
        "branch",
        "--call",
        "x=3;n=int(2)",
        "--call",
        "x=3;n=int(5)",
    ]);
    assert_eq!(actions(&report), ["compile", "compile"]);
    assert_eq!(report["calls"][0]["shapes"], json!({"x": [3], "n": 2}));
    assert_eq!(report["entries"][0]["inputs"]["n"], json!(2));
    assert_eq!(
        report["entries"][1]["inputs"]["n"],
        json!({"sym": "s0", "min": 4, "max": null})
    );
    let guards = report["entries"][1]["guards"].as_array().unwrap();
    assert!(guards.contains(&json!(
        "TYPE_MATCH: ___check_type_id(L['n'], <class 'int'>)"
    )));
    assert!(guards.contains(&json!("4 <= L['n']")));
}

#[test]
fn json_two_inputs() {
    let path = std::env::temp_dir().join(format!("tailor-it-{}-matmul.py", std::process::id()));
    std::fs::write(&path, models::MATMUL).unwrap();
    let report = run_json(&[
        path.to_str().unwrap(),
        "--call",
        "a=8,16;b=16,4",
        "--call",
        "b=17,5;a=9,17",
    ]);
    assert_eq!(
        report["calls"][0]["shapes"],
        json!({"a": [8, 16], "b": [16, 4]})
    );
    assert_eq!(
        report["calls"][1]["shapes"],
        json!({"a": [9, 17], "b": [17, 5]})
    );
    assert_eq!(report["compiles"], 2);
    let guards = report["entries"][1]["guards"].as_array().unwrap();
    assert!(guards.contains(&json!("L['b'].size()[0] == L['a'].size()[1]")));
}

#[test]
fn text_report_lists_calls_and_entries() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args([
            "run",
            SIMPLENET_FILE,
            "--call",
            "x=8,64",
            "--call",
            "x=16,64",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    for needle in [
        "compile",
        "tensor 'x' size mismatch at index 0. expected 8, actual 16",
        "compiles: 2",
        "2 <= L['x'].size()[0]",
    ] {
        assert!(
            stdout.contains(needle),
            "{needle:?} missing from:\n{stdout}"
        );
    }
}

/// `--memory-budget` sets the bytes tensors may take: a 64 MiB weight is refused where it
/// is made under a 32 MiB budget, naming the budget and the flag, and runs under 256 MiB.
#[test]
fn the_memory_budget_is_set_on_the_command_line() {
    let file = std::env::temp_dir().join(format!("tailor-budget-{}.py", std::process::id()));
    std::fs::write(
        &file,
        "import torch\nimport torch.nn as nn\n\n\nclass Wide(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4096, 4096)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    )
    .unwrap();
    let run = |budget: &str| {
        Command::new(env!("CARGO_BIN_EXE_tailor"))
            .args(["run", file.to_str().unwrap(), "--call", "x=2,4096"])
            .args(["--device", "cpu", "--memory-budget", budget])
            .output()
            .unwrap()
    };
    let refused = run("32MiB");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the memory budget of 32 MiB holds at most 8388608 per tensor"),
        "{stderr}"
    );
    let ran = run("256MiB");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let usage = run("lots");
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("--memory-budget needs a size"));
    std::fs::remove_file(&file).ok();
}

#[test]
fn explain_prints_the_library_trace() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args([
            "explain",
            SIMPLENET_FILE,
            "--input",
            "x=8,64",
            "--dynamic",
            "true",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let options = tailor::Options {
        config: tailor::CompileConfig {
            dynamic: tailor::DynamicMode::True,
            ..tailor::CompileConfig::default()
        },
        ..tailor::Options::default()
    };
    let trace = tailor::explain(models::SIMPLENET, "x=8,64", &options).unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), trace.to_string());
}

/// `explain --json` prints the library's trace as one JSON object, `{"stages": [...]}` with
/// each stage's id, title and text: the object the page's "export the trace" downloads
/// (`Compilation.traceJson`, the same `Trace::to_json`; tests/e2e/page-tools.test.mjs).
#[test]
fn explain_json_is_the_library_trace() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(["explain", SIMPLENET_FILE, "--input", "x=8,64", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let trace = tailor::explain(models::SIMPLENET, "x=8,64", &tailor::Options::default()).unwrap();
    assert_eq!(stdout, trace.to_json().expect("a trace serialises"));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["stages"]);
    let stages = report["stages"].as_array().unwrap();
    assert_eq!(stages.len(), trace.stages.len());
    for (json, stage) in stages.iter().zip(&trace.stages) {
        assert_eq!(json["id"], stage.id);
        assert_eq!(json["title"], stage.title);
        assert_eq!(json["text"], stage.text);
    }
}

/// `--symbol-names pytorch` names SimpleNet's batch symbol as PyTorch 2.15 does (`s77` for
/// `L['x'].size()[0]`) in the JSON report and the text one; the guards, in source form, are
/// the same either way.
#[test]
fn symbol_names_pytorch_in_both_reports() {
    let calls = [SIMPLENET_FILE, "--call", "x=8,64", "--call", "x=16,64"];
    let named = run_json(&[&calls[..], &["--symbol-names", "pytorch"]].concat());
    let numbered = run_json(&calls);
    assert_eq!(named["entries"][1]["inputs"]["x"][0]["sym"], "s77");
    assert_eq!(numbered["entries"][1]["inputs"]["x"][0]["sym"], "s0");
    assert_eq!(
        named["entries"][1]["guards"],
        numbered["entries"][1]["guards"]
    );

    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(["run", "--symbol-names", "pytorch"])
        .args(calls)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("entry 0/1: x=[s77, 64]"), "{stdout}");

    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args([
            "explain",
            "--symbol-names",
            "sympy",
            SIMPLENET_FILE,
            "--input",
            "x=8,64",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: --symbol-names must be tailor or pytorch, got 'sympy'"),
        "{stderr}"
    );
}

#[test]
fn help_exits_zero_with_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("tailor run FILE"));
}

#[test]
fn script_prints_the_script_output_and_logs_torch_logs_to_stderr() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(["script", "demos/material_demo.py", "--device", "cpu"])
        .env("TORCH_LOGS", "recompiles")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.ends_with("多种 batch size 下输出形状均正确\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("__recompiles"), "{stdout}");
    let recompiles = stderr
        .lines()
        .filter(|l| {
            l.contains("[__recompiles] Recompiling function forward in demos/material_demo.py:17")
        })
        .count();
    // Six compiles under the default back end, as PyTorch's (tests/it/script.rs).
    assert_eq!(recompiles, 5, "{stderr}");
}

#[test]
fn script_json_has_the_output_the_calls_and_the_entries() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args([
            "script",
            "demos/material_demo.py",
            "--device",
            "cpu",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON value");
    assert_eq!(report["entries"], json!([6]));
    assert_eq!(report["calls"].as_array().map(Vec::len), Some(58));
    assert!(report["error"].is_null());
    assert_eq!(report["output"][0]["stream"], "stdout");
}

/// `tailor compare TRACE FILE.py`: the report of a known difference exits 0 (it compared),
/// `--json` is one object naming the trace, and a trace cut short is an error naming its
/// line, exit 1.
#[test]
fn compare_reports_a_traces_differences_and_refuses_a_trace_cut_short() {
    let tailor = env!("CARGO_BIN_EXE_tailor");
    let root = env!("CARGO_MANIFEST_DIR");
    let trace = format!("{root}/tests/data/traces/conv_batches.log");
    let script = "tests/data/traces/conv_batches.py";
    let compare = |trace: &str, extra: &[&str]| {
        Command::new(tailor)
            .current_dir(root)
            .args(["compare", trace, script, "--device", "cpu"])
            .args(extra)
            .output()
            .unwrap()
    };
    let output = compare(&trace, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains("[0/2] forward: PyTorch compiled, Tailor did not"),
        "{stdout}"
    );
    assert!(
        stdout.contains("PyTorch only: 2 <= L['x'].size()[0] <= 15"),
        "{stdout}"
    );
    let output = compare(&trace, &["--json"]);
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(report["comparison"]["compiles"][2]["pytorch"], json!(true));
    assert_eq!(report["comparison"]["compiles"][2]["tailor"], json!(false));

    let text = std::fs::read_to_string(&trace).expect("the trace");
    let cut = std::env::temp_dir().join(format!("tailor-cut-{}.log", std::process::id()));
    let at = text.find("\"create_symbol\"").expect("a symbol record");
    std::fs::write(&cut, &text[..at + 20]).expect("writes");
    let output = compare(cut.to_str().expect("a UTF-8 path"), &[]);
    let _ = std::fs::remove_file(&cut);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let line = text[..at].lines().count();
    assert!(
        stderr.contains(&format!("line {line}: the record's JSON does not parse")),
        "{stderr}"
    );
}
