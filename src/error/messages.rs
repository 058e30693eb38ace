//! Every error as a `Message`: one arm per variant of `Error` and of the enums inside it. It
//! sits with `Error`, above every floor whose errors it words; `message` below holds the ids.
//!
//! Input: an `Error` (or one of its stage errors). Output: the message id and arguments the
//! page translates. Invariant: the span is never an argument (the page shows the position
//! on its own); an argument is a name, a number, a shape, or text in PyTorch's, Python's
//! or wgpu's own words, passed verbatim.

use super::Error;
use crate::compile::CompileError;
use crate::frontend::FrontendError;
use crate::graph::{DTypeError, EvalError, human_bytes, shape_to_string};
use crate::lower::LowerError;
use crate::message::{Message, MessageId as Id};
use crate::runtime::RunError;
use crate::shape::{ShapeError, python_tuple};
use crate::spec::{InputError, Malformation};
use crate::weights::WeightsError;

impl Error {
    /// The error as a message for the page (the span apart, as `Error::span` gives it).
    pub fn message(&self) -> Message {
        match self {
            Error::Frontend(err) => err.message(),
            Error::Input(err) => err.message(),
            Error::Eval(err) => err.message(),
            Error::Compile(err) => err.message(),
            Error::Run(err) => err.message(),
            #[cfg(feature = "gpu")]
            Error::Gpu(err) => err.message(),
            Error::Weights(err) => err.message(),
            Error::Trace(err) => Message::new(Id::TraceUnreadable, &[err]),
            Error::Call { message, .. } => Message::new(Id::CallFailed, &[message]),
        }
    }
}

impl FrontendError {
    /// The error as a message for the page.
    pub fn message(&self) -> Message {
        match self {
            FrontendError::Syntax { message, .. } => Message::new(Id::SyntaxError, &[message]),
            FrontendError::Unsupported {
                construct, note, ..
            } if note.is_empty() => Message::new(Id::Unsupported, &[construct]),
            FrontendError::Unsupported {
                construct, note, ..
            } => Message::new(Id::UnsupportedWithNote, &[construct, note]),
            FrontendError::Name {
                name,
                skipped: None,
                ..
            } => Message::new(Id::NameNotDefined, &[name]),
            FrontendError::Name {
                name,
                skipped: Some((at, why)),
                ..
            } => Message::new(Id::NameSkipped, &[name, at, why]),
            FrontendError::Type { message, .. } => Message::new(Id::PythonError, &[message]),
            FrontendError::Assertion { .. } => Message::new(Id::AssertionFailed, &[]),
            FrontendError::Budget { limit, .. } => Message::new(Id::StepBudget, &[limit]),
            FrontendError::GraphTooLarge { limit, .. } => Message::new(Id::GraphTooLarge, &[limit]),
            FrontendError::Deadline { seconds, .. } => Message::new(Id::Deadline, &[seconds]),
            FrontendError::TooLarge {
                shape,
                elements,
                limit,
                budget,
                ..
            } => Message::new(
                Id::TensorTooLarge,
                &[
                    &format!("{shape:?}"),
                    elements,
                    limit,
                    &human_bytes(u128::from(*budget)),
                ],
            ),
            FrontendError::NoEntry { name, found } => Message::new(Id::NoEntry, &[name, found]),
            FrontendError::Empty => Message::new(Id::EmptyFile, &[]),
            FrontendError::Shape(err) => err.message(),
            FrontendError::DType { error, .. } => error.message(),
            FrontendError::Eager { op, error, .. } => Message::new(Id::EagerOpFailed, &[op, error]),
            FrontendError::Break { what, note, .. } => {
                Message::new(Id::BreakNotModelled, &[what, note])
            }
            FrontendError::ProbeTooLarge {
                input,
                elements,
                limit,
            } => Message::new(Id::ProbeTooLarge, &[input, elements, limit]),
            FrontendError::Replay { breaks, target } => {
                Message::new(Id::ReplayDiverged, &[target, breaks])
            }
            FrontendError::Compiled { message, .. } => {
                Message::new(Id::CompiledCallFailed, &[message])
            }
        }
    }
}

impl ShapeError {
    /// The error as a message for the page; PyTorch's `ConstraintViolationError`s verbatim.
    pub fn message(&self) -> Message {
        match self {
            ShapeError::Mismatch {
                op,
                detail,
                lhs,
                rhs,
                ..
            } => Message::new(Id::ShapeMismatch, &[op, detail, lhs, rhs]),
            ShapeError::Invalid { op, detail, .. } => Message::new(Id::ShapeInvalid, &[op, detail]),
            ShapeError::NotViewable {
                op,
                shape,
                strides,
                target,
                ..
            } => Message::new(
                Id::NotViewable,
                &[
                    op,
                    &shape_to_string(shape),
                    &python_tuple(strides),
                    &python_tuple(target),
                ],
            ),
            ShapeError::ConstraintViolation { .. }
            | ShapeError::RangeViolation { .. }
            | ShapeError::GuardViolation { .. }
            | ShapeError::OutOfRange { .. } => Message::new(Id::ConstraintViolation, &[self]),
        }
    }
}

impl DTypeError {
    /// The error as a message for the page; PyTorch's own messages verbatim.
    pub fn message(&self) -> Message {
        match self {
            DTypeError::NeedsFloat { op, operand, dtype } => {
                Message::new(Id::DTypeNeedsFloat, &[op, operand, dtype])
            }
            DTypeError::EmbeddingIds { .. }
            | DTypeError::ProductOperands { .. }
            | DTypeError::Condition { .. }
            | DTypeError::NoBoolKernel { .. }
            | DTypeError::NegativeIntegerPower { .. } => Message::new(Id::DTypeRefused, &[self]),
        }
    }
}

impl InputError {
    /// The error as a message for the page.
    pub fn message(&self) -> Message {
        match self {
            InputError::Malformed { text, malformation } => malformation.message(text),
            InputError::UnknownInput { name, known } => {
                Message::new(Id::UnknownInput, &[name, known])
            }
            InputError::MissingInput { name, expected } => {
                Message::new(Id::MissingInput, &[name, expected])
            }
            InputError::NoSuchDim { input, rank, dim } => {
                Message::new(Id::NoSuchDim, &[input, rank, dim])
            }
        }
    }
}

impl Malformation {
    /// The malformation of `text` as a message: the text first, then the details.
    fn message(&self, text: &str) -> Message {
        match self {
            Malformation::NotNameValue => Message::new(Id::MalformedNotNameValue, &[&text]),
            Malformation::GivenTwice { name } => {
                Message::new(Id::MalformedGivenTwice, &[&text, name])
            }
            Malformation::NotInt { value } => Message::new(Id::MalformedNotInt, &[&text, value]),
            Malformation::NotFloat { value } => {
                Message::new(Id::MalformedNotFloat, &[&text, value])
            }
            Malformation::UnknownDType { name } => {
                Message::new(Id::MalformedUnknownDType, &[&text, name])
            }
            Malformation::NegativeSize { size } => {
                Message::new(Id::MalformedNegativeSize, &[&text, size])
            }
            Malformation::NotSize { value } => Message::new(Id::MalformedNotSize, &[&text, value]),
            Malformation::MarkNumber { part, value } => {
                Message::new(Id::MalformedMarkNumber, &[&text, part, value])
            }
            Malformation::MaxBelowMin => Message::new(Id::MalformedMaxBelowMin, &[&text]),
            Malformation::MarkForm => Message::new(Id::MalformedMarkForm, &[&text]),
            Malformation::StaticMark => Message::new(Id::MalformedStaticMark, &[&text]),
        }
    }
}

impl EvalError {
    /// The error as a message for the page.
    pub fn message(&self) -> Message {
        match self {
            EvalError::Size { node, expr } => Message::new(Id::EvalSize, &[node, expr]),
            EvalError::TooLarge {
                node,
                elements,
                limit,
                budget,
            } => Message::new(
                Id::EvalTooLarge,
                &[node, elements, limit, &human_bytes(u128::from(*budget))],
            ),
            EvalError::InputShape {
                input,
                expected,
                actual,
            } => Message::new(
                Id::EvalInputShape,
                &[input, &format!("{expected:?}"), &format!("{actual:?}")],
            ),
            EvalError::IdOutOfRange { node, id, rows } => {
                Message::new(Id::EvalIdOutOfRange, &[node, id, rows])
            }
        }
    }
}

impl CompileError {
    /// The error as a message for the page.
    pub fn message(&self) -> Message {
        match self {
            CompileError::Lower(err) => err.message(),
            CompileError::Verify { pass, detail } => {
                Message::new(Id::VerifyFailed, &[pass, detail])
            }
        }
    }
}

impl LowerError {
    /// The error as a message for the page.
    pub fn message(&self) -> Message {
        match self {
            LowerError::SymbolicParam {
                node, name, shape, ..
            } => Message::new(Id::SymbolicParam, &[node, name, shape]),
            LowerError::Unsupported {
                node, op, reason, ..
            } => Message::new(Id::LowerUnsupported, &[node, op, reason]),
        }
    }
}

impl RunError {
    /// The error as a message for the page.
    pub fn message(&self) -> Message {
        match self {
            RunError::InputTooLarge {
                input,
                elements,
                limit,
                budget,
            } => Message::new(
                Id::InputTooLarge,
                &[input, elements, limit, &human_bytes(u128::from(*budget))],
            ),
            RunError::NegativeSize { input, dim, size } => {
                Message::new(Id::NegativeSize, &[input, size, dim])
            }
            RunError::NotCarried {
                input,
                dtype,
                value,
            } => Message::new(Id::NotCarried, &[input, dtype, value]),
            RunError::InputCount { expected, actual } => {
                Message::new(Id::InputCount, &[expected, actual])
            }
            RunError::InputShape {
                input,
                expected,
                actual,
            } => Message::new(Id::InputShape, &[input, &format!("{actual:?}"), expected]),
            RunError::IntCount { expected, actual } => {
                Message::new(Id::IntCount, &[expected, actual])
            }
            RunError::IntValue {
                input,
                expected,
                actual,
            } => Message::new(Id::IntValue, &[input, actual, expected]),
            RunError::Size { what, expr } => Message::new(Id::RunSize, &[what, expr]),
            RunError::OverBudget {
                buffer,
                buffer_bytes,
                total_bytes,
                budget,
            } => Message::new(
                Id::OverBudget,
                &[
                    &human_bytes(*total_bytes),
                    buffer,
                    &human_bytes(*buffer_bytes),
                    &human_bytes(u128::from(*budget)),
                ],
            ),
            RunError::TooMuchWork {
                kernel,
                ops,
                extents,
                limit,
            } => Message::new(
                Id::TooMuchWork,
                &[kernel, ops, &format!("{extents:?}"), &limit.to_string()],
            ),
            RunError::OutOfBounds {
                kernel,
                buffer,
                offset,
                len_elems,
            } => Message::new(Id::OutOfBounds, &[kernel, offset, buffer, len_elems]),
        }
    }
}

#[cfg(feature = "gpu")]
impl crate::runtime::gpu::GpuError {
    /// The error as a message for the page; wgpu's words verbatim.
    pub fn message(&self) -> Message {
        use crate::runtime::gpu::GpuError;
        match self {
            GpuError::NoAdapter(reason) => Message::new(Id::NoAdapter, &[reason]),
            GpuError::Device(reason) => Message::new(Id::GpuDevice, &[reason]),
            GpuError::DeviceLost(reason) => Message::new(Id::DeviceLost, &[reason]),
            GpuError::OutOfMemory { kernel } => Message::new(Id::OutOfMemory, &[kernel]),
            GpuError::Limit {
                kernel,
                limit,
                needed,
                max,
            } => Message::new(Id::GpuLimit, &[kernel, limit, needed, max]),
            GpuError::Rejected { what, message } => Message::new(Id::GpuRejected, &[what, message]),
            GpuError::ReadBack(reason) => Message::new(Id::ReadBack, &[reason]),
            GpuError::StaticSizes { kernel, detail } => {
                Message::new(Id::StaticSizes, &[kernel, detail])
            }
            GpuError::Run(err) => err.message(),
        }
    }
}

impl WeightsError {
    /// The error as a message for the page; PyTorch's `load_state_dict` wording verbatim.
    pub fn message(&self) -> Message {
        match self {
            WeightsError::Format { file, reason } => {
                Message::new(Id::WeightsFormat, &[file, reason])
            }
            WeightsError::Dtype { file, name, dtype } => {
                let id = if *file == "inputs" {
                    Id::WeightsDTypeInputs
                } else {
                    Id::WeightsDType
                };
                Message::new(id, &[file, name, dtype])
            }
            WeightsError::NotAModule { entry } => Message::new(Id::NotAModule, &[entry]),
            WeightsError::AfterCall { entry } => Message::new(Id::WeightsAfterCall, &[entry]),
            WeightsError::StateDict { .. } => Message::new(Id::StateDict, &[self]),
            WeightsError::Arguments {
                entry,
                expected,
                missing,
                unexpected,
            } => Message::new(
                Id::InputsFileArguments,
                &[
                    entry,
                    &expected.join(", "),
                    &crate::weights::keys_message(missing, unexpected),
                ],
            ),
            WeightsError::NotCarried { name, value } => {
                Message::new(Id::InputsNotCarried, &[name, value])
            }
            WeightsError::Write { reason } => Message::new(Id::WriteOutputs, &[reason]),
        }
    }
}
