//! How the graph's sizes serialise for the trace and the page: as their maths text.
//!
//! In: an expression or a shape. Out: a string, or a list of strings. Invariant: a leaf of
//! `graph/`: the nodes and ops (`mod.rs`, `op.rs`) name these in their `serde` attributes,
//! and this file names nothing of theirs.

use crate::symbolic::Expr;
use serde::Serializer;

/// Serializes a value through its `Display` form (expressions go to JS as maths text).
pub(crate) fn serialize_display<S: Serializer>(
    value: &Expr,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_string())
}

/// Serializes a shape as a list of maths strings.
pub(crate) fn serialize_shape<S: Serializer>(
    shape: &[Expr],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(shape.iter().map(ToString::to_string))
}
