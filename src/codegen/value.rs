//! WGSL for the pieces of a kernel: size expressions, named sizes, and per-element values.
//!
//! In: a kernel and its specialization. Out: WGSL expression text — `i32` for sizes and
//! offsets, `f32` for values — and the helper functions the text calls. Invariant: a size
//! prints as a literal (static), through `override` names (`s0`) or through the uniform
//! (`dims.s0`); index variables and derived sizes always print by name.

use super::{Mode, Specialization, static_value};
use crate::graph::{BinaryOp, RandomKind, UnaryOp};
use crate::lower::{Kernel, Schedule, Value};
use crate::symbolic::{Bindings, Expr, Sym};
use std::cell::RefCell;

/// Prints expressions and values of one kernel.
pub struct Writer<'a> {
    /// The schedule (buffer names, symbol ranges).
    pub schedule: &'a Schedule,
    /// The kernel.
    pub kernel: &'a Kernel,
    mode: Mode,
    /// Static mode: shape symbols and derived sizes with their values.
    values: Bindings,
    /// Static mode: module-scope `const` declarations collected while writing.
    pub consts: RefCell<Vec<(String, String)>>,
    /// Inside [`Writer::hoisting`]: its loop variables and what it hoisted so far.
    hoisted: RefCell<Option<Hoisted>>,
}

/// The loop variables of a [`Writer::hoisting`], and the values that depend on none of
/// them, as (WGSL text, `let` name), in the order they must be declared.
struct Hoisted {
    loop_vars: Vec<Sym>,
    lets: Vec<(String, String)>,
}

impl<'a> Writer<'a> {
    pub fn new(schedule: &'a Schedule, kernel: &'a Kernel, spec: &Specialization<'_>) -> Self {
        let mut values = Bindings::new();
        if let Specialization::Static(bindings) = spec {
            values = (*bindings).clone();
            for size in &kernel.sizes {
                if let Some(v) = static_value(&size.value, &values) {
                    values.set(size.sym, v);
                }
            }
        }
        Writer {
            schedule,
            kernel,
            mode: spec.mode(),
            values,
            consts: RefCell::new(Vec::new()),
            hoisted: RefCell::new(None),
        }
    }

    /// Runs `body`, which writes the code inside loops over `vars`, with every division,
    /// modulo, minimum or maximum that depends on none of them named by a `let` (`inv0`,
    /// `inv1`, …; one per distinct value); returns what `body` returned and those `let`s, to
    /// emit before the loops where every symbol they read is in scope. A shader
    /// compiler may not hoist them itself: SwiftShader's recomputed a convolution's
    /// unravelled row at every step of its reduction (2.3-3.6x slower, measured).
    pub fn hoisting<T>(&self, vars: &[Sym], indent: &str, body: impl FnOnce() -> T) -> (T, String) {
        *self.hoisted.borrow_mut() = Some(Hoisted {
            loop_vars: vars.to_vec(),
            lets: Vec::new(),
        });
        let written = body();
        let hoisted = self.hoisted.borrow_mut().take().expect("set above");
        let lets = hoisted
            .lets
            .iter()
            .map(|(text, name)| format!("{indent}let {name} = {text};\n"))
            .collect();
        (written, lets)
    }

    fn ranges(&self) -> impl Fn(Sym) -> crate::symbolic::ValueRange + '_ {
        |sym| self.kernel.range(sym, &|s| self.schedule.range(s))
    }

    /// The value of a size in static code.
    pub fn static_int(&self, expr: &Expr) -> Option<i64> {
        match self.mode {
            Mode::Static => static_value(expr, &self.values),
            Mode::Override | Mode::Dynamic | Mode::Immediate => None,
        }
    }

    /// An `i32` WGSL expression for `expr`.
    pub fn expr(&self, expr: &Expr) -> String {
        let ranges = self.ranges();
        let expr = match self.mode {
            Mode::Static => {
                let mut folded = expr.clone();
                for sym in expr.free_syms() {
                    if let Some(v) = self.values.get(sym) {
                        folded = folded.substitute(sym, &Expr::int(v));
                    }
                }
                folded.simplify_in(&ranges)
            }
            Mode::Override | Mode::Dynamic | Mode::Immediate => expr.clone(),
        };
        let name = |sym: Sym| match self.kernel.local_name(sym) {
            Some(local) => local,
            None if matches!(self.mode, Mode::Dynamic | Mode::Immediate) => format!("dims.{sym}"),
            None => sym.to_string(),
        };
        let loop_vars = self.hoisted.borrow().as_ref().map(|h| h.loop_vars.clone());
        let Some(loop_vars) = loop_vars else {
            return expr.to_wgsl(&name, &ranges);
        };
        let hoist = |text: &str| {
            let mut hoisted = self.hoisted.borrow_mut();
            let lets = &mut hoisted.as_mut().expect("inside hoisting").lets;
            let known = lets.iter().find(|(known, _)| known == text);
            let name = match known {
                Some((_, name)) => name.clone(),
                None => {
                    let name = format!("inv{}", lets.len());
                    lets.push((text.to_string(), name.clone()));
                    name
                }
            };
            Some(name)
        };
        expr.to_wgsl_hoisting(&name, &ranges, &loop_vars, &hoist)
    }

    /// Lets for the derived sizes (`let z0 = …;`), needed outside static code.
    pub fn size_lets(&self) -> String {
        if self.mode == Mode::Static {
            return String::new();
        }
        self.kernel
            .sizes
            .iter()
            .map(|size| format!("    let {} = {};\n", size.name, self.expr(&size.value)))
            .collect()
    }

    /// Defines a named size: a module `const` in static code (returns no text), else a
    /// `let` at the top of `main` (returned).
    pub fn define(&self, name: &str, expr: &Expr) -> String {
        match self.mode {
            Mode::Static => {
                self.consts
                    .borrow_mut()
                    .push((name.to_string(), self.expr(expr)));
                String::new()
            }
            Mode::Override | Mode::Dynamic | Mode::Immediate => {
                format!("    let {name} = {};\n", self.expr(expr))
            }
        }
    }

    /// An `f32` WGSL expression for `value`, with `acc` naming the accumulator.
    pub fn value(&self, value: &Value, acc: &str) -> String {
        match value {
            Value::Acc => acc.to_string(),
            Value::Literal(v) => float_literal(*v),
            Value::Size(expr) => format!("f32({})", self.expr(expr)),
            Value::Load(load) => {
                let read = format!(
                    "{}[{}]",
                    self.schedule.buffer(load.buffer).name,
                    self.expr(&load.offset_elems)
                );
                if load.mask.is_empty() {
                    return read;
                }
                let conditions: Vec<String> = load
                    .mask
                    .iter()
                    .map(|b| format!("inside({}, {})", self.expr(&b.expr), self.expr(&b.limit)))
                    .collect();
                format!("select(0.0f, {read}, {})", conditions.join(" && "))
            }
            Value::Embed {
                index,
                table,
                rows,
                width,
                col,
            } => format!(
                "{}[(i32(abs({})) % {}) * {} + {}]",
                self.schedule.buffer(*table).name,
                self.value(index, acc),
                self.expr(rows),
                self.expr(width),
                self.expr(col)
            ),
            Value::Random { kind, seed, index } => format!(
                "tailor_random(u32({}), {seed}u, {})",
                self.expr(index),
                *kind == RandomKind::Normal
            ),
            Value::Unary(op, inner) => {
                let x = self.value(inner, acc);
                match op {
                    UnaryOp::Relu => format!("max({x}, 0.0f)"),
                    UnaryOp::Gelu => format!("gelu_erf({x})"),
                    UnaryOp::Silu => format!("silu({x})"),
                    UnaryOp::Sigmoid => format!("sigmoid({x})"),
                    // Clamped: tanh(±15) is ±1 in f32, and some drivers overflow beyond.
                    UnaryOp::Tanh => format!("tanh(clamp({x}, -15.0f, 15.0f))"),
                    UnaryOp::Neg => format!("-({x})"),
                    UnaryOp::Exp => format!("exp({x})"),
                    UnaryOp::Sqrt => format!("sqrt({x})"),
                    UnaryOp::Log => format!("log({x})"),
                    UnaryOp::Abs => format!("abs({x})"),
                    UnaryOp::Sin => format!("sin({x})"),
                    UnaryOp::Cos => format!("cos({x})"),
                    UnaryOp::Erf => format!("tailor_erf({x})"),
                    UnaryOp::Floor => format!("floor({x})"),
                    UnaryOp::Ceil => format!("ceil({x})"),
                    // WGSL's round takes halves to even, as torch.round does.
                    UnaryOp::Round => format!("round({x})"),
                    UnaryOp::Trunc => format!("trunc({x})"),
                    UnaryOp::Sign => format!("sign({x})"),
                }
            }
            Value::Binary(op, lhs, rhs) if op.is_function() => format!(
                "{}({}, {})",
                // WGSL's `pow` is undefined for a negative base; torch.pow is not.
                if *op == BinaryOp::Pow {
                    "tailor_pow"
                } else {
                    op.symbol()
                },
                self.value(lhs, acc),
                self.value(rhs, acc)
            ),
            Value::Binary(op, lhs, rhs) => {
                let applied = format!(
                    "({} {} {})",
                    self.value(lhs, acc),
                    op.symbol(),
                    self.value(rhs, acc)
                );
                if op.is_comparison() {
                    format!("select(0.0f, 1.0f, {applied})")
                } else {
                    applied
                }
            }
            Value::Select {
                cond,
                then,
                otherwise,
            } => format!(
                "select({}, {}, {} != 0.0f)",
                self.value(otherwise, acc),
                self.value(then, acc),
                self.value(cond, acc)
            ),
        }
    }
}

/// A WGSL `f32` literal; infinities and NaN by their bits (WGSL has no literal for them).
pub fn float_literal(v: f32) -> String {
    if v.is_finite() {
        format!("{v:?}f")
    } else {
        format!("bitcast<f32>({:#010x}u)", v.to_bits())
    }
}

/// Helper functions called by `body`, in a fixed order.
pub fn helpers(body: &str) -> Vec<&'static str> {
    HELPERS
        .iter()
        .filter(|(name, _)| body.contains(&format!("{name}(")))
        .map(|(_, source)| *source)
        .collect()
}

const HELPERS: [(&str, &str); 7] = [
    (
        "tailor_pow",
        "// torch.pow. WGSL's pow is exp2(y * log2(x)): undefined for x < 0 and for 0 ** 0, and
// a whole power of whole numbers is off by an ulp. PyTorch's is defined for a negative base
// and a whole exponent (negative for an odd one), 0 ** 0 is 1, and 3 ** 5 is 243 exactly.
fn tailor_pow(x: f32, y: f32) -> f32 {
    let whole = y == trunc(y);
    var magnitude = select(pow(abs(x), y), 1.0f, y == 0.0f);
    if (whole && y > 0.0f && x == trunc(x)) {
        magnitude = round(magnitude);
    }
    let odd = whole && abs(y - 2.0f * floor(0.5f * y)) == 1.0f;
    if (x < 0.0f && !whole) {
        return pow(x, y);
    }
    return select(magnitude, -magnitude, x < 0.0f && odd);
}
",
    ),
    (
        "tailor_random",
        "// graph::random_value: PCG's hash of index + seed as a 24-bit fraction, or Box-Muller
// over it and its hash for a normal.
fn pcg_hash(v: u32) -> u32 {
    let state = v * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

fn tailor_random(index: u32, seed: u32, normal: bool) -> f32 {
    let a = pcg_hash(index + seed);
    let unit = f32(a >> 8u) * (1.0f / 16777216.0f);
    if (!normal) {
        return unit;
    }
    let u2 = f32(pcg_hash(a) >> 8u) * (1.0f / 16777216.0f);
    return sqrt(-2.0f * log(1.0f - unit)) * cos(6.2831855f * u2);
}
",
    ),
    (
        "tailor_erf",
        "// torch.erf by Abramowitz & Stegun 7.1.26, as the CPU reference computes it.
fn tailor_erf(x: f32) -> f32 {
    let t = 1.0f / (1.0f + 0.3275911f * abs(x));
    let poly = t * (0.2548296f + t * (-0.28449674f + t * (1.4214137f + t * (-1.4531521f + t * 1.0614054f))));
    let erf_abs = 1.0f - poly * exp(-x * x);
    return select(-erf_abs, erf_abs, x >= 0.0f);
}
",
    ),
    (
        "gelu_erf",
        "// GELU in nn.GELU's default erf form; erf by Abramowitz & Stegun 7.1.26, as the CPU
// reference computes it.
fn gelu_erf(v: f32) -> f32 {
    let x = v / 1.41421356f;
    let t = 1.0f / (1.0f + 0.3275911f * abs(x));
    let poly = t * (0.2548296f + t * (-0.28449674f + t * (1.4214137f + t * (-1.4531521f + t * 1.0614054f))));
    let erf_abs = 1.0f - poly * exp(-x * x);
    return 0.5f * v * (1.0f + select(-erf_abs, erf_abs, x >= 0.0f));
}
",
    ),
    (
        "silu",
        "fn silu(v: f32) -> f32 {
    return v / (1.0f + exp(-v));
}
",
    ),
    (
        "sigmoid",
        "fn sigmoid(v: f32) -> f32 {
    return 1.0f / (1.0f + exp(-v));
}
",
    ),
    (
        "inside",
        "// Whether index i lies in [0, n): reads outside are zero padding.
fn inside(i: i32, n: i32) -> bool {
    return i >= 0i && i < n;
}
",
    ),
];
