//! A model file after its module level ran: the `Program` (its interpreter and globals),
//! the statements skipped as driver code, and the `EntryPoint` a capture calls.
//!
//! In: what `parse` (`mod.rs`) and a script's `torch.compile` (`script.rs`) made. Out: the
//! handles every floor above keeps. Invariant: a `Program` owns its interpreter and drops
//! the Python objects it holds before it, and a clone is the same program, not a new run.

use super::errors::FrontendError;
use super::source::UserSource;
use crate::graph::Span;
use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::{AsObject, Interpreter, PyObjectRef, PyResult, VirtualMachine};
use std::rc::Rc;

/// Why a module-level statement that is neither a definition nor an assignment is skipped.
pub(crate) const DRIVER_CODE: &str = "driver code: Tailor compiles the model and runs only definitions and assignments at module level";

/// Why an import gave stand-ins: the module is not in the frozen Python.
pub(crate) const ABSENT_MODULE: &str = "Tailor's Python has no module";

/// Which `torch.compile` cache a wrapper's code belongs to: the compiled function's code
/// object and, for a module, the instance (each instance gets its own cache).
pub type CodeKey = (usize, usize);

/// A statement at module level that capture did not execute (the script's driver code).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Skipped {
    /// Where it starts.
    pub span: Span,
    /// Why it was skipped.
    pub reason: String,
}

/// A model file whose module level ran in its own interpreter. A clone is the same program
/// (the same interpreter and module objects), not a new run of the file.
#[derive(Clone)]
pub struct Program {
    pub(super) source: Rc<UserSource>,
    pub(super) globals: PyObjectRef,
    pub(super) skipped: Vec<Skipped>,
    // Last: the objects above belong to this interpreter and are released before it. A
    // script's compiled functions share its interpreter (`Program::of_script`).
    pub(super) interpreter: Rc<Interpreter>,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

/// What `capture` calls: an `nn.Module` instance or a plain function of the file.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    /// Class or function name.
    pub name: String,
    /// Tensor argument names (parameters without defaults, `self` excluded).
    pub inputs: Vec<String>,
    /// How many of `inputs`, the last ones, are keyword-only (passed by name, as PyTorch's
    /// caller passes them).
    pub(super) keyword: usize,
    /// The compiled function (`forward` for a module) and the line it is defined on.
    pub function: (String, u32),
    pub(super) callable: PyObjectRef,
    /// The module instance whose `forward` this is (`None` for a function).
    pub(super) module: Option<PyObjectRef>,
}

impl EntryPoint {
    /// Whether it is a module instance's `forward` (else a plain function).
    pub fn is_module(&self) -> bool {
        self.module.is_some()
    }

    /// What `torch.compile(target)` compiles in a script (a module instance's `forward`,
    /// or a function), and the key of the cache its code shares.
    pub(super) fn of_target(
        vm: &VirtualMachine,
        target: &PyObjectRef,
    ) -> PyResult<(EntryPoint, CodeKey)> {
        let helper = vm.import("_tailor_frontend", 0)?;
        let described = vm.call_method(&helper, "compiled_target", (target.clone(),))?;
        let fields: Vec<PyObjectRef> = vm.extract_elements_with(&described, Ok)?;
        let [name, function, callable, is_module, key] = fields.as_slice() else {
            return Err(vm.new_type_error("compiled_target gives five fields"));
        };
        let is_module: bool = is_module.clone().try_into_value(vm)?;
        let key: Vec<usize> = vm.extract_elements_with(key, |k| k.try_into_value(vm))?;
        let inputs: Vec<String> = vm
            .call_method(&helper, "inputs", (function.clone(), is_module))?
            .try_into_value(vm)?;
        let keyword: Vec<String> = vm
            .call_method(&helper, "keyword_inputs", (function.clone(),))?
            .try_into_value(vm)?;
        let line: u32 = vm
            .call_method(&helper, "first_line", (function.clone(),))?
            .try_into_value(vm)?;
        let name: String = name.clone().try_into_value(vm)?;
        let function_name = if is_module {
            "forward".to_string()
        } else {
            name.clone()
        };
        let entry = EntryPoint {
            name,
            inputs,
            keyword: keyword.len(),
            function: (function_name, line),
            callable: callable.clone(),
            module: is_module.then(|| target.clone()),
        };
        Ok((entry, (key[0], key.get(1).copied().unwrap_or(0))))
    }
}

/// An error of the stand-in `torch` package itself (a bug of Tailor, not of the model).
pub(super) fn package_error(vm: &VirtualMachine, exc: &PyBaseExceptionRef) -> FrontendError {
    let message = exc
        .as_object()
        .str(vm)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    FrontendError::Type {
        span: Span { line: 1, col: 1 },
        message: format!(
            "Tailor's torch package failed: {}: {message}",
            exc.as_object().class().name()
        ),
    }
}

/// The Python VM one program runs in, made before the program: fresh, or warmed ahead of
/// need (the VM itself stays the front end's business).
pub struct Vm(pub(super) Interpreter);
