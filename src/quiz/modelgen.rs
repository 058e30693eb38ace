//! Random small models, written out as the Python a learner reads.
//!
//! In: a pseudo-random generator and a difficulty. Out: Python source for a `Net` module —
//! either a layer stack for shape exercises (conv / pool / linear / view / cat with random
//! parameters and some dims marked dynamic), or a [`Template`] whose input dims are tied to
//! value pools so that cache exercises can make many valid calls. Invariant: generators only
//! write Python; whether a model compiles, and what it computes, is left to the compiler
//! (a failed attempt is simply retried with the next random draw).

use super::Difficulty;
use super::rng::Rng;
use crate::guard::CallShapes;
/// A `class Net(nn.Module)` being written.
#[derive(Clone, Debug, Default)]
pub(crate) struct PyModule {
    init: Vec<String>,
    args: Vec<String>,
    body: Vec<String>,
    counters: Vec<(String, usize)>,
}

/// The name of every generated class.
pub(crate) const CLASS: &str = "Net";

impl PyModule {
    /// A module whose `forward` takes `args`.
    pub(crate) fn new(args: &[&str]) -> PyModule {
        PyModule {
            args: args.iter().map(|a| a.to_string()).collect(),
            ..PyModule::default()
        }
    }

    /// Adds `self.<prefix>N = <constructor>` and returns `self.<prefix>N`.
    pub(crate) fn layer(&mut self, prefix: &str, constructor: String) -> String {
        let number = match self.counters.iter_mut().find(|(p, _)| p == prefix) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.counters.push((prefix.to_string(), 1));
                1
            }
        };
        let name = format!("self.{prefix}{number}");
        self.init.push(format!("{name} = {constructor}"));
        name
    }

    /// Adds a statement to `forward`.
    pub(crate) fn line(&mut self, line: impl Into<String>) {
        self.body.push(line.into());
    }

    /// The whole file.
    pub(crate) fn source(&self) -> String {
        let mut out = String::from("import torch\nimport torch.nn as nn\n\n\n");
        out.push_str(&format!("class {CLASS}(nn.Module):\n"));
        if !self.init.is_empty() {
            out.push_str("    def __init__(self):\n        super().__init__()\n");
            for line in &self.init {
                out.push_str(&format!("        {line}\n"));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "    def forward(self, {}):\n",
            self.args.join(", ")
        ));
        for line in &self.body {
            out.push_str(&format!("        {line}\n"));
        }
        out
    }
}

/// `nn.Conv1d(...)`/`nn.Conv2d(...)` with only the non-default keywords.
fn conv(dims: usize, c_in: i64, c_out: i64, k: i64, s: i64, p: i64, d: i64) -> String {
    let mut text = format!("nn.Conv{dims}d({c_in}, {c_out}, kernel_size={k}");
    if s != 1 {
        text.push_str(&format!(", stride={s}"));
    }
    if p != 0 {
        text.push_str(&format!(", padding={p}"));
    }
    if d != 1 {
        text.push_str(&format!(", dilation={d}"));
    }
    text.push(')');
    text
}

/// Output length of a convolution or pooling window at a concrete input length.
fn window(len: i64, k: i64, s: i64, p: i64, d: i64) -> i64 {
    (len + 2 * p - d * (k - 1) - 1).div_euclid(s) + 1
}

/// A model for the output-shape exercise and the concrete call it is compiled for.
#[derive(Clone, Debug)]
pub(crate) struct ShapeModel {
    /// The Python source.
    pub source: String,
    /// The input's sizes at the compiled call.
    pub dims: Vec<i64>,
    /// The input dims marked dynamic.
    pub marked: Vec<usize>,
}

/// Shortest spatial length a layer may leave, so later layers still have room.
const MIN_LEN: i64 = 4;

/// A random layer stack over `x`; deeper and with more kinds of layers as the difficulty rises.
pub(crate) fn shape_model(rng: &mut Rng, difficulty: Difficulty) -> ShapeModel {
    match rng.below(3) {
        0 => conv1d_stack(rng, difficulty),
        1 => conv2d_stack(rng, difficulty),
        _ => linear_stack(rng, difficulty),
    }
}

fn layer_count(rng: &mut Rng, difficulty: Difficulty) -> usize {
    match difficulty {
        Difficulty::Easy => 1,
        Difficulty::Mid => 2,
        Difficulty::Hard => 2 + rng.below(2),
        Difficulty::Extreme => 3 + rng.below(2),
    }
}

/// Random conv parameters that keep the length at least `MIN_LEN`; `None` when none fit.
fn conv_params(rng: &mut Rng, difficulty: Difficulty, len: i64) -> Option<(i64, i64, i64, i64)> {
    let level = difficulty.level();
    for _ in 0..8 {
        let k = *rng.pick(&[1, 3, 3, 5, 7]);
        let s = if level == 0 {
            *rng.pick(&[1, 1, 2])
        } else {
            *rng.pick(&[1, 2, 2, 3])
        };
        let p = rng.range(0, k / 2);
        let d = if level >= 2 && k > 1 && rng.chance(1, 3) {
            2
        } else {
            1
        };
        if window(len, k, s, p, d) >= MIN_LEN {
            return Some((k, s, p, d));
        }
    }
    None
}

fn conv1d_stack(rng: &mut Rng, difficulty: Difficulty) -> ShapeModel {
    let level = difficulty.level();
    let batch = rng.range(2, 8);
    let mut channels = *rng.pick(&[3, 4, 8]);
    let mut len = rng.range(40, 96);
    let dims = vec![batch, channels, len];
    let mut module = PyModule::new(&["x"]);
    let mut var = "x";
    for _ in 0..layer_count(rng, difficulty) {
        let out = *rng.pick(&[4, 6, 8, 12, 16]);
        let roll = rng.below(4);
        if level >= 2 && roll == 0 {
            // Two branches of different windows joined along the length: the lengths add.
            let (Some((k1, s1, p1, d1)), Some((k2, s2, p2, d2))) = (
                conv_params(rng, difficulty, len),
                conv_params(rng, difficulty, len),
            ) else {
                break;
            };
            let a = module.layer("conv", conv(1, channels, out, k1, s1, p1, d1));
            let b = module.layer("conv", conv(1, channels, out, k2, s2, p2, d2));
            module.line(format!("h = torch.cat([{a}({var}), {b}({var})], dim=2)"));
            len = window(len, k1, s1, p1, d1) + window(len, k2, s2, p2, d2);
            channels = out;
        } else if level >= 1 && roll == 1 {
            // Two branches that keep the length, joined along the channels.
            let q = rng.range(1, 2);
            let extra = *rng.pick(&[2, 4, 8]);
            let a = module.layer("conv", conv(1, channels, out, 2 * q + 1, 1, q, 1));
            let b = module.layer("conv", conv(1, channels, extra, 1, 1, 0, 1));
            module.line(format!("h = torch.cat([{a}({var}), {b}({var})], dim=1)"));
            channels = out + extra;
        } else {
            let Some((k, s, p, d)) = conv_params(rng, difficulty, len) else {
                break;
            };
            let layer = module.layer("conv", conv(1, channels, out, k, s, p, d));
            if rng.chance(1, 2) {
                module.line(format!("h = torch.relu({layer}({var}))"));
            } else {
                module.line(format!("h = {layer}({var})"));
            }
            len = window(len, k, s, p, d);
            channels = out;
        }
        var = "h";
    }
    if level >= 2 && var == "h" {
        match rng.below(4) {
            0 => module.line("h = h.flatten(1)"),
            1 => module.line("h = h.view(h.shape[0], -1)"),
            2 => {
                let fc = module.layer("fc", format!("nn.Linear({channels}, {})", rng.range(2, 10)));
                module.line(format!("h = {fc}(h.transpose(1, 2))"));
            }
            _ => {}
        }
    }
    module.line(format!("return {var}"));
    ShapeModel {
        source: module.source(),
        dims,
        marked: vec![0, 2],
    }
}

fn conv2d_stack(rng: &mut Rng, difficulty: Difficulty) -> ShapeModel {
    let level = difficulty.level();
    let batch = rng.range(2, 8);
    let mut channels = *rng.pick(&[1, 3]);
    let (mut height, mut width) = (rng.range(24, 64), rng.range(24, 64));
    let dims = vec![batch, channels, height, width];
    let mut module = PyModule::new(&["x"]);
    let mut var = "x";
    for _ in 0..layer_count(rng, difficulty) {
        if level >= 1 && var == "h" && rng.chance(1, 2) {
            let k = *rng.pick(&[2, 3]);
            let s = if rng.chance(1, 2) { k } else { 2 };
            let p = rng.range(0, k / 2);
            let (h2, w2) = (window(height, k, s, p, 1), window(width, k, s, p, 1));
            if h2.min(w2) < MIN_LEN {
                break;
            }
            let kind = if rng.chance(1, 2) {
                "MaxPool2d"
            } else {
                "AvgPool2d"
            };
            let mut args = format!("kernel_size={k}");
            if s != k {
                args.push_str(&format!(", stride={s}"));
            }
            if p != 0 {
                args.push_str(&format!(", padding={p}"));
            }
            let pool = module.layer("pool", format!("nn.{kind}({args})"));
            module.line(format!("h = {pool}(h)"));
            (height, width) = (h2, w2);
        } else {
            let Some((k, s, p, d)) = conv_params(rng, difficulty, height.min(width)) else {
                break;
            };
            let out = *rng.pick(&[4, 8, 16]);
            let layer = module.layer("conv", conv(2, channels, out, k, s, p, d));
            module.line(format!("h = torch.relu({layer}({var}))"));
            (height, width) = (window(height, k, s, p, d), window(width, k, s, p, d));
            channels = out;
        }
        var = "h";
    }
    if level >= 2 && var == "h" {
        // Averaging away the spatial dims is a fair trick once, not the finale of `extreme`.
        match rng.below(if difficulty == Difficulty::Hard { 3 } else { 2 }) {
            0 => module.line("h = h.flatten(1)"),
            2 => {
                let fc = module.layer("fc", format!("nn.Linear({channels}, {})", rng.range(2, 10)));
                module.line(format!("h = {fc}(h.mean(dim=(2, 3)))"));
            }
            _ => {}
        }
    }
    module.line(format!("return {var}"));
    ShapeModel {
        source: module.source(),
        dims,
        marked: vec![0, 2, 3],
    }
}

fn linear_stack(rng: &mut Rng, difficulty: Difficulty) -> ShapeModel {
    let level = difficulty.level();
    let (batch, seq, features) = (rng.range(2, 8), rng.range(10, 64), *rng.pick(&[8, 12, 16]));
    let heads = *rng.pick(&[2, 4]);
    let hidden = heads * *rng.pick(&[2, 3, 4]);
    let mut module = PyModule::new(&["x"]);
    let fc = module.layer("fc", format!("nn.Linear({features}, {hidden})"));
    module.line(format!("h = {fc}(x)"));
    let mut steps: Vec<usize> = (0..4).collect();
    rng.shuffle(&mut steps);
    steps.truncate(layer_count(rng, difficulty) - 1);
    // Joins along the sequence come before the head split, which moves the sequence dim.
    steps.sort_unstable();
    for step in steps {
        match step {
            0 => module.line("h = torch.cat([h, h], dim=1)"),
            1 => {
                let other = module.layer("fc", format!("nn.Linear({features}, {hidden})"));
                module.line(format!("h = torch.cat([h, {other}(x)], dim=1)"));
            }
            2 => module.line(format!(
                "h = h.view(h.shape[0], h.shape[1], {heads}, {}).transpose(1, 2)",
                hidden / heads
            )),
            _ => module.line("h = torch.relu(h)"),
        }
    }
    if level >= 2 && rng.chance(1, 2) {
        module.line("h = h.flatten(1)");
    }
    module.line("return h");
    ShapeModel {
        source: module.source(),
        dims: vec![batch, seq, features],
        marked: vec![0, 1],
    }
}

/// One input dim of a [`Template`]: fixed by the model, or tied to a value group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Always this size (a weight needs it).
    Fixed(i64),
    /// The current value of group `g`; dims in one group are always equal (an op needs it).
    Group(usize),
}

/// A model whose calls are always valid: each call picks one value per group.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    /// The Python source.
    pub source: String,
    /// Input names and their dims.
    pub inputs: Vec<(String, Vec<Slot>)>,
    /// The values each group may take.
    pub pools: Vec<Vec<i64>>,
}

/// Which templates a kind may draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TemplateKind {
    /// `Linear -> ReLU -> Linear` over `x: [B, D]`.
    Mlp,
    /// `Linear` over the last dim of `x: [B, L, D]`.
    Seq,
    /// `Conv1d` over `x: [B, C, L]`.
    Conv,
    /// `x.view(-1, K)` over `x: [B, N]`.
    View,
    /// `a + b`, both `[N]` or `[N, M]`.
    Add,
    /// `a @ b` over `[M, K] x [K, N]`.
    Matmul,
    /// `if x.shape[0] > T:` around a `Linear` over `x: [B, D]`.
    Branch,
}

impl TemplateKind {
    /// Every template.
    pub(crate) const ALL: [TemplateKind; 7] = [
        TemplateKind::Mlp,
        TemplateKind::Seq,
        TemplateKind::Conv,
        TemplateKind::View,
        TemplateKind::Add,
        TemplateKind::Matmul,
        TemplateKind::Branch,
    ];
}

/// Batch sizes; size 1 appears from `hard` on, where 0/1 specialization is fair game.
fn batch_pool(difficulty: Difficulty) -> Vec<i64> {
    let mut pool = vec![2, 3, 4, 6, 8, 12, 16, 32];
    if difficulty >= Difficulty::Hard {
        pool.push(1);
    }
    pool
}

impl Template {
    /// A template of kind `kind` with random parameters.
    pub(crate) fn new(kind: TemplateKind, rng: &mut Rng, difficulty: Difficulty) -> Template {
        let batch = batch_pool(difficulty);
        match kind {
            TemplateKind::Mlp => {
                let (d, h) = (*rng.pick(&[16, 32, 64]), *rng.pick(&[32, 64, 128]));
                let mut m = PyModule::new(&["x"]);
                let fc1 = m.layer("fc", format!("nn.Linear({d}, {h})"));
                let fc2 = m.layer("fc", format!("nn.Linear({h}, {d})"));
                m.line(format!("return {fc2}(torch.relu({fc1}(x)))"));
                Template::one(m, vec![Slot::Group(0), Slot::Fixed(d)], vec![batch])
            }
            TemplateKind::Seq => {
                let (d, h) = (*rng.pick(&[16, 32]), *rng.pick(&[8, 24, 64]));
                let mut m = PyModule::new(&["x"]);
                let fc = m.layer("fc", format!("nn.Linear({d}, {h})"));
                m.line(format!("return {fc}(x)"));
                let lengths = vec![8, 16, 24, 32, 64, 128];
                let slots = vec![Slot::Group(0), Slot::Group(1), Slot::Fixed(d)];
                Template::one(m, slots, vec![batch, lengths])
            }
            TemplateKind::Conv => {
                let (c, out) = (*rng.pick(&[3, 4, 8]), *rng.pick(&[8, 16]));
                let (k, s) = (*rng.pick(&[3, 5]), *rng.pick(&[1, 2]));
                let p = rng.range(0, k / 2);
                let mut m = PyModule::new(&["x"]);
                let layer = m.layer("conv", conv(1, c, out, k, s, p, 1));
                m.line(format!("return torch.relu({layer}(x))"));
                let lengths = vec![8, 16, 32, 50, 64, 100];
                let slots = vec![Slot::Group(0), Slot::Fixed(c), Slot::Group(1)];
                Template::one(m, slots, vec![batch, lengths])
            }
            TemplateKind::View => {
                let k = *rng.pick(&[2, 4, 8]);
                let mut m = PyModule::new(&["x"]);
                m.line(format!("return x.view(-1, {k}) * 2"));
                let widths: Vec<i64> = [1, 2, 3, 4, 6].iter().map(|f| f * k).collect();
                let slots = vec![Slot::Group(0), Slot::Group(1)];
                Template::one(m, slots, vec![batch, widths])
            }
            TemplateKind::Add => {
                let mut m = PyModule::new(&["a", "b"]);
                m.line("return a + b");
                let sizes = vec![2, 3, 4, 5, 8, 16];
                let rank = if difficulty >= Difficulty::Mid && rng.chance(1, 2) {
                    2
                } else {
                    1
                };
                let slots: Vec<Slot> = (0..rank).map(Slot::Group).collect();
                Template {
                    source: m.source(),
                    inputs: vec![("a".into(), slots.clone()), ("b".into(), slots)],
                    pools: vec![sizes; rank],
                }
            }
            TemplateKind::Matmul => {
                let mut m = PyModule::new(&["a", "b"]);
                m.line("return a @ b");
                let sizes = vec![2, 3, 4, 6, 8, 16];
                Template {
                    source: m.source(),
                    inputs: vec![
                        ("a".into(), vec![Slot::Group(0), Slot::Group(1)]),
                        ("b".into(), vec![Slot::Group(1), Slot::Group(2)]),
                    ],
                    pools: vec![sizes; 3],
                }
            }
            TemplateKind::Branch => {
                let branch = BranchModel::new(rng, difficulty);
                let pool = branch.batch_pool(difficulty);
                Template::one(
                    branch.module,
                    vec![Slot::Group(0), Slot::Fixed(branch.features)],
                    vec![pool],
                )
            }
        }
    }

    fn one(module: PyModule, slots: Vec<Slot>, pools: Vec<Vec<i64>>) -> Template {
        Template {
            source: module.source(),
            inputs: vec![("x".into(), slots)],
            pools,
        }
    }

    /// One random value per group.
    pub(crate) fn values(&self, rng: &mut Rng) -> Vec<i64> {
        self.pools.iter().map(|pool| *rng.pick(pool)).collect()
    }

    /// `values` with one random group changed to a different value of its pool.
    pub(crate) fn vary(&self, rng: &mut Rng, values: &[i64]) -> Vec<i64> {
        let mut next = values.to_vec();
        let group = rng.below(self.pools.len());
        let others: Vec<i64> = self.pools[group]
            .iter()
            .copied()
            .filter(|v| *v != values[group])
            .collect();
        if !others.is_empty() {
            next[group] = *rng.pick(&others);
        }
        next
    }

    /// The call with these group values.
    pub(crate) fn call(&self, values: &[i64]) -> CallShapes {
        CallShapes::new(
            self.inputs
                .iter()
                .map(|(name, slots)| {
                    let dims = slots
                        .iter()
                        .map(|slot| match slot {
                            Slot::Fixed(v) => *v,
                            Slot::Group(g) => values[*g],
                        })
                        .collect();
                    (name.clone(), dims)
                })
                .collect(),
        )
    }

    /// Input dims that may vary between calls, as `(input, dim)`.
    pub(crate) fn free_dims(&self) -> Vec<(String, usize)> {
        self.inputs
            .iter()
            .flat_map(|(name, slots)| {
                slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| matches!(s, Slot::Group(_)))
                    .map(move |(dim, _)| (name.clone(), dim))
            })
            .collect()
    }
}

/// `if x.shape[0] > T:` (and from `hard` on an `elif x.shape[0] <= U:`) around a `Linear`.
#[derive(Clone, Debug)]
pub(crate) struct BranchModel {
    /// The module.
    pub module: PyModule,
    /// The Linear's input features (the fixed dim 1 of `x`).
    pub features: i64,
    /// Batches above this take the first branch.
    pub threshold: i64,
    /// Batches at or below this take the `elif` branch, when there is one.
    pub lower: Option<i64>,
}

impl BranchModel {
    /// A random branch model.
    pub(crate) fn new(rng: &mut Rng, difficulty: Difficulty) -> BranchModel {
        let features = *rng.pick(&[16, 32, 64]);
        let out = *rng.pick(&[8, 16, 32]);
        let threshold = *rng.pick(&[8, 10, 12, 16, 20, 24, 32]);
        let lower = (difficulty >= Difficulty::Hard && rng.chance(1, 2))
            .then(|| rng.range(2, threshold / 2).max(2));
        let mut module = PyModule::new(&["x"]);
        let fc = module.layer("fc", format!("nn.Linear({features}, {out})"));
        module.line(format!("if x.shape[0] > {threshold}:"));
        module.line(format!("    return torch.relu({fc}(x))"));
        if let Some(lower) = lower {
            module.line(format!("elif x.shape[0] <= {lower}:"));
            module.line(format!("    return {fc}(x) * 2"));
        }
        module.line(format!("return {fc}(x)"));
        BranchModel {
            module,
            features,
            threshold,
            lower,
        }
    }

    /// Batch sizes on both sides of every branch.
    pub(crate) fn batch_pool(&self, difficulty: Difficulty) -> Vec<i64> {
        let t = self.threshold;
        let mut pool = vec![t / 2, t - 2, t, t + 1, t + 4, 2 * t, 3 * t];
        if let Some(lower) = self.lower {
            pool.extend([lower, lower + 1]);
        }
        if difficulty >= Difficulty::Hard {
            pool.push(1);
        }
        pool.retain(|v| *v >= 1);
        pool.sort_unstable();
        pool.dedup();
        pool
    }
}
