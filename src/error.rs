//! The top-level error: one variant per stage, so callers can match on where things failed.

use crate::frontend::FrontendError;
use crate::graph::EvalError;
use crate::spec::InputError;

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
    /// A call that compiled with an error (the message says what and where).
    #[error("{0}")]
    Call(String),
}
