//! Unit tests of the quiz: the question file against the material, every demo against the
//! claim its explanation makes, and every exercise kind over many seeds.
//!
//! Invariant: demos and exercises are checked by running the compiler, the same way the page
//! runs them; nothing here restates an expected compile count without running it.

use super::exercise::first_accepted;
use super::text::MESSAGES;
use super::*;
use crate::cache::Action;
use crate::config::DynamicMode;
use expect_test::{Expect, expect};

// ---------------------------------------------------------------------------------------
// The material's questions
// ---------------------------------------------------------------------------------------

/// One interview question as the material prints it.
struct MaterialQuestion {
    id: &'static str,
    choice: QuestionChoice,
    difficulty: &'static str,
    key: &'static [&'static str],
    options: [&'static str; 4],
}

/// The material's questions as printed there: the file must keep exactly these options,
/// choice kinds and levels, and record the material's key.
const MATERIAL: [MaterialQuestion; 10] = [
    MaterialQuestion {
        id: "q1",
        choice: QuestionChoice::Single,
        difficulty: "easy",
        key: &["B"],
        options: [
            "dynamic 参数默认值为 True",
            "dynamic 参数默认值为 False",
            "dynamic 参数默认值为 None",
            "dynamic 参数默认值为 auto",
        ],
    },
    MaterialQuestion {
        id: "q2",
        choice: QuestionChoice::Single,
        difficulty: "easy",
        key: &["B"],
        options: [
            "降低模型的推理精度损失",
            "避免为每种输入尺寸重新编译",
            "减少模型参数量以节省显存",
            "提高模型在训练时的收敛速度",
        ],
    },
    MaterialQuestion {
        id: "q3",
        choice: QuestionChoice::Single,
        difficulty: "mid",
        key: &["B"],
        options: [
            "用具体整型常量表示全部维度",
            "用符号变量 s0、s1 表示可变维度",
            "用浮点数近似表示维度大小",
            "用字符串拼接表示维度信息",
        ],
    },
    MaterialQuestion {
        id: "q4",
        choice: QuestionChoice::Multiple,
        difficulty: "mid",
        key: &["A", "B", "C"],
        options: [
            "生成形状守卫来校验运行时形状",
            "守卫失败时触发重新编译",
            "用符号维度做形状约束传播",
            "自动将模型权重转为 float16",
        ],
    },
    MaterialQuestion {
        id: "q5",
        choice: QuestionChoice::Single,
        difficulty: "mid",
        key: &["B"],
        options: [
            "直接抛出异常并终止推理过程",
            "触发一次针对新形状的重新编译",
            "忽略 guard 继续使用旧代码执行",
            "自动降低输入张量的维度大小",
        ],
    },
    MaterialQuestion {
        id: "q6",
        choice: QuestionChoice::Single,
        difficulty: "hard",
        key: &["B"],
        options: [
            "能适应更多输入尺寸而无需重编译",
            "编译器能做更激进的内核特化优化",
            "编译时间更短且不需要缓存管理",
            "不需要生成任何形状守卫代码",
        ],
    },
    MaterialQuestion {
        id: "q7",
        choice: QuestionChoice::Multiple,
        difficulty: "mid",
        key: &["A", "B"],
        options: [
            "batch 维度随请求量波动变化",
            "序列长度随句子长短变化",
            "词表大小随分词器配置变化",
            "embedding 维度随模型版本变化",
        ],
    },
    MaterialQuestion {
        id: "q8",
        choice: QuestionChoice::Single,
        difficulty: "mid",
        key: &["B"],
        options: [
            "torch.compile 的 dynamic 列表参数",
            "torch._dynamo.mark_dynamic",
            "torch.set_grad_enabled 禁用梯度",
            "torch.no_grad 禁用梯度计算",
        ],
    },
    MaterialQuestion {
        id: "q9",
        choice: QuestionChoice::Single,
        difficulty: "extreme",
        key: &["C"],
        options: [
            "动态形状下 CUDA Graph 完全无法使用",
            "CUDA Graph 捕获要求静态形状必然失败",
            "动态模式下 CUDA Graph 仍需 guard 命中具体形状才能回放",
            "CUDA Graph 能自动适配任意动态输入形状",
        ],
    },
    MaterialQuestion {
        id: "q10",
        choice: QuestionChoice::Single,
        difficulty: "easy",
        key: &["C"],
        options: [
            "模型推理精度得到显著提升",
            "内存占用降低到原来的一半",
            "输入形状变化时无需重新编译",
            "训练时梯度自动变为稀疏表达",
        ],
    },
];

/// The material's misconceptions, each listed there as wrong.
const MISCONCEPTIONS: [(&str, &str); 4] = [
    (
        "m1",
        "我听说 dynamic=True 会引入额外开销，所以动态编译的性能肯定全方位不如静态编译，能不用就不用。",
    ),
    (
        "m2",
        "我一开 dynamic=True，模型里所有张量的所有维度就都是动态的了，编译器会为每种形状都生成一套通用逻辑。",
    ),
    (
        "m3",
        "动态形状模式下 guard 经常不命中，于是模型还是会被反复重编译，那跟静态模式有什么区别？",
    ),
    (
        "m4",
        "我都用 torch.compile 了，编译器应该能自动感知输入形状会变化吧？不用设 dynamic 参数，也不用手动标记任何维度。",
    ),
];

fn has_both(text: &Text) -> bool {
    !text.zh.trim().is_empty() && !text.en.trim().is_empty()
}

#[test]
fn interview_questions_keep_the_material_options_and_levels() {
    for MaterialQuestion {
        id,
        choice,
        difficulty,
        key: material_key,
        options,
    } in MATERIAL
    {
        let q = question(id).unwrap();
        assert_eq!(q.section, Section::Interview, "{id}");
        assert_eq!(q.choice, choice, "{id}");
        assert_eq!(q.difficulty, Some(difficulty.parse().unwrap()), "{id}");
        assert_eq!(q.fact_check.material_key, material_key, "{id}");
        let ids: Vec<&str> = q.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["A", "B", "C", "D"], "{id}");
        let texts: Vec<&str> = q.options.iter().map(|o| o.text.zh.as_str()).collect();
        assert_eq!(texts, options, "{id}");
    }
}

#[test]
fn misconceptions_are_statements_to_judge() {
    for (id, statement) in MISCONCEPTIONS {
        let q = question(id).unwrap();
        assert_eq!(q.section, Section::Misconception, "{id}");
        assert_eq!(q.choice, QuestionChoice::Judge, "{id}");
        assert_eq!(q.prompt.zh, statement, "{id}");
        assert_eq!(
            q.difficulty, None,
            "{id}: the material gives misconceptions no level"
        );
        assert_eq!(
            q.fact_check.material_key,
            ["false"],
            "{id}: the material calls it wrong"
        );
        let options: Vec<(&str, &str)> = q
            .options
            .iter()
            .map(|o| (o.id.as_str(), o.text.zh.as_str()))
            .collect();
        assert_eq!(
            options,
            [("true", "正确"), ("false", "错误"), ("partly", "部分正确")],
            "{id}"
        );
    }
}

#[test]
fn every_question_has_a_valid_key_bilingual_text_and_a_fact_check() {
    let ids: Vec<&str> = questions().iter().map(|q| q.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "m1", "m2", "m3", "m4"
        ]
    );
    for q in questions() {
        let id = &q.id;
        assert!(has_both(&q.prompt), "{id}: prompt");
        assert!(has_both(&q.explanation), "{id}: explanation");
        assert!(q.options.iter().all(|o| has_both(&o.text)), "{id}: options");
        let valid = |key: &[String]| {
            !key.is_empty() && key.iter().all(|k| q.options.iter().any(|o| &o.id == k))
        };
        assert!(valid(&q.key), "{id}: key {:?}", q.key);
        assert!(valid(&q.fact_check.material_key), "{id}: material key");
        if q.choice != QuestionChoice::Multiple {
            assert_eq!(q.key.len(), 1, "{id}: one answer");
        }
        let check = &q.fact_check;
        let differs = q.key != check.material_key;
        assert_eq!(differs, check.verdict == Verdict::Differs, "{id}: verdict");
        match check.verdict {
            Verdict::Agrees => assert!(check.note.is_none(), "{id}: nothing to note"),
            Verdict::Nuanced | Verdict::Differs => {
                assert!(check.note.as_ref().is_some_and(has_both), "{id}: note");
                assert!(!check.sources.is_empty(), "{id}: sources");
            }
        }
        assert!(
            links().iter().any(|l| l.id == q.link),
            "{id}: link {}",
            q.link
        );
        if let Some(demo) = &q.demo {
            assert!(has_both(&demo.caption), "{id}: caption");
            assert!(!demo.runs.is_empty(), "{id}: runs");
        }
    }
    assert!(links().iter().all(|l| has_both(&l.title)));
}

#[test]
fn keys_that_differ_from_the_material() {
    let differing: Vec<String> = questions()
        .iter()
        .filter(|q| q.fact_check.verdict == Verdict::Differs)
        .map(|q| {
            format!(
                "{}: {} (material {})",
                q.id,
                q.key.join(""),
                q.fact_check.material_key.join("")
            )
        })
        .collect();
    expect![[r#"
        q1: C (material B)
        m2: partly (material false)
        m4: true (material false)"#]]
    .assert_eq(&differing.join("\n"));
}

/// A statement's explanation opens with its verdict, in both languages, and the verdict is
/// the key's option (no "essentially true" under a key of "true").
#[test]
fn a_judged_statement_opens_with_its_key() {
    for question in questions()
        .iter()
        .filter(|q| q.choice == QuestionChoice::Judge)
    {
        let [key] = question.key.as_slice() else {
            panic!("{}: a statement has one key", question.id);
        };
        let option = question
            .options
            .iter()
            .find(|o| &o.id == key)
            .expect("the key is an option");
        for (explanation, verdict) in [
            (&question.explanation.zh, &option.text.zh),
            (&question.explanation.en, &option.text.en),
        ] {
            let rest = explanation.strip_prefix(verdict.as_str());
            assert!(
                rest.is_some_and(|rest| rest.starts_with(['。', '（', '.', ' ', ':', '：'])),
                "{}: the explanation opens with {verdict:?}: {explanation}",
                question.id
            );
        }
    }
}

/// Every source says what was read or measured: a PyTorch file at the version whose wheel
/// was checked (2.15.0), a C++ file at the commit read, a measurement naming its version, or
/// a documentation page.
#[test]
fn sources_name_the_version_read() {
    const FORMS: [&str; 4] = [
        "pytorch/pytorch v2.15.0: torch/",
        "pytorch/pytorch @0133aaf (C++, not in the wheel): torch/csrc/",
        "measured on torch 2.15.0",
        "https://docs.pytorch.org/",
    ];
    for question in questions() {
        for source in &question.fact_check.sources {
            assert!(
                FORMS.iter().any(|form| source.starts_with(form)),
                "{}: {source}",
                question.id
            );
        }
    }
}

#[test]
fn checking_a_selection() {
    let answer = check("q1", &["c"]).unwrap();
    assert!(answer.correct);
    assert_eq!(answer.selected, ["C"]);
    let answer = check("q1", &["B"]).unwrap();
    assert!(!answer.correct);
    assert_eq!(answer.fact_check.material_key, ["B"]);
    assert!(check("q4", &["C", "A", "B", "a"]).unwrap().correct);
    assert!(!check("q4", &["A", "B"]).unwrap().correct);
    assert!(check("m4", &["TRUE"]).unwrap().correct);
    assert!(!check("m4", &["false"]).unwrap().correct);
    let errors = [
        check("q11", &["A"]).unwrap_err(),
        check("q1", &["E"]).unwrap_err(),
        check("q1", &["A", "B"]).unwrap_err(),
        check("q4", &[]).unwrap_err(),
        check("m1", &[]).unwrap_err(),
    ];
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    expect![[r#"
        unknown question 'q11'
        question 'q1' has no option 'E' (its options are A, B, C, D)
        question 'q1' takes exactly one option, got 2
        question 'q4' needs at least one option
        question 'm1' takes exactly one option, got 0"#]]
    .assert_eq(&messages.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Demos: each shows what its explanation claims
// ---------------------------------------------------------------------------------------

fn demo(id: &str) -> Vec<DemoOutcome> {
    question(id)
        .unwrap()
        .demo
        .as_ref()
        .unwrap_or_else(|| panic!("{id} has a demo"))
        .run()
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn actions(outcome: &DemoOutcome) -> Vec<Action> {
    outcome.events.iter().map(|e| e.action).collect()
}

fn inputs(outcome: &DemoOutcome) -> Vec<&str> {
    outcome.entries.iter().map(|e| e.inputs.as_str()).collect()
}

fn compiles(outcomes: &[DemoOutcome]) -> Vec<usize> {
    outcomes.iter().map(|o| o.compiles).collect()
}

use Action::{Compile as C, Eager as E, Hit as H};

#[test]
fn q1_default_mode_turns_dynamic_on_the_second_compile() {
    let runs = demo("q1");
    assert_eq!(runs[0].mode, DynamicMode::Auto);
    assert_eq!(actions(&runs[0]), [C, C, H]);
    assert_eq!(inputs(&runs[0]), ["x=[8, 64]", "x=[s0, 64]"]);
    assert_eq!(compiles(&runs), [2, 1, 3], "None, True, False");
}

#[test]
fn q2_static_compiles_once_per_size() {
    assert_eq!(compiles(&demo("q2")), [4, 2]);
}

#[test]
fn q3_dynamic_dims_become_symbols_and_the_weight_pins_the_channels() {
    assert_eq!(inputs(&demo("q3")[0]), ["x=[s0, 4, s2]"]);
}

#[test]
fn q4_a_failing_guard_recompiles_and_the_new_guard_is_symbolic() {
    let run = &demo("q4")[0];
    assert_eq!(actions(run), [C, C, H]);
    assert!(
        run.events[1].reasons[0]
            .1
            .contains("size mismatch at index 0")
    );
    assert!(
        run.entries[1]
            .guards
            .contains(&"2 <= L['x'].size()[0]".to_string())
    );
}

#[test]
fn q5_newest_entry_wins_and_the_limit_falls_back_to_eager() {
    let runs = demo("q5");
    assert_eq!(actions(&runs[0]), [C, C, H, H]);
    assert_eq!(
        runs[0].events[3].entry,
        Some(1),
        "the final 8 runs the dynamic entry"
    );
    assert_eq!(runs[1].compiles, 8);
    assert_eq!(runs[1].events[8].action, E);
    let warned: Vec<bool> = runs[1].events.iter().map(|e| e.warning.is_some()).collect();
    assert_eq!(
        warned,
        [false, false, false, false, false, false, false, false, true]
    );
}

#[test]
fn q6_static_entries_are_guarded_on_exact_sizes() {
    let run = &demo("q6")[0];
    assert!(run.entries[0].guards[0].contains("size=[8, 64]"));
    assert!(run.entries[1].guards[0].contains("size=[16, 64]"));
}

#[test]
fn q7_batch_and_sequence_vary_the_hidden_size_does_not() {
    let runs = demo("q7");
    assert_eq!(actions(&runs[0]), [C, C, C]);
    assert_eq!(inputs(&runs[0])[2], "x=[s0, s1, 64]");
    assert_eq!(runs[1].compiles, 1, "marked up front");
}

#[test]
fn q8_mark_dynamic_wins_over_dynamic_false() {
    let runs = demo("q8");
    assert_eq!(runs[0].mode, DynamicMode::False);
    assert_eq!(actions(&runs[0]), [C, H, H]);
}

#[test]
fn q10_dynamic_true_still_recompiles_for_size_one_and_broken_duck_sizing() {
    let runs = demo("q10");
    assert_eq!(actions(&runs[0]), [C, H, C, H]);
    assert_eq!(inputs(&runs[0]), ["x=[s0]", "x=[1]"]);
    assert_eq!(actions(&runs[1]), [C, C]);
    let duck = "L['x'].size()[1] == L['x'].size()[0]";
    assert!(runs[1].entries[0].guards.contains(&duck.to_string()));
    assert!(
        runs[1].events[1].reasons[0]
            .1
            .starts_with("x.size()[1] == x.size()[0]")
    );
}

#[test]
fn m1_the_materials_sequence_under_each_mode() {
    assert_eq!(compiles(&demo("m1")), [4, 1, 2], "False, True, None");
}

#[test]
fn m2_dynamic_true_makes_input_dims_symbolic_until_an_op_pins_them() {
    let runs = demo("m2");
    let all: Vec<&str> = runs.iter().flat_map(|r| inputs(r)).collect();
    assert_eq!(all, ["x=[s0, s1]", "x=[s0, 4, s2]", "x=[s0, 64]"]);
}

#[test]
fn m3_dynamic_guards_have_no_upper_bound_but_branches_and_size_one_recompile() {
    let runs = demo("m3");
    assert_eq!(actions(&runs[0]), [C, C, H, C]);
    assert!(runs[0].entries[1].guards.iter().all(|g| !g.contains("512")));
    assert_eq!(actions(&runs[1]), [C, C, C]);
    assert_eq!(runs[1].events[2].reasons[0].1, "2 <= x.size()[0] <= 16");
}

#[test]
fn m4_automatic_dynamic_is_silent_only_the_limit_warns() {
    let runs = demo("m4");
    assert_eq!(actions(&runs[0]), [C, C, H, H]);
    assert!(runs[0].events.iter().all(|e| e.warning.is_none()));
    let warning = runs[1].events[8].warning.as_deref().unwrap();
    assert!(
        warning.contains("hit config.recompile_limit (8)"),
        "{warning}"
    );
}

#[test]
fn every_demo_runs_and_serializes() {
    for q in questions() {
        let Some(demo) = &q.demo else {
            assert_eq!(
                q.id, "q9",
                "only the CUDA-graph question has nothing to run"
            );
            continue;
        };
        let outcomes = demo.run().unwrap();
        for outcome in &outcomes {
            assert!(
                outcome.events.iter().all(|e| e.action != Action::Error),
                "{}",
                q.id
            );
        }
        serde_json::to_string(&outcomes).unwrap();
    }
    serde_json::to_string(questions()).unwrap();
    assert!(model_source("nope").is_none());
}

// ---------------------------------------------------------------------------------------
// Generated exercises
// ---------------------------------------------------------------------------------------

/// Seeds per kind; the difficulty cycles through the four levels.
const SEEDS: u32 = 50;

fn difficulty_of(seed: u32) -> Difficulty {
    Difficulty::ALL[seed as usize % Difficulty::ALL.len()]
}

/// Runs `check` on the first accepted puzzle of every seed, which must not need the fallback,
/// after checking that its replay is the scenario its code shows. Each kind's own test
/// (`output_shape_accepts_equivalent_forms`, `guard_prediction_grades_outcome_and_guard`,
/// `compile_count_grades_count_and_dims`, `write_guard_grades_the_set_of_letters`,
/// `spot_recompile_grades_the_set_of_calls`) calls it once, so every kind's puzzles are built
/// once and checked both ways.
fn for_each_puzzle(kind: ExerciseKind, check: impl Fn(u32, &dyn super::puzzle::Puzzle)) {
    for_each_puzzle_of(kind, 0..SEEDS, |seed, puzzle| {
        assert_replays_what_its_code_shows(kind, seed, puzzle);
        check(seed, puzzle);
    });
}

/// The replay is the scenario the code shows: the same mode, limit, marks and calls.
#[track_caller]
fn assert_replays_what_its_code_shows(
    kind: ExerciseKind,
    seed: u32,
    puzzle: &dyn super::puzzle::Puzzle,
) {
    let body = puzzle.body();
    let replay = &body.replay;
    let context = format!("{kind} seed {seed}");
    let calls = body.code.matches("  # call ").count();
    assert_eq!(replay.calls.len(), calls, "{context}");
    assert!(
        body.code.contains(&format!("dynamic={}", replay.mode)),
        "{context}"
    );
    let limited = format!("recompile_limit = {}", replay.recompile_limit);
    assert_eq!(
        body.code.contains(&limited),
        replay.recompile_limit != crate::config::DEFAULT_RECOMPILE_LIMIT,
        "{context}"
    );
    for mark in &replay.mark_dynamic {
        let line = format!("torch._dynamo.mark_dynamic({}, {})", mark.input, mark.dim);
        assert!(body.code.contains(&line), "{context}");
    }
    for input in replay.calls.iter().flat_map(|call| call.split(';')) {
        let (name, sizes) = input.split_once('=').unwrap();
        let line = format!("{name} = torch.randn({})", sizes.replace(',', ", "));
        assert!(body.code.contains(&line), "{context}: {input}");
    }
}

/// [`for_each_puzzle`] over `seeds`, each at its [`difficulty_of`]: the puzzle `generate`,
/// `grade` and `solve` build for those arguments, built once.
fn for_each_puzzle_of(
    kind: ExerciseKind,
    seeds: std::ops::Range<u32>,
    check: impl Fn(u32, &dyn super::puzzle::Puzzle),
) {
    for seed in seeds {
        let difficulty = difficulty_of(seed);
        let (_, puzzle) = first_accepted(kind, seed, difficulty)
            .unwrap_or_else(|| panic!("{kind} seed {seed} {difficulty}: no attempt compiled"));
        check(seed, puzzle.as_ref());
    }
}

#[track_caller]
fn assert_right(puzzle: &dyn super::puzzle::Puzzle, answer: &str, context: &str) {
    let grade = puzzle.grade(answer);
    assert!(
        grade.correct,
        "{context}: '{answer}' rejected: {:?}",
        grade.feedback
    );
    assert!(!grade.malformed);
}

#[track_caller]
fn assert_wrong(puzzle: &dyn super::puzzle::Puzzle, answer: &str, context: &str) {
    let grade = puzzle.grade(answer);
    assert!(
        !grade.correct,
        "{context}: wrong answer '{answer}' accepted"
    );
    assert!(
        !grade.malformed,
        "{context}: '{answer}': {:?}",
        grade.feedback
    );
    assert!(has_both(&grade.feedback));
}

#[track_caller]
fn assert_malformed(puzzle: &dyn super::puzzle::Puzzle, answer: &str, context: &str) {
    let grade = puzzle.grade(answer);
    assert!(
        grade.malformed && !grade.correct,
        "{context}: '{answer}' not malformed"
    );
    assert!(has_both(&grade.feedback));
}

#[test]
fn output_shape_accepts_equivalent_forms() {
    for_each_puzzle(ExerciseKind::OutputShape, |seed, puzzle| {
        let context = format!("seed {seed}");
        let solution = puzzle.solution();
        assert_right(puzzle, &solution, &context);
        let dims: Vec<String> = solution
            .trim_matches(|c| c == '[' || c == ']')
            .split(", ")
            .map(str::to_string)
            .collect();
        // The same dims written differently: doubled and halved, as a tuple, unbracketed.
        let rewritten: Vec<String> = dims.iter().map(|d| format!("2*({d}) - ({d})")).collect();
        assert_right(puzzle, &format!("[{}]", rewritten.join(", ")), &context);
        assert_right(puzzle, &format!("({},)", dims.join(",")), &context);
        assert_right(puzzle, &dims.join(" , "), &context);
        let mut off_by_one = dims.clone();
        let last = off_by_one.last_mut().unwrap();
        *last = format!("({last}) + 1");
        assert_wrong(puzzle, &format!("[{}]", off_by_one.join(", ")), &context);
        assert_wrong(
            puzzle,
            &format!("[{}]", dims[..dims.len() - 1].join(", ")),
            &context,
        );
        assert_malformed(puzzle, "[s0, 8 +]", &context);
        assert_malformed(puzzle, "[s9, 3]", &context);
        assert_malformed(puzzle, "   ", &context);
    });
}

#[test]
fn output_shape_grades_by_equivalence_not_text() {
    let puzzle = (0..SEEDS)
        .find_map(|seed| {
            let (_, p) = first_accepted(ExerciseKind::OutputShape, seed, Difficulty::Easy)?;
            p.solution().starts_with("[s0, ").then_some(p)
        })
        .expect("some easy exercise has batch s0 first");
    let solution = puzzle.solution();
    let rest = solution.strip_prefix("[s0, ").unwrap();
    assert_right(puzzle.as_ref(), &format!("[s0*2 - s0, {rest}"), "2*s0 - s0");
    assert_right(puzzle.as_ref(), &format!("[1*s0 + 0, {rest}"), "1*s0");
    let wrong = puzzle.grade(&format!("[s0*2, {rest}"));
    assert!(!wrong.correct);
    assert!(
        wrong.feedback.en.starts_with("Dim 0 is wrong: at s0="),
        "{}",
        wrong.feedback.en
    );
}

#[test]
fn guard_prediction_grades_outcome_and_guard() {
    for_each_puzzle(ExerciseKind::GuardPrediction, |seed, puzzle| {
        let context = format!("seed {seed}");
        let solution = puzzle.solution();
        assert_right(puzzle, &solution, &context);
        assert_right(puzzle, &solution.to_uppercase(), &context);
        let body = puzzle.body();
        let count = body.choices.len();
        match solution.split_once(' ') {
            None => {
                assert_eq!(solution, "hit");
                assert_right(puzzle, "命中", &context);
                assert_wrong(puzzle, "recompile 1", &context);
                assert_wrong(puzzle, "eager 1", &context);
            }
            Some((outcome, number)) => {
                let zh = if outcome == "recompile" {
                    "重编译"
                } else {
                    "eager"
                };
                assert_right(puzzle, &format!("{zh}，#{number}"), &context);
                assert_right(puzzle, &format!("{outcome}: g{number}"), &context);
                assert_wrong(puzzle, "hit", &context);
                let other = if outcome == "recompile" {
                    "eager"
                } else {
                    "recompile"
                };
                assert_wrong(puzzle, &format!("{other} {number}"), &context);
                let n: usize = number.parse().unwrap();
                if count > 1 {
                    let wrong = if n == 1 { 2 } else { 1 };
                    assert_wrong(puzzle, &format!("{outcome} {wrong}"), &context);
                }
                assert_malformed(puzzle, outcome, &context);
                assert_malformed(puzzle, &format!("{outcome} {}", count + 1), &context);
            }
        }
        assert_malformed(puzzle, "maybe", &context);
        assert_malformed(puzzle, "", &context);
    });
}

/// The first parameter of `forward` in a generated model.
fn first_input(source: &str) -> &str {
    let args = source.split("def forward(self, ").nth(1).unwrap();
    args.split([',', ')']).next().unwrap()
}

#[test]
fn compile_count_grades_count_and_dims() {
    for_each_puzzle(ExerciseKind::CompileCount, |seed, puzzle| {
        let context = format!("seed {seed}");
        let solution = puzzle.solution();
        assert_right(puzzle, &solution, &context);
        let (count, dims) = solution.split_once("; ").unwrap();
        let mut dims: Vec<&str> = if dims == "none" {
            vec![]
        } else {
            dims.split(", ").collect()
        };
        dims.reverse();
        let respelled: Vec<String> = dims
            .iter()
            .map(|d| {
                let (input, dim) = d.split_once(':').unwrap();
                format!("L['{input}'].size()[{dim}]")
            })
            .collect();
        let none = if dims.is_empty() { "none" } else { "" };
        assert_right(
            puzzle,
            &format!("{count} {} {none}", respelled.join(" ")),
            &context,
        );
        let count: usize = count.parse().unwrap();
        assert_wrong(
            puzzle,
            &format!("{}; {}", count + 1, dims.join(", ")),
            &context,
        );
        let other_dims = if dims.is_empty() {
            format!("{}:0", first_input(&puzzle.body().source))
        } else {
            "none".to_string()
        };
        assert_wrong(puzzle, &format!("{count}; {other_dims}"), &context);
        assert_malformed(puzzle, "two", &context);
        assert_malformed(puzzle, &format!("{count}; y:7"), &context);
    });
}

#[test]
fn write_guard_grades_the_set_of_letters() {
    for_each_puzzle(ExerciseKind::WriteGuard, |seed, puzzle| {
        let context = format!("seed {seed}");
        let solution = puzzle.solution();
        assert_right(puzzle, &solution, &context);
        let letters: String = solution.split(", ").collect();
        let reversed: String = letters.chars().rev().collect::<String>().to_lowercase();
        assert_right(puzzle, &reversed, &context);
        let choices = puzzle.body().choices;
        assert!(choices.len() >= 3 && choices.len() <= 8, "{context}");
        let fake = choices.iter().find(|c| !letters.contains(&c.id)).unwrap();
        assert_wrong(puzzle, &format!("{letters}{}", fake.id), &context);
        let dropped = if letters.len() > 1 {
            letters[1..].to_string()
        } else {
            fake.id.clone()
        };
        assert_wrong(puzzle, &dropped, &context);
        assert_malformed(puzzle, "Z", &context);
        assert_malformed(puzzle, "", &context);
    });
}

#[test]
fn spot_recompile_grades_the_set_of_calls() {
    for_each_puzzle(ExerciseKind::SpotRecompile, |seed, puzzle| {
        let context = format!("seed {seed}");
        let solution = puzzle.solution();
        assert_right(puzzle, &solution, &context);
        let numbers: Vec<usize> = if solution == "none" {
            vec![]
        } else {
            solution.split(", ").map(|n| n.parse().unwrap()).collect()
        };
        let spaced: Vec<String> = numbers.iter().rev().map(|n| format!("#{n}")).collect();
        if numbers.is_empty() {
            assert_right(puzzle, "-", &context);
        } else {
            assert_right(puzzle, &spaced.join(" "), &context);
        }
        let mut toggled = numbers.clone();
        match toggled.iter().position(|n| *n == 2) {
            Some(i) => {
                toggled.remove(i);
            }
            None => toggled.push(2),
        }
        let toggled: Vec<String> = toggled.iter().map(usize::to_string).collect();
        let toggled = if toggled.is_empty() {
            "none".to_string()
        } else {
            toggled.join(",")
        };
        assert_wrong(puzzle, &toggled, &context);
        assert_malformed(puzzle, "1, 2", &context);
        assert_malformed(puzzle, "99", &context);
        assert_malformed(puzzle, "call two", &context);
    });
}

#[test]
fn odd_answers_never_panic() {
    let odd = [
        "",
        " ",
        "[]",
        "[[[",
        "))",
        "(,)",
        ",",
        "s0//0",
        "s0 % 0",
        "Min(s0)",
        "max(s0, )",
        "99999999999999999999999",
        "-1",
        "1e5",
        "s0**64",
        "中文",
        "🙂",
        "recompile -1",
        "recompile 0",
        "eager g",
        "hit 3 4",
        "x:",
        ":",
        "L['",
        "2; x:99",
        "2; :0",
        "0; none",
        "a,b,,c",
        "AAAA",
        "none none",
        "#",
        "2 2 2",
    ];
    // Each puzzle is built (compiled) once and grades every answer, as `grade` would.
    for kind in ExerciseKind::ALL {
        for_each_puzzle_of(kind, 0..4, |seed, puzzle| {
            for answer in odd {
                let grade = puzzle.grade(answer);
                assert!(has_both(&grade.feedback), "{kind} {seed} '{answer}'");
            }
        });
    }
}

#[test]
fn generation_is_deterministic_and_the_public_api_agrees() {
    for kind in ExerciseKind::ALL {
        for (seed, difficulty) in [(7, Difficulty::Easy), (123_456, Difficulty::Extreme)] {
            let exercise = generate(kind, seed, difficulty);
            assert_eq!(exercise, generate(kind, seed, difficulty), "{kind}");
            assert_eq!(exercise.kind, kind);
            assert_eq!(exercise.show_me, kind.show_me());
            assert!(links().iter().any(|l| l.id == exercise.show_me), "{kind}");
            assert_eq!(
                exercise.share,
                format!("kind={kind}&seed={seed}&difficulty={difficulty}")
            );
            assert!(has_both(&exercise.prompt) && has_both(&exercise.answer_format));
            assert!(exercise.source.contains("class Net(nn.Module):"), "{kind}");
            let answer = solve(kind, seed, difficulty);
            assert!(
                grade(kind, seed, difficulty, &answer).correct,
                "{kind}: {answer}"
            );
            serde_json::to_string(&exercise).unwrap();
        }
    }
}

#[test]
fn nearby_seeds_give_different_exercises() {
    for kind in ExerciseKind::ALL {
        let sources: Vec<String> = (0..4)
            .map(|seed| {
                let exercise = generate(kind, seed, Difficulty::Mid);
                format!("{}{}", exercise.source, exercise.code)
            })
            .collect();
        let distinct: std::collections::BTreeSet<&String> = sources.iter().collect();
        assert!(distinct.len() >= 3, "{kind}: seeds 0..4 look alike");
    }
}

#[test]
fn exercises_fill_every_placeholder() {
    let leftover = |text: &str| {
        text.split('{').skip(1).any(|rest| {
            rest.split_once('}').is_some_and(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
        })
    };
    for kind in ExerciseKind::ALL {
        for_each_puzzle_of(kind, 0..8, |seed, puzzle| {
            let body = puzzle.body();
            let grades = [
                puzzle.grade(&puzzle.solution()),
                puzzle.grade("??"),
                puzzle.grade("1"),
            ];
            let texts = [body.prompt, body.answer_format]
                .into_iter()
                .chain(grades.into_iter().map(|g| g.feedback));
            for text in texts {
                assert!(
                    !leftover(&text.zh) && !leftover(&text.en),
                    "{kind} {seed}: {text:?}"
                );
            }
        });
    }
}

#[test]
fn kinds_and_difficulties_parse_from_urls() {
    for kind in ExerciseKind::ALL {
        assert_eq!(kind.name().parse::<ExerciseKind>().unwrap(), kind);
    }
    assert_eq!(
        "Spot-Recompile".parse::<ExerciseKind>().unwrap(),
        ExerciseKind::SpotRecompile
    );
    for difficulty in Difficulty::ALL {
        assert_eq!(
            difficulty.to_string().parse::<Difficulty>().unwrap(),
            difficulty
        );
    }
    expect![[r#"
        unknown exercise kind 'shape' (expected one of output_shape, guard_prediction, compile_count, write_guard, spot_recompile)
        unknown difficulty 'medium' (expected easy, mid, hard or extreme)"#]]
    .assert_eq(&format!(
        "{}\n{}",
        "shape".parse::<ExerciseKind>().unwrap_err(),
        "medium".parse::<Difficulty>().unwrap_err()
    ));
}

#[test]
fn the_fallback_seed_generates_every_kind() {
    for kind in ExerciseKind::ALL {
        assert!(
            first_accepted(kind, 0, Difficulty::Easy).is_some(),
            "{kind}"
        );
    }
}

#[test]
fn every_message_is_used_and_every_used_message_exists() {
    let sources = [
        include_str!("output_shape.rs"),
        include_str!("guard_prediction.rs"),
        include_str!("compile_count.rs"),
        include_str!("write_guard.rs"),
        include_str!("spot_recompile.rs"),
        include_str!("exercise.rs"),
        include_str!("puzzle.rs"),
    ]
    .join("\n");
    // Keys built at run time from an outcome or action name.
    let dynamic_prefixes = ["outcome.", "compile_count.call_", "spot_recompile.call_"];
    for key in MESSAGES.keys() {
        let literal = sources.contains(&format!("\"{key}\""));
        let dynamic = dynamic_prefixes.iter().any(|p| key.starts_with(p));
        assert!(literal || dynamic, "message '{key}' is never used");
        assert!(
            has_both(&MESSAGES[key]),
            "message '{key}' needs both languages"
        );
    }
    for call in ["msg(", "fill("] {
        for (i, _) in sources.match_indices(call) {
            let after = sources[i + call.len()..].trim_start();
            if let Some(rest) = after.strip_prefix('"') {
                let key = rest.split('"').next().unwrap();
                assert!(MESSAGES.contains_key(key), "message '{key}' is missing");
            }
        }
    }
}

/// A compact, reviewable view of one exercise.
fn check_exercise(kind: ExerciseKind, seed: u32, difficulty: Difficulty, expect: Expect) {
    let exercise = generate(kind, seed, difficulty);
    let mut text = format!(
        "{}\n{}\n{}\n",
        exercise.prompt.en, exercise.source, exercise.code
    );
    for entry in &exercise.entries {
        text.push_str(&format!("entry 0/{}: {}\n", entry.id, entry.inputs));
    }
    for choice in &exercise.choices {
        text.push_str(&format!("{}. {}\n", choice.id, choice.text));
    }
    text.push_str(&format!("answer: {}\n", solve(kind, seed, difficulty)));
    expect.assert_eq(&text);
}

#[test]
fn an_output_shape_exercise() {
    check_exercise(
        ExerciseKind::OutputShape,
        1,
        Difficulty::Hard,
        expect![[r#"
            The input is marked with mark_dynamic (x.size()[0], x.size()[2], x.size()[3]) before the call, so the model is compiled for the symbolic input shape x: [s0, 3, s1, s2]. What is the symbolic shape of the output?
            import torch
            import torch.nn as nn


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv1 = nn.Conv2d(3, 16, kernel_size=1)
                    self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
                    self.fc1 = nn.Linear(16, 3)

                def forward(self, x):
                    h = torch.relu(self.conv1(x))
                    h = torch.relu(self.conv2(h))
                    h = self.fc1(h.mean(dim=(2, 3)))
                    return h

            model = torch.compile(Net(), dynamic=None)
            x = torch.randn(6, 3, 49, 46)
            torch._dynamo.mark_dynamic(x, 0)
            torch._dynamo.mark_dynamic(x, 2)
            torch._dynamo.mark_dynamic(x, 3)
            model(x)  # call 1
            answer: [s0, 3]
        "#]],
    );
}

#[test]
fn a_guard_prediction_exercise() {
    check_exercise(
        ExerciseKind::GuardPrediction,
        1,
        Difficulty::Mid,
        expect![[r#"
            After the earlier calls the cache holds the entries below (in lookup order, most recently used first). Call 3 passes a=16,5;b=16,5: does it hit, recompile, or run eagerly? If it misses, which guard of 0/0, the entry checked first, fails first?
            import torch
            import torch.nn as nn


            class Net(nn.Module):
                def forward(self, a, b):
                    return a + b

            model = torch.compile(Net(), dynamic=True)
            a = torch.randn(2, 3)
            b = torch.randn(2, 3)
            model(a, b)  # call 1
            a = torch.randn(3, 3)
            b = torch.randn(3, 3)
            model(a, b)  # call 2
            a = torch.randn(16, 5)
            b = torch.randn(16, 5)
            model(a, b)  # call 3
            entry 0/0: a=[s0, s1]; b=[s0, s1]
            1. TENSOR_MATCH: check_tensor(L['a'], Tensor, torch.float32, size=[None, None], stride=[None, 1])
            2. TENSOR_MATCH: check_tensor(L['b'], Tensor, torch.float32, size=[None, None], stride=[None, 1])
            3. NO_TENSOR_ALIASING: check_no_aliasing(L['a'], L['b'])
            4. DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['a'], '_dynamo_dynamic_indices') == False
            5. DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['b'], '_dynamo_dynamic_indices') == False
            6. L['a'].stride()[0] == L['a'].size()[1]
            7. L['b'].size()[0] == L['a'].size()[0]
            8. L['b'].size()[1] == L['a'].size()[1]
            9. L['b'].stride()[0] == L['a'].size()[1]
            10. 2 <= L['a'].size()[0]
            11. 2 <= L['a'].size()[1]
            answer: hit
        "#]],
    );
}

#[test]
fn a_write_guard_exercise() {
    check_exercise(
        ExerciseKind::WriteGuard,
        2,
        Difficulty::Mid,
        expect![[r#"
            The model is called for the first time (dynamic=True) and one entry is compiled. Which of these lines appear in that entry's guard list (as TORCH_LOGS=guards prints it; dimension-marking and global-state guards are left out)?
            import torch
            import torch.nn as nn


            class Net(nn.Module):
                def forward(self, a, b):
                    return a @ b

            model = torch.compile(Net(), dynamic=True)
            a = torch.randn(8, 6)
            b = torch.randn(6, 16)
            model(a, b)  # call 1
            A. L['b'].size()[0] == 6
            B. L['a'].stride()[0] == L['a'].size()[1]
            C. 2 <= L['b'].size()[1]
            D. (L['a'].size()[0] % 2) == 0
            E. TENSOR_MATCH: check_tensor(L['a'], Tensor, torch.float32, size=[None, 6], stride=[6, 1])
            F. 1 <= L['b'].size()[0]
            G. L['b'].size()[0] == L['a'].size()[1]
            answer: B, C, G
        "#]],
    );
}

#[test]
fn a_spot_recompile_exercise() {
    check_exercise(
        ExerciseKind::SpotRecompile,
        3,
        Difficulty::Hard,
        expect![[r#"
        The model branches on the batch size; it is compiled with dynamic=False and called 7 times (see the code). Which of calls 2 to 7 recompile?
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(16, 8)

            def forward(self, x):
                if x.shape[0] > 12:
                    return torch.relu(self.fc1(x))
                return self.fc1(x)

        model = torch.compile(Net(), dynamic=False)
        x = torch.randn(10, 16)
        model(x)  # call 1
        x = torch.randn(1, 16)
        model(x)  # call 2
        x = torch.randn(12, 16)
        model(x)  # call 3
        x = torch.randn(16, 16)
        model(x)  # call 4
        x = torch.randn(12, 16)
        model(x)  # call 5
        x = torch.randn(1, 16)
        model(x)  # call 6
        x = torch.randn(10, 16)
        model(x)  # call 7
        answer: 2, 3, 4
    "#]],
    );
}
