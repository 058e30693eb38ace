//! Tailor: a symbolic-shape compiler for a PyTorch subset, built to teach how
//! `torch.compile` handles dynamic shapes.
//!
//! The modules appear in pipeline order (see ARCHITECTURE.md): Python source is parsed and
//! captured into a graph whose shapes are symbolic expressions, shape decisions become
//! guards, and a cache of compiled entries decides per call whether to hit, recompile or
//! run eagerly.
#![warn(clippy::print_stdout)]

pub mod symbolic;
#[cfg(target_arch = "wasm32")]
pub mod web;

/// The material's `SimpleNet` (its "Python 演示" section), as a learner would paste it.
pub const SIMPLENET_SOURCE: &str = include_str!("../models/simplenet.py");

/// Compiles `source` for the inputs described by `input_shapes` (`x=8,64;y=3`) under the
/// default mode and returns the trace as text, or the error message.
///
/// This is the page's entry point until the full web API lands.
pub fn explain_text(source: &str, input_shapes: &str) -> Result<String, String> {
    Err(format!(
        "the compiler is not wired yet ({} bytes of source, inputs {input_shapes})",
        source.len()
    ))
}
