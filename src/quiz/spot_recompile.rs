//! Exercise kind 5, spot the recompile: a model with an `if x.shape[0] > T:` branch and a
//! call sequence — which calls recompile?
//!
//! In: a generator and a difficulty. Out: a puzzle over a [`BranchModel`] with 5–7 batch
//! sizes on both sides of the branch (an `elif`, size 1, other modes and a recompile limit
//! as the difficulty rises). Invariant: the recompiling calls are the cache's `compile`
//! events after the first call; each one's reason is the cache's first failure reason.

use super::modelgen::{self, BranchModel};
use super::puzzle::{Body, Grade, Puzzle, is_none_answer, numbers_text, words};
use super::rng::Rng;
use super::scenario::{Scenario, call1};
use super::text::{fill, msg};
use super::{Difficulty, Text};
use crate::cache::{Action, CallEvent};
use crate::config::DynamicMode;

struct SpotRecompile {
    scenario: Scenario,
    events: Vec<CallEvent>,
}

/// One attempt.
pub(super) fn build(rng: &mut Rng, difficulty: Difficulty) -> Option<Box<dyn Puzzle>> {
    let branch = BranchModel::new(rng, difficulty);
    let pool = branch.batch_pool(difficulty);
    let mode = match difficulty {
        Difficulty::Easy => DynamicMode::Auto,
        Difficulty::Mid => *rng.pick(&[DynamicMode::Auto, DynamicMode::True]),
        _ => *rng.pick(&[DynamicMode::Auto, DynamicMode::True, DynamicMode::False]),
    };
    let count = 5 + rng.below(2 + difficulty.level().min(1));
    let mut batches: Vec<i64> = Vec::new();
    while batches.len() < count {
        let next = if batches.len() > 1 && rng.chance(1, 4) {
            *rng.pick(&batches)
        } else {
            *rng.pick(&pool)
        };
        if batches.last() != Some(&next) {
            batches.push(next);
        }
    }
    // Both sides of the branch must appear, or there is nothing to spot.
    let t = branch.threshold;
    if !(batches.iter().any(|b| *b > t) && batches.iter().any(|b| *b <= t)) {
        return None;
    }
    let calls = batches
        .iter()
        .map(|b| call1("x", &[*b, branch.features]))
        .collect();
    let mut scenario = Scenario::new(branch.module.source(), mode, calls);
    if difficulty == Difficulty::Extreme && rng.chance(1, 3) {
        scenario.limit = 2;
    }
    let cache = scenario.run().ok()?;
    if cache.events.iter().any(|e| e.action == Action::Error) {
        return None;
    }
    Some(Box::new(SpotRecompile {
        events: cache.events.clone(),
        scenario,
    }))
}

impl SpotRecompile {
    fn recompiles(&self) -> Vec<usize> {
        self.events
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, e)| e.action == Action::Compile)
            .map(|(i, _)| i + 1)
            .collect()
    }

    fn format(&self) -> Text {
        msg(
            "spot_recompile.format",
            &[("last", &self.events.len().to_string())],
        )
    }

    /// One line per call after the first: what happened and why.
    fn story(&self) -> Text {
        let lines: Vec<Text> = self
            .events
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, event)| {
                let number = (i + 1).to_string();
                let reason = event.reasons.first().map_or("", |(_, r)| r.as_str());
                let entry = event.entry.map_or(String::new(), |e| format!("0/{e}"));
                msg(
                    &format!("spot_recompile.call_{}", event.action),
                    &[("number", &number), ("reason", reason), ("entry", &entry)],
                )
            })
            .collect();
        Text::join(&lines, "\n", "\n")
    }
}

impl Puzzle for SpotRecompile {
    fn body(&self) -> Body {
        Body {
            prompt: msg(
                "spot_recompile.prompt",
                &[
                    ("mode", &self.scenario.mode.to_string()),
                    ("last", &self.events.len().to_string()),
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
        numbers_text(&self.recompiles())
    }

    fn grade(&self, answer: &str) -> Grade {
        let expected = self.solution();
        let parts = words(answer);
        let mut chosen = Vec::new();
        if !is_none_answer(&parts) {
            for word in &parts {
                let number = word.trim_start_matches('#').parse::<usize>().ok();
                match number {
                    Some(n) if (2..=self.events.len()).contains(&n) => {
                        if !chosen.contains(&n) {
                            chosen.push(n);
                        }
                    }
                    Some(1) => {
                        return Grade::malformed(
                            expected,
                            msg("spot_recompile.first_call", &[]),
                            &self.format(),
                        );
                    }
                    _ => {
                        let problem = msg(
                            "spot_recompile.bad_number",
                            &[("word", word), ("last", &self.events.len().to_string())],
                        );
                        return Grade::malformed(expected, problem, &self.format());
                    }
                }
            }
        }
        chosen.sort_unstable();
        let truth = self.recompiles();
        let args = [
            ("expected", Text::same(expected.clone())),
            ("story", self.story()),
        ];
        if chosen == truth {
            Grade::right(expected.clone(), fill("spot_recompile.right", &args))
        } else {
            Grade::wrong(expected.clone(), fill("spot_recompile.wrong", &args))
        }
    }
}
