//! Exercise kind 4, write the guard: a model and its first call under a mode — which of these
//! guards are installed?
//!
//! In: a generator and a difficulty. Out: a multiple-choice puzzle whose options mix real
//! guards of the compiled entry with plausible wrong ones: a lower bound of 1, a made-up
//! `<= 512` bound, a set-membership guard PyTorch never emits, an equality that does not
//! hold, a symbolic dim pinned to its size, a wrong `TENSOR_MATCH`. Invariant: the real
//! options are exactly lines the compiler printed, and a made-up option is kept only if it
//! is not one of them.

use super::modelgen::{self, Template, TemplateKind};
use super::puzzle::{Body, Choice, Grade, Puzzle};
use super::rng::Rng;
use super::scenario::{Scenario, inputs_text};
use super::text::{fill, msg};
use super::{Difficulty, Text};
use crate::cache::{Action, DimSpec, Entry};
use crate::config::{DynamicMode, MarkDynamic};
use crate::guard::{CallShapes, GuardKind, TensorGuard};
struct WriteGuard {
    scenario: Scenario,
    entry: String,
    /// The options, and whether each is a real guard.
    options: Vec<(Choice, bool)>,
}

/// The guards of `entry` as options: tensor guards, then the printed shape guards except the
/// dimension-marking ones (the prompt says they are left out).
fn real_guards(entry: &Entry) -> Vec<String> {
    let mut lines: Vec<String> = entry
        .guards
        .tensors
        .iter()
        .map(ToString::to_string)
        .collect();
    lines.extend(
        entry
            .guards
            .printed()
            .into_iter()
            .filter(|g| g.kind != GuardKind::DimensionMarking)
            .map(|g| g.source.clone()),
    );
    lines
}

fn source(input: &str, dim: usize) -> String {
    format!("L['{input}'].size()[{dim}]")
}

/// Plausible guards that may or may not be real; the caller drops the real ones.
fn made_up(entry: &Entry, call: &CallShapes) -> Vec<String> {
    let mut out = Vec::new();
    let mut symbolic: Vec<(String, &str)> = Vec::new();
    for ((input, dims), (_, sizes)) in entry.inputs.iter().zip(call.tensors()) {
        for (dim, (spec, size)) in dims.iter().zip(sizes).enumerate() {
            let src = source(input, dim);
            out.push(format!("{src} in {{1, 2, 4, 8}}"));
            // Static dims get no made-up relations: TENSOR_MATCH already pins them, so a
            // relation on them would be true though not printed.
            if let DimSpec::Dynamic { sym, .. } = spec {
                out.push(format!("1 <= {src}"));
                out.push(format!("2 <= {src} <= 512"));
                out.push(format!("{src} == {size}"));
                out.push(format!("({src} % 2) == 0"));
                symbolic.push((src, sym));
            }
        }
    }
    // Equalities only between dims with different symbols: equal symbols are equal dims.
    for (i, (a, sym_a)) in symbolic.iter().enumerate() {
        for (b, sym_b) in &symbolic[i + 1..] {
            if sym_a != sym_b {
                out.push(format!("{b} == {a}"));
            }
        }
    }
    for tensor in &entry.guards.tensors {
        // The same tensor check with one dim flipped between checked and unchecked.
        for dim in 0..tensor.sizes.len() {
            let mut sizes = tensor.sizes.clone();
            sizes[dim] = match sizes[dim] {
                Some(_) => None,
                None => call
                    .tensors()
                    .find(|(n, _)| *n == tensor.input)
                    .map(|(_, s)| s[dim]),
            };
            out.push(
                TensorGuard {
                    sizes,
                    ..tensor.clone()
                }
                .to_string(),
            );
        }
    }
    out
}

/// Whether `line` says the same as one of `real` (an equality may be written either way).
fn is_real(line: &str, real: &[String]) -> bool {
    let flipped = line.split_once(" == ").map(|(a, b)| format!("{b} == {a}"));
    real.iter()
        .any(|r| r == line || flipped.as_deref() == Some(r.as_str()))
}

/// One attempt.
pub(super) fn build(rng: &mut Rng, difficulty: Difficulty) -> Option<Box<dyn Puzzle>> {
    let template = Template::new(*rng.pick(&TemplateKind::ALL), rng, difficulty);
    let call = template.call(&template.values(rng));
    let mut scenario = Scenario::new(
        template.source.clone(),
        DynamicMode::True,
        vec![call.clone()],
    );
    match rng.below(10) {
        0..=4 => {}
        5..=7 => {
            scenario.mode = DynamicMode::Auto;
            for (input, dim) in template.free_dims() {
                if rng.chance(2, 3) {
                    let max = (difficulty >= Difficulty::Mid && rng.chance(1, 2))
                        .then(|| *rng.pick(&[64, 256, 512, 1024]));
                    scenario.marks.push(MarkDynamic {
                        input,
                        dim,
                        min: max.map(|_| 2),
                        max,
                    });
                }
            }
        }
        _ => scenario.mode = *rng.pick(&[DynamicMode::Auto, DynamicMode::False]),
    }
    let cache = scenario.run().ok()?;
    if cache.events.first()?.action != Action::Compile {
        return None;
    }
    let entry = cache.entry(0)?;
    let mut real = real_guards(entry);
    let mut fake: Vec<String> = made_up(entry, &call)
        .into_iter()
        .filter(|line| !is_real(line, &real))
        .collect();
    fake.sort();
    fake.dedup();
    rng.shuffle(&mut real);
    rng.shuffle(&mut fake);
    let n_real = real.len().min(2 + difficulty.level().min(2));
    let n_fake = fake.len().min(2 + rng.below(3));
    if n_fake < 2 {
        return None;
    }
    let mut picked: Vec<(String, bool)> = real
        .into_iter()
        .take(n_real)
        .map(|l| (l, true))
        .chain(fake.into_iter().take(n_fake).map(|l| (l, false)))
        .collect();
    rng.shuffle(&mut picked);
    let options = picked
        .into_iter()
        .enumerate()
        .map(|(i, (text, real))| {
            let id = char::from(b'A' + i as u8).to_string();
            (Choice { id, text }, real)
        })
        .collect();
    Some(Box::new(WriteGuard {
        entry: inputs_text(entry),
        scenario,
        options,
    }))
}

impl WriteGuard {
    fn format(&self) -> Text {
        msg("write_guard.format", &[])
    }

    fn ids(&self, real: bool) -> Vec<&str> {
        self.options
            .iter()
            .filter(|(_, r)| *r == real)
            .map(|(c, _)| c.id.as_str())
            .collect()
    }
}

impl Puzzle for WriteGuard {
    fn body(&self) -> Body {
        let marks: Vec<String> = self
            .scenario
            .marks
            .iter()
            .map(|m| format!("{}:{}", m.input, m.dim))
            .collect();
        let how = if marks.is_empty() {
            msg(
                "write_guard.mode",
                &[("mode", &self.scenario.mode.to_string())],
            )
        } else {
            msg("write_guard.marked", &[("marks", &marks.join(", "))])
        };
        Body {
            prompt: fill("write_guard.prompt", &[("how", how)]),
            answer_format: self.format(),
            source: self.scenario.source.clone(),
            code: self.scenario.python(modelgen::CLASS, true),
            replay: self.scenario.replay(),
            choices: self.options.iter().map(|(c, _)| c.clone()).collect(),
            ..Body::default()
        }
    }

    fn solution(&self) -> String {
        self.ids(true).join(", ")
    }

    fn grade(&self, answer: &str) -> Grade {
        let expected = self.solution();
        let mut chosen: Vec<String> = Vec::new();
        for c in answer.chars() {
            if c.is_whitespace() || matches!(c, ',' | ';' | '，' | '、') {
                continue;
            }
            let id = c.to_ascii_uppercase().to_string();
            if !self.options.iter().any(|(o, _)| o.id == id) {
                let last = self
                    .options
                    .last()
                    .map_or("A".into(), |(o, _)| o.id.clone());
                let problem = msg(
                    "write_guard.bad_letter",
                    &[("letter", &c.to_string()), ("last", &last)],
                );
                return Grade::malformed(expected, problem, &self.format());
            }
            if !chosen.contains(&id) {
                chosen.push(id);
            }
        }
        if chosen.is_empty() {
            return Grade::malformed(expected, msg("answer.empty", &[]), &self.format());
        }
        let missed: Vec<&str> = self
            .ids(true)
            .into_iter()
            .filter(|id| !chosen.iter().any(|c| c == id))
            .collect();
        let wrong: Vec<&str> = self
            .ids(false)
            .into_iter()
            .filter(|id| chosen.iter().any(|c| c == id))
            .collect();
        let args = [
            ("expected", expected.as_str()),
            ("entry", self.entry.as_str()),
            ("missed", &missed.join(", ")),
            ("wrong", &wrong.join(", ")),
        ];
        match (missed.is_empty(), wrong.is_empty()) {
            (true, true) => Grade::right(expected.clone(), msg("write_guard.right", &args)),
            (false, true) => Grade::wrong(expected.clone(), msg("write_guard.missed", &args)),
            (true, false) => Grade::wrong(expected.clone(), msg("write_guard.wrong", &args)),
            (false, false) => Grade::wrong(expected.clone(), msg("write_guard.both", &args)),
        }
    }
}
