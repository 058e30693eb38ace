//! Build script: rebuilds the crate when the Python package in `py/` changes. The `python`
//! feature compiles that folder into the binary with `py_freeze!`, which cargo does not
//! track by itself.

fn main() {
    println!("cargo::rerun-if-changed=py");
    println!("cargo::rerun-if-changed=build.rs");
}
