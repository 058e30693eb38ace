//! The kinds of guard an entry holds, as PyTorch names and prints them: `TENSOR_MATCH`
//! (rank and static sizes), value matches of ints, bools and floats, module attribute
//! guards, and shape guards with their symbolic form and provenance; and why a check failed.
//!
//! In: what the producer (`produce.rs`) decided. Out: guards that print in source form
//! (`2 <= L['x'].size()[0]`) and symbol form (`2 <= s0`), and failure reasons in Dynamo's
//! words. Invariant: every text here is PyTorch 2.15's, character for character.

use super::*;
use crate::graph::DType;
use crate::message::{Message, MessageId};
use crate::symbolic::{Expr, Rel, Sym, ValueRange};
use serde::Serialize;
use std::fmt;

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
    pub(super) fn type_name(&self) -> &'static str {
        match self.expected {
            ValueMatch::Int(_) => ArgValue::Int(0).type_name(),
            ValueMatch::Bool(_) => ArgValue::Bool(false).type_name(),
            ValueMatch::Float(_) => ArgValue::Float(0.0).type_name(),
        }
    }

    /// Whether `value` passes, or the failure when it does not.
    pub(super) fn check(&self, value: &ArgValue) -> Result<(), ValueFailure> {
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
/// the attribute (`self._modules['layer1']._modules['0'].training`); or, for a dict a
/// library keeps as a module global (einops' backend registry), that module, the dict's
/// name, and its length as what is read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AttributePath {
    /// Submodule names, outermost first (empty: an attribute of `self`).
    pub modules: Vec<String>,
    /// The attribute.
    pub name: String,
    /// The dotted name of the module whose global dict `name` is, read by its length
    /// (Dynamo's dict-keys guard); `None` for an attribute under `self`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_dict: Option<String>,
}

impl AttributePath {
    /// An attribute of `self` or of the submodules `modules` under it.
    pub fn of_module(modules: Vec<String>, name: &str) -> AttributePath {
        AttributePath {
            modules,
            name: name.to_string(),
            global_dict: None,
        }
    }

    /// The length of the dict `name`, a global of the module `module` (dotted).
    pub fn global_dict_length(module: &str, name: &str) -> AttributePath {
        AttributePath {
            modules: Vec::new(),
            name: name.to_string(),
            global_dict: Some(module.to_string()),
        }
    }

    /// The failure-reason form, `self._modules['bn'].training`, or the length of a
    /// global dict as Dynamo names an imported module's global
    /// (`len(G['__import_einops_dot__backends']._type2backend)`).
    pub fn short(&self) -> String {
        if let Some(module) = &self.global_dict {
            let global = format!("__import_{}", module.replace('.', "_dot_"));
            return format!("len(G['{global}'].{})", self.name);
        }
        let mut text = "self".to_string();
        for module in &self.modules {
            text.push_str(&format!("._modules['{module}']"));
        }
        format!("{text}.{}", self.name)
    }

    /// PyTorch's source form, `L['self']._modules['bn'].training` (a global dict's length
    /// as in `short`).
    pub fn source(&self) -> String {
        if self.global_dict.is_some() {
            return self.short();
        }
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

    /// The failure-reason form PyTorch prints, `self._modules['bn'].training == True`; for
    /// a global dict, its length check as Dynamo words the failure
    /// (`len(G['__import_einops_dot__backends']._type2backend) != 1`).
    pub fn reason(&self) -> String {
        match (&self.path.global_dict, self.expected) {
            (Some(_), ValueMatch::Int(Some(length))) => {
                format!("{} != {length}", self.path.short())
            }
            _ => match_reason(&self.path.short(), self.expected),
        }
    }

    /// Whether the attribute's value at a call (`None`: not a constant any more) passes.
    pub(super) fn passes(&self, value: Option<&ArgValue>) -> bool {
        value.is_some_and(|value| value_matches(self.expected, value).is_ok())
    }
}

impl fmt::Display for AttributeGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path.global_dict, self.expected) {
            (Some(_), ValueMatch::Int(Some(length))) => {
                write!(f, "DICT_LENGTH: {} == {length}", self.path.source())
            }
            _ => f.write_str(&match_source(&self.path.source(), self.expected)),
        }
    }
}

pub(super) enum ValueFailure {
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

/// A range as a guard's text: `2 <= s0 <= 64`, `2 <= s0`, or nothing for an unbounded one.
pub(super) fn range_text(range: &ValueRange, name: &str) -> String {
    match (range.lo, range.hi) {
        (Some(lo), Some(hi)) => format!("{lo} <= {name} <= {hi}"),
        (Some(lo), None) => format!("{lo} <= {name}"),
        (None, Some(hi)) => format!("{name} <= {hi}"),
        (None, None) => String::new(),
    }
}
