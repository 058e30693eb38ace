//! Exercise kind 1, output shape: a random layer stack and a symbolic input shape; the
//! learner types the symbolic output shape.
//!
//! In: a generator and a difficulty. Out: a puzzle whose expected shape is the output node's
//! shape in the compiled graph. Invariant: answers are compared by expression equivalence
//! over the input symbols' ranges (`s0*2` and `2*s0` both pass), never as strings.

use super::modelgen::{self, ShapeModel};
use super::puzzle::{Body, Grade, Puzzle, Replay};
use super::rng::Rng;
use super::scenario::{Scenario, call1, inputs_text, mark};
use super::text::msg;
use super::{Difficulty, Text};
use crate::cache::Action;
use crate::config::{DynamicMode, MarkDynamic};
use crate::graph::shape_to_string;
use crate::symbolic::{Bindings, Expr, Sym, ValueRange};
use std::collections::BTreeSet;

struct OutputShape {
    model: ShapeModel,
    code: String,
    replay: Replay,
    input: String,
    expected: Vec<Expr>,
    /// Every input symbol with its range and its size at the compiled call.
    symbols: Vec<(Sym, ValueRange, i64)>,
}

/// One attempt: the model must compile with every marked dim still symbolic.
pub(super) fn build(rng: &mut Rng, difficulty: Difficulty) -> Option<Box<dyn Puzzle>> {
    let model = modelgen::shape_model(rng, difficulty);
    let marks: Vec<MarkDynamic> = model.marked.iter().map(|d| mark("x", *d)).collect();
    let scenario = Scenario {
        marks,
        ..Scenario::new(
            model.source.clone(),
            DynamicMode::Auto,
            vec![call1("x", &model.dims)],
        )
    };
    let cache = scenario.run().ok()?;
    if cache.events.first()?.action != Action::Compile {
        return None;
    }
    let entry = cache.entry(0)?;
    let [output] = entry.graph.outputs() else {
        return None;
    };
    let expected = entry.graph.shape(*output).clone();
    let symbols: Vec<(Sym, ValueRange, i64)> = entry
        .env
        .symbols()
        .iter()
        .filter(|info| !entry.env.replacements().contains_key(&info.sym))
        .map(|info| (info.sym, entry.env.range(info.sym), info.hint))
        .collect();
    if symbols.len() != model.marked.len() {
        return None;
    }
    Some(Box::new(OutputShape {
        code: scenario.python(modelgen::CLASS, true),
        replay: scenario.replay(),
        input: inputs_text(entry).replacen('=', ": ", 1),
        model,
        expected,
        symbols,
    }))
}

impl OutputShape {
    fn expected_text(&self) -> String {
        shape_to_string(&self.expected)
    }

    fn range_of(&self, sym: Sym) -> ValueRange {
        self.symbols
            .iter()
            .find(|(s, _, _)| *s == sym)
            .map_or(ValueRange::unbounded(), |(_, range, _)| *range)
    }

    fn format(&self) -> Text {
        msg("output_shape.format", &[])
    }

    /// A binding at which `given` and `expected` differ: the compiled call's sizes first,
    /// then one symbol at a time swept from the bottom of its range.
    fn counterexample(&self, given: &Expr, expected: &Expr) -> Option<Bindings> {
        let base: Bindings = self.symbols.iter().map(|(s, _, h)| (*s, *h)).collect();
        let differs = |b: &Bindings| given.eval(b) != expected.eval(b);
        if differs(&base) {
            return Some(base);
        }
        for (sym, range, _) in &self.symbols {
            let lo = range.lo.unwrap_or(2);
            for value in lo..lo + 64 {
                if !range.contains(value) {
                    break;
                }
                let mut bindings = base.clone();
                bindings.set(*sym, value);
                if differs(&bindings) {
                    return Some(bindings);
                }
            }
        }
        None
    }
}

/// Splits `[a, b, c]` (or `(a, b)`, or `a, b`) into its top-level parts.
fn split_shape(answer: &str) -> Vec<String> {
    let mut text = answer.trim();
    if let Some(inner) = text
        .strip_prefix("torch.Size(")
        .and_then(|t| t.strip_suffix(')'))
    {
        text = inner.trim();
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        text = inner;
    } else if let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        // `(s0, 8)` is a tuple, `(s0 - 1)//2` an expression: only a top-level comma decides.
        if top_level_parts(inner).len() > 1 {
            text = inner;
        }
    }
    let mut parts = top_level_parts(text);
    if parts.len() > 1 && parts.last().is_some_and(|p| p.trim().is_empty()) {
        parts.pop();
    }
    parts.into_iter().map(|p| p.trim().to_string()).collect()
}

fn top_level_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn bindings_text(bindings: &Bindings) -> String {
    bindings
        .iter()
        .map(|(s, v)| format!("{s}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Puzzle for OutputShape {
    fn body(&self) -> Body {
        let marked: Vec<String> = self
            .model
            .marked
            .iter()
            .map(|d| format!("x.size()[{d}]"))
            .collect();
        Body {
            prompt: msg(
                "output_shape.prompt",
                &[("input", &self.input), ("marked", &marked.join(", "))],
            ),
            answer_format: self.format(),
            source: self.model.source.clone(),
            code: self.code.clone(),
            replay: self.replay.clone(),
            input: Some(self.input.clone()),
            ..Body::default()
        }
    }

    fn solution(&self) -> String {
        self.expected_text()
    }

    fn grade(&self, answer: &str) -> Grade {
        let expected_text = self.expected_text();
        let parts = split_shape(answer);
        if parts.iter().all(String::is_empty) {
            return Grade::malformed(expected_text, msg("answer.empty", &[]), &self.format());
        }
        let known: BTreeSet<Sym> = self.symbols.iter().map(|(s, _, _)| *s).collect();
        let mut given = Vec::new();
        for part in &parts {
            let expr: Expr = match part.parse() {
                Ok(expr) => expr,
                Err(error) => {
                    let problem = msg(
                        "output_shape.parse",
                        &[("part", part), ("error", &error.to_string())],
                    );
                    return Grade::malformed(expected_text, problem, &self.format());
                }
            };
            if let Some(unknown) = expr.free_syms().difference(&known).next() {
                let names: Vec<String> = known.iter().map(Sym::to_string).collect();
                let problem = msg(
                    "output_shape.unknown_symbol",
                    &[("sym", &unknown.to_string()), ("known", &names.join(", "))],
                );
                return Grade::malformed(expected_text, problem, &self.format());
            }
            given.push(expr);
        }
        if given.len() != self.expected.len() {
            let feedback = msg(
                "output_shape.rank",
                &[
                    ("given", &given.len().to_string()),
                    ("expected", &self.expected.len().to_string()),
                    ("shape", &expected_text),
                ],
            );
            return Grade::wrong(expected_text, feedback);
        }
        let ranges = |sym: Sym| self.range_of(sym);
        for (dim, (mine, theirs)) in given.iter().zip(&self.expected).enumerate() {
            if mine.is_equivalent(theirs, &ranges) {
                continue;
            }
            let dim_text = dim.to_string();
            let (mine_text, theirs_text) = (mine.to_string(), theirs.to_string());
            let feedback = match self.counterexample(mine, theirs) {
                Some(bindings) => {
                    let value = |e: &Expr| e.eval(&bindings).map_or("?".into(), |v| v.to_string());
                    msg(
                        "output_shape.dim",
                        &[
                            ("dim", &dim_text),
                            ("given", &mine_text),
                            ("expected", &theirs_text),
                            ("at", &bindings_text(&bindings)),
                            ("given_value", &value(mine)),
                            ("expected_value", &value(theirs)),
                        ],
                    )
                }
                None => msg(
                    "output_shape.dim_generic",
                    &[
                        ("dim", &dim_text),
                        ("given", &mine_text),
                        ("expected", &theirs_text),
                    ],
                ),
            };
            return Grade::wrong(expected_text, feedback);
        }
        let feedback = msg("output_shape.right", &[("shape", &expected_text)]);
        Grade::right(expected_text, feedback)
    }
}
