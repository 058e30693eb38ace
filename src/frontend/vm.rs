//! The Python VM a model file runs in: a fresh interpreter with the native modules, the
//! frozen `torch` stand-in and the selected CPython modules, warmed ahead of need or not.
//!
//! In: nothing (an interpreter is made from the frozen files). Out: a `Vm`, fresh or warm,
//! and `parse` in a fresh one. Invariant: no file of the user's is read here, and every
//! interpreter has the same modules, so a warm one behaves as a fresh one.

use super::errors::FrontendError;
use super::load::parse_in;
use super::program::{Program, Vm, package_error};
use super::{bounds, math, native};
use rustpython_vm::frozen::FrozenLib;
use rustpython_vm::{Interpreter, Settings};

/// The CPython modules `build.rs` compiled from the `rustpython-pylib` crate (its `STDLIB`
/// lists them and says why each is there), in RustPython's frozen-library format.
static STDLIB: &FrozenLib<[u8]> =
    FrozenLib::from_ref(include_bytes!(concat!(env!("OUT_DIR"), "/stdlib.frozen")).as_slice());

/// A fresh interpreter with the native `_tailor` and `_math` (under `py/math.py`), `py/` frozen (the `torch`
/// stand-in) and the CPython modules of `STDLIB`; its integers bounded (`bounds.rs`).
fn interpreter() -> Interpreter {
    let mut settings = Settings::default();
    settings.allow_external_library = false;
    settings.import_site = false;
    settings.ignore_environment = true;
    settings.isolated = true;
    let builder = Interpreter::builder(settings);
    let tailor = native::_tailor::module_def(&builder.ctx);
    let math = math::native_math::module_def(&builder.ctx);
    let interpreter = builder
        .add_native_modules(&[tailor, math])
        .add_frozen_modules(rustpython_vm::py_freeze!(dir = "../../py"))
        .add_frozen_modules(STDLIB)
        .build();
    interpreter.enter(bounds::install);
    interpreter
}

/// The modules every model file's run imports, or may: what [`Vm::warm`] imports
/// ahead of need.
const WARM_MODULES: [&str; 8] = [
    "torch",
    "_tailor_frontend",
    "dataclasses",
    "typing",
    "functools",
    "collections",
    "math",
    "operator",
];

impl Vm {
    /// A fresh interpreter.
    pub fn fresh() -> Vm {
        Vm(interpreter())
    }

    /// A fresh interpreter whose `torch` package and common stdlib modules are imported
    /// already: a page makes one in idle time, so that the next model's run starts from
    /// them (imports are the most of a first capture's time). It behaves as a fresh one:
    /// the user's file still runs in a new `__main__` scope, and nothing of it is imported.
    pub fn warm() -> Result<Vm, FrontendError> {
        let interpreter = interpreter();
        interpreter.enter(|vm| {
            WARM_MODULES.iter().try_for_each(|module| {
                vm.import(*module, 0)
                    .map(drop)
                    .map_err(|exc| package_error(vm, &exc))
            })
        })?;
        Ok(Vm(interpreter))
    }
}

/// Runs `source`'s module level in a fresh VM ([`parse_in`]).
pub fn parse(source: &str) -> Result<Program, FrontendError> {
    parse_in(Vm::fresh(), source)
}
