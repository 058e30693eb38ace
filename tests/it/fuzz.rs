//! Fuzzing on stable Rust, for the parts a learner's text reaches: the symbolic parser and
//! simplifier (exercise answers go through them), the shape-spec and mark grammars, the
//! guard cache over random call sequences with the CPU backend running every call, and the
//! front end capturing mutated model files.
//!
//! This machine has no nightly toolchain, so no `cargo fuzz`: proptest generates inputs (from
//! each target's grammar, and by mutating the corpus) and shrinks a failure to a small one; a
//! watchdog turns a hang into a failure that names its input. Each target runs for
//! `TAILOR_FUZZ_SECONDS` (default 2: what CI runs; a long run sets it to hundreds) from
//! `TAILOR_FUZZ_SEED` (default: a fixed seed, so CI runs the same inputs each time; `clock`
//! for new ones; printed, so a failure can be replayed). The corpus
//! under `tests/data/fuzz/` runs first, every time: seeds, and each failure found so far as
//! a regression case.
//!
//! Invariant: a target fails only on a panic, a hang or a broken round trip, never on an
//! error returned for bad input, which is the right answer to it.

use crate::models;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::fmt::Debug;
use std::io::Write;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tailor::config::{CallMarks, CompileConfig, DynamicMode, MarkDynamic};
use tailor::graph::DType;
use tailor::guard::{ArgValue, CallShapes};
use tailor::quiz::{Difficulty, ExerciseKind};
use tailor::session::executor::{self, Backend, Executor, RunOptions};
use tailor::spec;
use tailor::symbolic::{Bindings, Expr, Rel, Sym, ValueRange};

/// An input that takes longer than this is a hang.
const HANG: Duration = Duration::from_secs(60);

/// Seconds each target runs for.
fn budget() -> Duration {
    let seconds = std::env::var("TAILOR_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(seconds)
}

/// The run's seed: `TAILOR_FUZZ_SEED` (a number, or `clock` for a new one each run), else a
/// fixed one, so that the short run of the test command is the same every time and a long
/// run explores.
fn seed() -> u64 {
    match std::env::var("TAILOR_FUZZ_SEED").ok().as_deref() {
        Some("clock") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
        Some(number) => number
            .parse()
            .unwrap_or_else(|_| panic!("TAILOR_FUZZ_SEED={number}: a number or clock")),
        None => 0x7a11_0f22,
    }
}

/// Aborts the process, naming the input, when one case runs longer than [`HANG`]: a hung
/// test cannot be stopped any other way, and CI must end with a reason. Where Linux says
/// how much CPU the fuzzing thread used (`/proc`), that is what counts: a case that spins
/// trips it, a machine that stalls the thread (another build on both cores) does not.
struct Watchdog {
    progress: Arc<AtomicU64>,
    current: Arc<Mutex<String>>,
    done: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(target: &'static str) -> Watchdog {
        let watchdog = Watchdog {
            progress: Arc::new(AtomicU64::new(0)),
            current: Arc::new(Mutex::new(String::new())),
            done: Arc::new(AtomicBool::new(false)),
        };
        let (progress, current, done) = (
            Arc::clone(&watchdog.progress),
            Arc::clone(&watchdog.current),
            Arc::clone(&watchdog.done),
        );
        // The fuzzing thread is this one: its CPU clock, read from the watchdog's thread.
        let worker = this_thread_id();
        let clock = move || {
            worker
                .and_then(thread_cpu_time)
                .unwrap_or_else(|| started_at().elapsed())
        };
        std::thread::spawn(move || {
            let (mut seen, mut since) = (0, clock());
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let now = progress.load(Ordering::Relaxed);
                if now != seen {
                    (seen, since) = (now, clock());
                } else if clock().saturating_sub(since) > HANG {
                    let input = current.lock().map(|s| s.clone()).unwrap_or_default();
                    // Straight to stderr: the test harness's capture would lose it.
                    let _ = writeln!(
                        std::io::stderr(),
                        "fuzz {target}: hang (over {HANG:?}) on input:\n{input}"
                    );
                    std::process::abort();
                }
            }
        });
        watchdog
    }

    fn case(&self, input: &dyn Debug) {
        if let Ok(mut current) = self.current.lock() {
            *current = format!("{input:?}");
        }
        self.progress.fetch_add(1, Ordering::Relaxed);
    }
}

/// A fixed instant, for the wall clock where no CPU clock can be read.
fn started_at() -> Instant {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// The calling thread's id as Linux numbers it (`/proc/thread-self/stat`'s first field).
fn this_thread_id() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// The CPU time thread `tid` of this process has used: user plus system time from
/// `/proc/self/task/TID/stat` (fields 14 and 15, in USER_HZ ticks of 1/100 s).
fn thread_cpu_time(tid: u64) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields count after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some(Duration::from_millis((ticks(14)? + ticks(15)?) * 10))
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

/// Runs `check` on the corpus, then on inputs from `strategy` until the budget is spent.
/// A panic or an `Err` fails the target with the smallest input proptest shrank it to.
fn fuzz<T: Debug + Clone>(
    target: &'static str,
    corpus: Vec<T>,
    strategy: impl Strategy<Value = T>,
    check: impl Fn(&T) -> Result<(), String>,
) {
    let watchdog = Watchdog::start(target);
    for input in &corpus {
        watchdog.case(input);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(input)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(why)) => panic!("fuzz {target}: corpus input {input:?}: {why}"),
            Err(_) => panic!("fuzz {target}: corpus input {input:?} panicked"),
        }
    }
    let seed = seed();
    // Straight to stderr, so a run that aborts still says how to replay it.
    let _ = writeln!(
        std::io::stderr(),
        "fuzz {target}: seed {seed} (TAILOR_FUZZ_SEED), budget {:?}",
        budget()
    );
    let config = Config {
        cases: 16,
        failure_persistence: None,
        // Each failing case prints a panic (with a backtrace where RUST_BACKTRACE asks), so
        // shrinking is bounded well inside the watchdog's limit.
        max_shrink_iters: 400,
        max_shrink_time: 20_000,
        ..Config::default()
    };
    let deadline = Instant::now() + budget();
    let mut cases = corpus.len();
    // A fresh runner per batch of cases: one runner kept across many `run`s slows down
    // (proptest keeps state between them), and a batch's seed is enough to replay it.
    for batch in 0u64.. {
        if Instant::now() >= deadline {
            break;
        }
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        bytes[8..16].copy_from_slice(&batch.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        let mut runner = TestRunner::new_with_rng(config.clone(), rng);
        let result = runner.run(&strategy, |input| {
            watchdog.case(&input);
            check(&input).map_err(TestCaseError::fail)
        });
        match result {
            Ok(()) => cases += 16,
            Err(TestError::Fail(why, input)) => panic!(
                "fuzz {target} (seed {seed}, batch {batch}): {why}\nsmallest failing input: {input:?}\nadd it to the corpus once fixed"
            ),
            Err(TestError::Abort(why)) => {
                panic!("fuzz {target} (seed {seed}, batch {batch}): aborted: {why}")
            }
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "fuzz {target}: {cases} inputs, no failure"
    );
}

/// The lines of `tests/data/fuzz/{name}`, without blank lines and `#` comments.
fn corpus_lines(name: &str) -> Vec<String> {
    let path = format!("{}/tests/data/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{path}: {err}"))
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Text made of `tokens`, a few to a few dozen of them.
fn token_text(tokens: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(tokens), 0..24).prop_map(|parts| parts.concat())
}

const EXPR_TOKENS: &[&str] = &[
    "s0",
    "s1",
    "s2",
    "s9",
    "s12",
    "0",
    "1",
    "2",
    "3",
    "7",
    "16",
    "-1",
    "-4",
    "64",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999",
    "+",
    "-",
    "*",
    "//",
    "%",
    "**",
    "/",
    "(",
    ")",
    "Min(",
    "Max(",
    "Mod(",
    "FloorDiv(",
    ",",
    " ",
    "<",
    "<=",
    "==",
    "!=",
    ">",
    ">=",
    "x",
    "L['x'].size()[0]",
    "int_oo",
    ".",
    "_",
    "(s0 - 3)//2 + 1",
];

/// An expression's value under `bindings`, through every evaluator the pipeline uses.
fn evaluate(expr: &Expr, bindings: &Bindings) {
    let _ = expr.eval(bindings);
    let _ = expr.bounds(&|_| ValueRange::new(Some(2), None));
    let _ = expr.to_string();
}

/// Parsing, printing and simplification: printed forms parse back to the same expression,
/// and nothing panics on any text.
#[test]
fn symbolic_text() {
    let bindings: Bindings = (0..16)
        .map(|i| (Sym(i), i64::from(i % 5) * 7 - 3))
        .collect();
    fuzz(
        "symbolic",
        corpus_lines("symbolic.txt"),
        token_text(EXPR_TOKENS),
        |text| {
            if let Ok(expr) = text.parse::<Expr>() {
                evaluate(&expr, &bindings);
                if !expr.is_overflow() {
                    let printed = expr.to_string();
                    let again: Expr = printed.parse().map_err(|err| {
                        format!("{text:?} printed as {printed:?}, which does not parse: {err}")
                    })?;
                    if again != expr {
                        return Err(format!(
                            "{text:?} printed as {printed:?}, which parses to {again}"
                        ));
                    }
                }
            }
            if let Ok(rel) = text.parse::<Rel>() {
                let _ = rel
                    .simplify()
                    .decide_by_ranges(&|_| ValueRange::new(Some(2), None));
                let _ = rel.to_string().parse::<Rel>();
            }
            Ok(())
        },
    );
}

/// Every exercise kind graded against random answers: learners type anything.
#[test]
fn exercise_answers() {
    let answer = (
        0..ExerciseKind::ALL.len(),
        0u32..64,
        0..Difficulty::ALL.len(),
        token_text(EXPR_TOKENS),
    );
    fuzz(
        "exercise",
        Vec::new(),
        answer,
        |(kind, seed, level, text)| {
            let _ = tailor::quiz::grade(
                ExerciseKind::ALL[*kind],
                *seed,
                Difficulty::ALL[*level],
                text,
            );
            Ok(())
        },
    );
}

const SPEC_TOKENS: &[&str] = &[
    "x",
    "y",
    "n",
    "flag",
    "=",
    ",",
    ";",
    ":",
    "int(",
    ")",
    "True",
    "False",
    "-1",
    "0",
    "1",
    "2",
    "8",
    "64",
    "100000",
    "2147483648",
    "9223372036854775807",
    "99999999999999999999",
    " ",
    "static",
    "inf",
    "None",
    "x=8,64",
    "n=int(3)",
    "1.5",
    "(",
    "[",
];

/// The shape and mark grammars of the CLI and the page: a parsed call prints back to
/// itself, and nothing panics on any text.
#[test]
fn spec_text() {
    let names: Vec<String> = ["x", "y", "n", "flag"].map(String::from).to_vec();
    fuzz(
        "spec",
        corpus_lines("spec.txt"),
        token_text(SPEC_TOKENS),
        |text| {
            if let Ok(call) = spec::parse_shapes(text, &names) {
                let printed = call.to_spec();
                let again = spec::parse_shapes(&printed, &names)
                    .map_err(|err| format!("{text:?} printed as {printed:?}: {err}"))?;
                if again != call {
                    return Err(format!(
                        "{text:?} printed as {printed:?}, which parses to {again:?}"
                    ));
                }
            }
            let _ = spec::parse_mark(text, &names);
            let _ = spec::parse_static_mark(text, &names);
            Ok(())
        },
    );
}

/// A program's inputs: each one's name and rank (a rank of `None` is an int argument).
type Inputs = &'static [(&'static str, Option<usize>)];

/// A function of a tensor and an int that slices, scales and reshapes by the int.
const SLICE_BY_INT: &str = "\
import torch


def f(x, n):
    return (x[:n] * n).reshape(-1, 2)
";

/// A function with three graph breaks: a print, a branch on a value, and `.item()`'s float
/// (a resume argument, symbolic once it changes).
const BREAKS: &str = "\
import torch


def f(x):
    y = x.relu()
    print(y.shape)
    if y.sum() > 1:
        y = y * 2
    s = y.mean().item()
    return y - s
";

/// Programs of the cache target.
const PROGRAMS: &[(&str, Inputs)] = &[
    (SLICE_BY_INT, &[("x", Some(2)), ("n", None)]),
    (models::SIMPLENET, &[("x", Some(2))]),
    (models::ADD_ONE, &[("x", Some(2))]),
    (models::VIEW_THEN_ADD, &[("x", Some(2))]),
    (models::SUM_ROWS, &[("x", Some(2))]),
    (models::BRANCH_GT5, &[("x", Some(1))]),
    (models::MATMUL, &[("a", Some(2)), ("b", Some(2))]),
    (models::CONV1D_K5_S2, &[("x", Some(3))]),
    (models::SQUEEZE_DIM1, &[("x", Some(2))]),
    (models::AMAX_DIM0, &[("x", Some(2))]),
    (BREAKS, &[("x", Some(2))]),
];

/// Sizes that find edges: 0/1 specialisation, broadcasting, windows, overflow.
const SIZES: &[i64] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    16,
    63,
    64,
    65,
    128,
    1 << 20,
    1 << 31,
    1 << 40,
    i64::MAX / 2,
    -1,
];

/// One program's call sequence: the mode, a mark, and each call's (rank change, sizes).
#[derive(Clone, Debug)]
struct Sequence {
    program: usize,
    dynamic: usize,
    mark: Option<(usize, Option<i64>, Option<i64>)>,
    calls: Vec<Vec<(i8, Vec<i64>)>>,
}

fn sequences() -> impl Strategy<Value = Sequence> {
    let size = prop::sample::select(SIZES);
    let arg = (
        prop::sample::select(&[0i8, 0, 0, 0, -1, 1][..]),
        prop::collection::vec(size, 4),
    );
    let bound = prop::option::of(prop::sample::select(&[0i64, 2, 4, 16, 100][..]));
    (
        0..PROGRAMS.len(),
        0..3usize,
        prop::option::of((0..3usize, bound.clone(), bound)),
        prop::collection::vec(prop::collection::vec(arg, 2), 1..6),
    )
        .prop_map(|(program, dynamic, mark, calls)| Sequence {
            program,
            dynamic,
            mark,
            calls,
        })
}

/// The call of `args` for `inputs`: each tensor's rank nudged by its rank change, its sizes
/// the first of the drawn ones; an int argument is the first size.
fn call_of(inputs: Inputs, args: &[(i8, Vec<i64>)]) -> CallShapes {
    let values = inputs
        .iter()
        .zip(args)
        .map(|((name, rank), (change, sizes))| {
            let value = match rank {
                Some(rank) => {
                    let rank = (*rank as i64 + i64::from(*change)).clamp(0, 4) as usize;
                    ArgValue::Tensor(sizes[..rank].to_vec(), DType::Float32)
                }
                None => ArgValue::Int(sizes[0]),
            };
            (name.to_string(), value)
        })
        .collect();
    CallShapes::with_args(values)
}

/// The cache target's corpus: each failure found, as a regression case.
fn cache_corpus() -> Vec<Sequence> {
    vec![
        // A negative size reached the random input generator (capacity overflow).
        Sequence {
            program: 1,
            dynamic: 0,
            mark: None,
            calls: vec![vec![(0, vec![1, -1, 0, 0]), (0, vec![0, 0, 0, 0])]],
        },
        // An empty input whose other sizes multiply past usize (x + 1 at 2^62 x 2^62 x 0):
        // the element count overflowed before it reached the 0.
        Sequence {
            program: 2,
            dynamic: 1,
            mark: None,
            calls: vec![vec![
                (1, vec![i64::MAX / 2, i64::MAX / 2, 0, 0]),
                (0, vec![0; 4]),
            ]],
        },
        // A call through graph breaks on a 64 x 1048576 input: forward ran as Python on
        // the CPU reference for over a minute (now refused above PROBE_MAX_ELEMENTS).
        Sequence {
            program: 10,
            dynamic: 1,
            mark: Some((0, None, None)),
            calls: vec![
                vec![
                    (-1, vec![65, -1, -1, 4]),
                    (0, vec![4611686018427387903, -1, 3, 8]),
                ],
                vec![
                    (0, vec![64, 1048576, 1099511627776, 63]),
                    (-1, vec![7, 7, 2147483648, 4]),
                ],
            ],
        },
        // The same program given sizes only, at 1 x 2^31: the values its Python runs on were
        // made before any size check (capacity overflow).
        Sequence {
            program: 10,
            dynamic: 0,
            mark: None,
            calls: vec![vec![
                (0, vec![1, 2147483648, 64, 64]),
                (0, vec![0, 65, 4, 2147483648]),
            ]],
        },
    ]
}

/// The guard cache over random call sequences, every compiled or eager call run on the CPU
/// backend: errors are answers, panics and hangs are bugs.
#[test]
fn cache_sequences() {
    let backend = Rc::new(Backend::cpu());
    fuzz("cache", cache_corpus(), sequences(), |sequence| {
        let (source, inputs) = PROGRAMS[sequence.program];
        let mut cache = tailor::load(source, None).map_err(|err| err.to_string())?;
        let config = CompileConfig {
            dynamic: [DynamicMode::Auto, DynamicMode::True, DynamicMode::False][sequence.dynamic],
            recompile_limit: 3,
            ..CompileConfig::default()
        };
        let marks = CallMarks {
            dynamic: sequence
                .mark
                .iter()
                .map(|&(dim, min, max)| MarkDynamic {
                    input: inputs[0].0.to_string(),
                    dim,
                    min,
                    max,
                })
                .collect(),
            ..CallMarks::default()
        };
        let mut executor = Executor::new(Rc::clone(&backend), Rc::new(|| 0.0));
        for (i, args) in sequence.calls.iter().enumerate() {
            let call = call_of(inputs, args);
            if spec::check_marks(&call, &marks.dynamic, &marks.fixed).is_err() {
                continue;
            }
            let event = cache.call(0, &config, &call, &marks, &|| 0.0).clone();
            let Ok(tensors) = executor::call_inputs(&call, Vec::new(), i as u64) else {
                continue;
            };
            if let Ok(job) =
                executor.start_call(&cache, &event, &call, tensors, RunOptions::default())
            {
                let _ = pollster::block_on(executor.execute(job));
            }
        }
        Ok(())
    });
}

/// Edits that turn a working model file into the files learners paste mid-edit.
#[derive(Clone, Debug)]
enum Edit {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    ReplaceNumber(usize, &'static str),
    Insert(usize, &'static str),
    Truncate(usize),
}

const INSERTIONS: &[&str] = &[
    "(",
    ")",
    ":",
    "\n",
    "    ",
    "x",
    "self.",
    ".view(-1)",
    "[0]",
    ".shape[0]",
    " + ",
    " * 2",
    "return x\n",
    "if x.shape[0] > 4:\n",
    "while True:\n    pass\n",
    "import os\n",
    "None",
    "lambda",
    "**",
    "assert x.shape[1] == 3\n",
    "x = x.sum(0)\n",
    "print(x)\n",
    "def ",
    "class A:\n",
    "0",
    "-1",
    "1e9",
    "'s'",
    "nn.Linear(0, 0)",
    ".item()",
    "for i in range(10**9):\n",
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "1000000",
    "2147483648",
    "10**12",
    "0.5",
];

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let position = 0..4096usize;
    let edit = prop_oneof![
        position.clone().prop_map(Edit::DeleteLine),
        position.clone().prop_map(Edit::DuplicateLine),
        (position.clone(), position.clone()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (position.clone(), prop::sample::select(NUMBERS))
            .prop_map(|(p, n)| Edit::ReplaceNumber(p, n)),
        (position.clone(), prop::sample::select(INSERTIONS)).prop_map(|(p, t)| Edit::Insert(p, t)),
        position.prop_map(Edit::Truncate),
    ];
    prop::collection::vec(edit, 1..4)
}

/// `source` with `edit` made (positions wrap around the text, so every edit applies).
fn edited(source: &str, edit: &Edit) -> String {
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    let line = |p: usize| p % lines.len().max(1);
    match edit {
        Edit::DeleteLine(p) if !lines.is_empty() => {
            lines.remove(line(*p));
        }
        Edit::DuplicateLine(p) if !lines.is_empty() => {
            let copy = lines[line(*p)].clone();
            lines.insert(line(*p), copy);
        }
        Edit::SwapLines(a, b) if !lines.is_empty() => {
            let (a, b) = (line(*a), line(*b));
            lines.swap(a, b);
        }
        Edit::ReplaceNumber(p, number) => {
            let text = lines.join("\n");
            let digits: Vec<usize> = text
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            if let Some(&at) = digits.get(p % digits.len().max(1)) {
                let end = text[at..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(text.len(), |n| at + n);
                return format!("{}{number}{}", &text[..at], &text[end..]);
            }
        }
        Edit::Insert(p, inserted) => {
            let text = lines.join("\n");
            let at = (p % (text.len() + 1)..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            return format!("{}{inserted}{}", &text[..at], &text[at..]);
        }
        Edit::Truncate(p) => {
            let text = lines.join("\n");
            let at = (p % (text.len() + 1)..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            return text[..at].to_string();
        }
        _ => {}
    }
    lines.join("\n") + "\n"
}

/// The front end on mutated model files (and the corpus's files): load, then one call at
/// the seed's own sizes; a Python error, an unsupported construct or a bad size is an
/// answer, a panic or a hang is a bug.
#[test]
fn frontend_files() {
    let seeds: Vec<(&str, &str)> = vec![
        (models::SIMPLENET, "x=8,64"),
        (models::SEQUENCE, "x=2,8,16"),
        (models::CONV1D_K5_S2, "x=2,4,32"),
        (models::BRANCH_GT5, "x=8"),
        (models::MATMUL, "a=8,16;b=16,4"),
        (include_str!("../../models/bert_block.py"), "x=2,16,64"),
        (include_str!("../../models/break_net.py"), "x=8,64"),
        (
            include_str!("../data/fuzz/frontend/lifted_views.py"),
            "x=4,6,8",
        ),
    ];
    let capture = |source: &str, shapes: &str| {
        let Ok(mut cache) = tailor::load(source, None) else {
            return;
        };
        let Ok(call) = spec::parse_shapes(shapes, &cache.entry_point().inputs) else {
            return;
        };
        let config = CompileConfig {
            dynamic: DynamicMode::True,
            ..CompileConfig::default()
        };
        cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    };
    for (source, shapes) in &seeds {
        capture(source, shapes);
    }
    for file in std::fs::read_dir(format!(
        "{}/tests/data/fuzz/frontend",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the front end's corpus")
    {
        let path = file.expect("a corpus file").path();
        let source = std::fs::read_to_string(&path).expect("a corpus file reads");
        let shapes = source
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("# shapes: "))
            .unwrap_or_else(|| panic!("{}: the first line is `# shapes: …`", path.display()));
        capture(&source, shapes);
    }
    fuzz(
        "frontend",
        Vec::new(),
        (0..seeds.len(), edits()),
        |(seed, edits)| {
            let (source, shapes) = seeds[*seed];
            let source = edits
                .iter()
                .fold(source.to_string(), |text, edit| edited(&text, edit));
            capture(&source, shapes);
            Ok(())
        },
    );
}
