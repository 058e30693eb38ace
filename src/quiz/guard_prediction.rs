//! Exercise kind 2, guard prediction: compiled entries and a new call — hit, recompile or
//! eager, and which guard of the first entry in lookup order fails?
//!
//! In: a generator and a difficulty. Out: a puzzle built from a template model, a mode, a few
//! earlier calls (and from `hard` on sometimes a recompile limit the cache already reached)
//! and one new call. Invariant: the outcome is the cache's own event for the new call, and
//! the failing guard is the one `GuardSet::check` reports for the entry PyTorch checks first
//! (the first line of its recompile log).

use super::modelgen::{self, Template, TemplateKind};
use super::puzzle::{Body, Choice, EntryView, Grade, Puzzle, words};
use super::rng::Rng;
use super::scenario::{Scenario, failing_line, inputs_text, mark};
use super::text::{fill, msg};
use super::{Difficulty, Text};
use crate::cache::Action;
use crate::config::DynamicMode;
use crate::guard::CallShapes;
struct GuardPrediction {
    scenario: Scenario,
    new_call: CallShapes,
    /// Entries before the new call, most recently used first.
    entries: Vec<EntryView>,
    outcome: Action,
    /// For a hit: the entry that ran.
    hit: Option<usize>,
    /// For a miss: the failing line of the first entry (0-based) and PyTorch's reason.
    failing: Option<(usize, String)>,
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
    let history_len = match difficulty {
        Difficulty::Easy => 1,
        Difficulty::Mid => 2,
        Difficulty::Hard | Difficulty::Extreme => rng.range(1, 3) as usize,
    };
    let mut values = vec![template.values(rng)];
    while values.len() < history_len {
        let next = template.vary(rng, values.last().expect("not empty"));
        values.push(next);
    }
    let mut scenario = Scenario::new(
        template.source.clone(),
        mode,
        values.iter().map(|v| template.call(v)).collect(),
    );
    if difficulty == Difficulty::Extreme && rng.chance(1, 3) {
        let free = template.free_dims();
        let (input, dim) = rng.pick(&free);
        scenario.marks.push(mark(input, *dim));
    }
    let mut cache = scenario.run().ok()?;
    if difficulty >= Difficulty::Hard && rng.chance(1, 2) {
        // The cache is full: a miss now runs eagerly.
        scenario.limit = cache.compiles().max(1);
        cache = scenario.run().ok()?;
    }
    if cache.events.iter().any(|e| e.action == Action::Error) {
        return None;
    }
    // Repeating an earlier call is an easy hit; harder levels mostly ask about new sizes.
    let repeat = if difficulty == Difficulty::Easy { 3 } else { 6 };
    let repeated = rng.chance(1, repeat);
    let new_values = if repeated {
        rng.pick(&values).clone()
    } else {
        let once = template.vary(rng, values.last().expect("not empty"));
        if difficulty >= Difficulty::Mid && rng.chance(1, 2) {
            template.vary(rng, &once)
        } else {
            once
        }
    };
    let new_call = template.call(&new_values);
    let entries: Vec<EntryView> = cache
        .entries_mru()
        .iter()
        .map(|entry| EntryView {
            id: entry.id,
            inputs: inputs_text(entry),
            guards: entry.guards.source_lines(),
        })
        .collect();
    let first = cache.entries_mru().first()?.id;
    let marked = scenario.marked(&new_call);
    let line = failing_line(cache.entry(first)?, &new_call, &marked);
    let event = scenario.call(&mut cache, &new_call);
    let failing = match event.action {
        Action::Error => return None,
        // New sizes hit more often than not; some are redrawn so misses are not rare.
        Action::Hit if !repeated && rng.chance(2, 3) => return None,
        Action::Hit => None,
        Action::Compile | Action::Eager => {
            let reason = event.reasons.first()?.1.clone();
            Some((line?, reason))
        }
    };
    scenario.calls.push(new_call.clone());
    Some(Box::new(GuardPrediction {
        scenario,
        new_call,
        entries,
        outcome: event.action,
        hit: event.entry.filter(|_| event.action == Action::Hit),
        failing,
    }))
}

fn outcome_word(action: Action) -> &'static str {
    match action {
        Action::Hit => "hit",
        Action::Eager => "eager",
        Action::Compile | Action::Error => "recompile",
    }
}

fn outcome_text(action: Action) -> Text {
    msg(&format!("outcome.{}", outcome_word(action)), &[])
}

/// `hit`, `recompile`/`compile` or `eager`, in English or Chinese.
fn parse_outcome(word: &str) -> Option<Action> {
    match word {
        "hit" | "命中" => Some(Action::Hit),
        "recompile" | "compile" | "miss" | "重编译" | "重新编译" | "编译" => {
            Some(Action::Compile)
        }
        "eager" | "回退" | "eager执行" => Some(Action::Eager),
        _ => None,
    }
}

impl GuardPrediction {
    fn format(&self) -> Text {
        msg("guard_prediction.format", &[])
    }

    fn first_entry(&self) -> &EntryView {
        &self.entries[0]
    }

    /// Why the outcome is what it is, in words.
    fn why(&self) -> Text {
        match (self.outcome, &self.failing) {
            (Action::Hit, _) => msg(
                "guard_prediction.why_hit",
                &[("entry", &format!("0/{}", self.hit.unwrap_or_default()))],
            ),
            (action, Some((line, reason))) => {
                let key = if action == Action::Eager {
                    "guard_prediction.why_eager"
                } else {
                    "guard_prediction.why_recompile"
                };
                msg(
                    key,
                    &[
                        ("entry", &format!("0/{}", self.first_entry().id)),
                        ("number", &(line + 1).to_string()),
                        ("reason", reason),
                        ("limit", &self.scenario.limit.to_string()),
                    ],
                )
            }
            (_, None) => unreachable!("a miss always records the first entry's failing guard"),
        }
    }
}

impl Puzzle for GuardPrediction {
    fn body(&self) -> Body {
        let first = self.first_entry();
        Body {
            prompt: msg(
                "guard_prediction.prompt",
                &[
                    ("call", &self.new_call.to_spec()),
                    ("number", &self.scenario.calls.len().to_string()),
                    ("entry", &format!("0/{}", first.id)),
                ],
            ),
            answer_format: self.format(),
            source: self.scenario.source.clone(),
            code: self.scenario.python(modelgen::CLASS, true),
            replay: self.scenario.replay(),
            entries: self.entries.clone(),
            choices: first
                .guards
                .iter()
                .enumerate()
                .map(|(i, text)| Choice {
                    id: (i + 1).to_string(),
                    text: text.clone(),
                })
                .collect(),
            ..Body::default()
        }
    }

    fn solution(&self) -> String {
        match &self.failing {
            Some((line, _)) => format!("{} {}", outcome_word(self.outcome), line + 1),
            None => outcome_word(self.outcome).to_string(),
        }
    }

    fn grade(&self, answer: &str) -> Grade {
        let expected = self.solution();
        let parts: Vec<String> = words(&answer.replace(':', " "));
        let Some(first) = parts.first() else {
            return Grade::malformed(expected, msg("answer.empty", &[]), &self.format());
        };
        let Some(outcome) = parse_outcome(first) else {
            let problem = msg("guard_prediction.bad_outcome", &[("word", first)]);
            return Grade::malformed(expected, problem, &self.format());
        };
        if outcome != self.outcome {
            let feedback = fill(
                "guard_prediction.wrong_outcome",
                &[
                    ("given", outcome_text(outcome)),
                    ("expected", outcome_text(self.outcome)),
                    ("why", self.why()),
                ],
            );
            return Grade::wrong(expected, feedback);
        }
        let Some((line, _)) = &self.failing else {
            return Grade::right(expected, self.why());
        };
        let count = self.first_entry().guards.len();
        let guard = parts.get(1).map(|w| {
            w.trim_start_matches(['g', '#'])
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=count).contains(n))
        });
        match guard {
            None => {
                let problem = msg(
                    "guard_prediction.no_guard",
                    &[("count", &count.to_string())],
                );
                Grade::malformed(expected, problem, &self.format())
            }
            Some(None) => {
                let problem = msg(
                    "guard_prediction.bad_guard",
                    &[("word", &parts[1]), ("count", &count.to_string())],
                );
                Grade::malformed(expected, problem, &self.format())
            }
            Some(Some(number)) if number == line + 1 => Grade::right(expected, self.why()),
            Some(Some(number)) => {
                let feedback = fill(
                    "guard_prediction.wrong_guard",
                    &[
                        ("given", Text::same(number.to_string())),
                        (
                            "given_guard",
                            Text::same(self.first_entry().guards[number - 1].clone()),
                        ),
                        ("why", self.why()),
                    ],
                );
                Grade::wrong(expected, feedback)
            }
        }
    }
}
