//! The small views the page's larger ones are made of: a source position, a guard failure
//! reason, a graph's nodes.
//!
//! In: a `Span`, a call's reasons, a `Graph`. Out: serialisable views. Invariant: leaves of
//! the page's views: `view.rs` and `breaks.rs` both build from them, and they import
//! neither.

use crate::graph::{Graph, Op, Span, shape_to_string};
use serde::Serialize;

/// A source position for JS.
#[derive(Serialize)]
pub(super) struct SpanView {
    line: u32,
    col: u32,
}

pub(super) fn span_view(span: Option<Span>) -> Option<SpanView> {
    span.map(|s| SpanView {
        line: s.line,
        col: s.col,
    })
}

/// One failure reason: which entry's guard failed, and PyTorch's text.
#[derive(Serialize)]
pub(super) struct ReasonView {
    entry: usize,
    text: String,
}

/// A call's failure reasons, (entry id, text) in lookup order.
pub(super) fn reason_views(reasons: &[(usize, String)]) -> Vec<ReasonView> {
    reasons
        .iter()
        .map(|(entry, text)| ReasonView {
            entry: *entry,
            text: text.clone(),
        })
        .collect()
}

/// A graph node for drawing.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct NodeView {
    id: usize,
    name: String,
    /// The op's name (`linear`, `conv2d`, `input`, `param`, `output`, …).
    op: String,
    /// `input`, `param`, `constant`, `op` or `output`.
    role: &'static str,
    /// Operand node ids.
    inputs: Vec<usize>,
    /// Symbolic sizes, one string per dim.
    shape: Vec<String>,
    /// The shape as `[s0, 64]`.
    shape_text: String,
    /// The node's line in the graph's text form.
    text: String,
    /// Where in the source the op was called.
    span: Option<SpanView>,
}

pub(super) fn node_views(graph: &Graph) -> Vec<NodeView> {
    let printed = graph.to_string();
    // The text form is a header line, then one line per node in arena order.
    let lines: Vec<&str> = printed.lines().skip(1).collect();
    graph
        .nodes
        .iter()
        .map(|node| NodeView {
            id: node.id.index(),
            name: node.name.clone(),
            op: node.op.name(),
            role: match node.op {
                Op::Input { .. } => "input",
                Op::Param { .. } => "param",
                Op::Constant { .. } => "constant",
                Op::Output => "output",
                _ => "op",
            },
            inputs: node.inputs.iter().map(|id| id.index()).collect(),
            shape: node.shape.iter().map(ToString::to_string).collect(),
            shape_text: shape_to_string(&node.shape),
            text: lines
                .get(node.id.index())
                .map_or(String::new(), |line| line.trim().to_string()),
            span: span_view(node.span),
        })
        .collect()
}
