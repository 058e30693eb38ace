//! End-to-end tests of Tailor: one binary, one module per area.

mod cli;
mod conformance;
mod errors;
mod executor;
mod files;
mod fuzz;
#[cfg(feature = "gpu")]
mod gpu;
mod kernels;
mod leaf_guards;
mod messages;
mod models;
mod python;
mod schedules;
mod script;
mod snapshots;
mod table;
mod tidy;
mod values;
mod weights;
mod wgsl;

/// Whether `message` contains `needle`; a `LINE:COL` needle also matches the spelled-out
/// `line LINE, col COL` form, so location checks do not depend on the span's print style.
fn mentions(message: &str, needle: &str) -> bool {
    if message.contains(needle) {
        return true;
    }
    match needle.split_once(':') {
        Some((line, col)) if line.parse::<u32>().is_ok() && col.parse::<u32>().is_ok() => {
            message.contains(&format!("line {line}, col {col}"))
        }
        _ => false,
    }
}
