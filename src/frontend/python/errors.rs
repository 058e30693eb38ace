//! Python exceptions as front-end errors, at the user's line:col.
//!
//! Input: an exception that reached the front end. Output: the `FrontendError` a
//! `_tailor` call raised (kept in the session, found by its index), or one made from the
//! exception: `SyntaxError` → `Syntax`, a failed `assert` → `Assertion`, `NameError` →
//! `Name`, anything else → `Type` with Python's `TypeName: message`.
//! Invariant: the span is the innermost traceback entry in the user's file (1:1 when the
//! error is not in the user's code).

use super::call::instruction_position;
use super::native::Session;
use super::source::FILE_NAME;
use crate::frontend::FrontendError;
use crate::graph::Span;
use rustpython_vm::builtins::{PyBaseExceptionRef, PyCode};
use rustpython_vm::{AsObject, PyObjectRef, PyRef, VirtualMachine};

/// The front-end error an exception stands for.
pub(super) fn frontend_error(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    exc: PyBaseExceptionRef,
) -> FrontendError {
    if let Some(err) = raised_by_tailor(vm, session, &exc) {
        return err;
    }
    let source = session.source.borrow().clone();
    let position = traceback_position(vm, &exc);
    let span_of = |position: Option<(usize, usize)>| match (&source, position) {
        (Some(source), Some((line, col))) => source.span(line, col),
        _ => Span { line: 1, col: 1 },
    };
    let span = span_of(position);
    let type_name = exc.as_object().class().name().to_string();
    let message = exc
        .as_object()
        .str(vm)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let attribute = |name: &'static str| exc.as_object().get_attr(name, vm).ok();
    match type_name.as_str() {
        "SyntaxError" | "IndentationError" | "TabError" => {
            let int =
                |name: &'static str| -> Option<usize> { attribute(name)?.try_into_value(vm).ok() };
            let at = int("lineno").zip(int("offset"));
            let message = attribute("msg")
                .and_then(|m| m.str(vm).ok())
                .map_or(message, |m| m.to_string_lossy().into_owned());
            FrontendError::Syntax {
                span: span_of(at),
                message,
            }
        }
        "AssertionError" => FrontendError::Assertion {
            span: match (&source, position) {
                (Some(source), Some((line, col))) => source.assert_at(line, col).unwrap_or(span),
                _ => span,
            },
        },
        "NameError" => FrontendError::Name {
            span,
            name: attribute("name")
                .filter(|n| !vm.is_none(n))
                .and_then(|n| n.str(vm).ok())
                .map_or(message, |n| n.to_string_lossy().into_owned()),
        },
        _ => FrontendError::Type {
            span,
            message: if message.is_empty() {
                type_name
            } else {
                format!("{type_name}: {message}")
            },
        },
    }
}

/// The error a `_tailor` call raised as `TailorError(message, index)`.
fn raised_by_tailor(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    exc: &PyBaseExceptionRef,
) -> Option<FrontendError> {
    let classes = session.classes.borrow();
    if !exc
        .as_object()
        .class()
        .fast_issubclass(&classes.as_ref()?.error)
    {
        return None;
    }
    let args = exc.args();
    let index: usize = args.as_slice().get(1)?.clone().try_into_value(vm).ok()?;
    session.errors.borrow().get(index).cloned()
}

/// The position of the innermost traceback entry that runs the user's file.
fn traceback_position(vm: &VirtualMachine, exc: &PyBaseExceptionRef) -> Option<(usize, usize)> {
    let mut entry: Option<PyObjectRef> = exc.traceback().map(Into::into);
    let mut found = None;
    while let Some(tb) = entry {
        let lasti = tb
            .get_attr("tb_lasti", vm)
            .ok()?
            .try_into_value::<usize>(vm)
            .ok();
        let code = tb
            .get_attr("tb_frame", vm)
            .ok()?
            .get_attr("f_code", vm)
            .ok()?
            .downcast::<PyCode>()
            .ok();
        if let (Some(code), Some(lasti)) = (code, lasti) {
            if code.source_path().as_str() == FILE_NAME {
                found = instruction_position(&code, lasti).or(found);
            }
        }
        entry = tb
            .get_attr("tb_next", vm)
            .ok()
            .filter(|next| !vm.is_none(next));
    }
    found
}
