//! Where a guard came from, as data: one variant per kind of reason Tailor gives.
//!
//! Input: what `GuardSet::produce` and the page's guard views know about a guard (the dim,
//! the expression it was solved to, the mark, the op or branch that asked). Output: a
//! `Provenance`, printed in English by `Display` (the trace, the CLI, the snapshots) and
//! as a language-neutral `Message` for the page. Invariant: `Display` is the one English
//! wording; `message()` carries the same facts, so every language says the same thing.

use crate::message::{Message, MessageId};
use crate::shape::{Asker, Origin};
use crate::symbolic::ValueRange;
use std::fmt;

/// Why a guard exists.
#[derive(Clone, Debug, PartialEq)]
pub enum Provenance {
    /// `DIMENSION_DYNAMIC_MARKING_GUARD` of a tensor that was not marked dynamic.
    Unmarked,
    /// A traced symbol fixed to a constant while tracing (`dim`, source form, and its value).
    FixedSymbol {
        /// The dim, `L['x'].size()[0]`.
        dim: String,
        /// What it was fixed to.
        value: String,
    },
    /// Duck sizing gave `dim` the symbol of an earlier dim of the same size.
    DuckSizing {
        /// The dim, source form.
        dim: String,
        /// The earlier dim (or its expression), source form.
        other: String,
    },
    /// Tracing solved `dim` to an expression.
    Solved {
        /// The dim, source form.
        dim: String,
        /// The expression, source form.
        value: String,
    },
    /// A contiguous input's stride is the product of the later sizes.
    Contiguous,
    /// PyTorch's implicit `not math.isnan` of a symbolic float.
    NanSpecialization,
    /// A `mark_dynamic(min=, max=)` range intersected with the default `[2, int_oo]`.
    MarkDynamic {
        /// `min=`, if given.
        min: Option<i64>,
        /// `max=`, if given.
        max: Option<i64>,
        /// The range tracing narrowed it to, when it did.
        narrowed: Option<ValueRange>,
    },
    /// The default range `[2, int_oo]`: 0 and 1 get their own entries.
    ZeroOneSpecialization,
    /// A range narrowed while tracing.
    Narrowed(ValueRange),
    /// Recorded while tracing: an op's shape rule or a branch of the user's code asked.
    Recorded(Origin),
    /// `EQUALS_MATCH` of an int argument.
    IntConstant,
    /// `TYPE_MATCH` of a symbolic int argument.
    IntSymbol,
    /// A bool argument, always specialised.
    Bool,
    /// `EQUALS_MATCH` of a float argument.
    FloatConstant,
    /// `TYPE_MATCH` of a symbolic float argument.
    FloatSymbol,
    /// `TENSOR_MATCH` of a tensor argument.
    TensorMatch,
    /// `NO_TENSOR_ALIASING` between tensor arguments.
    NoAliasing,
    /// A module's `training` flag, read by the trace.
    TrainingMode,
    /// Another module attribute the trace read.
    ModuleAttribute,
}

impl Provenance {
    /// The provenance as a message for the page.
    pub fn message(&self) -> Message {
        use MessageId as Id;
        let plain = |id| Message::new(id, &[]);
        match self {
            Provenance::Unmarked => plain(Id::ProvenanceUnmarked),
            Provenance::FixedSymbol { dim, value } => {
                Message::new(Id::ProvenanceFixedSymbol, &[dim, value])
            }
            Provenance::DuckSizing { dim, other } => {
                Message::new(Id::ProvenanceDuckSizing, &[dim, other])
            }
            Provenance::Solved { dim, value } => Message::new(Id::ProvenanceSolved, &[dim, value]),
            Provenance::Contiguous => plain(Id::ProvenanceContiguous),
            Provenance::NanSpecialization => plain(Id::ProvenanceNanSpecialization),
            Provenance::MarkDynamic { min, max, narrowed } => {
                let (min, max) = (bound(*min), bound(*max));
                match narrowed {
                    Some(range) => {
                        Message::new(Id::ProvenanceMarkDynamicNarrowed, &[&min, &max, range])
                    }
                    None => Message::new(Id::ProvenanceMarkDynamic, &[&min, &max]),
                }
            }
            Provenance::ZeroOneSpecialization => plain(Id::ProvenanceZeroOne),
            Provenance::Narrowed(range) => Message::new(Id::ProvenanceNarrowed, &[range]),
            Provenance::Recorded(origin) => origin_message(origin),
            Provenance::IntConstant => plain(Id::ProvenanceIntConstant),
            Provenance::IntSymbol => plain(Id::ProvenanceIntSymbol),
            Provenance::Bool => plain(Id::ProvenanceBool),
            Provenance::FloatConstant => plain(Id::ProvenanceFloatConstant),
            Provenance::FloatSymbol => plain(Id::ProvenanceFloatSymbol),
            Provenance::TensorMatch => plain(Id::ProvenanceTensorMatch),
            Provenance::NoAliasing => plain(Id::ProvenanceNoAliasing),
            Provenance::TrainingMode => plain(Id::ProvenanceTrainingMode),
            Provenance::ModuleAttribute => plain(Id::ProvenanceModuleAttribute),
        }
    }
}

/// A `mark_dynamic` bound as Python prints it: the number, or `None`.
fn bound(value: Option<i64>) -> String {
    value.map_or("None".to_string(), |v| v.to_string())
}

/// Who asked, and where when known: `AskedBy*At` carry the line and column last.
fn origin_message(origin: &Origin) -> Message {
    use MessageId as Id;
    let (mut message, at) = match &origin.what {
        Asker::Op(op) => (Message::new(Id::AskedByOp, &[op]), Id::AskedByOpAt),
        Asker::SizeCondition(construct) => (
            Message::new(Id::AskedBySizeCondition, &[construct]),
            Id::AskedBySizeConditionAt,
        ),
        Asker::FloatCondition { construct, name } => (
            Message::new(Id::AskedByFloatCondition, &[construct, name]),
            Id::AskedByFloatConditionAt,
        ),
    };
    if let Some(span) = origin.span {
        message.id = at;
        message
            .args
            .extend([span.line.to_string(), span.col.to_string()]);
    }
    message
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Provenance::Unmarked => write!(
                f,
                "compiled for an unmarked tensor: a mark_dynamic-ed one needs its own entry"
            ),
            Provenance::FixedSymbol { dim, value } => {
                write!(f, "{dim} was a symbol, fixed to {value} while tracing")
            }
            Provenance::DuckSizing { dim, other } => {
                write!(f, "duck sizing: {dim} had the same size as {other}")
            }
            Provenance::Solved { dim, value } => {
                write!(f, "{dim} was solved to {value} while tracing")
            }
            Provenance::Contiguous => write!(
                f,
                "contiguous input: its stride is the product of the later sizes"
            ),
            Provenance::NanSpecialization => write!(
                f,
                "implicit guard for float input due to NaN specialization in the framework"
            ),
            Provenance::MarkDynamic { min, max, narrowed } => {
                write!(
                    f,
                    "mark_dynamic(min={}, max={}) intersected with the default [2, int_oo]",
                    bound(*min),
                    bound(*max)
                )?;
                match narrowed {
                    Some(range) => write!(f, ", then narrowed to {range} while tracing"),
                    None => Ok(()),
                }
            }
            Provenance::ZeroOneSpecialization => write!(
                f,
                "0/1 specialization: sizes 0 and 1 get their own entries, so symbols start at 2"
            ),
            Provenance::Narrowed(range) => write!(f, "range {range} narrowed while tracing"),
            Provenance::Recorded(origin) => write!(f, "{origin}"),
            Provenance::IntConstant => write!(
                f,
                "EQUALS_MATCH: an int is a constant until it changes (then automatic dynamic makes it a symbol)"
            ),
            Provenance::IntSymbol => write!(
                f,
                "TYPE_MATCH: a symbolic int is checked only for its type; its value is in the shape guards"
            ),
            Provenance::Bool => write!(
                f,
                "a bool is always specialised: each value has its own entry"
            ),
            Provenance::FloatConstant => write!(
                f,
                "EQUALS_MATCH: a float is a constant until it changes (then automatic dynamic makes it a symbolic float)"
            ),
            Provenance::FloatSymbol => write!(
                f,
                "TYPE_MATCH: a symbolic float is checked only for its type; what the trace decided about it is in the shape guards"
            ),
            Provenance::TensorMatch => write!(
                f,
                "TENSOR_MATCH: type, dtype, rank and every static size of the input"
            ),
            Provenance::NoAliasing => write!(
                f,
                "NO_TENSOR_ALIASING: two or more tensor inputs (calls always pass distinct tensors)"
            ),
            Provenance::TrainingMode => write!(
                f,
                "the module's mode, read by the trace: train() and eval() change it, and each mode has its own entry"
            ),
            Provenance::ModuleAttribute => write!(
                f,
                "a module attribute the trace read: Dynamo treats nn.Module ints, floats and bools as constants, so a new value is a recompile"
            ),
        }
    }
}
