//! What every kind of exercise is made of: the `Puzzle` a kind builds (its `Body` to show,
//! its solution, its grading), the parts a body holds (choices, entries, the replay), the
//! `Grade`, and the helpers kinds read answers with.
//!
//! In: nothing of the kinds themselves. Out: the types and helpers each kind
//! (`compile_count.rs`, …) and the dispatcher (`exercise.rs`) share. Invariant: a leaf of
//! the quiz's exercises: each kind imports this file, and only `exercise.rs` imports the
//! kinds.

use super::Text;
use super::text::msg;
use crate::config::{DEFAULT_RECOMPILE_LIMIT, DynamicMode, MarkDynamic};
use serde::Serialize;

/// One option to pick from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// What the learner types or clicks: `A`, `B`, … or `1`, `2`, ….
    pub id: String,
    /// The option (a guard, as PyTorch prints it).
    pub text: String,
}

/// A compiled entry as an exercise shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryView {
    /// Compile order, from 0 (PyTorch's `0/N`).
    pub id: usize,
    /// Its inputs, `x=[s0, 64]`.
    pub inputs: String,
    /// Its guards as PyTorch prints them.
    pub guards: Vec<String>,
}

/// How the exercise's model is compiled and called: the scenario the compiler ran, as data,
/// so a page can replay it (the exercise's `code` shows the same as Python).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Replay {
    /// `dynamic=`.
    pub mode: DynamicMode,
    /// `torch._dynamo.config.recompile_limit`.
    pub recompile_limit: usize,
    /// The `mark_dynamic` calls made on every call's inputs.
    pub mark_dynamic: Vec<MarkDynamic>,
    /// Every call's inputs, in order, as `x=8,64` (spot the recompile: calls 2 to N are what
    /// the learner picks from).
    pub calls: Vec<String>,
}

impl Default for Replay {
    fn default() -> Replay {
        Replay {
            mode: DynamicMode::Auto,
            recompile_limit: DEFAULT_RECOMPILE_LIMIT,
            mark_dynamic: Vec::new(),
            calls: Vec::new(),
        }
    }
}

/// The verdict on an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Grade {
    /// Whether the answer is right.
    pub correct: bool,
    /// Whether the answer could not be read; then `feedback` says what was expected.
    pub malformed: bool,
    /// The compiler's answer, in the answer format.
    pub expected: String,
    /// Why, in both languages.
    pub feedback: Text,
}

impl Grade {
    /// A right answer.
    pub(super) fn right(expected: String, feedback: Text) -> Grade {
        Grade {
            correct: true,
            malformed: false,
            expected,
            feedback,
        }
    }

    /// A wrong answer.
    pub(super) fn wrong(expected: String, feedback: Text) -> Grade {
        Grade {
            correct: false,
            malformed: false,
            expected,
            feedback,
        }
    }

    /// An answer that does not follow `format`; `problem` says where it breaks.
    pub(super) fn malformed(expected: String, problem: Text, format: &Text) -> Grade {
        Grade {
            correct: false,
            malformed: true,
            expected,
            feedback: Text::join(
                &[msg("answer.malformed", &[]), problem, format.clone()],
                "",
                " ",
            ),
        }
    }
}

/// The parts of an exercise a kind fills in; the header (kind, seed, …) is added here.
#[derive(Clone, Debug, Default)]
pub(super) struct Body {
    pub prompt: Text,
    pub answer_format: Text,
    pub source: String,
    pub code: String,
    pub input: Option<String>,
    pub entries: Vec<EntryView>,
    pub choices: Vec<Choice>,
    pub replay: Replay,
}

/// A generated exercise with what the compiler computed for it.
pub(super) trait Puzzle {
    /// What the learner sees.
    fn body(&self) -> Body;
    /// The compiler's answer, in the answer format.
    fn solution(&self) -> String;
    /// Grades a typed answer.
    fn grade(&self, answer: &str) -> Grade;
}

/// Splits an answer into lower-case words at spaces, commas, semicolons and `|`.
pub(super) fn words(answer: &str) -> Vec<String> {
    answer
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '|' | '，' | '；' | '、'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether the answer says "nothing" (`none`, `-`, `无`, or empty).
pub(super) fn is_none_answer(words: &[String]) -> bool {
    words.is_empty()
        || (words.len() == 1 && matches!(words[0].as_str(), "none" | "-" | "无" | "没有" | "0"))
}

/// Call numbers as `1, 2, 5` (or the localized "none").
pub(super) fn numbers_text(numbers: &[usize]) -> String {
    if numbers.is_empty() {
        "none".to_string()
    } else {
        numbers
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}
