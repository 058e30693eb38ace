//! The shape environment: symbols for input sizes, the facts learnt about them, and the
//! guards those facts need.
//!
//! Input: input dimensions with a policy each (static, dynamic, duck) from the cache, then
//! every size decision made while capturing. Output: symbols `s0, s1, …` with hints and
//! ranges, replacements (`s1 -> 64`), and recorded shape guards with their origin.
//! Invariant: the only way capture or an op rule may branch on a symbol's value is
//! `ShapeEnv::evaluate`, which records the answer as a guard unless the value ranges
//! alone decide it; so a compiled entry is valid exactly where its guards hold.

pub mod layout;
pub mod rules;

use crate::graph::{Holder, Shape, Span, shape_to_string};
use crate::symbolic::{Bindings, CmpOp, Expr, Rel, Sym, SymbolNames, SymbolNaming, ValueRange};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Where a size lives: a tensor's dim, `L['x'].size()[0]` (or a lifted tensor's,
/// `G['W'].size()[1]`), or an int argument itself, `L['n']`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct DimSource {
    /// The tensor (or int argument) it is read from.
    pub holder: Holder,
    /// The tensor's dimension; `None` when the argument is an int.
    pub dim: Option<usize>,
}

impl DimSource {
    /// Dimension `dim` of tensor argument `input`.
    pub fn dim(input: &str, dim: usize) -> DimSource {
        DimSource {
            holder: Holder::Arg(input.to_string()),
            dim: Some(dim),
        }
    }

    /// The int argument `input`.
    pub fn int(input: &str) -> DimSource {
        DimSource {
            holder: Holder::Arg(input.to_string()),
            dim: None,
        }
    }

    /// The guard source form, `L['x'].size()[0]` or `L['n']`.
    pub fn to_source(&self) -> String {
        match self.dim {
            Some(dim) => format!("{}.size()[{dim}]", self.holder.to_source()),
            None => self.holder.to_source(),
        }
    }

    /// The short form used in failure reasons, `x.size()[0]` or `n`.
    pub fn to_short(&self) -> String {
        match self.dim {
            Some(dim) => format!("{}.size()[{dim}]", self.holder.to_short()),
            None => self.holder.to_short(),
        }
    }
}

/// How the cache asked for one input dimension to be treated (PyTorch's `DimDynamic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum DimPolicy {
    /// A plain integer: the entry is valid for this exact size only.
    Static,
    /// A fresh symbol (automatic dynamic or `mark_dynamic`), never shared by duck sizing.
    Dynamic,
    /// A symbol shared with any earlier duck symbol of the same size (`dynamic=True`).
    Duck,
}

/// A user's `mark_dynamic` on one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mark {
    /// Lower bound given by the user (`min=`), if any.
    pub min: Option<i64>,
    /// Upper bound given by the user (`max=`), if any.
    pub max: Option<i64>,
}

/// What a symbol stands for.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SymbolInfo {
    /// The symbol.
    pub sym: Sym,
    /// The first input dimension it was created for.
    pub source: DimSource,
    /// The size seen when it was created.
    pub hint: i64,
    /// Values it may take in this entry.
    pub range: ValueRange,
    /// Set when the user marked the dimension dynamic: specialising it is then an error.
    pub mark: Option<Mark>,
    /// Whether it was made under duck sizing's policy, so that a later duck-sized dim of
    /// the same size shares it. PyTorch's `val_to_var` holds only such symbols: one made
    /// by automatic dynamic, a mark or an int argument is never shared.
    pub duck: bool,
}

/// What caused a guard: an op's shape check, a branch in user code, or the framework.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Origin {
    /// Who asked: `linear 'linear'`, `'if' on sizes`, `'if' on the float f`.
    #[serde(serialize_with = "serialize_display")]
    pub what: Asker,
    /// The source position, when the guard comes from user code.
    pub span: Option<Span>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.span {
            Some(span) => write!(f, "{} at {span}", self.what),
            None => write!(f, "{}", self.what),
        }
    }
}

/// Who asked a size (or a float) for a decision; kept as data so the page can word it in
/// its own language (`message::MessageId::AskedBy*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Asker {
    /// An op's shape rule: `linear 'linear_1'` (the op and its node, PyTorch's names).
    Op(String),
    /// A construct of the user's code deciding on sizes: `if`, `while`, `assert`, `int()`.
    SizeCondition(&'static str),
    /// A construct deciding on a symbolic float argument.
    FloatCondition {
        /// The construct: `if`, `condition`, ….
        construct: &'static str,
        /// The float argument.
        name: String,
    },
}

impl fmt::Display for Asker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Asker::Op(op) => write!(f, "{op}"),
            Asker::SizeCondition(construct) => write!(f, "'{construct}' on sizes"),
            Asker::FloatCondition { construct, name } => {
                write!(f, "'{construct}' on the float {name}")
            }
        }
    }
}

fn serialize_display<S: serde::Serializer>(
    value: &impl fmt::Display,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// A shape fact that compiled code relies on, in symbol form.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ShapeGuard {
    /// The relation, as recorded (already simplified).
    #[serde(serialize_with = "serialize_rel")]
    pub rel: Rel,
    /// Who asked.
    pub origin: Origin,
}

fn serialize_rel<S: serde::Serializer>(rel: &Rel, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&rel.to_string())
}

/// One step of symbolic reasoning, kept for the trace (PyTorch's `TORCH_LOGS=dynamic`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShapeEvent {
    /// A new symbol for an input dimension.
    CreateSymbol {
        /// The symbol.
        sym: Sym,
        /// The dimension, in source form.
        source: String,
        /// Its size now.
        hint: i64,
        /// Its range.
        range: String,
        /// Why it is symbolic.
        why: String,
    },
    /// An input dimension kept as a plain integer.
    Static {
        /// The dimension, in source form.
        source: String,
        /// Its size.
        value: i64,
        /// Why it is static.
        why: String,
    },
    /// Duck sizing reused an existing symbol for a dimension of the same size.
    DuckShared {
        /// The dimension, in source form.
        source: String,
        /// The reused symbol.
        sym: Sym,
    },
    /// A decision on a symbolic value that became a guard.
    Guard {
        /// The recorded relation.
        rel: String,
        /// Who asked.
        origin: Origin,
    },
    /// A decision the value ranges answered alone: no guard needed.
    Implied {
        /// The relation, as decided.
        rel: String,
        /// Who asked.
        origin: Origin,
    },
    /// A symbol is replaced everywhere by an expression.
    Replacement {
        /// The replaced symbol.
        sym: Sym,
        /// Its replacement.
        expr: String,
        /// `solve` or `range_refined_to_singleton`.
        why: String,
    },
    /// A symbol's range narrowed.
    Range {
        /// The symbol.
        sym: Sym,
        /// Its new range.
        range: String,
    },
}

impl fmt::Display for ShapeEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeEvent::CreateSymbol {
                sym,
                source,
                hint,
                range,
                why,
            } => {
                write!(
                    f,
                    "create_symbol {sym} = {hint} for {source} {range} ({why})"
                )
            }
            ShapeEvent::Static { source, value, why } => {
                write!(f, "static {source} = {value} ({why})")
            }
            ShapeEvent::DuckShared { source, sym } => {
                write!(f, "duck sizing: {source} reuses {sym} (same size)")
            }
            ShapeEvent::Guard { rel, origin } => write!(f, "eval {rel} [guard added] ({origin})"),
            ShapeEvent::Implied { rel, origin } => {
                write!(f, "eval {rel} [statically known, no guard] ({origin})")
            }
            ShapeEvent::Replacement { sym, expr, why } => {
                write!(f, "set_replacement {sym} = {expr} ({why})")
            }
            ShapeEvent::Range { sym, range } => write!(f, "range of {sym} refined to {range}"),
        }
    }
}

impl ShapeError {
    /// Whether this is the violation of `sym`'s specified range.
    fn is_narrowing_of(&self, sym: Sym) -> bool {
        matches!(
            self,
            ShapeError::RangeViolation { sym: s, .. } | ShapeError::GuardViolation { sym: s, .. }
                if *s == sym
        )
    }
}

/// A `mark_dynamic` range as PyTorch's violation message renders it: bounds equal to the
/// default `[2, int_oo]` left out (`L['x'].size()[0] <= 100`), a space first when not empty.
fn specified_text(range: &ValueRange, name: &str) -> String {
    let lo = range.lo.filter(|&lo| lo > 2);
    match (lo, range.hi) {
        (Some(lo), Some(hi)) => format!(" {lo} <= {name} <= {hi}"),
        (Some(lo), None) => format!(" {lo} <= {name}"),
        (None, Some(hi)) => format!(" {name} <= {hi}"),
        (None, None) => String::new(),
    }
}

/// The range tracing left, as PyTorch's violation message renders it:
/// `5 <= L['x'].size()[0] and L['x'].size()[0] <= IntInfinity()`.
fn generated_text(range: &ValueRange, name: &str) -> String {
    let bound = |b: Option<i64>, infinite: &str| b.map_or(infinite.to_string(), |v| v.to_string());
    format!(
        "{} <= {name} and {name} <= {}",
        bound(range.lo, "-IntInfinity()"),
        bound(range.hi, "IntInfinity()")
    )
}

/// Sizes as Python prints a tuple of them: `(1, s0)`, `(s0*s1,)`.
pub fn python_tuple(sizes: &[Expr]) -> String {
    let items: Vec<String> = sizes.iter().map(ToString::to_string).collect();
    match items.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

/// Shape errors: a bad program or a request PyTorch would refuse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShapeError {
    /// Two sizes an op needs equal are not (e.g. a Linear's in_features).
    #[error("{op} at {span}: {detail}; shapes {lhs} and {rhs}")]
    Mismatch {
        /// The op, e.g. `linear 'linear'`.
        op: String,
        /// Its source position.
        span: Span,
        /// What had to hold.
        detail: String,
        /// First operand's shape.
        lhs: String,
        /// Second operand's shape.
        rhs: String,
    },
    /// An op cannot run on this input (too small for the kernel, bad view, bad index, …).
    #[error("{op} at {span}: {detail}")]
    Invalid {
        /// The op.
        op: String,
        /// Its source position.
        span: Span,
        /// What is wrong.
        detail: String,
    },
    /// `view` of a tensor whose memory the target shape cannot view (dims that must merge
    /// are not adjacent in memory): the `ValueError` PyTorch's fake tensors raise under
    /// `torch.compile`, with the sizes and strides as they were traced.
    #[error(
        "{op} at {span}: Cannot view a tensor with shape torch.Size({}) and strides {} as a tensor with shape {}!",
        shape_to_string(shape),
        python_tuple(strides),
        python_tuple(target)
    )]
    NotViewable {
        /// The op (`view`).
        op: String,
        /// Its source position.
        span: Span,
        /// The tensor's sizes.
        shape: Shape,
        /// Its strides.
        strides: Shape,
        /// The shape asked for, its `-1` inferred.
        target: Shape,
    },
    /// A dimension marked dynamic was specialised by the program (PyTorch's
    /// `ConstraintViolationError`).
    #[error(
        "ConstraintViolationError: Constraints violated ({source_name})! - You marked {source_name} as dynamic but your code specialized it to be a constant ({value}). If you're using mark_dynamic, either remove it or use maybe_mark_dynamic. ({origin})"
    )]
    ConstraintViolation {
        /// The marked dimension, source form.
        source_name: String,
        /// The constant it was specialised to.
        value: i64,
        /// Which op or branch specialised it.
        origin: Origin,
    },
    /// Tracing narrowed the range a `mark_dynamic(…, min=, max=)` specified (PyTorch's
    /// `ConstraintViolationError`: "Not all values … satisfy the generated guard").
    #[error(
        "ConstraintViolationError: Constraints violated ({source_name})! - Not all values of {source_name} = {source_name} in the specified range{} satisfy the generated guard {}",
        specified_text(specified, source_name),
        generated_text(generated, source_name)
    )]
    RangeViolation {
        /// The symbol narrowed.
        sym: Sym,
        /// The marked dimension, source form.
        source_name: String,
        /// The range the mark specified (with the default lower bound 2).
        specified: ValueRange,
        /// The range tracing left.
        generated: ValueRange,
    },
    /// Tracing recorded a guard on a size a `mark_dynamic(…, min=, max=)` specified that
    /// the range does not imply and no narrowing of it says (a divisibility from a view,
    /// a `!=`): PyTorch checks every generated guard against the specified ranges.
    #[error(
        "ConstraintViolationError: Constraints violated ({source_name})! - Not all values of {source_name} = {source_name} in the specified range{} satisfy the generated guard {guard}",
        specified_text(specified, source_name)
    )]
    GuardViolation {
        /// The symbol guarded.
        sym: Sym,
        /// The marked dimension, source form.
        source_name: String,
        /// The range the mark specified (with the default lower bound 2).
        specified: ValueRange,
        /// The guard, in source form.
        guard: String,
    },
    /// A marked input outside its declared range.
    #[error("ConstraintViolationError: {value} not in range {range} ({source_name})")]
    OutOfRange {
        /// The marked dimension, source form.
        source_name: String,
        /// The size passed.
        value: i64,
        /// The declared range.
        range: ValueRange,
    },
}

/// Symbols, their facts and the guards recorded while capturing one entry.
#[derive(Clone, Debug, Default)]
pub struct ShapeEnv {
    symbols: Vec<SymbolInfo>,
    replacements: BTreeMap<Sym, Expr>,
    guards: Vec<ShapeGuard>,
    events: Vec<(usize, ShapeEvent)>,
    violations: Vec<ShapeError>,
    /// The tensor arguments the trace has looked at (an op's operand, a size read).
    realised: BTreeSet<String>,
    /// What the trace decided about symbolic float arguments, in order.
    float_guards: Vec<FloatGuard>,
    /// Index of the graph node being built; events are tagged with it for the trace.
    pub node_cursor: usize,
    /// Whether tensors the trace lifts (`add_lifted`) get symbols: under `dynamic=True`
    /// (PyTorch's `assume_static_by_default = False`), not otherwise.
    lifts_dynamic: bool,
}

/// A decision about a symbolic float argument (`if f > 1.0:`), which its entry guards: PyTorch
/// keeps floats out of its integer reasoning too, as `L['f'] > 1.0` in the guard lambda.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatGuard {
    /// The argument.
    pub input: String,
    /// The relation that held for the traced value.
    pub op: CmpOp,
    /// Its right side.
    pub rhs: f64,
    /// Where the trace decided it.
    pub origin: Origin,
}

/// PyTorch's default range for a backed size symbol: 0 and 1 are specialised, so `[2, ∞)`.
pub const DEFAULT_RANGE: ValueRange = ValueRange {
    lo: Some(2),
    hi: None,
};

impl ShapeEnv {
    /// An empty environment.
    pub fn new() -> ShapeEnv {
        ShapeEnv::default()
    }

    /// Gives an input dimension of size `value` its expression under `policy`.
    ///
    /// Sizes 0 and 1 are always constants (PyTorch's 0/1 specialisation); a marked size
    /// outside its declared range is an error, as in PyTorch 2.15.
    pub fn add_input_dim(
        &mut self,
        source: DimSource,
        value: i64,
        policy: DimPolicy,
        mark: Option<Mark>,
        why: &str,
    ) -> Result<Expr, ShapeError> {
        if let Some(mark) = mark {
            let declared = ValueRange::new(mark.min.or(Some(0)), mark.max);
            if !declared.contains(value) {
                return Err(ShapeError::OutOfRange {
                    source_name: source.to_source(),
                    value,
                    range: declared,
                });
            }
        }
        Ok(self.dim_expr(source, value, policy, mark, why))
    }

    /// `add_input_dim` once the size is known to be in its mark's range.
    fn dim_expr(
        &mut self,
        source: DimSource,
        value: i64,
        policy: DimPolicy,
        mark: Option<Mark>,
        why: &str,
    ) -> Expr {
        let static_because = match policy {
            DimPolicy::Static => Some(why.to_string()),
            _ if value == 0 || value == 1 => Some("0/1 specialization".to_string()),
            _ => None,
        };
        if let Some(why) = static_because {
            self.push_event(ShapeEvent::Static {
                source: source.to_source(),
                value,
                why,
            });
            return Expr::int(value);
        }
        if policy == DimPolicy::Duck {
            let shared = self
                .symbols
                .iter()
                .find(|info| info.hint == value && info.duck);
            if let Some(info) = shared {
                let sym = info.sym;
                self.push_event(ShapeEvent::DuckShared {
                    source: source.to_source(),
                    sym,
                });
                return self.replace(&Expr::sym(sym));
            }
        }
        let user = mark.map_or(ValueRange::unbounded(), |m| ValueRange::new(m.min, m.max));
        let range = DEFAULT_RANGE.intersect(&user).unwrap_or(DEFAULT_RANGE);
        let duck = policy == DimPolicy::Duck && mark.is_none();
        self.create_symbol(source, value, range, mark, duck, why)
    }

    /// Makes the tensors the trace lifts from now on dynamic (`dynamic=True`).
    pub fn lift_dynamic(&mut self) {
        self.lifts_dynamic = true;
    }

    /// The sizes of a tensor the function reads without receiving it (`holder`: a
    /// module-level tensor or a plain tensor attribute), which Dynamo lifts into the graph
    /// as an input: under `dynamic=True` each dim is an input dim of its own (duck-sized,
    /// 0/1-specialised), otherwise the constant it is.
    pub fn add_lifted(&mut self, holder: &Holder, sizes: &[i64]) -> Vec<Expr> {
        if !self.lifts_dynamic {
            return sizes.iter().map(|&size| Expr::int(size)).collect();
        }
        sizes
            .iter()
            .enumerate()
            .map(|(dim, &size)| {
                let source = DimSource {
                    holder: holder.clone(),
                    dim: Some(dim),
                };
                self.dim_expr(source, size, DimPolicy::Duck, None, "dynamic=True")
            })
            .collect()
    }

    /// An int argument's value as a size expression: a constant when `dynamic` is false,
    /// else a fresh symbol over every integer (PyTorch's `wrap_symint`: ints are neither
    /// 0/1-specialised nor duck-sized, and may be negative).
    pub fn add_input_int(&mut self, input: &str, value: i64, dynamic: bool, why: &str) -> Expr {
        let source = DimSource::int(input);
        if !dynamic {
            self.push_event(ShapeEvent::Static {
                source: source.to_source(),
                value,
                why: why.to_string(),
            });
            return Expr::int(value);
        }
        self.create_symbol(source, value, ValueRange::unbounded(), None, false, why)
    }

    /// A new symbol for `source`, seen as `hint`, over `range`.
    fn create_symbol(
        &mut self,
        source: DimSource,
        hint: i64,
        range: ValueRange,
        mark: Option<Mark>,
        duck: bool,
        why: &str,
    ) -> Expr {
        let sym = Sym(self.symbols.len() as u32);
        self.push_event(ShapeEvent::CreateSymbol {
            sym,
            source: source.to_source(),
            hint,
            range: range.to_string(),
            why: why.to_string(),
        });
        self.symbols.push(SymbolInfo {
            sym,
            source,
            hint,
            range,
            mark,
            duck,
        });
        Expr::sym(sym)
    }

    /// Whether `sym` stands for an int argument (`L['n']`) rather than a tensor's size.
    pub fn is_int_argument(&self, sym: Sym) -> bool {
        self.symbols
            .get(sym.index())
            .is_some_and(|info| info.source.dim.is_none())
    }

    /// Notes that the trace looked at tensor argument `input` (PyTorch realises a lazily
    /// wrapped argument then, and merges it into the automatic-dynamic memory).
    pub fn realise(&mut self, input: &str) {
        if !self.realised.contains(input) {
            self.realised.insert(input.to_string());
        }
    }

    /// The tensor arguments the trace has looked at so far.
    pub fn realised(&self) -> &BTreeSet<String> {
        &self.realised
    }

    /// Decides `value op rhs` for symbolic float argument `input` (traced as `value`) and
    /// records the relation that held, as a guard.
    pub fn decide_float(
        &mut self,
        input: &str,
        value: f64,
        op: CmpOp,
        rhs: f64,
        origin: Origin,
    ) -> bool {
        let holds = op.holds(value, rhs);
        let op = if holds { op } else { op.negate() };
        let guard = FloatGuard {
            input: input.to_string(),
            op,
            rhs,
            origin,
        };
        if !self.float_guards.contains(&guard) {
            self.float_guards.push(guard);
        }
        holds
    }

    /// The decisions about symbolic floats, in order.
    pub fn float_guards(&self) -> &[FloatGuard] {
        &self.float_guards
    }

    /// The names its symbols are shown with under `naming` (PyTorch's hash their sources).
    pub fn symbol_names(&self, naming: SymbolNaming) -> SymbolNames {
        let sources: Vec<String> = self
            .symbols
            .iter()
            .map(|info| info.source.to_source())
            .collect();
        SymbolNames::new(naming, sources.iter().map(String::as_str))
    }

    /// All symbols, in creation order.
    pub fn symbols(&self) -> &[SymbolInfo] {
        &self.symbols
    }

    /// The recorded guards, in order.
    pub fn guards(&self) -> &[ShapeGuard] {
        &self.guards
    }

    /// Every reasoning step with the index of the node it happened at.
    pub fn events(&self) -> &[(usize, ShapeEvent)] {
        &self.events
    }

    /// The replacements in force.
    pub fn replacements(&self) -> &BTreeMap<Sym, Expr> {
        &self.replacements
    }

    /// Range of a symbol (unbounded for unknown symbols).
    pub fn range(&self, sym: Sym) -> ValueRange {
        self.symbols
            .get(sym.index())
            .map_or(ValueRange::unbounded(), |info| info.range)
    }

    /// The hints as bindings.
    pub fn hints(&self) -> Bindings {
        let mut bindings = Bindings::new();
        for info in &self.symbols {
            bindings.set(info.sym, info.hint);
        }
        bindings
    }

    /// Applies replacements and range-aware simplification.
    pub fn replace(&self, expr: &Expr) -> Expr {
        let mut current = expr.clone();
        // Replacements never mention a replaced symbol, so one pass per symbol suffices.
        for (sym, value) in &self.replacements {
            if current.free_syms().contains(sym) {
                current = current.substitute(*sym, value);
            }
        }
        current.simplify_in(&|s| self.range(s))
    }

    /// The value of `expr` for the sizes seen now.
    pub fn hint(&self, expr: &Expr) -> Option<i64> {
        self.replace(expr).eval(&self.hints())
    }

    /// Decides `rel` for the sizes seen now, recording the answer as a guard unless the
    /// value ranges already imply it. Equalities with a lone symbol become replacements;
    /// bounds on a lone symbol narrow its range.
    pub fn evaluate(&mut self, rel: &Rel, origin: &Origin) -> bool {
        // Printed as asked (`(s0 - 3)//2 + 1 != 1`, like PyTorch); decided in canonical form.
        let asked = Rel::new(self.replace(&rel.lhs), rel.op, self.replace(&rel.rhs));
        let canonical = asked.simplify();
        if let Some(known) = canonical.decide_by_ranges(&|s| self.range(s)) {
            let decided = if known { asked } else { asked.negate() };
            let rel = decided.to_string();
            self.push_event(ShapeEvent::Implied {
                rel,
                origin: origin.clone(),
            });
            return known;
        }
        // A question an earlier guard already answered needs no second guard, also asked
        // with its sides swapped (`s2 != s2//2` after `s2//2 != s2`: PyTorch's canonical
        // relations are the same).
        let swapped = Rel::new(asked.rhs.clone(), asked.op.swap(), asked.lhs.clone()).simplify();
        for guard in &self.guards {
            let recorded = guard.rel.simplify();
            if recorded == canonical || recorded == swapped {
                return true;
            }
            if recorded == canonical.negate().simplify() || recorded == swapped.negate().simplify()
            {
                return false;
            }
        }
        let truth = canonical.eval(&self.hints()).unwrap_or(false);
        let recorded = if truth { asked } else { asked.negate() };
        let rel = recorded.to_string();
        self.push_event(ShapeEvent::Guard {
            rel,
            origin: origin.clone(),
        });
        self.guards.push(ShapeGuard {
            rel: recorded.clone(),
            origin: origin.clone(),
        });
        self.check_specified_range(&recorded);
        self.learn(&recorded.simplify(), origin);
        truth
    }

    /// A guard on one size whose `mark_dynamic` specified a range, that is not a bound on
    /// it (which `narrow` judges against the range): PyTorch's `ConstraintViolationError`,
    /// the range not implying it (a recorded guard is one the ranges did not decide).
    fn check_specified_range(&mut self, rel: &Rel) {
        let syms = rel.free_syms();
        let [sym] = syms.iter().copied().collect::<Vec<_>>()[..] else {
            return;
        };
        let info = &self.symbols[sym.index()];
        let Some(mark) = info.mark.filter(|m| m.min.is_some() || m.max.is_some()) else {
            return;
        };
        let diff = rel.simplify();
        let diff = &diff.lhs - &diff.rhs;
        let bound = rel.op != CmpOp::Ne
            && lone_symbol(&diff) == Some(sym)
            && (&diff - &Expr::sym(sym)).as_int().is_some();
        let floor_bound = diff
            .as_scaled_floor_div()
            .is_some_and(|(.., divisor, _)| divisor > 1);
        if bound || floor_bound || self.violations.iter().any(|v| v.is_narrowing_of(sym)) {
            return;
        }
        let declared = ValueRange::new(mark.min, mark.max);
        let source_name = info.source.to_source();
        let guard = rel.to_source(&|s| self.symbols[s.index()].source.to_source());
        self.violations.push(ShapeError::GuardViolation {
            sym,
            source_name,
            specified: DEFAULT_RANGE.intersect(&declared).unwrap_or(DEFAULT_RANGE),
            guard,
        });
    }

    /// Whether `rel` holds by the ranges or by a recorded guard; asks nothing and records
    /// nothing (PyTorch's `ShapeEnv.simplify` reading the divisibility it learnt).
    pub fn is_known(&self, rel: &Rel) -> bool {
        let canonical = Rel::new(self.replace(&rel.lhs), rel.op, self.replace(&rel.rhs)).simplify();
        if let Some(known) = canonical.decide_by_ranges(&|s| self.range(s)) {
            return known;
        }
        self.guards
            .iter()
            .any(|guard| guard.rel.simplify() == canonical)
    }

    /// Records that `lhs == rhs` must hold for an op; returns false (and records nothing) when
    /// the current sizes differ, so the caller can report a shape error.
    pub fn expect_equal(&mut self, lhs: &Expr, rhs: &Expr, origin: &Origin) -> bool {
        let (lhs, rhs) = (self.replace(lhs), self.replace(rhs));
        if lhs == rhs {
            return true;
        }
        if self.hint(&lhs) != self.hint(&rhs) {
            return false;
        }
        self.evaluate(&Rel::new(lhs, CmpOp::Eq, rhs), origin)
    }

    /// Errors found while capturing that PyTorch reports at the end of tracing.
    pub fn take_violations(&mut self) -> Vec<ShapeError> {
        std::mem::take(&mut self.violations)
    }

    fn learn(&mut self, rel: &Rel, origin: &Origin) {
        let diff = &rel.lhs - &rel.rhs;
        // PyTorch's `try_solve` divides both sides by a factor known to be positive:
        // `s0*s1 == 2*s1` is `s0 == 2` (which a marked `s0` may then violate).
        if rel.op == CmpOp::Eq && diff.as_int().is_none() {
            let positive = diff
                .free_syms()
                .into_iter()
                .filter(|sym| self.range(*sym).lo.is_some_and(|lo| lo >= 1));
            for sym in positive {
                if let Some(quotient) = diff.divide_exact(&Expr::sym(sym))
                    && quotient.as_int().is_none()
                {
                    self.learn(&Rel::new(quotient, CmpOp::Eq, Expr::int(0)), origin);
                    return;
                }
            }
        }
        if let Some((coeff, sym, offset, divisor, constant)) = diff.as_scaled_floor_div()
            && divisor > 1
        {
            self.learn_floor_div(rel.op, coeff, sym, offset, divisor, constant);
            return;
        }
        let Some(sym) = lone_symbol(&diff) else {
            return;
        };
        // `diff` is `sym + c` or `c - sym`-free: only `s + c op 0` shapes refine ranges or solve.
        let offset = &diff - &Expr::sym(sym);
        let Some(offset) = offset.as_int() else {
            if rel.op == CmpOp::Eq {
                self.solve_for_newest(rel, origin);
            }
            return;
        };
        let bound = -offset;
        let current = self.range(sym);
        let narrowed = match rel.op {
            CmpOp::Eq => ValueRange::exact(bound),
            CmpOp::Ge => ValueRange::at_least(bound),
            CmpOp::Gt => ValueRange::at_least(bound + 1),
            CmpOp::Le => ValueRange::new(None, Some(bound)),
            CmpOp::Lt => ValueRange::new(None, Some(bound - 1)),
            // PyTorch's `_maybe_guard_rel` returns on `Ne` before refining anything: `s1 - 1
            // != 1` leaves `s1` in `[2, int_oo]` (measured on 2.15).
            CmpOp::Ne => return,
        };
        let Some(range) = current.intersect(&narrowed) else {
            return;
        };
        if range == current {
            return;
        }
        if let Some(value) = range.is_singleton() {
            self.symbols[sym.index()].range = range;
            self.set_replacement(sym, Expr::int(value), "range_refined_to_singleton", origin);
        } else {
            self.narrow(sym, range);
        }
    }

    /// Sets `sym`'s range to `range` (narrower than its current one). A symbol marked with
    /// an explicit `min=`/`max=` must keep the range the user specified: narrowing it is
    /// PyTorch's `ConstraintViolationError` (a plain `mark_dynamic` may be narrowed).
    fn narrow(&mut self, sym: Sym, range: ValueRange) {
        let info = &self.symbols[sym.index()];
        if let Some(mark) = info.mark
            && (mark.min.is_some() || mark.max.is_some())
        {
            let declared = ValueRange::new(mark.min, mark.max);
            let specified = DEFAULT_RANGE.intersect(&declared).unwrap_or(DEFAULT_RANGE);
            if range != specified && !self.violations.iter().any(|v| v.is_narrowing_of(sym)) {
                self.violations.push(ShapeError::RangeViolation {
                    sym,
                    source_name: info.source.to_source(),
                    specified,
                    generated: range,
                });
            }
        }
        self.symbols[sym.index()].range = range;
        self.push_event(ShapeEvent::Range {
            sym,
            range: range.to_string(),
        });
    }

    /// Narrows `sym`'s range from `coeff * (sym // divisor) + constant op 0`, as PyTorch's
    /// solver isolates a `FloorDiv` (`s0//16 >= 1` gives `s0 >= 16`).
    fn learn_floor_div(
        &mut self,
        op: CmpOp,
        coeff: i64,
        sym: Sym,
        offset: i64,
        divisor: i64,
        constant: i64,
    ) {
        // coeff·q + constant op 0 with q = (sym + offset) // divisor: q op' -constant/coeff,
        // the comparison turned round for a negative coefficient.
        let op = if coeff < 0 { op.swap() } else { op };
        let (num, den) = if coeff < 0 {
            (constant, -coeff)
        } else {
            (-constant, coeff)
        };
        let floor = num.div_euclid(den);
        let ceil = floor + i64::from(num.rem_euclid(den) != 0);
        // The quotient's bounds, then the symbol's: q >= m iff sym + offset >= m·d, q <= m
        // iff sym + offset <= m·d + d - 1.
        let (low, high) = match op {
            CmpOp::Ge => (Some(ceil), None),
            CmpOp::Gt => (Some(floor + 1), None),
            CmpOp::Le => (None, Some(floor)),
            CmpOp::Lt => (None, Some(ceil - 1)),
            CmpOp::Eq if floor == ceil => (Some(floor), Some(floor)),
            CmpOp::Eq | CmpOp::Ne => return,
        };
        let narrowed = ValueRange::new(
            low.and_then(|m| m.checked_mul(divisor)?.checked_sub(offset)),
            high.and_then(|m| {
                m.checked_mul(divisor)?
                    .checked_add(divisor - 1)?
                    .checked_sub(offset)
            }),
        );
        let current = self.range(sym);
        let Some(range) = current.intersect(&narrowed) else {
            return;
        };
        if range != current {
            self.narrow(sym, range);
        }
    }

    /// For `Eq` between expressions of several symbols, replaces the newest symbol that
    /// appears alone with coefficient 1 (`s1 == s0` gives `s1 -> s0`, as PyTorch's solve).
    fn solve_for_newest(&mut self, rel: &Rel, origin: &Origin) {
        let diff = &rel.lhs - &rel.rhs;
        for sym in diff.free_syms().into_iter().rev() {
            let rest = &diff - &Expr::sym(sym);
            if !rest.free_syms().contains(&sym) {
                // diff = sym + rest = 0, so sym = -rest.
                let value = -rest;
                self.set_replacement(sym, value, "solve", origin);
                return;
            }
            let rest_neg = &diff + &Expr::sym(sym);
            if !rest_neg.free_syms().contains(&sym) {
                self.set_replacement(sym, rest_neg, "solve", origin);
                return;
            }
        }
    }

    fn set_replacement(&mut self, sym: Sym, value: Expr, why: &str, origin: &Origin) {
        let info = &self.symbols[sym.index()];
        if let (Some(_), Some(constant)) = (info.mark, value.as_int()) {
            self.violations.push(ShapeError::ConstraintViolation {
                source_name: info.source.to_source(),
                value: constant,
                origin: origin.clone(),
            });
        }
        self.push_event(ShapeEvent::Replacement {
            sym,
            expr: value.to_string(),
            why: why.to_string(),
        });
        // Keep every stored replacement free of `sym`, so `replace` needs one pass.
        for existing in self.replacements.values_mut() {
            if existing.free_syms().contains(&sym) {
                *existing = existing.substitute(sym, &value);
            }
        }
        let range = self.range(sym);
        self.replacements.insert(sym, value.clone());
        self.transfer_range(range, &value);
    }

    /// After `sym -> value` with `value = a·t + b` in one symbol `t`, `t`'s range keeps
    /// only what puts `value` in `sym`'s range (PyTorch's solve: `s77 = 4*s86` with
    /// `s77 >= 2` gives `s86 >= 1`).
    fn transfer_range(&mut self, range: ValueRange, value: &Expr) {
        let syms = value.free_syms();
        let mut syms = syms.iter();
        let (Some(&t), None) = (syms.next(), syms.next()) else {
            return;
        };
        let Some((a, rest)) = value.affine_in(t, &|s| self.range(s)) else {
            return;
        };
        let Some(b) = rest.as_int() else {
            return;
        };
        if a == 0 {
            return;
        }
        // lo <= a·t + b <= hi: t >= (lo - b)/a rounded up (bounds swap for a < 0).
        let ceil_div = |n: i64, d: i64| {
            let q = n.div_euclid(d);
            if n.rem_euclid(d) != 0 { q + 1 } else { q }
        };
        let bound = |end: Option<i64>, up: bool| {
            end.and_then(|e| e.checked_sub(b)).map(|n| {
                let (n, d) = if a < 0 { (-n, -a) } else { (n, a) };
                if up { ceil_div(n, d) } else { n.div_euclid(d) }
            })
        };
        let narrowed = if a > 0 {
            ValueRange::new(bound(range.lo, true), bound(range.hi, false))
        } else {
            ValueRange::new(bound(range.hi, true), bound(range.lo, false))
        };
        let current = self.range(t);
        let Some(refined) = current.intersect(&narrowed) else {
            return;
        };
        if refined != current {
            self.narrow(t, refined);
        }
    }

    fn push_event(&mut self, event: ShapeEvent) {
        // An op asking the same question twice (e.g. once per spatial dim) shows once.
        let entry = (self.node_cursor, event);
        if self.events.last() != Some(&entry) {
            self.events.push(entry);
        }
    }
}

/// The symbol of `expr` when `expr` is `sym + c` or `sym + (terms without sym)`, i.e. `sym`
/// appears exactly once with coefficient 1.
fn lone_symbol(expr: &Expr) -> Option<Sym> {
    expr.free_syms().into_iter().find(|&sym| {
        let rest = expr - &Expr::sym(sym);
        !rest.free_syms().contains(&sym)
    })
}
