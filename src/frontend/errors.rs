//! The front end's errors, and Python exceptions as those errors at the user's line:col.
//!
//! Input: an exception that reached the front end. Output: the `FrontendError` a
//! `_tailor` call raised (kept in the session, found by its index), or one made from the
//! exception: `SyntaxError` → `Syntax`, a failed `assert` → `Assertion`, `NameError` →
//! `Name`, anything else → `Type` with Python's `TypeName: message`.
//! Invariant: the span is the innermost traceback entry in the user's file (1:1 when the
//! error is not in the user's code).

use crate::graph::{DTypeError, EvalError, Span};
use crate::shape::ShapeError;

/// Errors of the front end: the source is not in the supported subset, or capture found a
/// bad program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrontendError {
    /// The file is not valid Python.
    #[error("{span}: syntax error: {message}")]
    Syntax {
        /// Where.
        span: Span,
        /// The parser's message.
        message: String,
    },
    /// Valid Python outside the supported subset.
    #[error("{span}: {construct} is not supported{}", note_suffix(.note))]
    Unsupported {
        /// Where.
        span: Span,
        /// The construct (`while loop`, `torch.nonzero`, …).
        construct: String,
        /// What PyTorch would do, or what to write instead.
        note: String,
    },
    /// A name that is not defined.
    #[error("{span}: name '{name}' is not defined{}", skipped_suffix(.skipped))]
    Name {
        /// Where.
        span: Span,
        /// The name.
        name: String,
        /// Why its module-level assignment did not run, where one was skipped (`N =
        /// 10**2147483648` overflowed): where it is and why.
        skipped: Option<(Span, String)>,
    },
    /// A wrong type, arity or value (Python's TypeError / ValueError / AttributeError).
    #[error("{span}: {message}")]
    Type {
        /// Where.
        span: Span,
        /// What is wrong.
        message: String,
    },
    /// An `assert` in the model failed for these sizes.
    #[error("{span}: AssertionError: the assertion failed for these input sizes")]
    Assertion {
        /// Where.
        span: Span,
    },
    /// The model ran more lines of Python than one run may (an endless loop, most likely).
    #[error(
        "{span}: the model ran more than {limit} lines of Python without finishing (an endless loop?); Tailor stops a run there"
    )]
    Budget {
        /// The line running when the budget ran out.
        span: Span,
        /// The budget, in lines executed.
        limit: u64,
    },
    /// The graph of one capture grew past what Tailor builds (a loop that traces without end,
    /// most likely: each iteration adds nodes).
    #[error(
        "{span}: forward's graph grew past {limit} ops (a loop that traces without end?); Tailor stops a capture there"
    )]
    GraphTooLarge {
        /// The op that would have gone past the limit.
        span: Span,
        /// The limit, in graph nodes.
        limit: usize,
    },
    /// A script ran longer than its wall-time limit.
    #[error("{span}: the script ran longer than {seconds} s; Tailor stops a run there")]
    Deadline {
        /// The line running when the time ran out.
        span: Span,
        /// The limit, in seconds.
        seconds: f64,
    },
    /// A parameter, buffer or constant larger than Tailor's runtimes hold (PyTorch would try
    /// to allocate it; Tailor refuses before allocating anything).
    #[error(
        "{span}: a tensor of shape {shape:?} would hold {elements} elements; the memory budget of {} holds at most {limit} per tensor (raise it with the CLI's --memory-budget or the JS API's memoryBudget)",
        crate::graph::human_bytes(u128::from(*budget))
    )]
    TooLarge {
        /// Where it is made.
        span: Span,
        /// Its sizes.
        shape: Vec<i64>,
        /// Its element count.
        elements: u128,
        /// The most elements one tensor may hold.
        limit: usize,
        /// The memory budget in bytes.
        budget: u64,
    },
    /// The requested entry point does not exist.
    #[error("no nn.Module subclass or function named '{name}' (found: {found})")]
    NoEntry {
        /// The requested name.
        name: String,
        /// What the file defines.
        found: String,
    },
    /// The file defines nothing to compile.
    #[error("the file defines no nn.Module subclass and no function to compile")]
    Empty,
    /// A shape error inside the model.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// An op refuses an operand's dtype, as PyTorch does (`embedding` of float ids).
    #[error("{span}: {error}")]
    DType {
        /// Where.
        span: Span,
        /// Which operand and why.
        error: DTypeError,
    },
    /// An op a script ran eagerly (outside `forward`) could not be computed.
    #[error("{span}: {op} (run eagerly): {error}")]
    Eager {
        /// Where.
        span: Span,
        /// The op.
        op: String,
        /// Why the CPU reference could not run it (boxed: it is the largest of the
        /// front end's errors, and every `Result` carries the largest).
        error: Box<EvalError>,
    },
    /// A graph break Tailor does not model: inside a function forward calls (Dynamo
    /// compiles that frame on its own), at `.tolist()` (Dynamo guards the list item by
    /// item), or in a call past the recompile limit (which PyTorch runs eagerly through).
    #[error("{span}: a graph break {what} is not modelled yet ({note})")]
    Break {
        /// Where the break is.
        span: Span,
        /// Which kind of break.
        what: String,
        /// What PyTorch does there.
        note: String,
    },
    /// A call through graph breaks whose input is larger than the Python run between its
    /// graphs takes (`PROBE_MAX_ELEMENTS`).
    #[error(
        "a call through graph breaks runs forward as Python on the CPU reference to reach them; input '{input}' has {elements} elements, more than the {limit} Tailor runs that way"
    )]
    ProbeTooLarge {
        /// The input.
        input: String,
        /// Its element count.
        elements: u128,
        /// The most elements allowed.
        limit: u128,
    },
    /// Replaying a call to trace the graph after a break, Python did not reach that break
    /// again (the forward took another way with the same values: nondeterministic code).
    #[error(
        "replaying the call to trace graph {target} after its graph breaks, forward returned after {breaks} break(s): it did not run the same way twice"
    )]
    Replay {
        /// The breaks the replay passed.
        breaks: usize,
        /// The graph it was to trace.
        target: usize,
    },
    /// A call of a `torch.compile`d function in a script failed: compiling it (the error's
    /// own span is inside `forward`) or running its kernels.
    #[error("{span}: {message}")]
    Compiled {
        /// Where: the failing line of `forward`, or the call.
        span: Span,
        /// What failed.
        message: String,
    },
}

fn skipped_suffix(skipped: &Option<(Span, String)>) -> String {
    match skipped {
        Some((at, why)) => format!(" (its assignment at {at} was skipped: {why})"),
        None => String::new(),
    }
}

fn note_suffix(note: &str) -> String {
    if note.is_empty() {
        String::new()
    } else {
        format!(" ({note})")
    }
}

impl FrontendError {
    /// Whether the error is in the program itself (unsupported construct, bad name or type)
    /// rather than in this call's sizes (a shape error, a failed assert, a constraint).
    pub fn is_in_program(&self) -> bool {
        !matches!(
            self,
            FrontendError::Shape(_)
                | FrontendError::DType { .. }
                | FrontendError::Assertion { .. }
                | FrontendError::ProbeTooLarge { .. }
        )
    }

    /// The source position, when the error has one.
    pub fn span(&self) -> Option<Span> {
        match self {
            FrontendError::Syntax { span, .. }
            | FrontendError::Unsupported { span, .. }
            | FrontendError::Name { span, .. }
            | FrontendError::Type { span, .. }
            | FrontendError::Assertion { span }
            | FrontendError::Budget { span, .. }
            | FrontendError::GraphTooLarge { span, .. }
            | FrontendError::Deadline { span, .. }
            | FrontendError::TooLarge { span, .. }
            | FrontendError::Eager { span, .. }
            | FrontendError::DType { span, .. }
            | FrontendError::Break { span, .. }
            | FrontendError::Compiled { span, .. } => Some(*span),
            FrontendError::Shape(
                ShapeError::Mismatch { span, .. } | ShapeError::Invalid { span, .. },
            ) => Some(*span),
            FrontendError::Shape(ShapeError::ConstraintViolation { origin, .. }) => origin.span,
            _ => None,
        }
    }
}
