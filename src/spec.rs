//! The text forms users type for inputs and marks (CLI flags and the page's fields).
//!
//! `SHAPES = NAME=VALUE[;NAME=VALUE...]` and `SPEC = INPUT:DIM[:MIN:MAX]` (DESIGN.md §6),
//! where a `VALUE` is a tensor's sizes `D,D,...`, a Python int `int(N)` or a bool `True` /
//! `False`. Input: the text and the function's input names. Output: `CallShapes`,
//! `MarkDynamic`, or an `InputError` that quotes the offending part. Invariant: every size
//! accepted here is a non-negative i64, and every named input exists.

use crate::config::MarkDynamic;
use crate::graph::DType;
use crate::guard::{ArgValue, CallShapes};

/// A malformed shape or mark specification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The text does not follow the grammar.
    #[error("malformed {} '{text}': {malformation}", .malformation.what())]
    Malformed {
        /// The offending text.
        text: String,
        /// What is wrong with it.
        malformation: Malformation,
    },
    /// An input name the function does not take.
    #[error("unknown input '{name}' (the model's inputs are: {known})")]
    UnknownInput {
        /// The name given.
        name: String,
        /// The function's inputs.
        known: String,
    },
    /// A required input without a shape.
    #[error("missing a shape for input '{name}' (expected {expected})")]
    MissingInput {
        /// The missing input.
        name: String,
        /// An example of the full spec.
        expected: String,
    },
    /// A dimension index past the input's rank.
    #[error("input '{input}' has {rank} dims; dim {dim} does not exist")]
    NoSuchDim {
        /// Input name.
        input: String,
        /// Its rank.
        rank: usize,
        /// The requested dim.
        dim: usize,
    },
}

/// What is wrong with a malformed shapes or mark text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformation {
    /// A shapes part without `=`.
    #[error("expected NAME=D,D,… such as x=8,64 (or NAME=int(N), NAME=True)")]
    NotNameValue,
    /// An input given twice.
    #[error("input '{name}' is given twice")]
    GivenTwice {
        /// The input.
        name: String,
    },
    /// `int(…)` of something else.
    #[error("'{value}' is not an int (a whole number that fits in 64 bits)")]
    NotInt {
        /// The text inside `int(…)`.
        value: String,
    },
    /// `float(…)` of something else.
    #[error("'{value}' is not a float")]
    NotFloat {
        /// The text inside `float(…)`.
        value: String,
    },
    /// The dtype suffix of `x=2,3:int64` names no dtype Tailor has.
    #[error("'{name}' is not a dtype Tailor has (float32, int64, int32 or bool)")]
    UnknownDType {
        /// The suffix.
        name: String,
    },
    /// A negative size.
    #[error("size {size} is negative")]
    NegativeSize {
        /// The size.
        size: i64,
    },
    /// A size that is not a number.
    #[error("'{value}' is not a size (a non-negative integer below 2^63)")]
    NotSize {
        /// The text.
        value: String,
    },
    /// A mark's dim, `MIN` or `MAX` that is not a non-negative integer.
    #[error("{part} '{value}' is not a non-negative integer")]
    MarkNumber {
        /// `dim`, `MIN` or `MAX`.
        part: &'static str,
        /// The text.
        value: String,
    },
    /// A mark whose `MAX` is below its `MIN`.
    #[error("MAX is below MIN")]
    MaxBelowMin,
    /// A mark of neither form.
    #[error("expected INPUT:DIM or INPUT:DIM:MIN:MAX")]
    MarkForm,
    /// A static mark with a range.
    #[error("mark_static takes INPUT:DIM only")]
    StaticMark,
}

impl Malformation {
    /// Which grammar it breaks: `shapes` or `mark`.
    pub fn what(&self) -> &'static str {
        match self {
            Malformation::NotNameValue
            | Malformation::GivenTwice { .. }
            | Malformation::NotInt { .. }
            | Malformation::NotFloat { .. }
            | Malformation::UnknownDType { .. }
            | Malformation::NegativeSize { .. }
            | Malformation::NotSize { .. } => "shapes",
            Malformation::MarkNumber { .. }
            | Malformation::MaxBelowMin
            | Malformation::MarkForm
            | Malformation::StaticMark => "mark",
        }
    }
}

fn malformed(text: &str, malformation: Malformation) -> InputError {
    InputError::Malformed {
        text: text.to_string(),
        malformation,
    }
}

/// Parses `x=8,64;y=3;n=int(2);flag=True` for a function whose inputs are `names` (in
/// order).
pub fn parse_shapes(text: &str, names: &[String]) -> Result<CallShapes, InputError> {
    let mut given: Vec<(String, ArgValue)> = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| malformed(part, Malformation::NotNameValue))?;
        let name = name.trim();
        if !names.iter().any(|n| n == name) {
            return Err(InputError::UnknownInput {
                name: name.to_string(),
                known: names.join(", "),
            });
        }
        if given.iter().any(|(n, _)| n == name) {
            return Err(malformed(
                part,
                Malformation::GivenTwice {
                    name: name.to_string(),
                },
            ));
        }
        given.push((name.to_string(), parse_value(part, value.trim())?));
    }
    let mut ordered = Vec::with_capacity(names.len());
    for name in names {
        let Some(position) = given.iter().position(|(n, _)| n == name) else {
            let expected = names
                .iter()
                .map(|n| format!("{n}=…"))
                .collect::<Vec<_>>()
                .join(";");
            return Err(InputError::MissingInput {
                name: name.clone(),
                expected,
            });
        };
        ordered.push(given.remove(position));
    }
    Ok(CallShapes::with_args(ordered))
}

/// One argument's value: `True`/`False`, `int(N)`, `float(X)`, or a tensor's sizes.
fn parse_value(part: &str, value: &str) -> Result<ArgValue, InputError> {
    match value {
        "True" => return Ok(ArgValue::Bool(true)),
        "False" => return Ok(ArgValue::Bool(false)),
        _ => {}
    }
    if let Some(int) = value
        .strip_prefix("int(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        return int.trim().parse::<i64>().map(ArgValue::Int).map_err(|_| {
            malformed(
                part,
                Malformation::NotInt {
                    value: int.trim().to_string(),
                },
            )
        });
    }
    if let Some(float) = value
        .strip_prefix("float(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        return float
            .trim()
            .parse::<f64>()
            .map(ArgValue::Float)
            .map_err(|_| {
                malformed(
                    part,
                    Malformation::NotFloat {
                        value: float.trim().to_string(),
                    },
                )
            });
    }
    // `2,16:int64`: the sizes, then the dtype (float32 when absent).
    let (value, dtype) = match value.split_once(':') {
        None => (value, DType::Float32),
        Some((sizes, name)) => match DType::parse(name) {
            Some(dtype) => (sizes.trim(), dtype),
            None => {
                return Err(malformed(
                    part,
                    Malformation::UnknownDType {
                        name: name.trim().to_string(),
                    },
                ));
            }
        },
    };
    if value.is_empty() {
        return Ok(ArgValue::Tensor(Vec::new(), dtype));
    }
    value
        .split(',')
        .map(|d| {
            let d = d.trim();
            match d.parse::<i64>() {
                Ok(v) if v >= 0 => Ok(v),
                Ok(v) => Err(malformed(part, Malformation::NegativeSize { size: v })),
                Err(_) => Err(malformed(
                    part,
                    Malformation::NotSize {
                        value: d.to_string(),
                    },
                )),
            }
        })
        .collect::<Result<Vec<i64>, _>>()
        .map(|dims| ArgValue::Tensor(dims, dtype))
}

/// Parses `x:0` or `x:0:2:512` (`MAX` may be `inf`).
pub fn parse_mark(text: &str, names: &[String]) -> Result<MarkDynamic, InputError> {
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let number = |p: &str, part: &'static str| -> Result<i64, InputError> {
        p.parse::<i64>().ok().filter(|v| *v >= 0).ok_or_else(|| {
            malformed(
                text,
                Malformation::MarkNumber {
                    part,
                    value: p.to_string(),
                },
            )
        })
    };
    let (input, dim, min, max) = match parts.as_slice() {
        [input, dim] => (*input, number(dim, "dim")?, None, None),
        [input, dim, min, max] => {
            let max = if matches!(*max, "inf" | "int_oo" | "") {
                None
            } else {
                Some(number(max, "MAX")?)
            };
            let min = number(min, "MIN")?;
            if max.is_some_and(|m| m < min) {
                return Err(malformed(text, Malformation::MaxBelowMin));
            }
            (*input, number(dim, "dim")?, Some(min), max)
        }
        _ => {
            return Err(malformed(text, Malformation::MarkForm));
        }
    };
    if !names.iter().any(|n| n == input) {
        return Err(InputError::UnknownInput {
            name: input.to_string(),
            known: names.join(", "),
        });
    }
    Ok(MarkDynamic {
        input: input.to_string(),
        dim: dim as usize,
        min,
        max,
    })
}

/// Parses `x:1` for `--mark-static`.
pub fn parse_static_mark(text: &str, names: &[String]) -> Result<(String, usize), InputError> {
    let mark = parse_mark(text, names)?;
    if mark.min.is_some() {
        return Err(malformed(text, Malformation::StaticMark));
    }
    Ok((mark.input, mark.dim))
}

/// Checks that every mark names an existing dim of this call.
pub fn check_marks(
    call: &CallShapes,
    dynamic: &[MarkDynamic],
    fixed: &[(String, usize)],
) -> Result<(), InputError> {
    let marks = dynamic
        .iter()
        .map(|m| (&m.input, m.dim))
        .chain(fixed.iter().map(|(n, d)| (n, *d)));
    for (input, dim) in marks {
        let rank = call
            .tensors()
            .find(|(n, _)| n == input)
            .map_or(0, |(_, dims)| dims.len());
        if dim >= rank {
            return Err(InputError::NoSuchDim {
                input: input.clone(),
                rank,
                dim,
            });
        }
    }
    Ok(())
}
