//! End-to-end tests of Tailor: one binary, one module per area.

mod cli;
mod compare;
mod conformance;
mod corpus;
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

/// Where a test needs a GPU adapter and there is none: a note and a skip, unless the run
/// expects one (`TAILOR_REQUIRE_GPU=1`, which `scripts/test.sh` and so CI set, since the
/// install step provides lavapipe), where a missing adapter fails the test instead of letting
/// it pass without running.
fn no_adapter(why: &dyn std::fmt::Display) {
    if std::env::var_os("TAILOR_REQUIRE_GPU").is_some_and(|v| v != "0") {
        panic!("no GPU adapter ({why}), and TAILOR_REQUIRE_GPU asks for one");
    }
    println!("note: no GPU adapter ({why}); skipped");
}
