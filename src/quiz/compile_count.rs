//! Exercise kind 3, compile count: a call sequence under a mode — how many compilations,
//! and which input dims are symbolic in the last compiled entry?
//!
//! In: a generator and a difficulty. Out: a puzzle over a template model with 3–6 calls
//! (marks and a small recompile limit from `hard` on). Invariant: the count is
//! `CodeCache::compiles()` and the dims are read from the last entry's inputs.

use super::modelgen::{self, Template, TemplateKind};
use super::puzzle::{Body, Grade, Puzzle, is_none_answer, words};
use super::rng::Rng;
use super::scenario::{Scenario, dynamic_dims, inputs_text, mark};
use super::text::{fill, msg};
use super::{Difficulty, Text};
use crate::cache::Action;
use crate::config::DynamicMode;

struct CompileCount {
    scenario: Scenario,
    inputs: Vec<String>,
    compiles: usize,
    /// Symbolic dims of the last compiled entry, in input order.
    dynamic: Vec<(String, usize)>,
    /// Per call: what it did.
    actions: Vec<Action>,
    last_entry: String,
}

/// One attempt.
pub(super) fn build(rng: &mut Rng, difficulty: Difficulty) -> Option<Box<dyn Puzzle>> {
    let template = Template::new(*rng.pick(&TemplateKind::ALL), rng, difficulty);
    let mode = *rng.pick(&[
        DynamicMode::Auto,
        DynamicMode::Auto,
        DynamicMode::True,
        DynamicMode::False,
    ]);
    let count = 3 + difficulty.level() + rng.below(2);
    let mut values = vec![template.values(rng)];
    while values.len() < count {
        let next = if values.len() > 1 && rng.chance(1, 4) {
            rng.pick(&values).clone()
        } else {
            template.vary(rng, values.last().expect("not empty"))
        };
        values.push(next);
    }
    let mut scenario = Scenario::new(
        template.source.clone(),
        mode,
        values.iter().map(|v| template.call(v)).collect(),
    );
    if difficulty >= Difficulty::Hard && rng.chance(1, 3) {
        let free = template.free_dims();
        let (input, dim) = rng.pick(&free);
        scenario.marks.push(mark(input, *dim));
    }
    if difficulty == Difficulty::Extreme && rng.chance(1, 2) {
        scenario.limit = rng.range(2, 3) as usize;
    }
    let cache = scenario.run().ok()?;
    let actions: Vec<Action> = cache.events.iter().map(|e| e.action).collect();
    if actions.contains(&Action::Error) {
        return None;
    }
    let last = cache.entries().into_iter().last()?;
    Some(Box::new(CompileCount {
        inputs: cache.entry_point().inputs.clone(),
        compiles: cache.compiles(),
        dynamic: dynamic_dims(last),
        last_entry: format!("0/{}: {}", last.id, inputs_text(last)),
        actions,
        scenario,
    }))
}

fn dims_text(dims: &[(String, usize)]) -> String {
    if dims.is_empty() {
        "none".to_string()
    } else {
        dims.iter()
            .map(|(input, dim)| format!("{input}:{dim}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `x:0`, `x[0]`, `x.size()[0]`, `x.shape[0]`, `x.size(0)` or `L['x'].size()[0]`.
fn parse_dim(word: &str, inputs: &[String]) -> Option<(String, usize)> {
    let word = word
        .strip_prefix("l['")
        .map(|rest| rest.replacen("']", "", 1))
        .unwrap_or_else(|| word.to_string());
    let name_len = word
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(word.len());
    let (name, rest) = word.split_at(name_len);
    let input = inputs.iter().find(|i| i.eq_ignore_ascii_case(name))?;
    let digits = [":", "[", ".size()[", ".shape[", ".size("]
        .iter()
        .find_map(|prefix| rest.strip_prefix(prefix))?;
    let digits = digits.trim_end_matches([']', ')']);
    Some((input.clone(), digits.parse().ok()?))
}

impl CompileCount {
    fn format(&self) -> Text {
        msg("compile_count.format", &[("input", &self.inputs[0])])
    }

    fn story(&self) -> Text {
        let lines: Vec<Text> = self
            .actions
            .iter()
            .enumerate()
            .map(|(i, action)| {
                msg(
                    &format!("compile_count.call_{action}"),
                    &[("number", &(i + 1).to_string())],
                )
            })
            .collect();
        Text::join(&lines, "；", "; ")
    }

    fn explain(&self, key: &str) -> Text {
        fill(
            key,
            &[
                ("count", Text::same(self.compiles.to_string())),
                ("dims", Text::same(dims_text(&self.dynamic))),
                ("entry", Text::same(self.last_entry.clone())),
                ("story", self.story()),
            ],
        )
    }
}

impl Puzzle for CompileCount {
    fn body(&self) -> Body {
        Body {
            prompt: msg(
                "compile_count.prompt",
                &[
                    ("mode", &self.scenario.mode.to_string()),
                    ("calls", &self.scenario.calls.len().to_string()),
                ],
            ),
            answer_format: self.format(),
            source: self.scenario.source.clone(),
            code: self.scenario.python(modelgen::CLASS, true),
            replay: self.scenario.replay(),
            ..Body::default()
        }
    }

    fn solution(&self) -> String {
        format!("{}; {}", self.compiles, dims_text(&self.dynamic))
    }

    fn grade(&self, answer: &str) -> Grade {
        let expected = self.solution();
        let parts = words(answer);
        let Some(first) = parts.first() else {
            return Grade::malformed(expected, msg("answer.empty", &[]), &self.format());
        };
        let Ok(count) = first.parse::<usize>() else {
            let problem = msg("compile_count.bad_count", &[("word", first)]);
            return Grade::malformed(expected, problem, &self.format());
        };
        let rest = &parts[1..];
        let mut dims = Vec::new();
        if !is_none_answer(rest) {
            for word in rest {
                let Some(dim) = parse_dim(word, &self.inputs) else {
                    let problem = msg("compile_count.bad_dim", &[("word", word)]);
                    return Grade::malformed(expected, problem, &self.format());
                };
                if !dims.contains(&dim) {
                    dims.push(dim);
                }
            }
        }
        let mut sorted = dims.clone();
        sorted.sort();
        let mut truth = self.dynamic.clone();
        truth.sort();
        match (count == self.compiles, sorted == truth) {
            (true, true) => Grade::right(expected, self.explain("compile_count.right")),
            (false, _) => Grade::wrong(expected, self.explain("compile_count.wrong_count")),
            (true, false) => Grade::wrong(expected, self.explain("compile_count.wrong_dims")),
        }
    }
}
