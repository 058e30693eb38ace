//! A call's arguments as guards see them: each tensor's sizes and dtype, each Python int,
//! bool and float, and the module attributes the entries read, flattened once per call.
//!
//! In: the names and values of a call (the CLI's and the page's specs, a script's values).
//! Out: `CallShapes`, whose flat slots (every tensor's dims, every int, a bool as 0 or 1) are
//! what compiled guard checks index. Invariant: the slots are derived from `args` alone, in
//! parameter order, so a check never allocates.

use super::*;
use crate::graph::DType;
use serde::Serialize;
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
    pub(super) flat: Vec<i64>,
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
    pub(super) fn attribute(&self, path: &AttributePath) -> Option<&ArgValue> {
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
