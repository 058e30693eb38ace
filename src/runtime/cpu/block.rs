//! Block programs: a kernel's `Value` trees compiled once per call into postfix steps, each
//! step computing a whole block of positions along the part's axis.
//!
//! In: the values and formulas of one part of a kernel (a map's element, a product's
//! epilogue, an operand to pack), with the call's sizes bound, and the candidate axes. Out:
//! a `Part` — its `Axis`, its formulas split along it, and the programs — that evaluates a
//! block with one formula evaluation per load and tight loops per step (strided gathers,
//! one elementwise loop per operation, which the compiler vectorises). Invariant: each
//! element gets exactly the arithmetic of the graph's own `UnaryOp::apply` and
//! `BinaryOp::apply`, in the same order as the value tree, so results match the reference
//! bit for bit wherever the reference computes the same expression.

use super::super::RunError;
use super::formula::{
    Axis, BLOCK, Run, Strided, Vars, for_each_block, for_each_run, inside, split_along,
};
use super::memory::{Memory, Window};
use super::parallel::union;
use crate::graph::{BinaryOp, RandomKind, UnaryOp, embedding_row, random_value};
use crate::lower::Value;
use crate::symbolic::Expr;
use std::ops::Range;

/// One step of a block program; operands are blocks on a stack.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Push the accumulator block the caller passes.
    Acc,
    /// Push a constant.
    Literal(f32),
    /// Push a formula's values as numbers.
    Index(usize),
    /// Push the random stream's elements at a formula's values (`graph::random_value`).
    Random(RandomKind, u32, usize),
    /// Push the elements of load number `n`.
    Load(usize),
    /// Replace the top (row numbers) by the elements of embedding number `n`.
    Embed(usize),
    /// Apply to the top.
    Unary(UnaryOp),
    /// Pop the top into the one below: `below = op(below, top)`.
    Binary(BinaryOp),
    /// `top = op(top, elements of load n)`: a broadcast operand (stride 0) is read once.
    BinaryLoad(BinaryOp, usize),
    /// `top = op(top, constant)`.
    BinaryConst(BinaryOp, f32),
    /// `top = op(constant, top)`.
    ConstBinary(f32, BinaryOp),
    /// Pop the two top blocks (`then`, then `otherwise` above it) into the condition below:
    /// `cond = if cond != 0 { then } else { otherwise }`.
    Select,
}

#[derive(Clone, Debug)]
struct LoadCode {
    buffer: usize,
    offset: usize,
    /// `(index, limit)` formula pairs: the element is read only where `0 <= index < limit`.
    mask: Vec<(usize, usize)>,
}

#[derive(Clone, Debug)]
struct EmbedCode {
    table: usize,
    rows: usize,
    width: usize,
    col: usize,
}

/// Collects the values and formulas of one part before its axis is chosen.
pub(super) struct PartBuilder<'a> {
    bind: &'a dyn Fn(&Expr) -> Result<Expr, RunError>,
    exprs: Vec<Expr>,
    loads: Vec<LoadCode>,
    embeds: Vec<EmbedCode>,
    codes: Vec<Vec<Step>>,
}

impl<'a> PartBuilder<'a> {
    /// A builder whose formulas go through `bind` (the call's sizes replaced by numbers).
    pub fn new(bind: &'a dyn Fn(&Expr) -> Result<Expr, RunError>) -> Self {
        PartBuilder {
            bind,
            exprs: Vec::new(),
            loads: Vec::new(),
            embeds: Vec::new(),
            codes: Vec::new(),
        }
    }

    /// Adds a formula (an offset, a bound); returns its number in the part.
    pub fn formula(&mut self, expr: &Expr) -> Result<usize, RunError> {
        self.exprs.push((self.bind)(expr)?);
        Ok(self.exprs.len() - 1)
    }

    /// Compiles `value`; returns its program's number.
    pub fn code(&mut self, value: &Value) -> Result<usize, RunError> {
        let mut steps = Vec::new();
        self.emit(value, &mut steps)?;
        self.codes.push(steps);
        Ok(self.codes.len() - 1)
    }

    fn emit(&mut self, value: &Value, steps: &mut Vec<Step>) -> Result<(), RunError> {
        match value {
            Value::Acc => steps.push(Step::Acc),
            Value::Literal(v) => steps.push(Step::Literal(*v)),
            Value::Size(expr) => {
                let bound = (self.bind)(expr)?;
                match bound.as_int() {
                    Some(v) => steps.push(Step::Literal(v as f32)),
                    None => {
                        self.exprs.push(bound);
                        steps.push(Step::Index(self.exprs.len() - 1));
                    }
                }
            }
            Value::Random { kind, seed, index } => {
                let bound = (self.bind)(index)?;
                self.exprs.push(bound);
                steps.push(Step::Random(*kind, *seed, self.exprs.len() - 1));
            }
            Value::Load(load) => {
                let offset = self.formula(&load.offset_elems)?;
                let mask = load
                    .mask
                    .iter()
                    .map(|bound| Ok((self.formula(&bound.expr)?, self.formula(&bound.limit)?)))
                    .collect::<Result<_, RunError>>()?;
                self.loads.push(LoadCode {
                    buffer: load.buffer.index(),
                    offset,
                    mask,
                });
                steps.push(Step::Load(self.loads.len() - 1));
            }
            Value::Embed {
                index,
                table,
                rows,
                width,
                col,
            } => {
                self.emit(index, steps)?;
                let code = EmbedCode {
                    table: table.index(),
                    rows: self.formula(rows)?,
                    width: self.formula(width)?,
                    col: self.formula(col)?,
                };
                self.embeds.push(code);
                steps.push(Step::Embed(self.embeds.len() - 1));
            }
            Value::Unary(op, inner) => {
                self.emit(inner, steps)?;
                steps.push(Step::Unary(*op));
            }
            Value::Binary(op, lhs, rhs) => match (lhs.as_ref(), rhs.as_ref()) {
                (_, Value::Literal(v)) => {
                    self.emit(lhs, steps)?;
                    steps.push(Step::BinaryConst(*op, *v));
                }
                (_, Value::Load(_)) => {
                    self.emit(lhs, steps)?;
                    self.emit(rhs, steps)?;
                    let Some(Step::Load(n)) = steps.pop() else {
                        unreachable!("a load compiles to one load step")
                    };
                    steps.push(Step::BinaryLoad(*op, n));
                }
                (Value::Literal(v), _) => {
                    self.emit(rhs, steps)?;
                    steps.push(Step::ConstBinary(*v, *op));
                }
                _ => {
                    self.emit(lhs, steps)?;
                    self.emit(rhs, steps)?;
                    steps.push(Step::Binary(*op));
                }
            },
            Value::Select {
                cond,
                then,
                otherwise,
            } => {
                self.emit(cond, steps)?;
                self.emit(then, steps)?;
                self.emit(otherwise, steps)?;
                steps.push(Step::Select);
            }
        }
        Ok(())
    }

    /// The part along the candidate with the longest runs (the first on a tie); with
    /// `unit_stride`, a candidate along which that formula has stride ±1 wins first (a
    /// store that writes contiguous memory).
    pub fn finish(self, candidates: &[usize], vars: &Vars, unit_stride: Option<usize>) -> Part {
        let mut best: Option<((bool, i64), Axis, Vec<Strided>)> = None;
        for &var in candidates {
            let (axis, formulas) = split_along(&self.exprs, var, vars);
            let unit = unit_stride.is_some_and(|f| formulas[f].stride.abs() == 1);
            let score = (unit, axis.period.min(vars.extents[var]));
            if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                best = Some((score, axis, formulas));
            }
        }
        let (_, axis, formulas) = best.unwrap_or_else(|| {
            let (axis, formulas) = split_along(&self.exprs, 0, vars);
            ((false, 0), axis, formulas)
        });
        let depth = self.codes.iter().map(|c| stack_depth(c)).max().unwrap_or(0);
        Part {
            axis,
            formulas,
            loads: self.loads,
            embeds: self.embeds,
            codes: self.codes,
            depth,
        }
    }
}

fn stack_depth(steps: &[Step]) -> usize {
    let (mut height, mut deepest) = (0usize, 0usize);
    for step in steps {
        match step {
            Step::Acc | Step::Literal(_) | Step::Index(_) | Step::Random(..) | Step::Load(_) => {
                height += 1
            }
            Step::Binary(_) => height = height.saturating_sub(1),
            Step::Select => height = height.saturating_sub(2),
            // Its operand takes the block above the top while it is combined.
            Step::BinaryLoad(..) => deepest = deepest.max(height + 1),
            _ => {}
        }
        deepest = deepest.max(height);
    }
    deepest
}

/// A part of a kernel compiled for one call: formulas split along `axis`, and programs.
#[derive(Clone, Debug)]
pub(super) struct Part {
    /// The variable its blocks run along.
    pub axis: Axis,
    formulas: Vec<Strided>,
    loads: Vec<LoadCode>,
    embeds: Vec<EmbedCode>,
    codes: Vec<Vec<Step>>,
    depth: usize,
}

/// Where a block's accumulator comes from: `data[j * stride]` at position `j`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Acc<'a> {
    data: &'a [f32],
    stride: usize,
}

impl<'a> Acc<'a> {
    /// No accumulator (a map, an operand): reads as zeros.
    pub fn none() -> Acc<'static> {
        Acc {
            data: &[],
            stride: 1,
        }
    }

    /// `data[j * stride]` at position `j`.
    pub fn strided(data: &'a [f32], stride: usize) -> Acc<'a> {
        Acc { data, stride }
    }

    /// The accumulator from position `n` on.
    fn skip(&self, n: usize) -> Acc<'a> {
        let start = n.saturating_mul(self.stride).min(self.data.len());
        Acc {
            data: &self.data[start..],
            stride: self.stride,
        }
    }

    fn read(&self, out: &mut [f32]) {
        let needed = (out.len().saturating_sub(1)).saturating_mul(self.stride);
        if out.is_empty() || needed >= self.data.len() {
            // `Acc` in a part that has none (a map's value) has no value to read: zero keeps
            // such a schedule running, deterministically, instead of failing.
            out.fill(0.0);
            return;
        }
        if self.stride == 1 {
            out.copy_from_slice(&self.data[..out.len()]);
            return;
        }
        for (o, a) in out
            .iter_mut()
            .zip(self.data.iter().step_by(self.stride.max(1)))
        {
            *o = *a;
        }
    }
}

/// Scratch blocks for evaluating a part's programs.
pub(super) struct Stack {
    blocks: Vec<f32>,
}

impl Part {
    /// Formula number `id`.
    pub fn formula(&self, id: usize) -> &Strided {
        &self.formulas[id]
    }

    /// The range of offsets formula `store` takes over `values` of the axis variable (the
    /// other variables as in `slots`): what a job writing those values owns.
    pub fn hull(
        &self,
        store: usize,
        values: Range<i64>,
        slots: &mut [i64],
        vars: &Vars,
    ) -> Result<Range<i64>, RunError> {
        let formula = &self.formulas[store];
        let mut hull = 0..0;
        for_each_run(self.axis, values, |run| {
            slots[vars.slot(self.axis.var)] = run.number;
            let first = formula
                .start(slots)?
                .saturating_add(formula.stride.saturating_mul(run.first));
            let last = first.saturating_add(formula.stride.saturating_mul(run.len as i64 - 1));
            let this = first.min(last)..first.max(last).saturating_add(1);
            hull = union(hull.clone(), this);
            Ok(())
        })?;
        Ok(hull)
    }

    /// Every formula's part that stays the same across runs while the variables other
    /// than the axis keep their values in `slots` (see `Strided::outer`), into `outer`.
    pub fn outer_starts(&self, slots: &[i64], outer: &mut Vec<i64>) -> Result<(), RunError> {
        outer.clear();
        for formula in &self.formulas {
            outer.push(formula.outer(slots)?);
        }
        Ok(())
    }

    /// Every formula's value at position 0 of the run in `slots`, into `starts`; `outer`
    /// comes from [`Part::outer_starts`] at the same outer values.
    pub fn starts(
        &self,
        slots: &[i64],
        outer: &[i64],
        starts: &mut Vec<i64>,
    ) -> Result<(), RunError> {
        starts.clear();
        for (formula, &outer) in self.formulas.iter().zip(outer) {
            starts.push(formula.start_with(outer, slots)?);
        }
        Ok(())
    }

    /// Formula `id` at position `first` of the run whose `starts` are given.
    pub fn at(&self, id: usize, starts: &[i64], first: i64) -> i64 {
        starts[id].saturating_add(self.formulas[id].stride.saturating_mul(first))
    }

    /// Stack space for this part's programs.
    pub fn stack(&self) -> Stack {
        Stack {
            blocks: vec![0.0; self.depth.max(1) * BLOCK],
        }
    }

    /// The values of program `code` at positions `first..first + len` (`len <= BLOCK`) of
    /// the run whose formula starts are `starts`; `acc` holds the accumulator there.
    #[expect(clippy::too_many_arguments, reason = "a block is all of these")]
    pub fn eval<'s>(
        &self,
        code: usize,
        memory: &Memory<'_>,
        starts: &[i64],
        first: i64,
        len: usize,
        acc: Acc<'_>,
        stack: &'s mut Stack,
    ) -> Result<&'s [f32], RunError> {
        let (out, rest) = stack.blocks.split_at_mut(BLOCK);
        let out = &mut out[..len];
        self.run_steps(code, memory, starts, first, acc, out, rest)?;
        Ok(out)
    }

    /// The values of program `code` from position `first` of the run, straight into `out`
    /// (any length: blocks of `BLOCK` one after another), the result of the last step
    /// landing there without a copy.
    #[expect(clippy::too_many_arguments, reason = "a block is all of these")]
    pub fn eval_into(
        &self,
        code: usize,
        memory: &Memory<'_>,
        starts: &[i64],
        first: i64,
        acc: Acc<'_>,
        stack: &mut Stack,
        out: &mut [f32],
    ) -> Result<(), RunError> {
        if let [Step::Load(n)] = self.codes[code][..] {
            return self.load(n, memory, starts, first, out);
        }
        for (b, block) in out.chunks_mut(BLOCK).enumerate() {
            let at = (b * BLOCK) as i64;
            let acc = acc.skip(b * BLOCK);
            self.run_steps(
                code,
                memory,
                starts,
                first + at,
                acc,
                block,
                &mut stack.blocks,
            )?;
        }
        Ok(())
    }

    /// Program `code` over `run`, stored through formula `store` into `window`: straight
    /// into the window where the store is contiguous, block by block otherwise.
    #[expect(clippy::too_many_arguments, reason = "a run is all of these")]
    pub fn store_run(
        &self,
        (code, store): (usize, usize),
        memory: &Memory<'_>,
        starts: &[i64],
        run: Run,
        acc: Acc<'_>,
        stack: &mut Stack,
        window: &mut Window<'_>,
    ) -> Result<(), RunError> {
        let stride = self.formulas[store].stride;
        if stride == 1 {
            let out = window.slice(memory, self.at(store, starts, run.first), run.len)?;
            return self.eval_into(code, memory, starts, run.first, acc, stack, out);
        }
        for_each_block(run, |first, len| {
            let acc = acc.skip((first - run.first) as usize);
            let values = self.eval(code, memory, starts, first, len, acc, stack)?;
            window.write(memory, self.at(store, starts, first), stride, values)
        })
    }

    /// Runs the steps with stack slot 0 in `out` and the others in `rest`.
    #[expect(clippy::too_many_arguments, reason = "a block is all of these")]
    fn run_steps(
        &self,
        code: usize,
        memory: &Memory<'_>,
        starts: &[i64],
        first: i64,
        acc: Acc<'_>,
        out: &mut [f32],
        rest: &mut [f32],
    ) -> Result<(), RunError> {
        let len = out.len();
        let mut slots = Slots { out, rest, len };
        let mut top = 0;
        for step in &self.codes[code] {
            match *step {
                Step::Acc => {
                    acc.read(slots.get(top));
                    top += 1;
                }
                Step::Literal(v) => {
                    slots.get(top).fill(v);
                    top += 1;
                }
                Step::Index(f) => {
                    let (start, stride) = (self.at(f, starts, first), self.formulas[f].stride);
                    for (j, x) in slots.get(top).iter_mut().enumerate() {
                        *x = start.saturating_add(stride.saturating_mul(j as i64)) as f32;
                    }
                    top += 1;
                }
                Step::Random(kind, seed, f) => {
                    let (start, stride) = (self.at(f, starts, first), self.formulas[f].stride);
                    for (j, x) in slots.get(top).iter_mut().enumerate() {
                        let index = start.saturating_add(stride.saturating_mul(j as i64));
                        // Flat positions of a tensor the kernels can bind fit in u32.
                        *x = random_value(kind, seed, index as u32);
                    }
                    top += 1;
                }
                Step::Load(n) => {
                    self.load(n, memory, starts, first, slots.get(top))?;
                    top += 1;
                }
                Step::Embed(n) => self.embed(n, memory, starts, first, slots.get(top - 1))?,
                Step::Unary(op) => unary(op, slots.get(top - 1)),
                Step::Binary(op) => {
                    let (lhs, rhs) = slots.pair(top - 2);
                    binary(op, lhs, rhs);
                    top -= 1;
                }
                Step::BinaryLoad(op, n) => {
                    let load = &self.loads[n];
                    if load.mask.is_empty() && self.formulas[load.offset].stride == 0 {
                        let v = memory.read(load.buffer, self.at(load.offset, starts, first))?;
                        binary_const(op, slots.get(top - 1), v);
                    } else {
                        self.load(n, memory, starts, first, slots.get(top))?;
                        let (lhs, rhs) = slots.pair(top - 1);
                        binary(op, lhs, rhs);
                    }
                }
                Step::BinaryConst(op, v) => binary_const(op, slots.get(top - 1), v),
                Step::ConstBinary(v, op) => const_binary(op, v, slots.get(top - 1)),
                Step::Select => {
                    let (cond, then, otherwise) = slots.triple(top - 3);
                    for ((c, t), o) in cond.iter_mut().zip(then).zip(otherwise) {
                        *c = if *c != 0.0 { *t } else { *o };
                    }
                    top -= 2;
                }
            }
        }
        Ok(())
    }

    fn load(
        &self,
        n: usize,
        memory: &Memory<'_>,
        starts: &[i64],
        first: i64,
        out: &mut [f32],
    ) -> Result<(), RunError> {
        let load = &self.loads[n];
        let mut valid = 0..out.len();
        for &(index, limit) in &load.mask {
            let value = (self.at(index, starts, first), self.formulas[index].stride);
            let bound = (self.at(limit, starts, first), self.formulas[limit].stride);
            let range = inside(value, bound, out.len());
            valid = valid.start.max(range.start)..valid.end.min(range.end);
        }
        if valid.start >= valid.end {
            out.fill(0.0);
            return Ok(());
        }
        out[..valid.start].fill(0.0);
        out[valid.end..].fill(0.0);
        let stride = self.formulas[load.offset].stride;
        let start = self.at(load.offset, starts, first + valid.start as i64);
        memory.gather(load.buffer, start, stride, &mut out[valid])
    }

    fn embed(
        &self,
        n: usize,
        memory: &Memory<'_>,
        starts: &[i64],
        first: i64,
        values: &mut [f32],
    ) -> Result<(), RunError> {
        let embed = &self.embeds[n];
        for (j, x) in values.iter_mut().enumerate() {
            let at = |f: usize| self.at(f, starts, first + j as i64);
            // A negative row count is a bad schedule; as no rows it wraps every index to 0.
            let rows = usize::try_from(at(embed.rows)).unwrap_or(0);
            let row = embedding_row(*x, rows) as i64;
            let offset = row
                .saturating_mul(at(embed.width))
                .saturating_add(at(embed.col));
            *x = memory.read(embed.table, offset)?;
        }
        Ok(())
    }
}

/// A program's stack: slot 0 is where the result goes, the others `BLOCK` apart in `rest`.
struct Slots<'a> {
    out: &'a mut [f32],
    rest: &'a mut [f32],
    len: usize,
}

impl Slots<'_> {
    fn get(&mut self, n: usize) -> &mut [f32] {
        match n {
            0 => self.out,
            n => &mut self.rest[(n - 1) * BLOCK..][..self.len],
        }
    }

    /// Slot `n` to write and slots `n + 1`, `n + 2` to read.
    fn triple(&mut self, n: usize) -> (&mut [f32], &[f32], &[f32]) {
        let len = self.len;
        let (written, read) = if n == 0 {
            (&mut *self.out, &*self.rest)
        } else {
            let (below, above) = self.rest.split_at_mut(n * BLOCK);
            (&mut below[(n - 1) * BLOCK..][..len], &*above)
        };
        (&mut written[..len], &read[..len], &read[BLOCK..][..len])
    }

    /// Slot `n` to write and slot `n + 1` to read.
    fn pair(&mut self, n: usize) -> (&mut [f32], &[f32]) {
        let len = self.len;
        if n == 0 {
            return (self.out, &self.rest[..len]);
        }
        let (below, above) = self.rest.split_at_mut(n * BLOCK);
        (&mut below[(n - 1) * BLOCK..][..len], &above[..len])
    }
}

/// `op` over a block, one loop per function so each loop is specialised (and vectorised).
fn unary(op: UnaryOp, xs: &mut [f32]) {
    macro_rules! each {
        ($($variant:ident),*) => {
            match op {
                $(UnaryOp::$variant => {
                    for x in xs.iter_mut() {
                        *x = UnaryOp::$variant.apply(*x);
                    }
                })*
            }
        };
    }
    each!(
        Relu, Gelu, Silu, Sigmoid, Tanh, Neg, Exp, Sqrt, Log, Abs, Sin, Cos, Erf, Floor, Ceil,
        Round, Trunc, Sign
    )
}

/// `lhs = op(lhs, v)` over a block.
fn binary_const(op: BinaryOp, lhs: &mut [f32], v: f32) {
    macro_rules! each {
        ($($variant:ident),*) => {
            match op {
                $(BinaryOp::$variant => {
                    for a in lhs.iter_mut() {
                        *a = BinaryOp::$variant.apply(*a, v);
                    }
                })*
            }
        };
    }
    each!(
        Add, Sub, Mul, Div, Eq, Ne, Lt, Le, Gt, Ge, Maximum, Minimum, Pow
    )
}

/// `rhs = op(v, rhs)` over a block.
fn const_binary(op: BinaryOp, v: f32, rhs: &mut [f32]) {
    macro_rules! each {
        ($($variant:ident),*) => {
            match op {
                $(BinaryOp::$variant => {
                    for b in rhs.iter_mut() {
                        *b = BinaryOp::$variant.apply(v, *b);
                    }
                })*
            }
        };
    }
    each!(
        Add, Sub, Mul, Div, Eq, Ne, Lt, Le, Gt, Ge, Maximum, Minimum, Pow
    )
}

/// `lhs = op(lhs, rhs)` over a block, one loop per operation.
fn binary(op: BinaryOp, lhs: &mut [f32], rhs: &[f32]) {
    macro_rules! each {
        ($($variant:ident),*) => {
            match op {
                $(BinaryOp::$variant => {
                    for (a, b) in lhs.iter_mut().zip(rhs) {
                        *a = BinaryOp::$variant.apply(*a, *b);
                    }
                })*
            }
        };
    }
    each!(
        Add, Sub, Mul, Div, Eq, Ne, Lt, Le, Gt, Ge, Maximum, Minimum, Pow
    )
}
