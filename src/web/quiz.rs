//! The quiz at the browser boundary: the material's questions with their checking and demos,
//! and the exercises the compiler generates and grades (static methods of `Tailor`).
//!
//! In: question ids, option ids, exercise kinds, seeds, levels and typed answers from the
//! page. Out: the views of `crate::quiz` as plain JS objects with camelCase keys (`factCheck`,
//! `materialKey`, `answerFormat`, `showMe`, …); a bad argument throws a `TailorError` of kind
//! `quiz` with the library's message. Invariant: no quiz logic here — every verdict comes
//! from `quiz::check` or `quiz::grade`, and nothing panics on what a page passes.

use super::Tailor;
use super::convert::{js_error, to_js};
use crate::quiz::{self, Difficulty, ExerciseKind, QuizError};
use serde::Serialize;
use serde_json::Value as Json;
use wasm_bindgen::prelude::*;

/// `value` as a JS object whose keys are camelCase, like the rest of the JS API.
fn to_js_camel<T: Serialize + ?Sized>(value: &T) -> JsValue {
    let json = serde_json::to_value(value).expect("quiz views serialise to JSON");
    to_js(&camel_keys(json))
}

fn camel_keys(value: Json) -> Json {
    match value {
        Json::Object(map) => Json::Object(
            map.into_iter()
                .map(|(key, value)| (camel(&key), camel_keys(value)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.into_iter().map(camel_keys).collect()),
        other => other,
    }
}

/// `fact_check` → `factCheck`.
fn camel(key: &str) -> String {
    let mut parts = key.split('_');
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

fn quiz_error(error: &QuizError) -> JsValue {
    js_error("quiz", &error.to_string(), None)
}

fn argument(message: &str) -> JsValue {
    js_error("quiz", message, None)
}

/// A seed: an integer from 0 to 2³² − 1, as a number or a decimal string (from a URL).
fn parse_seed(seed: &JsValue) -> Result<u32, JsValue> {
    let bad = || argument("seed: expected an integer from 0 to 4294967295");
    let value = match seed.as_string() {
        Some(text) => text.trim().parse::<f64>().map_err(|_| bad())?,
        None => seed.as_f64().ok_or_else(bad)?,
    };
    if value.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&value) {
        return Err(bad());
    }
    Ok(value as u32)
}

/// The kind, seed and level of an exercise, checked.
fn exercise_args(
    kind: &str,
    seed: &JsValue,
    difficulty: &str,
) -> Result<(ExerciseKind, u32, Difficulty), JsValue> {
    let kind = kind.parse().map_err(|e| quiz_error(&e))?;
    let difficulty = difficulty.parse().map_err(|e| quiz_error(&e))?;
    Ok((kind, parse_seed(seed)?, difficulty))
}

#[wasm_bindgen]
impl Tailor {
    /// The material's ten interview questions, then its four misconceptions: `[{ id, section,
    /// choice, difficulty, prompt: { zh, en }, options: [{ id, text }], key, explanation,
    /// factCheck: { verdict, materialKey, note, sources }, link, demo }]`.
    #[wasm_bindgen(js_name = quizQuestions)]
    pub fn quiz_questions() -> JsValue {
        to_js_camel(quiz::questions())
    }

    /// The places in the page that `link` and `showMe` ids name: `[{ id, title: { zh, en } }]`.
    #[wasm_bindgen(js_name = quizLinks)]
    pub fn quiz_links() -> JsValue {
        to_js_camel(quiz::links())
    }

    /// Checks a selection (`['A', 'C']`, or one id as a string) against the fact-checked key:
    /// `{ question, correct, selected, key, factCheck, explanation, link }`.
    #[wasm_bindgen(js_name = quizCheck)]
    pub fn quiz_check(id: &str, selected: JsValue) -> Result<JsValue, JsValue> {
        let selected: Vec<String> = match selected.as_string() {
            Some(one) => vec![one],
            None => serde_wasm_bindgen::from_value(selected)
                .map_err(|_| argument("selected: expected an array of option ids"))?,
        };
        let ids: Vec<&str> = selected.iter().map(String::as_str).collect();
        let answer = quiz::check(id, &ids).map_err(|e| quiz_error(&e))?;
        Ok(to_js_camel(&answer))
    }

    /// Runs question `id`'s demo through the compiler, one fresh cache per run:
    /// `[{ model, mode, events, compiles, entries: [{ id, inputs, dims, guards }] }]`, in the
    /// order of `demo.runs`.
    #[wasm_bindgen(js_name = demoRun)]
    pub fn demo_run(id: &str) -> Result<JsValue, JsValue> {
        let question = quiz::question(id).map_err(|e| quiz_error(&e))?;
        let demo = question
            .demo
            .as_ref()
            .ok_or_else(|| argument(&format!("question '{id}' has no demo")))?;
        let outcomes = demo.run().map_err(|e| quiz_error(&e))?;
        Ok(to_js_camel(&outcomes))
    }

    /// The exercise kinds, in the order: `['output_shape', 'guard_prediction', …]`.
    #[wasm_bindgen(js_name = exerciseKinds)]
    pub fn exercise_kinds() -> Vec<String> {
        ExerciseKind::ALL
            .iter()
            .map(|k| k.name().to_string())
            .collect()
    }

    /// The exercise for `kind`, `seed` (0 to 2³² − 1) and `difficulty` (`easy`, `mid`, `hard`,
    /// `extreme`); the same arguments always give the same exercise: `{ kind, seed,
    /// difficulty, share, prompt, answerFormat, source, code, input, entries, choices,
    /// replay: { mode, recompileLimit, markDynamic, calls }, showMe }`.
    #[wasm_bindgen(js_name = exerciseGenerate)]
    pub fn exercise_generate(
        kind: &str,
        seed: JsValue,
        difficulty: &str,
    ) -> Result<JsValue, JsValue> {
        let (kind, seed, difficulty) = exercise_args(kind, &seed, difficulty)?;
        Ok(to_js_camel(&quiz::generate(kind, seed, difficulty)))
    }

    /// Grades a typed answer by running the compiler on the regenerated exercise:
    /// `{ correct, malformed, expected, feedback: { zh, en } }`.
    #[wasm_bindgen(js_name = exerciseGrade)]
    pub fn exercise_grade(
        kind: &str,
        seed: JsValue,
        difficulty: &str,
        answer: &str,
    ) -> Result<JsValue, JsValue> {
        let (kind, seed, difficulty) = exercise_args(kind, &seed, difficulty)?;
        Ok(to_js_camel(&quiz::grade(kind, seed, difficulty, answer)))
    }

    /// The compiler's own answer to the exercise, in its answer format (for tests and
    /// checking a grader by hand).
    #[wasm_bindgen(js_name = exerciseSolve)]
    pub fn exercise_solve(kind: &str, seed: JsValue, difficulty: &str) -> Result<String, JsValue> {
        let (kind, seed, difficulty) = exercise_args(kind, &seed, difficulty)?;
        Ok(quiz::solve(kind, seed, difficulty))
    }
}
