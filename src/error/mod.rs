//! The top-level error: one variant per stage, so callers can match on where things failed.
//!
//! In: every floor's own error enum (`FrontendError`, `InputError`, `CompileError`, …). Out:
//! one `Error`, its span, and (`messages.rs`) the `Message` the page translates. Invariant:
//! a variant wraps a stage's error unchanged, so its `Display` is that stage's text.

mod messages;

use crate::frontend::FrontendError;
use crate::graph::{EvalError, Span};
use crate::spec::InputError;

impl Error {
    /// The source position the error points at, when it has one.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Frontend(err) => err.span(),
            Error::Call { span, .. } => *span,
            _ => None,
        }
    }
}

/// Anything that can go wrong between source text and results.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Parsing or capturing the model.
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    /// A malformed shape or mark specification.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Running the CPU reference.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Compiling a graph to kernels (lowering, emission).
    #[error(transparent)]
    Compile(#[from] crate::compile::CompileError),
    /// Running kernels (either runtime's checks of a call).
    #[error(transparent)]
    Run(#[from] crate::runtime::RunError),
    /// The wgpu runtime.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] crate::runtime::gpu::GpuError),
    /// A weights or inputs file that does not fit the model.
    #[error(transparent)]
    Weights(#[from] crate::weights::WeightsError),
    /// A PyTorch trace that cannot be read (`tailor compare`).
    #[error(transparent)]
    Trace(#[from] crate::torch_trace::TraceError),
    /// A call whose compilation failed (the message says what and where).
    #[error("{message}")]
    Call {
        /// What went wrong.
        message: String,
        /// The source position, when known.
        span: Option<Span>,
    },
}
