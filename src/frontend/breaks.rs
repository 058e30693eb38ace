//! Graph breaks: where a capture meets Python that cannot go into a graph (`print`, a
//! tensor's value read by `.item()`/`.tolist()`/`float()`, a branch on a tensor's value, a
//! call of an RNN module), the graph so far ends, as Dynamo ends it, and Python goes on
//! with real values.
//!
//! RustPython has no frame-evaluation hook to resume bytecode at the break, so a call of a
//! function that breaks is a *forward run*: the forward runs from its start, eagerly (each
//! op on real values, `Call::eager_op`) up to the break before the graph being captured,
//! then traces that graph (the resume function's, in Dynamo's terms) until the next break
//! or the return. A *probe* runs the whole forward eagerly, recording what Python held at
//! each break: the tensors and ints in the forward frame's locals, which Dynamo passes to
//! the resume function as its arguments.
//!
//! A break inside a function forward calls (a helper, a submodule's `forward`) ends
//! forward's graph at the call in forward's frame, as Dynamo ends the outer frame's graph
//! where it was inlining the call; the call runs eagerly, and forward's resume function
//! starts after it with what it returned on the stack (`___stack0`). Dynamo compiles that
//! call's frame on its own (its graphs and resume functions); Tailor runs it eagerly.
//!
//! Input: the break's kind and place. Output: `GraphBreak`s (printed in Dynamo's wording) and
//! `BreakPoint`s. Invariant: the breaks are forward's own (a nested one is forward's at
//! the call that reached it); a tensor Python keeps across a break only on its
//! value stack or inside a container is refused where it is used, never baked in; the ints
//! and floats in forward's locals are the resume function's arguments, each guarded by
//! value (Python holds them as plain numbers, which the graph after the break bakes in).

use crate::graph::{DType, Span, Tensor};
use serde::Serialize;
use std::fmt;
use std::rc::Rc;

/// What made Dynamo end the graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BreakReason {
    /// `print(...)` inside the compiled code, with its arguments' Python types.
    Print {
        /// The argument types as Dynamo lists them (`['str', 'Size']`).
        arg_types: Vec<String>,
    },
    /// A tensor's value read into Python: `item` (also `float()`/`int()`).
    Value {
        /// The Tensor method.
        method: String,
    },
    /// `x.tolist()`: the values as a Python list; Dynamo's reason depends on the dtype.
    ToList {
        /// Whether the tensor's dtype is an integer type.
        integer: bool,
    },
    /// `if tensor:` / `bool(tensor)`: control flow on a tensor's value.
    Branch,
    /// A call of an `nn.RNN`, `nn.GRU` or `nn.LSTM`, which Dynamo does not trace under its
    /// default `allow_rnn=False`: the whole call runs eagerly.
    Rnn {
        /// The module as Dynamo names it (`L['self']._modules['rnn']`).
        source: String,
    },
}

/// The first line of Dynamo's reason for a break met while tracing a call.
const CALL: &str =
    "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):";

impl fmt::Display for BreakReason {
    /// PyTorch 2.15's `Graph Break Reason:` text (TORCH_LOGS=graph_breaks), first lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BreakReason::Print { arg_types } => {
                let types = arg_types
                    .iter()
                    .map(|t| format!("'{t}'"))
                    .collect::<Vec<_>>()
                    .join(", ");
                write!(
                    f,
                    "{CALL}\n\nFailed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types [{types}] (has_kwargs False)"
                )
            }
            BreakReason::Value { method } => write!(
                f,
                "{CALL}\n\nUnsupported Tensor.{method}() call with capture_scalar_outputs=False"
            ),
            BreakReason::ToList { integer: true } => write!(f, "{CALL}\n\nData dependent operator"),
            BreakReason::ToList { integer: false } => {
                write!(f, "{CALL}\n\nTensor.tolist() with non-integer tensor")
            }
            BreakReason::Branch => f.write_str("Data-dependent branching"),
            BreakReason::Rnn { source } => write!(
                f,
                "{CALL}\n\nUnsupported function call (delayed)\n  Explanation: Dynamo determined that a graph break should occur when calling `{source}`. Reason: Dynamo does not support RNN, GRU, or LSTM. Set torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, and LSTM in Dynamo"
            ),
        }
    }
}

/// The most elements an input tensor of a call through graph breaks may have: such a call
/// runs forward as Python on the CPU reference (op by op) to reach its breaks, which for
/// larger tensors takes seconds, and a page must not freeze for them.
pub const PROBE_MAX_ELEMENTS: u128 = 1 << 22;

/// Where and why a graph ended before the function returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GraphBreak {
    /// Why.
    pub reason: BreakReason,
    /// Where in the user's file.
    pub span: Span,
    /// The compiled function whose graph it ends (`forward`, or the function's name).
    pub function: String,
    /// For a break inside a function `function` calls: the line of that call in
    /// `function`, where its graph ends and its resume function starts (`span` is the
    /// inner line, which Dynamo's log names).
    pub call_line: Option<u32>,
    /// For a branch, which way Python went: the resume functions of the two ways are
    /// different code, each with its own cache.
    pub taken: Option<bool>,
}

impl GraphBreak {
    /// Dynamo's name of the code that resumes after this break.
    pub fn resume_name(&self) -> String {
        format!(
            "torch_dynamo_resume_in_{}_at_{}",
            self.function,
            self.resume_line()
        )
    }

    /// The line the resume function starts at: the break's, or the call's it is inside.
    pub fn resume_line(&self) -> u32 {
        self.call_line.unwrap_or(self.span.line)
    }

    /// The lines `TORCH_LOGS=graph_breaks` prints for it (without the user stack).
    pub fn log_lines(&self, file: &str) -> Vec<String> {
        let mut lines = vec![format!(
            "Graph break in user code at {file}:{}",
            self.span.line
        )];
        let mut reason = self.reason.to_string();
        // Met inside a call forward made, a branch is logged as the call's break, as every
        // other reason already is.
        if self.call_line.is_some() && self.reason == BreakReason::Branch {
            reason = format!("{CALL}\n\n{reason}");
        }
        let mut reason_lines = reason.lines();
        if let Some(first) = reason_lines.next() {
            lines.push(format!("Graph Break Reason: {first}"));
        }
        lines.extend(reason_lines.map(str::to_string));
        lines
    }
}

/// What a probe saw: what Python held at each break, and what it printed, each piece with
/// the number of breaks passed before it.
#[derive(Clone, Debug, PartialEq)]
pub struct Probed {
    /// One per break, in order.
    pub points: Vec<BreakPoint>,
    /// The output, tagged.
    pub printed: Vec<(usize, super::host::Output)>,
}

/// What Python held in the forward frame at one break: the resume function's arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakPoint {
    /// The break.
    pub graph_break: GraphBreak,
    /// The tensors in the frame's locals, by name, in the frame's order, with their dtypes.
    pub tensors: Vec<(String, Rc<Tensor>, DType)>,
    /// The ints in the frame's locals (bools excluded), by name.
    pub ints: Vec<(String, i64)>,
    /// The floats in the frame's locals, by name.
    pub floats: Vec<(String, f64)>,
    /// What the break hands back to Python, on its value stack: the float `.item()`
    /// returned, as Dynamo names it (`___stack0`), which the resume function may make
    /// symbolic (Tailor hands Python a `SymFloat` for it then). The tensors a call that
    /// breaks returned (an RNN's) are in `tensors`, named by their place in what it
    /// returned (`___stack0[0]`, `___stack0[1][0]`).
    pub stack: Vec<(String, f64)>,
}

/// Dynamo's name of the resume function's argument for the `index`th value on the stack.
pub fn stack_name(index: usize) -> String {
    format!("___stack{index}")
}

impl BreakPoint {
    /// The names of the resume function's arguments, in order: what keys its cache, with
    /// the break's place and way.
    pub fn arg_names(&self) -> Vec<String> {
        self.tensors
            .iter()
            .map(|(name, ..)| name.clone())
            .chain(self.ints.iter().map(|(name, _)| name.clone()))
            .chain(self.floats.iter().map(|(name, _)| name.clone()))
            .chain(self.stack.iter().map(|(name, _)| name.clone()))
            .collect()
    }
}
