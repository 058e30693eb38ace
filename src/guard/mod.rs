//! Guards: the conditions under which a compiled entry may be reused, and their fast check.
//!
//! Input: the `ShapeEnv` after capture (symbols, replacements, recorded guards) and the
//! arguments as traced (tensors' symbolic shapes, ints as constants or symbols, bools).
//! Output: a `GuardSet` in PyTorch's order — one value guard per int or bool (`EQUALS_MATCH`,
//! `TYPE_MATCH` for a symbolic int, `TRUE_MATCH`/`FALSE_MATCH`), one tensor guard per tensor
//! (rank and static sizes) and one per tensor the trace lifted (`G['W']`, `L['self'].A`: read
//! by the function without being passed, fixed for the program's life), one per module
//! attribute the trace read (`L['self'].training == True`, checked on the values the cache
//! reads at the call), then shape guards: the leaf
//! (dimension-marking) guards, each input's equalities and inferred strides, the recorded
//! guards that the ranges do not already imply, and one range guard per symbol. Each is made by its own producer, and
//! every producer appends through one `push`, guard and compiled check together. Guards print
//! in source form (`2 <= L['x'].size()[0]`) and symbol form (`2 <= s0`) with provenance.
//! Invariant: `GuardSet::check` accepts exactly the calls on which every printed guard
//! holds, and it allocates nothing: relations are compiled over flat slots (each tensor's
//! dims, each int's value).

mod order;
mod provenance;

use crate::graph::{DType, Holder, Shape, TracedArg};
use crate::message::{Message, MessageId};
use crate::shape::{DimSource, ShapeEnv, ShapeEvent, layout};
use crate::symbolic::{CmpOp, CompiledRel, Expr, Rel, Sym, ValueRange};
use order::AttributeNode;
pub use provenance::Provenance;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// One argument of a call as guards see it: a tensor's sizes, or a Python value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ArgValue {
    /// A tensor of these sizes and this dtype. Its JSON form is the sizes, as before dtypes
    /// (the CLI's and the page's readers index them); `to_spec` writes the dtype.
    #[serde(serialize_with = "serialize_sizes")]
    Tensor(Vec<i64>, DType),
    /// A Python `int`.
    Int(i64),
    /// A Python `bool`.
    Bool(bool),
    /// A Python `float`.
    Float(f64),
}

fn serialize_sizes<S: serde::Serializer>(
    sizes: &[i64],
    _dtype: &DType,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    sizes.serialize(serializer)
}

/// A float as Python's `repr` writes it (`2.0`, `0.1`, `1e-05`, `inf`), as PyTorch's guards
/// and failure reasons print it.
pub fn python_float(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's shortest round-trip digits, laid out as Python lays them out: positional for
    // exponents from -4 to 15, else `d.ddde±XX`.
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let positional = format!("{value}");
        if positional.contains('.') {
            positional
        } else {
            format!("{positional}.0")
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

impl ArgValue {
    /// The Python type, as PyTorch's `TYPE_MATCH` failure names it.
    pub fn type_name(&self) -> &'static str {
        match self {
            ArgValue::Tensor(..) => "<class 'torch.Tensor'>",
            ArgValue::Int(_) => "<class 'int'>",
            ArgValue::Bool(_) => "<class 'bool'>",
            ArgValue::Float(_) => "<class 'float'>",
        }
    }

    /// The values size guards read: a tensor's sizes, an int, a bool as 0 or 1; a float
    /// has none (its guards read it from the argument).
    fn slots(&self) -> &[i64] {
        match self {
            ArgValue::Tensor(dims, _) => dims,
            ArgValue::Int(value) => std::slice::from_ref(value),
            ArgValue::Bool(true) => &[1],
            ArgValue::Bool(false) => &[0],
            ArgValue::Float(_) => &[],
        }
    }
}

impl fmt::Display for ArgValue {
    /// The spec form (`8,64`, `int(3)`, `True`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgValue::Tensor(dims, dtype) => {
                let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
                f.write_str(&dims.join(","))?;
                if *dtype != DType::Float32 {
                    write!(f, ":{}", dtype.name())?;
                }
                Ok(())
            }
            ArgValue::Int(value) => write!(f, "int({value})"),
            ArgValue::Float(value) => write!(f, "float({})", python_float(*value)),
            ArgValue::Bool(true) => f.write_str("True"),
            ArgValue::Bool(false) => f.write_str("False"),
        }
    }
}

/// The arguments of one call, flattened once so that guard checks index a slice.
#[derive(Clone, Debug, PartialEq)]
pub struct CallShapes {
    /// Argument names and values, in the function's parameter order.
    pub args: Vec<(String, ArgValue)>,
    /// Every argument's slots (`ArgValue::slots`) concatenated.
    flat: Vec<i64>,
    /// The module attributes that entries guard, as they are at this call (`None`: the
    /// path no longer leads to a bool, int or float). Read by the cache before it checks.
    pub attributes: Vec<(AttributePath, Option<ArgValue>)>,
}

impl CallShapes {
    /// A call whose arguments are all tensors of these sizes.
    pub fn new(inputs: Vec<(String, Vec<i64>)>) -> CallShapes {
        CallShapes::with_args(
            inputs
                .into_iter()
                .map(|(name, dims)| (name, ArgValue::Tensor(dims, DType::Float32)))
                .collect(),
        )
    }

    /// A call with these arguments.
    pub fn with_args(args: Vec<(String, ArgValue)>) -> CallShapes {
        let flat = args
            .iter()
            .flat_map(|(_, value)| value.slots().iter().copied())
            .collect();
        CallShapes {
            args,
            flat,
            attributes: Vec::new(),
        }
    }

    /// This call with the current values of module attributes.
    pub fn with_attributes(
        mut self,
        attributes: Vec<(AttributePath, Option<ArgValue>)>,
    ) -> CallShapes {
        self.attributes = attributes;
        self
    }

    /// The arguments at `positions`, in that order (the module attributes kept).
    pub fn select(&self, positions: &[usize]) -> CallShapes {
        CallShapes::with_args(
            positions
                .iter()
                .filter_map(|&p| self.args.get(p).cloned())
                .collect(),
        )
        .with_attributes(self.attributes.clone())
    }

    /// The value of a module attribute at this call, if it was read and is a constant.
    fn attribute(&self, path: &AttributePath) -> Option<&ArgValue> {
        self.attributes
            .iter()
            .find(|(read, _)| read == path)
            .and_then(|(_, value)| value.as_ref())
    }

    /// The tensor arguments and their sizes, in parameter order.
    pub fn tensors(&self) -> impl Iterator<Item = (&str, &[i64])> {
        self.args.iter().filter_map(|(name, value)| match value {
            ArgValue::Tensor(dims, _) => Some((name.as_str(), dims.as_slice())),
            _ => None,
        })
    }

    /// The values of the int arguments, in parameter order.
    pub fn ints(&self) -> Vec<i64> {
        self.args
            .iter()
            .filter_map(|(_, value)| match value {
                ArgValue::Int(v) => Some(*v),
                _ => None,
            })
            .collect()
    }

    /// Formats as `x=8,64;n=int(3)`.
    pub fn to_spec(&self) -> String {
        let parts: Vec<String> = self
            .args
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        parts.join(";")
    }
}

/// PyTorch's `TENSOR_MATCH` for one input: dtype, rank and the static sizes (`None` =
/// dynamic).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TensorGuard {
    /// The input's name (an argument's; `G['W']` or `self.A` for a lifted tensor).
    pub input: String,
    /// Its source, `L['x']`, `G['W']` or `L['self'].A`.
    pub source: String,
    /// Its dtype.
    pub dtype: DType,
    /// Expected sizes; `None` is not checked.
    pub sizes: Vec<Option<i64>>,
}

impl fmt::Display for TensorGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sizes: Vec<String> = self
            .sizes
            .iter()
            .map(|s| s.map_or("None".to_string(), |v| v.to_string()))
            .collect();
        // Inputs are contiguous, so each stride is the product of the sizes after it.
        let strides: Vec<String> = (0..self.sizes.len())
            .map(|d| {
                self.sizes[d + 1..]
                    .iter()
                    .try_fold(1i64, |acc, s| s.and_then(|v| acc.checked_mul(v)))
                    .map_or("None".to_string(), |v| v.to_string())
            })
            .collect();
        write!(
            f,
            "TENSOR_MATCH: check_tensor({}, Tensor, {}, size=[{}], stride=[{}])",
            self.source,
            self.dtype,
            sizes.join(", "),
            strides.join(", ")
        )
    }
}

/// What a Python-value argument must be for an entry to be reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum ValueMatch {
    /// An int: exactly this one (`EQUALS_MATCH`), or any (`None`: the int is a symbol and
    /// only its type is checked, `TYPE_MATCH`).
    Int(Option<i64>),
    /// A bool, always specialised (`TRUE_MATCH` / `FALSE_MATCH`).
    Bool(bool),
    /// A float: exactly this one (`EQUALS_MATCH`, its bits), or any (`None`: a symbolic
    /// float, whose decisions are shape-lambda guards, `L['f'] > 1.0`).
    Float(Option<u64>),
}

/// PyTorch's guard on one Python-value argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValueGuard {
    /// The argument's name.
    pub input: String,
    /// What it must be.
    pub expected: ValueMatch,
}

impl ValueGuard {
    /// The failure-reason form PyTorch prints (`n == 2`, `b == True`); for a symbolic int,
    /// whose only check is its type, that check in words.
    pub fn reason(&self) -> String {
        match_reason(&self.input, self.expected)
    }

    /// The Python type the argument must have.
    fn type_name(&self) -> &'static str {
        match self.expected {
            ValueMatch::Int(_) => ArgValue::Int(0).type_name(),
            ValueMatch::Bool(_) => ArgValue::Bool(false).type_name(),
            ValueMatch::Float(_) => ArgValue::Float(0.0).type_name(),
        }
    }

    /// Whether `value` passes, or the failure when it does not.
    fn check(&self, value: &ArgValue) -> Result<(), ValueFailure> {
        value_matches(self.expected, value)
    }
}

/// Whether `value` is what `expected` asks for, or how it is not.
fn value_matches(expected: ValueMatch, value: &ArgValue) -> Result<(), ValueFailure> {
    match (expected, value) {
        (ValueMatch::Int(None), ArgValue::Int(_)) => Ok(()),
        (ValueMatch::Int(Some(expected)), ArgValue::Int(actual)) if expected == *actual => Ok(()),
        (ValueMatch::Bool(expected), ArgValue::Bool(actual)) if expected == *actual => Ok(()),
        (ValueMatch::Float(None), ArgValue::Float(_)) => Ok(()),
        // Python's `==`: NaN never equals, and 0.0 equals -0.0.
        (ValueMatch::Float(Some(bits)), ArgValue::Float(actual))
            if f64::from_bits(bits) == *actual =>
        {
            Ok(())
        }
        (ValueMatch::Int(_), ArgValue::Int(_))
        | (ValueMatch::Bool(_), ArgValue::Bool(_))
        | (ValueMatch::Float(_), ArgValue::Float(_)) => Err(ValueFailure::Value),
        _ => Err(ValueFailure::Type),
    }
}

/// The failure-reason form of a value guard on `short` (`n == 2`, `self.training == True`).
fn match_reason(short: &str, expected: ValueMatch) -> String {
    match expected {
        ValueMatch::Int(Some(v)) => format!("{short} == {v}"),
        ValueMatch::Int(None) => format!("type({short}) is int"),
        ValueMatch::Bool(b) => format!("{short} == {}", python_bool(b)),
        ValueMatch::Float(Some(bits)) => {
            format!("{short} == {}", python_float(f64::from_bits(bits)))
        }
        ValueMatch::Float(None) => format!("type({short}) is float"),
    }
}

/// The printed form of a value guard on `source` (`EQUALS_MATCH: L['n'] == 2`).
fn match_source(source: &str, expected: ValueMatch) -> String {
    match expected {
        ValueMatch::Int(Some(v)) => format!("EQUALS_MATCH: {source} == {v}"),
        ValueMatch::Int(None) => format!("TYPE_MATCH: ___check_type_id({source}, <class 'int'>)"),
        ValueMatch::Float(Some(bits)) => {
            format!(
                "EQUALS_MATCH: {source} == {}",
                python_float(f64::from_bits(bits))
            )
        }
        ValueMatch::Float(None) => {
            format!("TYPE_MATCH: ___check_type_id({source}, <class 'float'>)")
        }
        ValueMatch::Bool(true) => format!("TRUE_MATCH: {source} == True"),
        ValueMatch::Bool(false) => format!("FALSE_MATCH: {source} == False"),
    }
}

/// Where a module attribute is read from: the names of the submodules from `self`, then
/// the attribute (`self._modules['layer1']._modules['0'].training`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AttributePath {
    /// Submodule names, outermost first (empty: an attribute of `self`).
    pub modules: Vec<String>,
    /// The attribute.
    pub name: String,
}

impl AttributePath {
    /// The failure-reason form, `self._modules['bn'].training`.
    pub fn short(&self) -> String {
        let mut text = "self".to_string();
        for module in &self.modules {
            text.push_str(&format!("._modules['{module}']"));
        }
        format!("{text}.{}", self.name)
    }

    /// PyTorch's source form, `L['self']._modules['bn'].training`.
    pub fn source(&self) -> String {
        format!("L['self']{}", &self.short()["self".len()..])
    }
}

/// A bool, int or float attribute of the compiled module (or a submodule) that the trace
/// read: Dynamo treats nn.Module attributes as constants (`EQUALS_MATCH`, never automatic
/// dynamic), so a change is a recompile (`self.training == True`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AttributeGuard {
    /// Where it is read from.
    pub path: AttributePath,
    /// The value the entry was traced with.
    pub expected: ValueMatch,
}

impl AttributeGuard {
    /// The guard on `path` for the value the trace saw.
    pub fn new(path: AttributePath, seen: &ArgValue) -> Option<AttributeGuard> {
        let expected = match seen {
            ArgValue::Bool(b) => ValueMatch::Bool(*b),
            ArgValue::Int(v) => ValueMatch::Int(Some(*v)),
            ArgValue::Float(v) => ValueMatch::Float(Some(v.to_bits())),
            ArgValue::Tensor(..) => return None,
        };
        Some(AttributeGuard { path, expected })
    }

    /// The failure-reason form PyTorch prints, `self._modules['bn'].training == True`.
    pub fn reason(&self) -> String {
        match_reason(&self.path.short(), self.expected)
    }

    /// Whether the attribute's value at a call (`None`: not a constant any more) passes.
    fn passes(&self, value: Option<&ArgValue>) -> bool {
        value.is_some_and(|value| value_matches(self.expected, value).is_ok())
    }
}

impl fmt::Display for AttributeGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&match_source(&self.path.source(), self.expected))
    }
}

enum ValueFailure {
    Type,
    Value,
}

fn python_bool(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}

impl fmt::Display for ValueGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&match_source(
            &format!("L['{}']", self.input),
            self.expected,
        ))
    }
}

/// Why a shape guard exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardKind {
    /// Two input dims must be equal (duck sizing, or a solved equality).
    InputEquality,
    /// A symbolic stride equals the product of the later sizes (contiguity).
    Stride,
    /// Recorded while tracing (an op's shape check or a branch).
    Recorded,
    /// The value range of a symbol.
    Range,
    /// An entry compiled for an unmarked tensor is not reused for a `mark_dynamic`-ed one.
    DimensionMarking,
}

/// One shape guard in every printed form.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Guard {
    /// What produced it.
    pub kind: GuardKind,
    /// PyTorch source form: `2 <= L['x'].size()[0]`.
    pub source: String,
    /// Failure-reason form, `L['…']` stripped: `2 <= x.size()[0]`.
    pub reason: String,
    /// Symbol form: `2 <= s0`.
    pub symbolic: SymbolicForm,
    /// Where it came from (printed in English; `Provenance::message` for the page).
    #[serde(serialize_with = "serialize_provenance")]
    pub provenance: Provenance,
}

fn serialize_provenance<S: serde::Serializer>(
    provenance: &Provenance,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(provenance)
}

/// A guard's symbol form, kept as data so that it prints with the names of the running
/// [`SymbolNames::show`](crate::symbolic::SymbolNames::show) (`s0`, or PyTorch's `s77`).
#[derive(Clone, Debug, PartialEq)]
pub enum SymbolicForm {
    /// An unmarked input: `x is not marked dynamic`.
    Unmarked(String),
    /// A symbolic float argument is a number: `f is not NaN`.
    NotNan(String),
    /// A comparison the trace decided on a symbolic float argument: `f > 1.0`.
    FloatRel(String),
    /// A size or stride of an input equal to an expression: `x.stride()[0] == s1`.
    Equals(String, Expr),
    /// A relation between sizes: `s0 <= 64`.
    Rel(Rel),
    /// A symbol's range: `2 <= s0 <= 64`.
    Range(ValueRange, Sym),
}

impl fmt::Display for SymbolicForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolicForm::Unmarked(input) => write!(f, "{input} is not marked dynamic"),
            SymbolicForm::NotNan(name) => write!(f, "{name} is not NaN"),
            SymbolicForm::FloatRel(rel) => f.write_str(rel),
            SymbolicForm::Equals(what, expr) => write!(f, "{what} == {expr}"),
            SymbolicForm::Rel(rel) => write!(f, "{rel}"),
            SymbolicForm::Range(range, sym) => f.write_str(&range_text(range, &sym.to_string())),
        }
    }
}

impl SymbolicForm {
    /// The form as a message for the page where it is words, not code.
    pub fn message(&self) -> Option<Message> {
        match self {
            SymbolicForm::Unmarked(input) => {
                Some(Message::new(MessageId::SymbolicUnmarked, &[input]))
            }
            SymbolicForm::NotNan(name) => Some(Message::new(MessageId::SymbolicNotNan, &[name])),
            _ => None,
        }
    }
}

impl Serialize for SymbolicForm {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a call failed an entry's guards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Another dtype.
    DType {
        /// Input index.
        input: usize,
        /// The call's dtype.
        actual: DType,
    },
    /// Wrong number of dimensions.
    Rank {
        /// Input index.
        input: usize,
        /// Expected rank.
        expected: usize,
        /// Actual rank.
        actual: usize,
    },
    /// A static size differs.
    Size {
        /// Input index.
        input: usize,
        /// Dimension.
        dim: usize,
        /// Expected size.
        expected: i64,
        /// Actual size.
        actual: i64,
    },
    /// An argument has another Python type than the entry was compiled for.
    Type {
        /// The argument's name.
        name: String,
        /// The type the entry expects.
        expected: &'static str,
        /// The type passed.
        actual: &'static str,
    },
    /// A specialised Python value differs (index into `GuardSet::values`).
    Value(usize),
    /// The call passes another number of arguments than the entry was compiled with.
    Arity {
        /// The entry's arguments.
        expected: usize,
        /// The call's.
        actual: usize,
    },
    /// A module attribute differs (index into `GuardSet::attributes`).
    Attribute(usize),
    /// A shape guard is false (index into `GuardSet::shape`).
    Shape(usize),
}

/// Every guard of one cache entry, with its compiled check.
#[derive(Clone, Debug)]
pub struct GuardSet {
    /// One per tensor argument, in parameter order.
    pub tensors: Vec<TensorGuard>,
    /// One per lifted tensor (a module-level tensor, a plain tensor attribute), in PyTorch's
    /// install order (source length, then text). Their sizes are fixed for the program's
    /// life, so these always hold.
    pub lifted: Vec<TensorGuard>,
    /// One per Python-value argument (int, bool), in parameter order.
    pub values: Vec<ValueGuard>,
    /// The children of PyTorch's guard tree's root in the order they are checked: the
    /// arguments (values, then tensors, at first) and the module's attributes, re-sorted
    /// by failures as calls fail them (`order.rs`).
    accessors: Vec<Accessor>,
    /// The module attributes the trace read, in reading order.
    pub attributes: Vec<AttributeGuard>,
    /// Where each attribute sits under `L['self']`, in check order.
    attribute_tree: AttributeNode,
    /// Shape guards in check order.
    pub shape: Vec<Guard>,
    /// Compiled form of `shape` (marking guards are checked separately).
    compiled: Vec<Check>,
}

/// Which guard of a `GuardSet` checks one argument.
#[derive(Clone, Copy, Debug)]
enum ArgGuard {
    Tensor(usize),
    Value(usize),
}

/// One child of the guard tree's root, with how many checks it failed.
#[derive(Clone, Copy, Debug)]
struct Accessor {
    guard: RootGuard,
    fails: u32,
}

/// What a root accessor checks: the argument at a parameter position, or `L['self']`.
#[derive(Clone, Copy, Debug)]
enum RootGuard {
    Arg(usize, ArgGuard),
    Module,
}

/// Where a check failed in the tree: the root accessor and, under `L['self']`, the path of
/// children; `None` for the shape guards after the tree.
type FailedAt = Option<(usize, Vec<usize>)>;

#[derive(Clone, Debug)]
enum Check {
    Rel(CompiledRel),
    Unmarked(usize),
    /// A decision about the float argument at this position: `value op rhs` holds.
    Float(usize, CmpOp, f64),
    /// The float argument at this position is not NaN.
    NotNan(usize),
    /// A stride guard: calls pass contiguous tensors, so it holds by construction.
    Contiguous,
    /// A leaf guard of a lifted tensor, which no call passes or marks: it holds.
    Lifted,
}

impl Check {
    /// Whether `call` (with `marked` its `mark_dynamic`-ed arguments) passes.
    fn passes(&self, call: &CallShapes, marked: &[bool]) -> bool {
        let float = |position: usize| match call.args.get(position) {
            Some((_, ArgValue::Float(value))) => Some(*value),
            _ => None,
        };
        match self {
            Check::Rel(rel) => rel.eval(&call.flat).unwrap_or(false),
            Check::Unmarked(input) => !marked.get(*input).copied().unwrap_or(false),
            Check::Float(position, op, rhs) => float(*position).is_some_and(|v| op.holds(v, *rhs)),
            Check::NotNan(position) => float(*position).is_some_and(|v| !v.is_nan()),
            Check::Contiguous | Check::Lifted => true,
        }
    }
}

/// A tensor the traced function read without receiving it, lifted into the graph as
/// Dynamo lifts it (`graph::Lifted`), as the guards see it.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftedArg {
    /// Where it is read from, `G['W']`.
    pub holder: Holder,
    /// Its shape as traced (symbols under `dynamic=True`).
    pub shape: Shape,
    /// Its sizes, fixed for the program's life.
    pub sizes: Vec<i64>,
    /// Its dtype.
    pub dtype: DType,
}

/// Where a guard check reads a symbol's value: a slot of the call's flat sizes, or a
/// lifted tensor's size, which no call changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueAt {
    Slot(usize),
    Fixed(i64),
}

impl ValueAt {
    /// The value as an expression over the call's slots (`Sym(i)` is slot `i`).
    fn expr(self) -> Expr {
        match self {
            ValueAt::Slot(slot) => Expr::sym(Sym(slot as u32)),
            ValueAt::Fixed(value) => Expr::int(value),
        }
    }
}

/// `TENSOR_MATCH` of the tensor at `holder` traced with `shape`: its rank and static sizes.
fn tensor_guard(holder: &Holder, shape: &Shape, dtype: DType) -> TensorGuard {
    TensorGuard {
        input: holder.to_short(),
        source: holder.to_source(),
        dtype,
        sizes: shape.iter().map(Expr::as_int).collect(),
    }
}

/// What a symbol's value is read from: its first plain occurrence among the arguments'
/// slots (a tensor's dims, an int itself), then among the lifted tensors' dims.
fn symbol_sources(
    args: &[(String, Shape)],
    kinds: &[ArgKind],
    lifted: &[LiftedArg],
) -> BTreeMap<Sym, (DimSource, ValueAt)> {
    let mut sources = BTreeMap::new();
    let mut slot = 0;
    for ((name, slots), kind) in args.iter().zip(kinds) {
        for (dim, expr) in slots.iter().enumerate() {
            if let Some(sym) = expr.as_sym() {
                sources.entry(sym).or_insert((
                    DimSource {
                        holder: Holder::Arg(name.clone()),
                        dim: (*kind == ArgKind::Tensor).then_some(dim),
                    },
                    ValueAt::Slot(slot),
                ));
            }
            slot += 1;
        }
    }
    for tensor in lifted {
        for (dim, (expr, &size)) in tensor.shape.iter().zip(&tensor.sizes).enumerate() {
            if let Some(sym) = expr.as_sym() {
                sources.entry(sym).or_insert((
                    DimSource {
                        holder: tensor.holder.clone(),
                        dim: Some(dim),
                    },
                    ValueAt::Fixed(size),
                ));
            }
        }
    }
    sources
}

/// Rewrites `expr` over the call's flat slots, so that `CompiledExpr` reads the call's
/// sizes directly: each symbol read from a slot becomes the symbol whose index is that
/// slot, each symbol of a lifted tensor's size its value.
fn to_slots(expr: &Expr, sources: &BTreeMap<Sym, (DimSource, ValueAt)>) -> Expr {
    let slot_of = |at: &ValueAt| match at {
        ValueAt::Slot(slot) => Some(*slot),
        ValueAt::Fixed(_) => None,
    };
    // Two steps (through indices past every slot) so that renaming s0 -> s3 never collides
    // with an s3 still waiting to be renamed.
    let offset = sources
        .values()
        .filter_map(|(_, at)| slot_of(at))
        .max()
        .unwrap_or(0)
        + sources.keys().map(|s| s.index()).max().unwrap_or(0)
        + 1;
    let mut renamed = expr.clone();
    for (sym, (_, at)) in sources {
        let to = match at {
            ValueAt::Slot(slot) => Expr::sym(Sym((offset + slot) as u32)),
            ValueAt::Fixed(value) => Expr::int(*value),
        };
        renamed = renamed.substitute(*sym, &to);
    }
    for slot in sources.values().filter_map(|(_, at)| slot_of(at)) {
        renamed = renamed.substitute(Sym((offset + slot) as u32), &Expr::sym(Sym(slot as u32)));
    }
    renamed
}

fn range_text(range: &ValueRange, name: &str) -> String {
    match (range.lo, range.hi) {
        (Some(lo), Some(hi)) => format!("{lo} <= {name} <= {hi}"),
        (Some(lo), None) => format!("{lo} <= {name}"),
        (None, Some(hi)) => format!("{name} <= {hi}"),
        (None, None) => String::new(),
    }
}

/// The printed shape guards and their compiled checks, built up together.
#[derive(Default)]
struct ShapeGuards {
    shape: Vec<Guard>,
    compiled: Vec<Check>,
}

impl ShapeGuards {
    /// Appends a guard with the check that decides it: the one way in, so `compiled[i]` is
    /// always the check of `shape[i]` (`Failure::Shape(i)` names a guard by that index).
    fn push(&mut self, guard: Guard, check: Check) {
        self.shape.push(guard);
        self.compiled.push(check);
    }
}

/// What the guard producers read: the environment after capture, the inputs' shapes under
/// its final replacements, and where each symbol's value is read from.
struct Producer<'a> {
    env: &'a ShapeEnv,
    /// Every argument with the expressions of its slots (a tensor's dims, an int's value,
    /// a bool's 0 or 1), under the final replacements.
    inputs: Vec<(String, Shape)>,
    kinds: Vec<ArgKind>,
    /// Per argument, a tensor's dtype (float32 for the others).
    dtypes: Vec<DType>,
    /// Per argument, whether it was traced as a symbol (a dynamic int), even if tracing
    /// later fixed its value.
    traced_symbolic: Vec<bool>,
    /// Per argument, a constant float's bits (its `EQUALS_MATCH`).
    float_bits: Vec<Option<u64>>,
    /// The lifted tensors, their shapes under the final replacements.
    lifted: Vec<LiftedArg>,
    sources: BTreeMap<Sym, (DimSource, ValueAt)>,
}

/// What kind of value an argument was traced with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgKind {
    Tensor,
    Int,
    Bool,
    Float,
}

impl<'a> Producer<'a> {
    fn new(env: &'a ShapeEnv, args: &[(String, TracedArg)], lifted: &[LiftedArg]) -> Producer<'a> {
        let mut inputs = Vec::with_capacity(args.len());
        let mut kinds = Vec::with_capacity(args.len());
        let mut dtypes = Vec::with_capacity(args.len());
        let mut traced_symbolic = Vec::with_capacity(args.len());
        let mut float_bits = Vec::with_capacity(args.len());
        for (name, arg) in args {
            traced_symbolic.push(match arg {
                TracedArg::Int(e) => e.as_int().is_none(),
                TracedArg::Float { symbolic, .. } => *symbolic,
                _ => false,
            });
            let (kind, slots) = match arg {
                TracedArg::Tensor(shape, _) => (ArgKind::Tensor, shape.clone()),
                TracedArg::Int(expr) => (ArgKind::Int, vec![expr.clone()]),
                TracedArg::Bool(b) => (ArgKind::Bool, vec![Expr::int(i64::from(*b))]),
                // A float has no size slot: its guards read it from the argument.
                TracedArg::Float { .. } => (ArgKind::Float, Vec::new()),
            };
            float_bits.push(match arg {
                TracedArg::Float {
                    value,
                    symbolic: false,
                } => Some(value.to_bits()),
                _ => None,
            });
            inputs.push((name.clone(), slots.iter().map(|d| env.replace(d)).collect()));
            kinds.push(kind);
            dtypes.push(match arg {
                TracedArg::Tensor(_, dtype) => *dtype,
                _ => DType::Float32,
            });
        }
        let lifted: Vec<LiftedArg> = lifted
            .iter()
            .map(|tensor| LiftedArg {
                shape: tensor.shape.iter().map(|d| env.replace(d)).collect(),
                ..tensor.clone()
            })
            .collect();
        let sources = symbol_sources(&inputs, &kinds, &lifted);
        Producer {
            env,
            inputs,
            kinds,
            dtypes,
            traced_symbolic,
            float_bits,
            lifted,
            sources,
        }
    }

    /// The tensor arguments' positions.
    fn tensor_positions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.inputs.len()).filter(|&i| self.kinds[i] == ArgKind::Tensor)
    }

    /// A symbol in PyTorch's source form, `L['x'].size()[0]`.
    fn source_name(&self, sym: Sym) -> String {
        self.sources
            .get(&sym)
            .map_or(sym.to_string(), |(src, _)| src.to_source())
    }

    /// A symbol in failure-reason form, `x.size()[0]`.
    fn short_name(&self, sym: Sym) -> String {
        self.sources
            .get(&sym)
            .map_or(sym.to_string(), |(src, _)| src.to_short())
    }

    /// `TENSOR_MATCH` per input: its rank and static sizes.
    fn tensor_guards(&self) -> Vec<TensorGuard> {
        self.tensor_positions()
            .map(|i| {
                let holder = Holder::Arg(self.inputs[i].0.clone());
                tensor_guard(&holder, &self.inputs[i].1, self.dtypes[i])
            })
            .collect()
    }

    /// `TENSOR_MATCH` per lifted tensor, in PyTorch's install order (source length, then
    /// text, as `order.rs` sorts the guard tree's children).
    fn lifted_guards(&self) -> Vec<TensorGuard> {
        self.lifted_installed()
            .into_iter()
            .map(|tensor| tensor_guard(&tensor.holder, &tensor.shape, tensor.dtype))
            .collect()
    }

    /// The lifted tensors in the order Dynamo installs their guards (`order::install_key`);
    /// `lifted` itself keeps the order the trace met them, which their shape guards follow.
    fn lifted_installed(&self) -> Vec<&LiftedArg> {
        let mut installed: Vec<(String, &LiftedArg)> = self
            .lifted
            .iter()
            .map(|tensor| (tensor.holder.to_source(), tensor))
            .collect();
        installed.sort_by(|(a, _), (b, _)| order::install_key(a).cmp(&order::install_key(b)));
        installed.into_iter().map(|(_, tensor)| tensor).collect()
    }

    /// `EQUALS_MATCH` per int that stayed a constant (`TYPE_MATCH` for a symbolic one),
    /// `TRUE_MATCH`/`FALSE_MATCH` per bool.
    fn value_guards(&self) -> Vec<ValueGuard> {
        self.inputs
            .iter()
            .zip(&self.kinds)
            .zip(&self.traced_symbolic)
            .zip(&self.float_bits)
            .filter_map(|((((name, slots), kind), symbolic), bits)| {
                let expected = match kind {
                    ArgKind::Tensor => return None,
                    // A symbol that tracing fixed keeps its type check; the value is then a
                    // shape guard (`input_equalities`), as PyTorch keeps it in the lambda.
                    ArgKind::Int if *symbolic => ValueMatch::Int(None),
                    ArgKind::Int => ValueMatch::Int(slots[0].as_int()),
                    ArgKind::Bool => ValueMatch::Bool(slots[0].as_int() == Some(1)),
                    ArgKind::Float => ValueMatch::Float(*bits),
                };
                Some(ValueGuard {
                    input: name.clone(),
                    expected,
                })
            })
            .collect()
    }

    /// Every argument in the order PyTorch's guard tree checks them: the value guards
    /// first (Dynamo installs them as tracing meets the values; its tensor guards come after,
    /// together), each group in parameter order.
    fn check_order(&self) -> Vec<(usize, ArgGuard)> {
        let (mut tensors, mut values) = (0, 0);
        let mut order: Vec<(usize, ArgGuard)> = self
            .kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let guard = if *kind == ArgKind::Tensor {
                    tensors += 1;
                    ArgGuard::Tensor(tensors - 1)
                } else {
                    values += 1;
                    ArgGuard::Value(values - 1)
                };
                (i, guard)
            })
            .collect();
        // Python values first, then tensors; a value a graph break handed back on the
        // stack (a resume function's `___stack0`) after the tensors, as measured on 2.15.
        order.sort_by_key(|(position, guard)| match guard {
            ArgGuard::Value(_) if self.inputs[*position].0.starts_with("___stack") => 2,
            ArgGuard::Value(_) => 0,
            ArgGuard::Tensor(_) => 1,
        });
        order
    }

    /// `DIMENSION_DYNAMIC_MARKING_GUARD` for each input that was not marked dynamic.
    fn leaf_guards(&self, marked: &[bool], out: &mut ShapeGuards) {
        for (i, was_marked) in marked.iter().enumerate() {
            if *was_marked || self.kinds.get(i) != Some(&ArgKind::Tensor) {
                continue;
            }
            let input = &self.inputs[i].0;
            let guard = Guard {
                kind: GuardKind::DimensionMarking,
                source: format!(
                    "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['{input}'], '_dynamo_dynamic_indices') == False"
                ),
                reason: format!("hasattr({input}, '_dynamo_dynamic_indices') == False"),
                symbolic: SymbolicForm::Unmarked(input.clone()),
                provenance: Provenance::Unmarked,
            };
            out.push(guard, Check::Unmarked(i));
        }
        for LiftedArg { holder, .. } in self.lifted_installed() {
            let (source, short) = (holder.to_source(), holder.to_short());
            let guard = Guard {
                kind: GuardKind::DimensionMarking,
                source: format!(
                    "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr({source}, '_dynamo_dynamic_indices') == False"
                ),
                reason: format!("hasattr({short}, '_dynamo_dynamic_indices') == False"),
                symbolic: SymbolicForm::Unmarked(short),
                provenance: Provenance::Unmarked,
            };
            out.push(guard, Check::Lifted);
        }
    }

    /// One equality per dynamic dim of input `input` that is not its symbol's own source:
    /// duck sizing gave it an earlier dim's symbol, or tracing solved it to an expression.
    fn input_equalities(&self, input: usize, out: &mut ShapeGuards) {
        let (name, dims) = &self.inputs[input];
        let first_slot: usize = self.inputs[..input].iter().map(|(_, d)| d.len()).sum();
        let tensor = self.kinds[input] == ArgKind::Tensor;
        let value_at = |dim: usize| ValueAt::Slot(first_slot + dim);
        let holder = Holder::Arg(name.clone());
        self.equalities(
            &holder,
            dims,
            tensor,
            self.traced_symbolic[input],
            value_at,
            out,
        );
    }

    /// `input_equalities` of a lifted tensor: its symbols duck-sized to earlier ones.
    fn lifted_equalities(&self, tensor: &LiftedArg, out: &mut ShapeGuards) {
        let value_at = |dim: usize| ValueAt::Fixed(tensor.sizes[dim]);
        self.equalities(&tensor.holder, &tensor.shape, true, false, value_at, out);
    }

    /// The equalities of one tensor's dims (or an int's value), `dims` as traced; a dim's
    /// value at a call is `value_at(dim)`; `traced_symbolic`: an int traced as a symbol.
    fn equalities(
        &self,
        holder: &Holder,
        dims: &Shape,
        tensor: bool,
        traced_symbolic: bool,
        value_at: impl Fn(usize) -> ValueAt,
        out: &mut ShapeGuards,
    ) {
        let source_name = |sym: Sym| self.source_name(sym);
        let short_name = |sym: Sym| self.short_name(sym);
        for (dim, expr) in dims.iter().enumerate() {
            let here = DimSource {
                holder: holder.clone(),
                dim: tensor.then_some(dim),
            };
            let is_own = expr
                .as_sym()
                .and_then(|s| self.sources.get(&s))
                .is_some_and(|(src, _)| *src == here);
            let fixed_symbol = traced_symbolic && expr.as_int().is_some();
            if (expr.as_int().is_some() && !fixed_symbol) || is_own {
                continue;
            }
            let duck = self.env.events().iter().any(
                |(_, event)| matches!(event, ShapeEvent::DuckShared { source, .. } if *source == here.to_source()),
            );
            let (dim_source, value) = (here.to_source(), expr.to_source(&source_name));
            let provenance = if fixed_symbol {
                Provenance::FixedSymbol {
                    dim: dim_source,
                    value,
                }
            } else if duck {
                Provenance::DuckSizing {
                    dim: dim_source,
                    other: value,
                }
            } else {
                Provenance::Solved {
                    dim: dim_source,
                    value,
                }
            };
            let guard = Guard {
                kind: GuardKind::InputEquality,
                source: format!("{} == {}", here.to_source(), expr.to_source(&source_name)),
                reason: format!("{} == {}", here.to_short(), expr.to_source(&short_name)),
                symbolic: SymbolicForm::Equals(here.to_short(), expr.clone()),
                provenance,
            };
            let rel = Rel::new(
                value_at(dim).expr(),
                CmpOp::Eq,
                to_slots(expr, &self.sources),
            );
            out.push(guard, Check::Rel(CompiledRel::new(&rel)));
        }
    }

    /// Contiguous strides follow from the sizes (PyTorch's InferStride); a stride of a
    /// tensor (`holder`, of shape `dims`) that is not a constant is guarded against the sizes
    /// it is the product of.
    fn stride_guards(&self, holder: &Holder, dims: &Shape, out: &mut ShapeGuards) {
        let source_name = |sym: Sym| self.source_name(sym);
        let short_name = |sym: Sym| self.short_name(sym);
        let (source, short) = (holder.to_source(), holder.to_short());
        // The last dim's stride is 1, a constant, like every stride after static sizes.
        for (dim, stride) in layout::contiguous(dims).into_iter().enumerate() {
            if stride.as_int().is_some() {
                continue;
            }
            let guard = Guard {
                kind: GuardKind::Stride,
                source: format!(
                    "{source}.stride()[{dim}] == {}",
                    stride.to_source(&source_name)
                ),
                reason: format!(
                    "{short}.stride()[{dim}] == {}",
                    stride.to_source(&short_name)
                ),
                symbolic: SymbolicForm::Equals(format!("{short}.stride()[{dim}]"), stride),
                provenance: Provenance::Contiguous,
            };
            out.push(guard, Check::Contiguous);
        }
    }

    /// Per symbolic float argument, what the trace decided about it (`L['f'] > 1.0`), then
    /// PyTorch's implicit `not math.isnan(L['f'])`.
    fn float_guards(&self, out: &mut ShapeGuards) {
        for (position, (name, _)) in self.inputs.iter().enumerate() {
            if self.kinds[position] != ArgKind::Float || !self.traced_symbolic[position] {
                continue;
            }
            for decided in self.env.float_guards().iter().filter(|g| g.input == *name) {
                let rhs = python_float(decided.rhs);
                let guard = Guard {
                    kind: GuardKind::Recorded,
                    source: format!("L['{name}'] {} {rhs}", decided.op),
                    reason: format!("{name} {} {rhs}", decided.op),
                    symbolic: SymbolicForm::FloatRel(format!("{name} {} {rhs}", decided.op)),
                    provenance: Provenance::Recorded(decided.origin.clone()),
                };
                out.push(guard, Check::Float(position, decided.op, decided.rhs));
            }
            let guard = Guard {
                kind: GuardKind::Range,
                source: format!("not math.isnan(L['{name}'])"),
                reason: format!("not math.isnan({name})"),
                symbolic: SymbolicForm::NotNan(name.clone()),
                provenance: Provenance::NanSpecialization,
            };
            out.push(guard, Check::NotNan(position));
        }
    }

    /// The guards recorded while tracing, under the final replacements, once each and only
    /// where the symbols' ranges do not already decide them.
    fn recorded_guards(&self, out: &mut ShapeGuards) {
        let env = self.env;
        let ranges = |s: Sym| env.range(s);
        let source_name = |sym: Sym| self.source_name(sym);
        let short_name = |sym: Sym| self.short_name(sym);
        let mut seen = Vec::new();
        for recorded in env.guards() {
            let (lhs, rhs) = (
                env.replace(&recorded.rel.lhs),
                env.replace(&recorded.rel.rhs),
            );
            let rel = Rel::new(lhs, recorded.rel.op, rhs);
            let canonical = rel.simplify();
            if canonical.decide_by_ranges(&ranges) == Some(true) || seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            let to_form = |name: &dyn Fn(Sym) -> String| rel.to_source(name);
            let guard = Guard {
                kind: GuardKind::Recorded,
                source: to_form(&source_name),
                reason: to_form(&short_name),
                symbolic: SymbolicForm::Rel(rel.clone()),
                provenance: Provenance::Recorded(recorded.origin.clone()),
            };
            let slotted = Rel::new(
                to_slots(&rel.lhs, &self.sources),
                rel.op,
                to_slots(&rel.rhs, &self.sources),
            );
            out.push(guard, Check::Rel(CompiledRel::new(&slotted)));
        }
    }

    /// One range guard per symbol with a bound, in symbol order; a guard with both bounds
    /// is pushed twice, once per bound's check.
    fn range_guards(&self, out: &mut ShapeGuards) {
        for (sym, (src, at)) in &self.sources {
            let range = self.env.range(*sym);
            let text = range_text(&range, &src.to_source());
            if text.is_empty() {
                continue;
            }
            let guard = Guard {
                kind: GuardKind::Range,
                source: text,
                reason: range_text(&range, &src.to_short()),
                symbolic: SymbolicForm::Range(range, *sym),
                provenance: self.range_provenance(*sym, range),
            };
            let slot_sym = at.expr();
            let lo = range
                .lo
                .map(|lo| Rel::new(slot_sym.clone(), CmpOp::Ge, Expr::int(lo)));
            let hi = range
                .hi
                .map(|hi| Rel::new(slot_sym.clone(), CmpOp::Le, Expr::int(hi)));
            match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    out.push(guard.clone(), Check::Rel(CompiledRel::new(&lo)));
                    out.push(guard, Check::Rel(CompiledRel::new(&hi)));
                }
                (Some(rel), None) | (None, Some(rel)) => {
                    out.push(guard, Check::Rel(CompiledRel::new(&rel)))
                }
                (None, None) => unreachable!("empty ranges print nothing"),
            }
        }
    }

    /// Why `sym` has `range`: a `mark_dynamic`, 0/1 specialization, or narrowing while tracing.
    fn range_provenance(&self, sym: Sym, range: ValueRange) -> Provenance {
        let info = &self.env.symbols()[sym.index()];
        match (info.mark, range == crate::shape::DEFAULT_RANGE) {
            (Some(mark), _) => {
                let declared = ValueRange::new(mark.min, mark.max);
                let start = crate::shape::DEFAULT_RANGE.intersect(&declared);
                Provenance::MarkDynamic {
                    min: mark.min,
                    max: mark.max,
                    narrowed: (start != Some(range)).then_some(range),
                }
            }
            (None, true) => Provenance::ZeroOneSpecialization,
            (None, false) => Provenance::Narrowed(range),
        }
    }
}

impl GuardSet {
    /// Produces the guards of an entry (PyTorch's `produce_guards`).
    ///
    /// `args` are the arguments as the entry was traced (tensors' symbolic shapes, ints,
    /// bools); `marked[i]` says whether argument `i` carried a `mark_dynamic` when the
    /// entry was compiled.
    pub fn produce(
        env: &ShapeEnv,
        args: &[(String, TracedArg)],
        lifted: &[LiftedArg],
        marked: &[bool],
    ) -> GuardSet {
        let producer = Producer::new(env, args, lifted);
        let mut out = ShapeGuards::default();
        // Leaf guards first (PyTorch checks them in C++ before the shape lambda), then the
        // lambda's: each input's equalities and strides in parameter order, the recorded
        // guards, the ranges.
        producer.leaf_guards(marked, &mut out);
        for input in 0..producer.inputs.len() {
            producer.input_equalities(input, &mut out);
            let (name, dims) = &producer.inputs[input];
            producer.stride_guards(&Holder::Arg(name.clone()), dims, &mut out);
        }
        // Then the lifted tensors', in the order the trace met them.
        for tensor in &producer.lifted {
            producer.lifted_equalities(tensor, &mut out);
            producer.stride_guards(&tensor.holder, &tensor.shape, &mut out);
        }
        producer.recorded_guards(&mut out);
        producer.float_guards(&mut out);
        producer.range_guards(&mut out);
        let accessors = producer
            .check_order()
            .into_iter()
            .map(|(position, guard)| Accessor {
                guard: RootGuard::Arg(position, guard),
                fails: 0,
            })
            .collect();
        GuardSet {
            tensors: producer.tensor_guards(),
            lifted: producer.lifted_guards(),
            values: producer.value_guards(),
            accessors,
            attributes: Vec::new(),
            attribute_tree: AttributeNode::tree(&[]),
            shape: out.shape,
            compiled: out.compiled,
        }
    }

    /// These guards with one per module attribute the trace read (`reads`, in reading
    /// order, with the values it saw).
    pub fn with_attributes(mut self, reads: &[(AttributePath, ArgValue)]) -> GuardSet {
        self.attributes = reads
            .iter()
            .filter_map(|(path, seen)| AttributeGuard::new(path.clone(), seen))
            .collect();
        let paths: Vec<&AttributePath> = self.attribute_paths().collect();
        self.attribute_tree = AttributeNode::tree(&paths);
        self.accessors
            .retain(|a| !matches!(a.guard, RootGuard::Module));
        if !self.attributes.is_empty() {
            // `L['self']` after the arguments, as PyTorch installs it.
            self.accessors.push(Accessor {
                guard: RootGuard::Module,
                fails: 0,
            });
        }
        self
    }

    /// How many arguments the entry was compiled with.
    fn arity(&self) -> usize {
        self.tensors.len() + self.values.len()
    }

    /// The attribute paths these guards read at a call.
    pub fn attribute_paths(&self) -> impl Iterator<Item = &AttributePath> {
        self.attributes.iter().map(|guard| &guard.path)
    }

    /// Checks a call. `marked[i]` says whether argument `i` carries a `mark_dynamic` now.
    /// The failure is the first in the current check order (PyTorch's verbose check, which
    /// gives a recompile's reason).
    pub fn check(&self, call: &CallShapes, marked: &[bool]) -> Result<(), Failure> {
        self.first_failure(call, marked)
            .map_err(|(failure, _)| failure)
    }

    /// [`GuardSet::check`] as the cache runs it on a call (PyTorch's fast check): a failure
    /// is counted where it happened and re-sorts the tree, so the next check (and the reason
    /// printed for this call) starts with what failed most.
    pub fn check_and_learn(&mut self, call: &CallShapes, marked: &[bool]) -> Result<(), Failure> {
        let (failure, at) = match self.first_failure(call, marked) {
            Ok(()) => return Ok(()),
            Err(failed) => failed,
        };
        if let Some((index, path)) = at {
            self.accessors[index].fails += 1;
            if matches!(self.accessors[index].guard, RootGuard::Module) {
                self.attribute_tree.count_failure(&path);
            }
            if index > 0 {
                order::sort_by_failures(&mut self.accessors, |a| a.fails);
            }
        }
        Err(failure)
    }

    /// The first failure in check order, and where in the tree it happened.
    fn first_failure(&self, call: &CallShapes, marked: &[bool]) -> Result<(), (Failure, FailedAt)> {
        if call.args.len() != self.arity() {
            let failure = Failure::Arity {
                expected: self.arity(),
                actual: call.args.len(),
            };
            return Err((failure, None));
        }
        for (index, accessor) in self.accessors.iter().enumerate() {
            let failed = match accessor.guard {
                RootGuard::Arg(position, guard) => self
                    .check_arg(call, position, guard)
                    .err()
                    .map(|failure| (failure, Vec::new())),
                RootGuard::Module => self
                    .attribute_tree
                    .first_failure(&|i| {
                        !self.attributes[i].passes(call.attribute(&self.attributes[i].path))
                    })
                    .map(|(guard, path)| (Failure::Attribute(guard), path)),
            };
            if let Some((failure, path)) = failed {
                return Err((failure, Some((index, path))));
            }
        }
        for (index, check) in self.compiled.iter().enumerate() {
            if !check.passes(call, marked) {
                return Err((Failure::Shape(index), None));
            }
        }
        Ok(())
    }

    /// The guard of the argument at `position`.
    fn check_arg(
        &self,
        call: &CallShapes,
        position: usize,
        guard: ArgGuard,
    ) -> Result<(), Failure> {
        let Some((name, value)) = call.args.get(position) else {
            return Ok(());
        };
        match guard {
            ArgGuard::Tensor(i) => {
                let tensor = &self.tensors[i];
                let ArgValue::Tensor(dims, dtype) = value else {
                    return Err(Failure::Type {
                        name: name.clone(),
                        expected: ArgValue::Tensor(Vec::new(), DType::Float32).type_name(),
                        actual: value.type_name(),
                    });
                };
                // PyTorch's `check_tensor` compares the dtype before the rank and sizes.
                if tensor.dtype != *dtype {
                    return Err(Failure::DType {
                        input: i,
                        actual: *dtype,
                    });
                }
                if tensor.sizes.len() != dims.len() {
                    return Err(Failure::Rank {
                        input: i,
                        expected: tensor.sizes.len(),
                        actual: dims.len(),
                    });
                }
                for (dim, (expected, &actual)) in tensor.sizes.iter().zip(dims).enumerate() {
                    if let Some(expected) = *expected {
                        if expected != actual {
                            return Err(Failure::Size {
                                input: i,
                                dim,
                                expected,
                                actual,
                            });
                        }
                    }
                }
                Ok(())
            }
            ArgGuard::Value(i) => match self.values[i].check(value) {
                Ok(()) => Ok(()),
                Err(ValueFailure::Value) => Err(Failure::Value(i)),
                Err(ValueFailure::Type) => Err(Failure::Type {
                    name: name.clone(),
                    expected: self.values[i].type_name(),
                    actual: value.type_name(),
                }),
            },
        }
    }

    /// Each attribute guard's verdict for a call (in `attributes`' order).
    pub fn attribute_verdicts(&self, call: &CallShapes) -> Vec<bool> {
        self.attributes
            .iter()
            .map(|guard| guard.passes(call.attribute(&guard.path)))
            .collect()
    }

    /// Every shape guard's verdict for a call, one per element of `shape` (check order), so a
    /// page can show which guards pass and which fail; `check` stops at the first failure.
    /// Meaningful only when every input has the rank the entry was compiled for (the tensor
    /// guards' rank check), since the relations read the call's flat sizes by position.
    pub fn shape_verdicts(&self, call: &CallShapes, marked: &[bool]) -> Vec<bool> {
        self.compiled
            .iter()
            .map(|check| check.passes(call, marked))
            .collect()
    }

    /// Each value guard's verdict for a call (in `values`' order): the argument of that name
    /// has the type and, when specialised, the value the entry was compiled for.
    pub fn value_verdicts(&self, call: &CallShapes) -> Vec<bool> {
        self.values
            .iter()
            .map(|guard| {
                call.args
                    .iter()
                    .find(|(name, _)| *name == guard.input)
                    .is_some_and(|(_, value)| guard.check(value).is_ok())
            })
            .collect()
    }

    /// Whether every argument of `call` has the kind (tensor or Python value) this entry
    /// was compiled for, so that its sizes and values sit in the slots the shape guards read.
    pub fn kinds_match(&self, call: &CallShapes) -> bool {
        call.args.len() == self.arity()
            && self.accessors.iter().all(|accessor| match accessor.guard {
                RootGuard::Arg(position, guard) => matches!(
                    (guard, &call.args[position].1),
                    (ArgGuard::Tensor(_), ArgValue::Tensor(..))
                        | (
                            ArgGuard::Value(_),
                            ArgValue::Int(_) | ArgValue::Bool(_) | ArgValue::Float(_)
                        )
                ),
                RootGuard::Module => true,
            })
    }

    /// PyTorch's failure reason for a failed check.
    pub fn reason(&self, failure: &Failure) -> String {
        match failure {
            Failure::DType { input, actual } => format!(
                "tensor '{}' dtype mismatch. expected {}, actual {}",
                self.tensors[*input].input,
                self.tensors[*input].dtype.scalar_type(),
                actual.scalar_type()
            ),
            Failure::Rank {
                input,
                expected,
                actual,
            } => {
                format!(
                    "tensor '{}' rank mismatch. expected {expected}, actual {actual}",
                    self.tensors[*input].input
                )
            }
            Failure::Size {
                input,
                dim,
                expected,
                actual,
            } => {
                format!(
                    "tensor '{}' size mismatch at index {dim}. expected {expected}, actual {actual}",
                    self.tensors[*input].input
                )
            }
            Failure::Type {
                name,
                expected,
                actual,
            } => format!("expected type of '{name}' to be {expected}, but found {actual}"),
            Failure::Arity { expected, actual } => {
                format!("expected {expected} arguments, got {actual}")
            }
            Failure::Value(index) => self.values[*index].reason(),
            Failure::Attribute(index) => self.attributes[*index].reason(),
            Failure::Shape(index) => self.shape[*index].reason.clone(),
        }
    }

    /// Every printed guard once (range guards with two bounds are checked twice).
    pub fn printed(&self) -> Vec<&Guard> {
        let mut out: Vec<&Guard> = Vec::new();
        for guard in &self.shape {
            if out
                .last()
                .is_none_or(|last| !std::ptr::eq(*last, guard) && **last != *guard)
            {
                out.push(guard);
            }
        }
        out
    }

    /// PyTorch's `NO_TENSOR_ALIASING` guard, present with two or more tensor inputs (the
    /// arguments, then the lifted tensors). Tailor's calls always pass distinct tensors, and
    /// a lifted tensor is the program's own, so it is printed but never fails.
    pub fn aliasing(&self) -> Option<String> {
        (self.tensors.len() + self.lifted.len() >= 2).then(|| {
            let names: Vec<&str> = self
                .tensors
                .iter()
                .chain(&self.lifted)
                .map(|t| t.source.as_str())
                .collect();
            format!(
                "NO_TENSOR_ALIASING: check_no_aliasing({})",
                names.join(", ")
            )
        })
    }

    /// All guards as PyTorch prints them: value and tensor matches, the aliasing guard,
    /// the lifted tensors' matches, module attributes, then shape guards.
    pub fn source_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.values.iter().map(ToString::to_string).collect();
        lines.extend(self.tensors.iter().map(ToString::to_string));
        lines.extend(self.aliasing());
        lines.extend(self.lifted.iter().map(ToString::to_string));
        lines.extend(self.attributes.iter().map(ToString::to_string));
        lines.extend(self.printed().iter().map(|g| g.source.clone()));
        lines
    }

    /// Where the attribute guards start in `source_lines()`.
    pub fn first_attribute_line(&self) -> usize {
        self.values.len()
            + self.tensors.len()
            + usize::from(self.aliasing().is_some())
            + self.lifted.len()
    }
}

impl fmt::Display for GuardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for value in &self.values {
            writeln!(f, "{value}")?;
        }
        for tensor in &self.tensors {
            writeln!(f, "{tensor}")?;
        }
        if let Some(aliasing) = self.aliasing() {
            writeln!(f, "{aliasing}")?;
        }
        for tensor in &self.lifted {
            writeln!(f, "{tensor}")?;
        }
        for attribute in &self.attributes {
            writeln!(f, "{attribute}")?;
        }
        for guard in self.printed() {
            writeln!(f, "{}", guard.source)?;
            writeln!(
                f,
                "    symbols: {}    from: {}",
                guard.symbolic, guard.provenance
            )?;
        }
        Ok(())
    }
}
