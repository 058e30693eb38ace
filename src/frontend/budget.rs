//! The step budget every run of the user's Python is held to: `Session::trace` installed
//! as `sys.settrace` for the run, its line count starting from zero.
//!
//! In: a VM and the run's body. Out: the body's result, or the `torch` package's own error
//! when the budget could not be installed. Invariant: runs nest (a script's compiled call
//! captures inside the script's run), and the outer run's count and tracing resume after
//! an inner one; after the outermost, tracing is off.

use super::call::Call;
use super::errors::FrontendError;
use super::program::package_error;
use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// Runs `body` under one run's step budget (`Session::trace` as `sys.settrace`), counted
/// from zero. Runs nest (a script's compiled call captures inside the script's run): the
/// outer run's count and tracing resume afterwards; after the outermost, tracing is off.
pub(super) fn budgeted<T>(
    vm: &VirtualMachine,
    body: impl FnOnce() -> T,
) -> Result<T, FrontendError> {
    let package = |exc: PyBaseExceptionRef| package_error(vm, &exc);
    let session = Call::session(vm).map_err(package)?;
    let outer_steps = session
        .tracer
        .borrow()
        .is_some()
        .then(|| session.steps.get());
    session.steps.set(0);
    let settrace = |function: PyObjectRef| {
        vm.sys_module
            .get_attr("settrace", vm)?
            .call((function,), vm)
    };
    let trace = session.as_object().get_attr("trace", vm).map_err(package)?;
    *session.tracer.borrow_mut() = Some(trace.clone());
    settrace(trace.clone()).map_err(package)?;
    let result = body();
    match outer_steps {
        Some(steps) => {
            session.steps.set(steps);
            settrace(trace).map_err(package)?;
        }
        None => {
            settrace(vm.ctx.none()).map_err(package)?;
            *session.tracer.borrow_mut() = None;
        }
    }
    Ok(result)
}
