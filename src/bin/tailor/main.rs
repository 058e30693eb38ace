//! The `tailor` command line: `run` a sequence of calls through the guard cache,
//! `explain` one compilation step by step, run a whole `script` with its `torch.compile`
//! wrappers compiled, `compare` a script's run with PyTorch's trace of it, or `bench` the
//! compiler and the kernels
//! (DESIGN.md §6; other tools parse `run --json`).
//!
//! In: the arguments. Out: a report on stdout (text or one JSON object), errors on stderr.
//! `cli` dispatches and owns the exit codes: 0 on success (and for `--help`), 2 for a
//! usage error or a file that cannot be read (with the usage text after a usage error), 1
//! for an error in the model, shown with the source line and a caret under the column.
//! `args` parses, `run`, `explain`, `script` and `compare` do the work, `report` prints a run, `bench` is its
//! own command. This file only declares them, natively.
//!
//! Invariant: nothing but `cli` prints an error or picks an exit code, except `bench`,
//! which reports its own GPU failure.

#[cfg(not(target_arch = "wasm32"))]
mod args;
#[cfg(not(target_arch = "wasm32"))]
mod bench;
#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(not(target_arch = "wasm32"))]
mod compare;
#[cfg(not(target_arch = "wasm32"))]
mod explain;
#[cfg(not(target_arch = "wasm32"))]
mod report;
#[cfg(not(target_arch = "wasm32"))]
mod run;
#[cfg(not(target_arch = "wasm32"))]
mod script;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

/// The command line is native only: wasm32 builds this binary just because `cargo test
/// --target wasm32-unknown-unknown` builds every target of the package.
#[cfg(target_arch = "wasm32")]
fn main() {}
