//! Symbolic integer expressions (placeholder until the engine lands).
