//! Generated exercises: the five kinds, seeded generation and grading by the compiler.
//!
//! In: a kind, a seed, a difficulty (and for grading, the learner's typed answer). Out: an
//! [`Exercise`] to show, or a [`Grade`]. Invariant: `(kind, seed, difficulty)` determines
//! the exercise completely — each attempt draws from a generator seeded with those three and
//! the attempt number, and an attempt is kept only if the compiler accepts it — and a grade
//! always comes from running the compiler on the regenerated exercise, never from a stored
//! key. A malformed answer is a `Grade` with `malformed` set and a message, never a panic.

use super::puzzle::{Choice, EntryView, Grade, Puzzle, Replay};
use super::rng::Rng;
use super::{
    Difficulty, QuizError, Text, compile_count, guard_prediction, output_shape, spot_recompile,
    write_guard,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The kinds of generated exercise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExerciseKind {
    /// A random model and a symbolic input shape: type the symbolic output shape.
    OutputShape,
    /// Compiled entries and a new call: hit, recompile or eager, and which guard fails.
    GuardPrediction,
    /// A call sequence under a mode: how many compilations, and which dims end dynamic.
    CompileCount,
    /// A model and its first call: which of these guards are installed.
    WriteGuard,
    /// A model with an `if x.shape[0] > T:` branch and a call sequence: which calls recompile.
    SpotRecompile,
}

impl ExerciseKind {
    /// Every kind, in the order the issue lists them.
    pub const ALL: [ExerciseKind; 5] = [
        ExerciseKind::OutputShape,
        ExerciseKind::GuardPrediction,
        ExerciseKind::CompileCount,
        ExerciseKind::WriteGuard,
        ExerciseKind::SpotRecompile,
    ];

    /// The kind's stable name, as in URLs: `output_shape`, `guard_prediction`, ….
    pub fn name(self) -> &'static str {
        match self {
            ExerciseKind::OutputShape => "output_shape",
            ExerciseKind::GuardPrediction => "guard_prediction",
            ExerciseKind::CompileCount => "compile_count",
            ExerciseKind::WriteGuard => "write_guard",
            ExerciseKind::SpotRecompile => "spot_recompile",
        }
    }

    /// Every name, comma-separated (for error messages).
    pub(crate) fn names() -> String {
        ExerciseKind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The page section that shows what the exercise is about (a [`super::links`] id).
    pub fn show_me(self) -> &'static str {
        match self {
            ExerciseKind::OutputShape => "stage:shapes",
            ExerciseKind::GuardPrediction | ExerciseKind::SpotRecompile => "lab:cache",
            ExerciseKind::CompileCount => "lab:auto",
            ExerciseKind::WriteGuard => "stage:guards",
        }
    }
}

impl fmt::Display for ExerciseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ExerciseKind {
    type Err = QuizError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase().replace('-', "_");
        ExerciseKind::ALL
            .into_iter()
            .find(|k| k.name() == wanted)
            .ok_or_else(|| QuizError::UnknownKind(text.to_string()))
    }
}

/// A generated exercise, ready to show.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exercise {
    /// Its kind.
    pub kind: ExerciseKind,
    /// Its seed.
    pub seed: u32,
    /// Its level.
    pub difficulty: Difficulty,
    /// A URL query that replays it: `kind=output_shape&seed=7&difficulty=mid`.
    pub share: String,
    /// The task.
    pub prompt: Text,
    /// How to type the answer.
    pub answer_format: Text,
    /// The model's Python source.
    pub source: String,
    /// How it is compiled and called, as Python.
    pub code: String,
    /// The symbolic input shape (output-shape exercises): `x: [s0, 3, s1]`.
    pub input: Option<String>,
    /// Compiled entries in lookup order, most recently used first (guard prediction).
    pub entries: Vec<EntryView>,
    /// Options to choose from (guard prediction: the first entry's guards; write the guard:
    /// real and made-up guards).
    pub choices: Vec<Choice>,
    /// The model's mode, marks and calls, for replaying them.
    pub replay: Replay,
    /// The page section that shows the concept (a [`super::links`] id).
    pub show_me: String,
}

/// Attempts per exercise; each draws a fresh model and calls. Most kinds succeed at once.
const ATTEMPTS: u64 = 32;

/// One attempt of `kind` with this generator, `None` if the compiler rejected it.
fn attempt(kind: ExerciseKind, rng: &mut Rng, difficulty: Difficulty) -> Option<Box<dyn Puzzle>> {
    match kind {
        ExerciseKind::OutputShape => output_shape::build(rng, difficulty),
        ExerciseKind::GuardPrediction => guard_prediction::build(rng, difficulty),
        ExerciseKind::CompileCount => compile_count::build(rng, difficulty),
        ExerciseKind::WriteGuard => write_guard::build(rng, difficulty),
        ExerciseKind::SpotRecompile => spot_recompile::build(rng, difficulty),
    }
}

/// The first attempt the compiler accepts, with its number (tests check that seeds succeed
/// without falling back).
pub(super) fn first_accepted(
    kind: ExerciseKind,
    seed: u32,
    difficulty: Difficulty,
) -> Option<(u64, Box<dyn Puzzle>)> {
    (0..ATTEMPTS).find_map(|number| {
        let mut rng = Rng::new(&[
            u64::from(seed),
            kind as u64,
            difficulty.level() as u64,
            number,
        ]);
        attempt(kind, &mut rng, difficulty).map(|puzzle| (number, puzzle))
    })
}

fn build(kind: ExerciseKind, seed: u32, difficulty: Difficulty) -> Box<dyn Puzzle> {
    first_accepted(kind, seed, difficulty)
        .or_else(|| first_accepted(kind, 0, Difficulty::Easy))
        .map(|(_, puzzle)| puzzle)
        .expect("seed 0 at easy generates an exercise of every kind (checked by the quiz tests)")
}

/// The exercise of `kind` for `seed` at `difficulty`; the same arguments always give the
/// same exercise.
pub fn generate(kind: ExerciseKind, seed: u32, difficulty: Difficulty) -> Exercise {
    let body = build(kind, seed, difficulty).body();
    Exercise {
        kind,
        seed,
        difficulty,
        share: format!("kind={kind}&seed={seed}&difficulty={difficulty}"),
        prompt: body.prompt,
        answer_format: body.answer_format,
        source: body.source,
        code: body.code,
        input: body.input,
        entries: body.entries,
        choices: body.choices,
        replay: body.replay,
        show_me: kind.show_me().to_string(),
    }
}

/// Grades `answer` to the exercise `generate(kind, seed, difficulty)` by running the compiler.
pub fn grade(kind: ExerciseKind, seed: u32, difficulty: Difficulty, answer: &str) -> Grade {
    build(kind, seed, difficulty).grade(answer)
}

/// The compiler's own answer to the exercise, in the answer format (what `grade` accepts).
pub fn solve(kind: ExerciseKind, seed: u32, difficulty: Difficulty) -> String {
    build(kind, seed, difficulty).solution()
}
