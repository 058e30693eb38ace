//! What a call did, as the cache records it: the action (hit, compile, eager, error), the
//! entry, the failure reasons of the entries it passed over, and one event per resume
//! function it went through after a graph break.
//!
//! In: the policy's decisions (`mod.rs`). Out: `CallEvent`s, which the CLI, the page and
//! script mode show. Invariant: an event carries its error once, with its span.

use crate::frontend::{FrontendError, GraphBreak, Output};
use crate::graph::Span;
use crate::guard::ArgValue;
use crate::message::Message;
use serde::Serialize;
use std::fmt;

/// What a call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A new entry was compiled.
    Compile,
    /// An existing entry's guards passed.
    Hit,
    /// The recompile limit was reached: the call ran uncompiled.
    Eager,
    /// Compilation failed, or the call past the recompile limit failed when run eagerly; no
    /// entry was added.
    Error,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Compile => "compile",
            Action::Hit => "hit",
            Action::Eager => "eager",
            Action::Error => "error",
        })
    }
}

/// One call's record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallEvent {
    /// The call's arguments: tensors' sizes, ints, bools.
    pub shapes: Vec<(String, ArgValue)>,
    /// Which wrapper was called (index given by the caller).
    pub wrapper: usize,
    /// What happened.
    pub action: Action,
    /// The entry that ran (compile order, from 0), for `compile` and `hit`.
    pub entry: Option<usize>,
    /// The compile id this call's compilation took (`0/N`), for `compile` and for an
    /// `error` raised while compiling: a failed compilation uses up its id, as in PyTorch.
    pub compile_id: Option<usize>,
    /// The first failing guard of every entry, in lookup order: (entry id, reason).
    #[serde(serialize_with = "serialize_reasons")]
    pub reasons: Vec<(usize, String)>,
    /// The error, for `error`.
    pub error: Option<String>,
    /// The error as a message for the page's languages (`error` is its English text).
    #[serde(skip)]
    pub error_message: Option<Message>,
    /// Where in the source the error points, when it does.
    pub error_span: Option<Span>,
    /// Whether the error is in the program itself, so every call would fail alike.
    pub error_in_program: bool,
    /// The warning PyTorch prints when the recompile limit is hit.
    pub warning: Option<String>,
    /// Why Dynamo skips this code for good, on the call whose trace decided it and on every
    /// later one: a function whose trace recorded no op (nothing to compile) runs eagerly
    /// from then on, without a guard checked, until `torch._dynamo.reset()`.
    pub skipped: Option<String>,
    /// Time spent checking guards (ms).
    pub guard_ms: f64,
    /// Time spent compiling (ms), for `compile`.
    pub compile_ms: f64,
    /// Dynamo's frame id of the code called: 0 for the compiled function, then each resume
    /// function in the order first reached.
    pub frame: usize,
    /// The graph breaks the call went through, each with the call of the resume function
    /// after it (empty when the function's graph reaches its return).
    pub breaks: Vec<ResumeEvent>,
}

/// A graph break a call went through, and the call of the code after it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResumeEvent {
    /// The break.
    pub graph_break: GraphBreak,
    /// The resume function's name (`torch_dynamo_resume_in_forward_at_11`).
    pub function: String,
    /// Its call: lookup, compile or error, in its own cache.
    pub call: CallEvent,
    /// What Python printed between the graph before the break and this call.
    pub printed: Vec<Output>,
}

impl CallEvent {
    /// Every frame's call of this call, in order: the function's, then each resume's.
    pub fn frames(&self) -> impl Iterator<Item = &CallEvent> {
        std::iter::once(self).chain(self.breaks.iter().map(|b| &b.call))
    }

    /// Records `err` as this call's error.
    pub(super) fn fail(&mut self, err: &FrontendError) {
        self.action = Action::Error;
        self.error = Some(err.to_string());
        self.error_message = Some(err.message());
        self.error_span = err.span();
        self.error_in_program = err.is_in_program();
    }

    /// The first error of any frame's call, when there is one.
    pub fn first_error(&self) -> Option<&CallEvent> {
        self.frames().find(|f| f.action == Action::Error)
    }
}

/// Reasons go to JSON as plain strings, as the CLI contract shows them.
fn serialize_reasons<S: serde::Serializer>(
    reasons: &[(usize, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(reasons.iter().map(|(_, reason)| reason))
}
