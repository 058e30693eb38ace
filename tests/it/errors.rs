//! Bad input: every failure is an error that names what went wrong and where (line:col,
//! input, dim), never a panic. Library errors go through `check_model_error`, command-line
//! errors through `check_cli_error`.

use crate::models;
use std::path::PathBuf;
use std::process::Command;
use tailor::{Action, CallMarks, CompileConfig, DynamicMode, MarkDynamic, spec};

/// Loads `model` and calls it once with `shapes`; the error (from loading or from the call)
/// must mention every needle. A failed call adds no entry, and a following good call (if
/// given) still compiles.
#[track_caller]
fn check_model_error(
    model: &str,
    shapes: &str,
    marks: &CallMarks,
    needles: &[&str],
    then: Option<&str>,
) {
    let message = match tailor::load(model, None) {
        Err(err) => err.to_string(),
        Ok(mut cache) => {
            let names = cache.entry_point().inputs.clone();
            let call = spec::parse_shapes(shapes, &names).unwrap();
            let config = CompileConfig::default();
            let event = cache.call(0, &config, &call, marks, &|| 0.0).clone();
            assert_eq!(event.action, Action::Error, "{event:?}");
            assert_eq!(event.entry, None);
            assert_eq!(cache.compiles(), 0, "a failed compile adds no entry");
            assert!(cache.entries().is_empty());
            if let Some(good) = then {
                let call = spec::parse_shapes(good, &names).unwrap();
                let next = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
                assert_eq!(next.action, Action::Compile, "{next:?}");
                assert_eq!(cache.compiles(), 1);
            }
            event.error.expect("an error event carries its message")
        }
    };
    for needle in needles {
        assert!(
            crate::mentions(&message, needle),
            "error {message:?} does not mention {needle:?}"
        );
    }
}

/// A path under the system temp dir holding `bytes`, unique to this test.
fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("tailor-it-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs the CLI; it must exit non-zero without panicking, and stderr must mention every
/// needle.
#[track_caller]
fn check_cli_error(args: &[&str], needles: &[&str]) {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "exit 0 for {args:?}; stderr: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "panic for {args:?}: {stderr}");
    assert!(
        stderr.contains("error"),
        "no error message for {args:?}: {stderr}"
    );
    for needle in needles {
        assert!(
            crate::mentions(&stderr, needle),
            "stderr for {args:?} does not mention {needle:?}: {stderr}"
        );
    }
}

/// Runs the CLI with arguments it cannot parse: it must exit with 2 and print exactly
/// `error: {message}` then the usage text on stderr, and nothing on stdout.
#[track_caller]
fn check_usage_error(args: &[&str], message: &str) {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?} printed a report");
    let expected = format!("error: {message}\nusage:\n  tailor run FILE");
    assert!(
        stderr.contains(&expected),
        "stderr for {args:?} is not {message:?} and the usage: {stderr}"
    );
}

fn no_marks() -> CallMarks {
    CallMarks::default()
}

fn mark_dynamic(input: &str, dim: usize, range: Option<(i64, i64)>) -> CallMarks {
    CallMarks {
        dynamic: vec![MarkDynamic {
            input: input.into(),
            dim,
            min: range.map(|r| r.0),
            max: range.map(|r| r.1),
        }],
        ..CallMarks::default()
    }
}

const SIMPLENET_FILE: &str = "models/simplenet.py";

// ---- the model ----

#[test]
fn syntax_error_names_line_and_column() {
    let source = "import torch\n\n\ndef f(x):\n    return x +\n";
    check_model_error(source, "x=4", &no_marks(), &["syntax error", "5:15"], None);
}

#[test]
fn syntax_error_on_the_command_line_shows_the_line() {
    let path = temp_file(
        "syntax.py",
        b"import torch\n\n\ndef f(x):\n    return x +\n",
    );
    let path = path.to_str().unwrap();
    check_cli_error(
        &["run", path, "--call", "x=4"],
        &["syntax error", "5:15", "return x +"],
    );
}

#[test]
fn non_utf8_file_is_rejected() {
    let path = temp_file(
        "latin1.py",
        b"import torch\n\n\ndef f(x):\n    return x + 1  # caf\xe9\n",
    );
    let path = path.to_str().unwrap();
    check_cli_error(&["run", path, "--call", "x=4"], &["UTF-8", path]);
}

#[test]
fn missing_file_is_named() {
    check_cli_error(
        &["run", "no/such/model.py", "--call", "x=4"],
        &["no/such/model.py"],
    );
}

#[test]
fn an_endless_loop_in_forward_is_stopped_by_the_step_budget() {
    let source =
        "import torch\n\n\ndef f(x):\n    while x.shape[0] > 2:\n        pass\n    return x\n";
    check_model_error(
        source,
        "x=4",
        &no_marks(),
        &["endless loop", "200000 lines", "5:11"],
        None,
    );
}

#[test]
fn a_parameter_larger_than_the_runtimes_hold_is_refused_where_it_is_made() {
    // Found by the front-end fuzz target: nn.Linear(1000000, 64000000) allocated its weight
    // (256 TB) when the kernels were built, and the process aborted.
    let source = "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(1000000, 64000000)\n\n    def forward(self, x):\n        return self.fc(x)\n";
    check_model_error(
        source,
        "x=2,1000000",
        &no_marks(),
        &[
            "a tensor of shape [64000000, 1000000] would hold 64000000000000 elements",
            "the memory budget of 8 GiB holds at most 2147483647 per tensor",
            "--memory-budget",
        ],
        None,
    );
}

/// An in-place write inside `forward` that a rebinding cannot make what PyTorch makes is
/// refused at its line, saying what it writes into and what to write instead: an input
/// (PyTorch copies it back into the caller's tensor; also through a view of it) and module
/// state (PyTorch changes it for every later call); reading a tensor written through a view
/// of it (PyTorch's write reaches it, a rebinding does not) is refused where it is read,
/// naming the write.
#[test]
fn an_in_place_write_that_would_escape_the_tensor_is_refused_at_its_line() {
    let cases: [(&str, &[&str]); 4] = [
        (
            "x.add_(1)\n        return x",
            &[
                "Tensor.add_ in forward",
                "the input 'x'",
                "x = x.add(...)",
                "11:9",
            ],
        ),
        (
            "y = x * 2\n        v = y.view(-1)\n        v.mul_(3)\n        return y",
            &[
                "reading a tensor written in place through a view",
                "the write at line 13, col 9",
            ],
        ),
        (
            "y = x.t()\n        y[0] = 1.0\n        return y",
            &[
                "Tensor.__setitem__ in forward",
                "through a view into the input 'x'",
                "12:9",
            ],
        ),
        (
            "self.scale.fill_(2.0)\n        return x * self.scale",
            &["Tensor.fill_ in forward", "'scale'", "11:9"],
        ),
    ];
    for (body, needles) in cases {
        let source = format!(
            "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.register_buffer('scale', torch.ones(3))\n\n    def forward(self, x):\n        {body}\n"
        );
        check_model_error(&source, "x=2,3", &no_marks(), needles, None);
    }
}

#[test]
fn nonzero_is_unsupported() {
    let source = "import torch\n\n\ndef f(x):\n    return torch.nonzero(x)\n";
    check_model_error(source, "x=4", &no_marks(), &["torch.nonzero", "5:12"], None);
}

/// What Tailor's `py/numpy` lacks is an error naming it at its line, where it is used:
/// `np.random` and `np.convolve` while the model is built.
#[test]
fn a_numpy_name_tailors_numpy_lacks_is_named_where_it_is_used() {
    let model = |line: &str| {
        format!(
            "import numpy as np\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    \
             def __init__(self):\n        super().__init__()\n        {line}\n\n    \
             def forward(self, x):\n        return x\n"
        )
    };
    check_model_error(
        &model("self.noise = np.random.randn(4)"),
        "x=4",
        &no_marks(),
        &["numpy.random", "8:22", "not in Tailor's numpy"],
        None,
    );
    check_model_error(
        &model("self.steps = np.convolve(np.arange(4), np.arange(2))"),
        "x=4",
        &no_marks(),
        &["numpy.convolve", "8:22"],
        None,
    );
}

/// A call an op's schema does not take (`frontend::table`) is Python's `TypeError` at its
/// line: an unknown keyword, a missing argument, too many arguments, a repeated one.
#[test]
fn an_op_call_its_schema_refuses_is_a_type_error_at_its_line() {
    let cases: [(&str, &[&str]); 4] = [
        (
            "x.sum(dims=1)",
            &["sum() got an unexpected keyword argument 'dims'", "5:12"],
        ),
        (
            "torch.where(x > 0, x)",
            &["where() missing required argument 'other'", "5:12"],
        ),
        (
            "x.relu(1)",
            &[
                "relu() takes 1 positional arguments but 2 were given",
                "5:12",
            ],
        ),
        (
            "x.tril(0, diagonal=1)",
            &["tril() got multiple values for argument 'diagonal'", "5:12"],
        ),
    ];
    for (expression, needles) in cases {
        let source = format!(
            "import torch


def f(x):
    return {expression}
"
        );
        check_model_error(&source, "x=4,5", &no_marks(), needles, None);
    }
}

/// An unsupported name's error says what to write instead: the supported alternative where
/// one does the same work (an in-place form's out-of-place one), or, for a misspelling, the
/// closest supported name of its group; a name with neither gets no guess.
#[test]
fn an_unsupported_name_names_what_to_write_instead() {
    let cases: [(&str, &[&str]); 6] = [
        ("x.sigmod()", &["Tensor.sigmod", "did you mean x.sigmoid?"]),
        (
            "F.leaky_rellu(x)",
            &[
                "torch.nn.functional.leaky_rellu",
                "did you mean F.leaky_relu?",
            ],
        ),
        (
            "x.numpy()",
            &["Tensor.numpy", "use x.tolist() outside forward"],
        ),
        ("torch.histogramdd(x)", &["torch.histogramdd"]),
        (
            "x.masked_fill_(x > 0, 0.0)",
            &[
                "Tensor.masked_fill_ in forward",
                "the input 'x'",
                "x = x.masked_fill(...)",
            ],
        ),
        (
            "x.unsqueeze_(0)",
            &[
                "Tensor.unsqueeze_",
                "use x = x.unsqueeze(...), its out-of-place form",
            ],
        ),
    ];
    for (expression, needles) in cases {
        let source = format!(
            "import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n    return {expression}\n"
        );
        check_model_error(&source, "x=4,5", &no_marks(), needles, None);
    }
    let source = "import torch\n\n\ndef f(x):\n    return torch.histogramdd(x)\n";
    let message = tailor::load(source, None)
        .ok()
        .and_then(|mut cache| {
            let call = spec::parse_shapes("x=4,5", &["x".to_string()]).ok()?;
            let config = CompileConfig::default();
            cache
                .call(0, &config, &call, &no_marks(), &|| 0.0)
                .error
                .clone()
        })
        .expect("an error");
    assert!(
        !message.contains("did you mean"),
        "no guess far from every name: {message}"
    );
}

/// `tailor supported` lists what the package defines, group by group: layers, functions,
/// methods and operators, from the same package the capture runs.
#[test]
fn the_supported_surface_is_what_the_package_defines() {
    let surface = tailor::frontend::surface_in(tailor::frontend::Vm::fresh()).expect("surface");
    let has = |group: &str, name: &str| surface.groups[group].iter().any(|n| n == name);
    assert!(has("torch.nn", "Conv2d") && has("torch.nn", "MultiheadAttention"));
    assert!(has("torch.nn", "LSTM") && has("torch.nn", "Transformer"));
    assert!(!has("torch.nn", "ConvTranspose3d"));
    assert!(has("torch.nn.functional", "scaled_dot_product_attention"));
    assert!(has("torch", "where") && has("torch", "amin"));
    assert!(has("Tensor", "masked_fill") && has("Tensor", "shape"));
    assert!(has("operators", "x @ y"));
    for names in surface.groups.values() {
        assert!(names.windows(2).all(|w| w[0] < w[1]) || names.iter().any(|n| n.contains(' ')));
    }
}

/// One operation on a huge integer is an OverflowError at its line, never minutes inside one
/// line (which the step budget, counting lines, cannot stop): `**` and `<<` on ints are
/// bounded to results of 2**20 bits; what stays under it computes as ever.
#[test]
fn a_huge_integer_is_an_overflow_error_not_a_hang() {
    for (expression, what) in [
        ("10 ** 2147483648", "int ** int"),
        ("3 ** (2 ** 40)", "int ** int"),
        ("1 << (2 ** 40)", "int << int"),
    ] {
        let source = format!("import torch\n\n\ndef f(x):\n    return x + ({expression})\n");
        check_model_error(
            &source,
            "x=4",
            &no_marks(),
            &[what, "bounds integers to 2**20 bits", "5:17"],
            None,
        );
    }
    let fine = "import torch\n\n\ndef f(x):\n    return x * ((2 ** 1000 + 5) % 7) + (-1) ** (10 ** 30) + (3 << 100) // (1 << 99) + pow(3, 10 ** 30, 7)\n";
    let mut cache = tailor::load(fine, None).expect("loads");
    let call = spec::parse_shapes("x=4", &["x".to_string()]).unwrap();
    let event = cache.call(0, &CompileConfig::default(), &call, &no_marks(), &|| 0.0);
    assert_eq!(event.action, Action::Compile, "{event:?}");
}

#[test]
fn adaptive_max_pool2d_with_indices_is_unsupported() {
    let source = "import torch\nimport torch.nn.functional as F\n\n\ndef f(x):\n    return F.adaptive_max_pool2d(x, (2, 1), return_indices=True)\n";
    check_model_error(
        source,
        "x=1,3,8,8",
        &no_marks(),
        &["adaptive_max_pool2d with return_indices", "6:12"],
        None,
    );
}

#[test]
fn log_softmax_with_a_dtype_is_unsupported() {
    let source = "import torch\n\n\ndef f(x):\n    return x.log_softmax(-1, dtype=torch.float32)\n";
    check_model_error(
        source,
        "x=4,5",
        &no_marks(),
        &["log_softmax with a dtype", "5:12"],
        None,
    );
}

#[test]
fn linear_with_one_argument_names_the_missing_one() {
    let source = models::LINEAR_64_32.replace("nn.Linear(64, 32)", "nn.Linear(64)");
    check_model_error(
        &source,
        "x=8,64",
        &no_marks(),
        &["out_features", "8:19"],
        None,
    );
}

#[test]
fn wrong_feature_size_is_a_call_error_and_later_calls_compile() {
    check_model_error(
        models::SIMPLENET,
        "x=8,32",
        &no_marks(),
        &["32", "64", "18:16"],
        Some("x=8,64"),
    );
}

#[test]
fn mark_dynamic_on_a_dim_the_linear_pins_is_a_constraint_violation() {
    check_model_error(
        models::SIMPLENET,
        "x=8,64",
        &mark_dynamic("x", 1, None),
        &[
            "ConstraintViolationError",
            "You marked L['x'].size()[1] as dynamic but your code specialized it to be a constant (64)",
        ],
        Some("x=8,64"),
    );
}

#[test]
fn mark_dynamic_on_a_dim_a_branch_specializes_is_a_constraint_violation() {
    check_model_error(
        models::SPECIALIZE,
        "x=10",
        &mark_dynamic("x", 0, None),
        &[
            "ConstraintViolationError",
            "L['x'].size()[0]",
            "constant (10)",
        ],
        Some("x=10"),
    );
}

#[test]
fn marked_input_outside_its_declared_range() {
    check_model_error(
        models::ADD_ONE,
        "x=600",
        &mark_dynamic("x", 0, Some((2, 512))),
        &["600 not in range [2, 512]"],
        Some("x=600"),
    );
}

#[test]
fn explain_reports_a_call_error() {
    let err = tailor::explain(models::SIMPLENET, "x=8,32", &tailor::Options::default())
        .unwrap_err()
        .to_string();
    assert!(crate::mentions(&err, "18:16"), "{err}");
    let err = tailor::explain_text("def f(x):\n    return x +\n", "x=4").unwrap_err();
    assert!(crate::mentions(&err, "2:15"), "{err}");
}

// ---- sizes ----

#[test]
fn zero_size_compiles_and_is_specialized() {
    for dynamic in [DynamicMode::Auto, DynamicMode::True, DynamicMode::False] {
        let mut cache = tailor::load(models::SIMPLENET, None).unwrap();
        let call = spec::parse_shapes("x=0,64", &cache.entry_point().inputs).unwrap();
        let config = CompileConfig {
            dynamic,
            ..CompileConfig::default()
        };
        let event = cache.call(0, &config, &call, &no_marks(), &|| 0.0);
        assert_eq!(event.action, Action::Compile, "{dynamic:?}: {event:?}");
        let guards = cache.entries()[0].guards.source_lines();
        assert!(
            guards[0].contains("size=[0, 64]"),
            "{dynamic:?}: {guards:?}"
        );
    }
}

#[test]
fn zero_size_runs_on_the_command_line() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(["run", SIMPLENET_FILE, "--call", "x=0,64", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["calls"][0]["action"], "compile");
    assert_eq!(
        report["entries"][0]["inputs"]["x"],
        serde_json::json!([0, 64])
    );
}

#[test]
fn negative_size_is_rejected() {
    check_cli_error(
        &["run", SIMPLENET_FILE, "--call", "x=-1,64"],
        &["x=-1,64", "-1"],
    );
}

#[test]
fn huge_size_is_rejected_naming_the_input() {
    check_cli_error(
        &["run", SIMPLENET_FILE, "--call", "x=10000000000,64"],
        &["'x'", "10000000000"],
    );
}

#[test]
fn size_past_i64_is_rejected() {
    check_cli_error(
        &["run", SIMPLENET_FILE, "--call", "x=99999999999999999999,64"],
        &["99999999999999999999"],
    );
}

#[test]
fn huge_size_compiles_symbolically_without_panicking() {
    // The compiler itself never allocates the tensor: only the CLI's CPU run refuses it.
    for dynamic in [DynamicMode::Auto, DynamicMode::True] {
        let options = tailor::Options {
            config: CompileConfig {
                dynamic,
                ..CompileConfig::default()
            },
            ..tailor::Options::default()
        };
        let trace = tailor::explain(models::SIMPLENET, "x=10000000000,64", &options);
        assert!(trace.is_ok(), "{dynamic:?}: {trace:?}");
    }
}

// ---- the command line ----

#[test]
fn unknown_flag() {
    check_cli_error(
        &["run", SIMPLENET_FILE, "--bogus", "--call", "x=8,64"],
        &["--bogus"],
    );
}

#[test]
fn missing_call() {
    check_cli_error(&["run", SIMPLENET_FILE], &["--call"]);
}

#[test]
fn missing_input_for_explain() {
    check_cli_error(&["explain", SIMPLENET_FILE], &["--input"]);
}

#[test]
fn unknown_command() {
    check_cli_error(&["compile", SIMPLENET_FILE], &["compile"]);
}

#[test]
fn bad_dynamic_mode() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--dynamic",
            "maybe",
            "--call",
            "x=8,64",
        ],
        &["maybe"],
    );
}

#[test]
fn bad_recompile_limit() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--recompile-limit",
            "-1",
            "--call",
            "x=8,64",
        ],
        &["--recompile-limit", "-1"],
    );
}

#[test]
fn size_that_is_not_a_number() {
    check_cli_error(
        &["run", SIMPLENET_FILE, "--call", "x=8,a"],
        &["x=8,a", "'a'"],
    );
}

#[test]
fn shapes_without_a_name() {
    check_cli_error(&["run", SIMPLENET_FILE, "--call", "8,64"], &["8,64"]);
}

#[test]
fn unknown_input_name() {
    check_cli_error(&["run", SIMPLENET_FILE, "--call", "y=8,64"], &["'y'", "x"]);
}

#[test]
fn missing_input() {
    let path = temp_file("two_inputs.py", models::ADD_XY.as_bytes());
    let path = path.to_str().unwrap();
    check_cli_error(&["run", path, "--call", "x=3"], &["'y'"]);
}

#[test]
fn mark_on_a_dim_past_the_rank() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--mark-dynamic",
            "x:2",
            "--call",
            "x=8,64",
        ],
        &["'x'", "dim 2"],
    );
}

#[test]
fn mark_static_on_a_dim_past_the_rank() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--mark-static",
            "x:5",
            "--call",
            "x=8,64",
        ],
        &["'x'", "dim 5"],
    );
}

#[test]
fn malformed_mark() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--mark-dynamic",
            "x",
            "--call",
            "x=8,64",
        ],
        &["mark", "'x'"],
    );
}

#[test]
fn mark_with_max_below_min() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--mark-dynamic",
            "x:0:512:2",
            "--call",
            "x=8,64",
        ],
        &["x:0:512:2", "MAX"],
    );
}

#[test]
fn mark_on_an_unknown_input() {
    check_cli_error(
        &[
            "run",
            SIMPLENET_FILE,
            "--mark-dynamic",
            "z:0",
            "--call",
            "x=8,64",
        ],
        &["'z'"],
    );
}

#[test]
fn flag_without_its_value() {
    check_cli_error(&["run", SIMPLENET_FILE, "--call"], &["--call"]);
}

/// A model class whose constructor needs arguments: the error is at the class, and says
/// how the file can build it.
#[test]
fn a_class_that_needs_constructor_arguments_says_how_to_build_it() {
    let model = "import math\nimport torch\nimport torch.nn as nn\n\n\nclass Transformer(nn.Module):\n    def __init__(self, dim, depth=2):\n        super().__init__()\n        self.proj = nn.Linear(dim, dim)\n\n    def forward(self, x):\n        return self.proj(x)\n";
    check_model_error(
        model,
        "x=2,16",
        &no_marks(),
        &[
            "line 6, col 1",
            "missing 1 required positional argument: 'dim'",
            "`model = Transformer(...)`",
        ],
        None,
    );
}

#[test]
fn unknown_entry() {
    check_cli_error(
        &["run", SIMPLENET_FILE, "--entry", "Nope", "--call", "x=8,64"],
        &["Nope"],
    );
}

#[test]
fn usage_errors_exit_with_2_and_the_usage() {
    let run = |flags: &[&'static str]| [&["run", SIMPLENET_FILE], flags].concat();
    let explain = |flags: &[&'static str]| [&["explain", SIMPLENET_FILE], flags].concat();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["compile"],
            "unknown command 'compile' (expected run, explain, script, compare, bench or supported)",
        ),
        (vec!["run"], "missing FILE"),
        (vec!["run", "--call", "x=8,64"], "missing FILE"),
        (
            run(&[]),
            "run needs at least one --call SHAPES (or --inputs FILE)",
        ),
        (
            run(&["--inputs", "i.safetensors", "--call", "x=8,64"]),
            "--inputs gives the call: run takes it or --call, not both",
        ),
        (
            run(&["--call", "x=8,64", "--call", "x=4,64", "--outputs", "o.st"]),
            "--outputs needs exactly one call",
        ),
        (
            explain(&["--input", "x=8,64", "--weights", "w.safetensors"]),
            "unknown flag '--weights' for 'explain'",
        ),
        (explain(&[]), "explain needs exactly one --input SHAPES"),
        (
            explain(&["--input", "x=8,64", "--input", "x=4,64"]),
            "explain needs exactly one --input SHAPES",
        ),
        (
            run(&["extra", "--call", "x=8,64"]),
            "unexpected argument 'extra'",
        ),
        (run(&["--bogus"]), "unknown flag '--bogus' for 'run'"),
        (run(&["-x"]), "unknown flag '-x' for 'run'"),
        (
            run(&["--input", "x=8,64"]),
            "unknown flag '--input' for 'run'",
        ),
        (
            explain(&["--call", "x=8,64"]),
            "unknown flag '--call' for 'explain'",
        ),
        (
            explain(&["--check"]),
            "unknown flag '--check' for 'explain'",
        ),
        (run(&["--json=1"]), "unknown flag '--json=1' for 'run'"),
        (run(&["--call"]), "--call needs a value"),
        (run(&["--entry"]), "--entry needs a value"),
        (run(&["--dynamic"]), "--dynamic needs a value"),
        (run(&["--mark-dynamic"]), "--mark-dynamic needs a value"),
        (run(&["--mark-static"]), "--mark-static needs a value"),
        (run(&["--device"]), "--device needs a value"),
        (
            run(&["--recompile-limit"]),
            "--recompile-limit needs a value",
        ),
        (explain(&["--input"]), "--input needs a value"),
        (
            run(&["--dynamic", "maybe"]),
            "unknown dynamic mode 'maybe' (expected auto, true or false)",
        ),
        (
            run(&["--recompile-limit", "x"]),
            "--recompile-limit needs a non-negative integer, got 'x'",
        ),
        (
            run(&["--recompile-limit", "-1"]),
            "--recompile-limit needs a non-negative integer, got '-1'",
        ),
        (
            run(&["--device", "tpu"]),
            "--device must be auto, gpu or cpu, got 'tpu'",
        ),
        (
            vec!["bench", "--rounds"],
            "--rounds needs a positive integer",
        ),
        (
            vec!["bench", "--rounds", "x"],
            "--rounds needs a positive integer",
        ),
        (
            vec!["bench", "--bogus"],
            "unknown flag '--bogus' for 'bench'",
        ),
        (vec!["bench", "extra"], "unknown flag 'extra' for 'bench'"),
        (
            vec!["bench", "--json=1"],
            "unknown flag '--json=1' for 'bench'",
        ),
    ];
    for (args, message) in cases {
        check_usage_error(&args, message);
    }
}

#[test]
fn no_arguments_prints_the_usage_and_exits_with_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor")).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("usage:\n  tailor run FILE"));
}

#[test]
fn unreadable_file_exits_with_2_without_the_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(["run", "no/such/model.py", "--call", "x=4"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: cannot read no/such/model.py: "),
        "{stderr}"
    );
    assert!(!stderr.contains("usage:"), "{stderr}");
}

#[test]
fn model_error_exits_with_1_and_a_caret_under_the_column() {
    let path = temp_file("caret.py", b"import torch\n\n\ndef f(x):\n    return x +\n");
    let path = path.to_str().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args(["run", path, "--call", "x=4"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.ends_with("\n        return x +\n                  ^\n"),
        "{stderr:?}"
    );
}

/// The static schedule of `source` compiled for `shapes`.
fn cpu_schedule(source: &str, shapes: &str) -> tailor::lower::Schedule {
    let compiled = crate::kernels::compile(source, shapes, DynamicMode::False);
    compiled.schedule
}

#[test]
fn a_tensor_shorter_than_its_shape_is_an_out_of_bounds_error() {
    let schedule = cpu_schedule(models::SIMPLENET, "x=8,64");
    let short = tailor::graph::Tensor {
        shape: vec![8, 64],
        data: vec![0.5; 100],
    };
    let err = tailor::runtime::cpu::run(&schedule, &[short], &[]).expect_err("the data is short");
    assert!(
        matches!(err, tailor::runtime::RunError::OutOfBounds { ref buffer, .. } if buffer == "in0"),
        "{err}"
    );
}

#[test]
fn a_call_past_the_memory_budget_is_refused_before_allocation() {
    // Two outputs of 1.6 * 10^9 elements: each loop within what WGSL indexes, 12.8 GB
    // together, past the default budget of 8 GiB.
    let outer =
        "import torch\n\ndef f(x):\n    o = x.unsqueeze(1) * x.unsqueeze(0)\n    return o, o + 1\n";
    let schedule = cpu_schedule(outer, "x=40000");
    let x = tailor::graph::Tensor {
        shape: vec![40000],
        data: vec![1.0; 40000],
    };
    let err = tailor::runtime::cpu::run(&schedule, &[x], &[]).expect_err("11.9 GiB of buffers");
    let message = err.to_string();
    assert!(message.contains("would take 11.9 GiB"), "{message}");
    assert!(message.contains("alone 6.0 GiB"), "{message}");
    assert!(message.contains("memory budget of 8 GiB"), "{message}");
}

/// An embedding of float ids is PyTorch's RuntimeError at the call's line:col, and the same
/// model compiles with int64 ids (`idx=2,5:int64`); a dtype the grammar lacks names itself.
#[test]
fn float_ids_for_an_embedding_are_pytorchs_error() {
    let source = "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.emb = nn.Embedding(10, 4)\n\n    def forward(self, idx):\n        return self.emb(idx)\n";
    check_model_error(
        source,
        "idx=2,5",
        &no_marks(),
        &[
            "Expected tensor for argument #1 'indices'",
            "torch.FloatTensor",
            "line 11",
        ],
        Some("idx=2,5:int64"),
    );
    let names = ["idx".to_string()];
    let message = spec::parse_shapes("idx=2,5:int16", &names)
        .expect_err("int16 is not a dtype Tailor has")
        .to_string();
    assert!(message.contains("'int16' is not a dtype"), "{message}");
    let call = spec::parse_shapes("idx=2,5:long", &names).unwrap();
    assert_eq!(call.to_spec(), "idx=2,5:int64");
}

/// Runs `source` (a file defining `f`) through the CLI on the CPU with `call`; the run
/// must fail cleanly (no panic, exit 1) and mention every needle.
#[track_caller]
fn check_cli_run_error(name: &str, source: &str, call: &str, needles: &[&str]) {
    let path = temp_file(name, source.as_bytes());
    let path = path.to_string_lossy().into_owned();
    check_cli_error(
        &[
            "run", &path, "--entry", "f", "--call", call, "--device", "cpu",
        ],
        needles,
    );
}

/// Runs `source` (a file defining `f`) through the CLI on the CPU with `call`, checking
/// its outputs against the reference (`--check`); it must succeed. Returns the report.
#[track_caller]
fn check_cli_run(name: &str, source: &str, call: &str) -> String {
    let path = temp_file(name, source.as_bytes());
    let output = Command::new(env!("CARGO_BIN_EXE_tailor"))
        .args([
            "run",
            &path.to_string_lossy(),
            "--entry",
            "f",
            "--call",
            call,
        ])
        .args(["--device", "cpu", "--check"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{name}: {stdout}");
    stdout
}

#[test]
fn a_loop_that_traces_without_end_stops_at_the_graph_limit() {
    // Naming a node is constant time, so the 20,000 ops come in a second or two; the
    // step budget (200,000 lines) would have taken far longer.
    let source = "import torch\n\n\ndef f(x):\n    while True:\n        x = x + 1\n    return x\n";
    check_model_error(
        source,
        "x=2,3",
        &no_marks(),
        &["grew past 20000 ops", "6:13"],
        None,
    );
}

#[test]
fn a_long_chain_of_ops_compiles_and_runs() {
    // 3,000 additions: built in linear time, fused 64 to a kernel (Inductor's
    // max_fusion_size), so neither code generation nor the CPU backend recurse 3,000 deep.
    let source =
        "import torch\n\n\ndef f(x):\n    for i in range(3000):\n        x = x + 1\n    return x\n";
    let stdout = check_cli_run("chain.py", source, "x=2,3");
    assert!(
        stdout.contains("output [2, 3]  max_abs_err 0.000e0"),
        "{stdout}"
    );
}

#[test]
fn code_the_model_compiles_counts_towards_the_step_budget() {
    let source = "import torch\n\n\ndef f(x):\n    exec('while True: pass')\n    return x\n";
    check_model_error(source, "x=2", &no_marks(), &["200000 lines", "5:5"], None);
}

#[test]
fn a_statement_nested_too_deeply_is_refused_at_its_line() {
    let sum = vec!["1"; 100_000].join("+");
    let chained = format!("import torch\n\n\ndef f(x):\n    y = {sum}\n    return x + y\n");
    check_model_error(
        &chained,
        "x=2",
        &no_marks(),
        &["5:1", "nests about 1001 levels deep"],
        None,
    );
    let negated = format!(
        "import torch\n\n\ndef f(x):\n    return x + {}1\n",
        "-".repeat(200_000)
    );
    check_model_error(&negated, "x=2", &no_marks(), &["5:1", "at most 1000"], None);
    // Past what RustPython's compiler nests, short of Tailor's estimate: the compiler's
    // refusal, at the statement's line rather than the file's first.
    let sum = vec!["1"; 500].join("+");
    let deep = format!("import torch\n\n\ndef f(x):\n    y = {sum}\n    return x + y\n");
    check_model_error(&deep, "x=2", &no_marks(), &["5:9", "recursion"], None);
}

#[test]
fn a_kernel_over_a_huge_broadcast_view_is_refused_before_it_runs() {
    check_cli_run_error(
        "expand_sum.py",
        "import torch\n\n\ndef f(x):\n    return x.expand(2**40, 2**20, -1).sum()\n",
        "x=1,1,3",
        &[
            "k0_sum (sum) would iterate over",
            "at most 68719476736 steps",
        ],
    );
    check_cli_run_error(
        "expand_matmul.py",
        "import torch\n\n\ndef f(x):\n    return x.expand(1, 2**40) @ x.expand(2**40, 1)\n",
        "x=1,1",
        &["(matmul) would iterate over"],
    );
}

#[test]
fn a_reduction_of_a_0d_tensor_is_the_tensor_itself() {
    // PyTorch reduces a 0-d tensor over dim 0 or -1 (keepdim or not) to 0-d; lowering once
    // panicked on it.
    let source = "import torch\n\n\ndef f(t):\n    a = t[0]\n    return a.sum(0), a.sum(-1, keepdim=True), a.amax(0), a.softmax(0), a.log_softmax(-1)\n";
    let stdout = check_cli_run("zero_d.py", source, "t=3");
    assert!(
        stdout.contains("output [], [], [], [], []  max_abs_err 0.000e0"),
        "{stdout}"
    );
}

#[test]
fn a_name_whose_assignment_was_skipped_says_why() {
    let source = "import torch\nN = 10**2147483648\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x * N\n";
    check_model_error(
        source,
        "x=2",
        &no_marks(),
        &[
            "7:20",
            "name 'N' is not defined",
            "its assignment at line 2, col 1 was skipped",
            "OverflowError",
        ],
        None,
    );
}

#[test]
fn errors_after_a_frame_ended_point_at_its_definition() {
    // Python checks `__init__`'s return value after its frame ended, and forward's return
    // value is read after forward's: neither has a line of the file, so the class's or
    // forward's `def` stands for it rather than `import torch` on line 1.
    let constructor = "import torch\n\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        return 5\n\n    def forward(self, x):\n        return x\n";
    check_model_error(
        constructor,
        "x=2",
        &no_marks(),
        &["4:1", "__init__() should return None"],
        None,
    );
    let returned = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return int\n";
    check_model_error(
        returned,
        "x=2",
        &no_marks(),
        &["5:1", "returning a type from forward"],
        None,
    );
}

#[test]
fn a_long_file_keeps_its_line_numbers() {
    // Each top-level statement compiles on its own, its code's lines moved to the file's
    // (once padded with blank lines, which cost N² for N statements).
    let mut source = String::from("import torch\n");
    for i in 0..3000 {
        source.push_str(&format!("x{i} = {i}\n"));
    }
    source.push_str("N = 1 // 0\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        y = x * x2999\n        return y * N\n");
    check_model_error(
        &source,
        "x=2",
        &no_marks(),
        &[
            "3008:20",
            "its assignment at line 3002, col 1 was skipped",
            "ZeroDivisionError",
        ],
        None,
    );
}
