//! The quiz: the material's interview questions, fact-checked against real PyTorch, and
//! exercises that the compiler itself generates and grades.
//!
//! Sits beside the pipeline, as one of its users: it loads models, calls them through a
//! `CodeCache` and reads the entries, guards and shapes the compiler produced.
//! In: a question id and the selected options, or an exercise kind, a seed, a difficulty and
//! a typed answer. Out: serializable values for the page — questions with bilingual text,
//! demos run through the cache, exercises and grades with feedback as `{zh, en}`.
//!
//! Invariants: the questions and every piece of prose live in data files
//! (`questions.json`, `messages.json`), not in code; exercises are never graded by a stored
//! key — `grade` regenerates the exercise from its seed and asks the compiler; everything
//! here is deterministic and does no IO (a seed fully determines an exercise, so it can be
//! shared by URL and replayed).

mod compile_count;
mod demo;
mod exercise;
mod guard_prediction;
mod modelgen;
mod output_shape;
mod puzzle;
mod questions;
mod rng;
mod scenario;
mod spot_recompile;
mod text;
mod write_guard;

#[cfg(test)]
mod tests;

pub use demo::{Demo, DemoOutcome, DemoRun, EntrySummary, model_source};
pub use exercise::{Exercise, ExerciseKind, generate, grade, solve};
pub use puzzle::{Choice, EntryView, Grade, Replay};
pub use questions::{
    Answer, FactCheck, Link, Question, QuestionChoice, QuestionOption, Section, Verdict, check,
    links, question, questions,
};
pub use text::Text;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How hard a question or an exercise is; the material uses the same four levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    /// 简单.
    Easy,
    /// 中等 (the material writes `mid`).
    Mid,
    /// 困难.
    Hard,
    /// 极难.
    Extreme,
}

impl Difficulty {
    /// Every level, easiest first.
    pub const ALL: [Difficulty; 4] = [
        Difficulty::Easy,
        Difficulty::Mid,
        Difficulty::Hard,
        Difficulty::Extreme,
    ];

    /// The level as a number from 0 (easy) to 3 (extreme), for scaling generators.
    fn level(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Difficulty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Difficulty::Easy => "easy",
            Difficulty::Mid => "mid",
            Difficulty::Hard => "hard",
            Difficulty::Extreme => "extreme",
        })
    }
}

impl FromStr for Difficulty {
    type Err = QuizError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Difficulty::ALL
            .into_iter()
            .find(|d| d.to_string() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| QuizError::UnknownDifficulty(text.to_string()))
    }
}

/// A request the quiz cannot answer: an unknown id or an impossible selection. A wrong or
/// malformed exercise answer is not an error; it is a `Grade` that says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuizError {
    /// No question has this id.
    #[error("unknown question '{0}'")]
    UnknownQuestion(String),
    /// The question has no option with this id.
    #[error("question '{question}' has no option '{option}' (its options are {known})")]
    UnknownOption {
        /// The question.
        question: String,
        /// The option given.
        option: String,
        /// The question's option ids.
        known: String,
    },
    /// A single-choice question or a statement to judge got other than one selection.
    #[error("question '{question}' takes exactly one option, got {count}")]
    NotOneOption {
        /// The question.
        question: String,
        /// How many options were selected.
        count: usize,
    },
    /// A multiple-choice question got no selection at all.
    #[error("question '{0}' needs at least one option")]
    NoOption(String),
    /// No exercise kind has this name.
    #[error("unknown exercise kind '{0}' (expected one of {kinds})", kinds = ExerciseKind::names())]
    UnknownKind(String),
    /// No difficulty has this name.
    #[error("unknown difficulty '{0}' (expected easy, mid, hard or extreme)")]
    UnknownDifficulty(String),
    /// A demo names a model that is not a preset.
    #[error("unknown demo model '{0}'")]
    UnknownModel(String),
    /// A demo's calls or marks do not parse, or its model does not load.
    #[error("demo of model '{model}': {message}")]
    Demo {
        /// The model.
        model: String,
        /// What went wrong.
        message: String,
    },
}
