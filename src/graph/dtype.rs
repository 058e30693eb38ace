//! Element types of tensors: `float32`, `int64`, `int32` and `bool`, and the rules that give an op's
//! result type from its operands' (PyTorch's type promotion, for the ops Tailor has).
//!
//! Input: an op and its operands' dtypes. Output: the result's dtype, or the operand whose
//! dtype PyTorch refuses for that op. Invariant: every backend stores every dtype as
//! float32 values: an `int64` element is a whole number exact to ±2^24 (inputs outside are
//! refused where they enter, `check_carried`), a `bool` element is 0.0 or 1.0. WGSL has no
//! 64-bit integers and the CPU backend and the reference share one element type, so this
//! keeps one code path; the kernel view says so where an integer tensor is read.

use super::{AttentionMask, BinaryOp, Op, ReduceKind, Scalar, UnaryOp};
use serde::Serialize;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit float, PyTorch's default.
    #[default]
    Float32,
    /// 64-bit integer (`torch.long`): ids, positions, counts.
    Int64,
    /// 32-bit integer (`torch.int`): lengths some models keep in it (`.int()`).
    Int32,
    /// `torch.bool`: comparisons and masks.
    Bool,
}

/// The largest integer every `int64` element can hold exactly in its float32 carrier.
pub const CARRIED_INT_LIMIT: f64 = 16_777_216.0;

/// Each dtype with the names it is written with: Tailor's grammar (`idx=2,16:int64`) and
/// `torch.<name>` take any of them; the first is `torch`'s own name.
const NAMES: [(DType, &[&str]); 4] = [
    (DType::Float32, &["float32", "float"]),
    (DType::Int64, &["int64", "long"]),
    (DType::Int32, &["int32", "int"]),
    (DType::Bool, &["bool"]),
];

impl DType {
    /// `float32`, `int64`, `int32`, `bool`.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(dtype, _)| *dtype == self)
            .map(|(_, names)| names[0])
            .expect("every dtype has a name")
    }

    /// The dtype written `name` (`int64`, `long`, `torch.int64`).
    pub fn parse(name: &str) -> Option<DType> {
        let name = name.trim();
        let name = name.strip_prefix("torch.").unwrap_or(name);
        NAMES
            .iter()
            .find(|(_, names)| names.contains(&name))
            .map(|(dtype, _)| *dtype)
    }

    /// The short form FX graphs print before a shape (`f32[s0, 64]`, `i64[2]`, `b8[4]`).
    pub fn short(self) -> &'static str {
        match self {
            DType::Float32 => "f32",
            DType::Int64 => "i64",
            DType::Int32 => "i32",
            DType::Bool => "b8",
        }
    }

    /// Bytes per element in PyTorch's storage (what a safetensors file holds).
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Float32 => 4,
            DType::Int64 => 8,
            DType::Int32 => 4,
            DType::Bool => 1,
        }
    }

    /// C++'s `ScalarType` name, which PyTorch's guard failure reasons print (`Float`).
    pub fn scalar_type(self) -> &'static str {
        match self {
            DType::Float32 => "Float",
            DType::Int64 => "Long",
            DType::Int32 => "Int",
            DType::Bool => "Bool",
        }
    }

    /// The legacy tensor type name some of PyTorch's errors print (`torch.FloatTensor`).
    pub fn tensor_type(self) -> &'static str {
        match self {
            DType::Float32 => "torch.FloatTensor",
            DType::Int64 => "torch.LongTensor",
            DType::Int32 => "torch.IntTensor",
            DType::Bool => "torch.BoolTensor",
        }
    }

    /// The C type PyTorch's kernel errors print (`long int`).
    pub fn c_name(self) -> &'static str {
        match self {
            DType::Float32 => "float",
            DType::Int64 => "long int",
            DType::Int32 => "int",
            DType::Bool => "bool",
        }
    }

    /// Whether the type is floating point (`torch.is_floating_point`).
    pub fn is_floating(self) -> bool {
        self == DType::Float32
    }

    /// The type two tensor operands promote to (`torch.result_type`): bool < int32 <
    /// int64 < float32.
    pub fn promote(self, other: DType) -> DType {
        let rank = |dtype: DType| match dtype {
            DType::Bool => 0,
            DType::Int32 => 1,
            DType::Int64 => 2,
            DType::Float32 => 3,
        };
        if rank(self) >= rank(other) {
            self
        } else {
            other
        }
    }

    /// The type of a tensor of this type combined with a Python number (a float makes an
    /// integer or bool tensor float32; an int makes a bool tensor int64).
    pub fn with_scalar(self, scalar_is_float: bool) -> DType {
        match (self, scalar_is_float) {
            (_, true) => DType::Float32,
            (DType::Bool, false) => DType::Int64,
            (dtype, false) => dtype,
        }
    }

    /// Whether a value of this type can be stored in its float32 carrier: a whole number
    /// within ±2^24 for the integers, 0 or 1 for `bool`.
    pub fn carries(self, value: f64) -> bool {
        match self {
            DType::Float32 => true,
            DType::Int64 | DType::Int32 => value.fract() == 0.0 && value.abs() <= CARRIED_INT_LIMIT,
            DType::Bool => value == 0.0 || value == 1.0,
        }
    }
}

/// How `x.to(to)` changes one element of type `from` in the float32 carrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastStep {
    /// The value stays (an integer or bool made wider or a float; a type made itself).
    Keep,
    /// Rounded toward zero (a float made an integer, as C++'s conversion does).
    Truncate,
    /// 1 where non-zero, else 0 (anything made bool).
    NonZero,
}

/// The step that casts `from` to `to`.
pub fn cast_step(from: DType, to: DType) -> CastStep {
    match (from, to) {
        (DType::Float32, DType::Int64 | DType::Int32) => CastStep::Truncate,
        (DType::Float32 | DType::Int64 | DType::Int32, DType::Bool) => CastStep::NonZero,
        _ => CastStep::Keep,
    }
}

impl CastStep {
    /// The cast of one element.
    pub fn apply(self, value: f32) -> f32 {
        match self {
            CastStep::Keep => value,
            CastStep::Truncate => value.trunc(),
            CastStep::NonZero => f32::from(u8::from(value != 0.0)),
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}

/// Why an op refuses an operand's dtype, as PyTorch refuses it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DTypeError {
    /// The op computes in floating point only (`softmax`, `conv2d`, `mean`, …).
    #[error("{op} needs a floating-point input, but operand {operand} is {dtype}")]
    NeedsFloat {
        /// The op's name.
        op: String,
        /// Which operand (0-based).
        operand: usize,
        /// Its dtype.
        dtype: DType,
    },
    /// `nn.Embedding`'s ids are not integers.
    #[error(
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: \
         Long, Int; but got {} instead (while checking arguments for embedding)", .dtype.tensor_type()
    )]
    EmbeddingIds {
        /// Their dtype.
        dtype: DType,
    },
    /// A matrix product of two dtypes (PyTorch multiplies equal ones only).
    #[error("expected m1 and m2 to have the same dtype, but got: {} != {}", .lhs.c_name(), .rhs.c_name())]
    ProductOperands {
        /// The left operand's dtype.
        lhs: DType,
        /// The right operand's.
        rhs: DType,
    },
    /// `torch.where`'s or `masked_fill`'s condition is not bool.
    #[error("where expected condition to be a boolean tensor, but got a tensor with dtype {}", .dtype.scalar_type())]
    Condition {
        /// Its dtype.
        dtype: DType,
    },
    /// An op PyTorch has no bool kernel for (`-mask`, `mask - mask`, `abs(mask)`): PyTorch's
    /// `NotImplementedError`, in its words.
    #[error("{message}")]
    NoBoolKernel {
        /// PyTorch's message.
        message: &'static str,
    },
    /// An integer tensor to a negative whole power by a number (`ids ** -1`), which PyTorch
    /// refuses; a tensor of exponents is computed, truncated to an integer.
    #[error("Integers to negative integer powers are not allowed.")]
    NegativeIntegerPower {
        /// The exponent.
        exponent: i64,
    },
}

/// What PyTorch 2.15 raises for a unary op on a bool tensor (its CPU kernels' names).
const BOOL_UNARY_REFUSALS: [(UnaryOp, &str); 7] = [
    (
        UnaryOp::Neg,
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to \
         invert a mask, use the `~` or `logical_not()` operator instead.",
    ),
    (UnaryOp::Abs, "\"abs_cpu\" not implemented for 'Bool'"),
    (
        UnaryOp::Floor,
        "\"floor_vml_cpu\" not implemented for 'Bool'",
    ),
    (UnaryOp::Ceil, "\"ceil_vml_cpu\" not implemented for 'Bool'"),
    (
        UnaryOp::Round,
        "\"round_vml_cpu\" not implemented for 'Bool'",
    ),
    (
        UnaryOp::Trunc,
        "\"trunc_vml_cpu\" not implemented for 'Bool'",
    ),
    (UnaryOp::Relu, "Boolean inputs not supported for relu"),
];

/// PyTorch's refusal of `a - b` for two bool tensors.
const BOOL_SUBTRACTION: &str = "Subtraction, the `-` operator, with two bool tensors is not \
     supported. Use the `^` or `logical_xor()` operator instead.";

/// PyTorch's refusal of `mask - 1` and `1 - mask`.
const BOOL_SCALAR_SUBTRACTION: &str = "Subtraction, the `-` operator, with a bool tensor is \
     not supported. If you are trying to invert a mask, use the `~` or `logical_not()` \
     operator instead.";

/// Unary functions that keep an integer operand's type (the others compute in float).
const INTEGER_PRESERVING_UNARY: [UnaryOp; 7] = [
    UnaryOp::Relu,
    UnaryOp::Neg,
    UnaryOp::Abs,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Round,
    UnaryOp::Trunc,
];

/// The dtype of `op`'s result given its operands' (`Input`, `Param`, `Constant`, `Full`,
/// `Arange` and `Random` have none: their type is given where they are made, float32 by
/// default).
pub fn result(op: &Op, operands: &[DType]) -> Result<DType, DTypeError> {
    let first = operands.first().copied().unwrap_or_default();
    let needs_float = |from: usize| match operands
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, dtype)| !dtype.is_floating())
    {
        Some((operand, &dtype)) => Err(DTypeError::NeedsFloat {
            op: op.name(),
            operand,
            dtype,
        }),
        None => Ok(DType::Float32),
    };
    match op {
        Op::Input { .. }
        | Op::Param { .. }
        | Op::Constant { .. }
        | Op::Full { .. }
        | Op::Arange { .. }
        | Op::Random { .. }
        | Op::Output => Ok(DType::Float32),
        Op::Cast { to } => Ok(*to),
        Op::Unary(unary) if first == DType::Bool => {
            match BOOL_UNARY_REFUSALS
                .iter()
                .find(|(refused, _)| refused == unary)
            {
                Some(&(_, message)) => Err(DTypeError::NoBoolKernel { message }),
                None => Ok(DType::Float32),
            }
        }
        Op::Unary(unary) if INTEGER_PRESERVING_UNARY.contains(unary) => Ok(first),
        Op::Unary(_) => Ok(DType::Float32),
        Op::Binary(BinaryOp::Sub) if first == DType::Bool && operands[1] == DType::Bool => {
            Err(DTypeError::NoBoolKernel {
                message: BOOL_SUBTRACTION,
            })
        }
        Op::Binary(binary) => Ok(binary_result(*binary, first, operands[1])),
        // A Python number beside a bool tensor is an int (a float retypes the result in the
        // front end): `mask + 1` is int64.
        Op::Scalar {
            op: BinaryOp::Sub, ..
        } if first == DType::Bool => Err(DTypeError::NoBoolKernel {
            message: BOOL_SCALAR_SUBTRACTION,
        }),
        Op::Scalar {
            op: BinaryOp::Pow,
            scalar: Scalar::Number(exponent),
            tensor_on_left: true,
        } if !first.is_floating() && *exponent < 0.0 && exponent.fract() == 0.0 => {
            Err(DTypeError::NegativeIntegerPower {
                exponent: *exponent as i64,
            })
        }
        Op::Scalar { op: binary, .. } => {
            Ok(binary_result(*binary, first, first.with_scalar(false)))
        }
        Op::Where => {
            if first != DType::Bool {
                return Err(DTypeError::Condition { dtype: first });
            }
            Ok(operands[1].promote(operands[2]))
        }
        Op::Embedding => {
            if !matches!(first, DType::Int64 | DType::Int32) {
                return Err(DTypeError::EmbeddingIds { dtype: first });
            }
            Ok(operands[1])
        }
        Op::Reduce {
            kind: ReduceKind::Mean,
            ..
        } => needs_float(0),
        Op::Reduce {
            kind: ReduceKind::Sum,
            ..
        } => Ok(if first.is_floating() {
            first
        } else {
            DType::Int64
        }),
        Op::Reduce {
            kind: ReduceKind::Amax,
            ..
        } => Ok(first),
        // Integer products are exact in the carrier while their sums stay within ±2^24.
        Op::Matmul => match (first, operands[1]) {
            (lhs, rhs) if lhs != rhs => Err(DTypeError::ProductOperands { lhs, rhs }),
            (DType::Bool, _) => needs_float(0),
            (dtype, _) => Ok(dtype),
        },
        Op::Cat { .. } => Ok(operands
            .iter()
            .copied()
            .reduce(DType::promote)
            .unwrap_or_default()),
        op if op.is_view() => Ok(first),
        Op::Triangle { .. } => Ok(first),
        // q, k and v are float; a bool mask says what to keep, a float one is added.
        Op::Attention {
            mask: AttentionMask::Keep,
            ..
        } => match operands
            .iter()
            .take(3)
            .position(|dtype| !dtype.is_floating())
        {
            Some(operand) => Err(DTypeError::NeedsFloat {
                op: op.name(),
                operand,
                dtype: operands[operand],
            }),
            None => Ok(DType::Float32),
        },
        // Products, convolutions, normalisations, pooling: float kernels in PyTorch's CPU
        // and GPU backends alike for what models call them with.
        _ => needs_float(0),
    }
}

/// Comparisons give bool, true division float32, the rest the promoted type.
fn binary_result(op: BinaryOp, lhs: DType, rhs: DType) -> DType {
    match op {
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            DType::Bool
        }
        BinaryOp::Div => DType::Float32,
        // The 0/1 carrier adds two bools to 0, 1 or 2: the sum is int64 here, and the front
        // end casts it back to bool (PyTorch's logical or). Products, maxima and minima of
        // bools stay 0 or 1. A power of integers is an integer (`2 ** arange(n)` is int64,
        // as in PyTorch), and of bools int64.
        BinaryOp::Add | BinaryOp::Pow => match lhs.promote(rhs) {
            DType::Bool => DType::Int64,
            dtype => dtype,
        },
        _ => lhs.promote(rhs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_promote_as_pytorch() {
        for (dtype, names) in NAMES {
            for name in names {
                assert_eq!(DType::parse(name), Some(dtype));
                assert_eq!(DType::parse(&format!("torch.{name}")), Some(dtype));
            }
            assert_eq!(DType::parse(&dtype.to_string()), Some(dtype));
        }
        assert_eq!(DType::parse("int16"), None);
        assert_eq!(DType::Int32.promote(DType::Int64), DType::Int64);
        assert_eq!(DType::Int32.promote(DType::Bool), DType::Int32);
        assert_eq!(DType::Int32.with_scalar(false), DType::Int32);
        assert_eq!(DType::Int64.promote(DType::Float32), DType::Float32);
        assert_eq!(DType::Bool.promote(DType::Int64), DType::Int64);
        assert_eq!(DType::Int64.with_scalar(true), DType::Float32);
        assert_eq!(DType::Bool.with_scalar(false), DType::Int64);
        assert!(DType::Int64.carries(16_777_216.0));
        assert!(!DType::Int64.carries(16_777_217.0));
        assert!(!DType::Int64.carries(0.5));
        assert!(!DType::Bool.carries(2.0));
    }

    #[test]
    fn ops_give_pytorchs_result_types() {
        let eq = Op::Binary(BinaryOp::Eq);
        assert_eq!(
            result(&eq, &[DType::Float32, DType::Float32]),
            Ok(DType::Bool)
        );
        let div = Op::Binary(BinaryOp::Div);
        assert_eq!(
            result(&div, &[DType::Int64, DType::Int64]),
            Ok(DType::Float32)
        );
        let add = Op::Binary(BinaryOp::Add);
        assert_eq!(result(&add, &[DType::Int64, DType::Bool]), Ok(DType::Int64));
        assert_eq!(
            result(&Op::Unary(UnaryOp::Exp), &[DType::Int64]),
            Ok(DType::Float32)
        );
        assert_eq!(
            result(&Op::Embedding, &[DType::Float32, DType::Float32]),
            Err(DTypeError::EmbeddingIds {
                dtype: DType::Float32
            })
        );
        assert_eq!(
            result(
                &Op::Where,
                &[DType::Float32, DType::Float32, DType::Float32]
            ),
            Err(DTypeError::Condition {
                dtype: DType::Float32
            })
        );
        assert!(matches!(
            result(&Op::Softmax { dim: 0 }, &[DType::Int64]),
            Err(DTypeError::NeedsFloat { operand: 0, .. })
        ));
    }

    /// `torch.pow`'s result types, measured with PyTorch 2.15 (`tests/data/scripts/int_pow.py`).
    #[test]
    fn powers_of_integers_are_integers() {
        let pow = Op::Binary(BinaryOp::Pow);
        let scalar_pow = |exponent: f64, tensor_on_left: bool| Op::Scalar {
            op: BinaryOp::Pow,
            scalar: Scalar::Number(exponent),
            tensor_on_left,
        };
        assert_eq!(
            result(&pow, &[DType::Int64, DType::Int64]),
            Ok(DType::Int64)
        );
        assert_eq!(
            result(&pow, &[DType::Int32, DType::Int64]),
            Ok(DType::Int64)
        );
        assert_eq!(
            result(&pow, &[DType::Float32, DType::Int64]),
            Ok(DType::Float32)
        );
        assert_eq!(result(&pow, &[DType::Bool, DType::Bool]), Ok(DType::Int64));
        assert_eq!(
            result(&scalar_pow(20.0, true), &[DType::Int32]),
            Ok(DType::Int32)
        );
        assert_eq!(
            result(&scalar_pow(-1.0, false), &[DType::Int64]),
            Ok(DType::Int64)
        );
        assert_eq!(
            result(&scalar_pow(-2.0, true), &[DType::Int64]),
            Err(DTypeError::NegativeIntegerPower { exponent: -2 })
        );
        assert_eq!(
            result(&scalar_pow(-2.0, true), &[DType::Float32]),
            Ok(DType::Float32)
        );
    }
}
