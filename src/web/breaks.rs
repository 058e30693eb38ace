//! The graphs of one call through its graph breaks, as the page's graph-breaks stage and the
//! cache lab show them.
//!
//! Input: a `CallEvent` of a `CodeCache` (its frame-0 call and `breaks`, each a resume
//! function's call) and the entries those calls ran. Output: one `GraphView` per graph, in
//! the order Python reached them — forward's graph, then each resume function's — with its
//! `[frame/compile]` id, the frame's action and guard failures, the graph's text, guards and
//! nodes, the break that ended it and what Python printed before it; and `ResumeCallView`s,
//! each resume call in one line, for a call's record. Invariant: views only; every text is
//! the compiler's printed form or PyTorch's reason text, never a sentence of the page's own
//! (the page words everything in the reader's language).

use super::parts::{self, NodeView, ReasonView, SpanView};
use crate::cache::{CallEvent, CodeCache};
use crate::frontend::{BreakReason, GraphBreak, Output};
use crate::message::Message;
use crate::symbolic::SymbolNaming;
use serde::Serialize;

/// A graph break, where it is and why.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BreakView {
    /// Where in the source (line and column, 1-based).
    line: u32,
    col: u32,
    /// `print`, `value` (`.item()`, `.tolist()`, `float()`) or `branch`.
    kind: &'static str,
    /// PyTorch's `Graph Break Reason:` text, as PyTorch writes it.
    reason: String,
    /// For a branch on a tensor's value, the way Python went (`true`: the `if` body).
    taken: Option<bool>,
    /// The resume function the break leads to (`torch_dynamo_resume_in_forward_at_16`).
    resume: String,
}

fn break_view(graph_break: &GraphBreak, resume: &str) -> BreakView {
    BreakView {
        line: graph_break.span.line,
        col: graph_break.span.col,
        kind: match graph_break.reason {
            BreakReason::Print { .. } => "print",
            BreakReason::Value { .. } | BreakReason::ToList { .. } => "value",
            BreakReason::Branch => "branch",
            BreakReason::Rnn { .. } => "rnn",
        },
        reason: graph_break.reason.to_string(),
        taken: graph_break.taken,
        resume: resume.to_string(),
    }
}

/// One graph of a call: the compiled function's, or a resume function's.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GraphView {
    /// Dynamo's frame id: 0 for the compiled function, then each resume function in the
    /// order first reached.
    frame: usize,
    /// The compile id of the frame's entry that ran (`[frame/compile]`, as PyTorch writes
    /// it); `null` when the frame's call compiled nothing (an error).
    compile_id: Option<usize>,
    /// The code: the compiled function (`forward`) or a resume function.
    function: String,
    /// The frame's call: `compile`, `hit`, `eager` or `error`.
    action: String,
    /// The first failing guard of each of the frame's entries checked, in lookup order.
    reasons: Vec<ReasonView>,
    /// The frame's error, for `error`, in English.
    error: Option<String>,
    /// The same as a message for the page's languages: `{ id, args }`.
    error_message: Option<Message>,
    /// Where that error points.
    error_span: Option<SpanView>,
    /// The graph's text (the graph stage's form), when an entry ran.
    text: Option<String>,
    /// The graph's nodes, for drawing (empty when no entry ran).
    nodes: Vec<NodeView>,
    /// The entry's guards, one a line, as PyTorch prints them.
    guards: Vec<String>,
    /// The break that ended this graph (`null`: it reached the return).
    ends_at: Option<BreakView>,
    /// What Python printed between the graph before this one and this one.
    printed: String,
}

/// Every graph `event` went through, in order; symbols named by `naming`.
pub(super) fn graph_views(
    cache: &CodeCache,
    event: &CallEvent,
    naming: SymbolNaming,
) -> Vec<GraphView> {
    let frames = cache.frames();
    let function = |frame: usize| frames.get(frame).map_or("", |(name, _)| name).to_string();
    let mut graphs = vec![graph_view(cache, event, function(0), &[], naming)];
    for resume in &event.breaks {
        let previous = graphs.last_mut().expect("the function's graph comes first");
        previous.ends_at = Some(break_view(&resume.graph_break, &resume.function));
        graphs.push(graph_view(
            cache,
            &resume.call,
            resume.function.clone(),
            &resume.printed,
            naming,
        ));
    }
    graphs
}

/// The graph one frame's call ran (its break is set by the caller, from the next call).
fn graph_view(
    cache: &CodeCache,
    call: &CallEvent,
    function: String,
    printed: &[Output],
    naming: SymbolNaming,
) -> GraphView {
    let entry = call.entry.and_then(|id| cache.frame_entry(call.frame, id));
    let show = |entry: Option<&crate::cache::Entry>| GraphView {
        frame: call.frame,
        compile_id: call.entry.or(call.compile_id),
        function,
        action: call.action.to_string(),
        reasons: parts::reason_views(&call.reasons),
        error: call.error.clone(),
        error_message: call.error_message.clone(),
        error_span: parts::span_view(call.error_span),
        text: entry.map(|e| e.graph.to_string()),
        nodes: entry.map_or_else(Vec::new, |e| parts::node_views(&e.graph)),
        guards: entry.map_or_else(Vec::new, |e| e.guards.source_lines()),
        ends_at: None,
        printed: printed.iter().map(|output| output.text.as_str()).collect(),
    };
    match entry {
        Some(entry) => entry.env.symbol_names(naming).show(|| show(Some(entry))),
        None => show(None),
    }
}

/// A resume function's call within a call, in one line of the lab.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ResumeCallView {
    /// Its frame id.
    frame: usize,
    /// The resume function.
    function: String,
    /// `compile`, `hit` or `error`.
    action: String,
    /// The entry that ran (its compile id).
    entry: Option<usize>,
    /// The first failing guard of each of the frame's entries checked.
    reasons: Vec<ReasonView>,
    /// The error, for `error`, in English.
    error: Option<String>,
    /// The same as a message for the page's languages: `{ id, args }`.
    error_message: Option<Message>,
    /// The break it resumes after.
    graph_break: BreakView,
}

/// The resume calls of `event`, in order.
pub(super) fn resume_call_views(event: &CallEvent) -> Vec<ResumeCallView> {
    event
        .breaks
        .iter()
        .map(|resume| ResumeCallView {
            frame: resume.call.frame,
            function: resume.function.clone(),
            action: resume.call.action.to_string(),
            entry: resume.call.entry,
            reasons: parts::reason_views(&resume.call.reasons),
            error: resume.call.error.clone(),
            error_message: resume.call.error_message.clone(),
            graph_break: break_view(&resume.graph_break, &resume.function),
        })
        .collect()
}
