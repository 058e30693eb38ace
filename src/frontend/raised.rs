//! The front-end error a Python exception stands for: one Tailor raised itself (kept in the
//! session with its node and values), or one the user's code or the `torch` package raised,
//! placed at the innermost line of the user's file in its traceback.
//!
//! In: an exception and the session. Out: a `FrontendError` with a span. Invariant: an
//! error is never reported twice: Tailor's own comes back as it was raised.

use super::errors::FrontendError;
use super::objects::Session;
use super::source::{FILE_NAME, instruction_position};
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
        // `argparse.ArgumentParser(...)`: a call of a stand-in of an absent module.
        "AbsentName" => FrontendError::Unsupported {
            span,
            construct: attribute("path")
                .and_then(|path| path.str(vm).ok())
                .map_or_else(
                    || message.clone(),
                    |path| path.to_string_lossy().into_owned(),
                ),
            note: attribute("module")
                .and_then(|module| module.str(vm).ok())
                .map_or(message, |module| {
                    format!(
                        "{} '{}': only the model's own code runs",
                        super::program::ABSENT_MODULE,
                        module.to_string_lossy()
                    )
                }),
        },
        // `torch.nonzero`, `F.unfold`, `x.nonzero()`: names py/torch does not define.
        "UnsupportedAttribute" => {
            let construct = attribute("path")
                .and_then(|path| path.str(vm).ok())
                .map_or(message, |path| path.to_string_lossy().into_owned());
            // A name of another package than torch (`numpy.random`) says why itself.
            let own_note = attribute("note")
                .filter(|note| !vm.is_none(note))
                .and_then(|note| note.str(vm).ok())
                .map(|note| note.to_string_lossy().into_owned());
            let note = match (own_note, instead(vm, &construct)) {
                (Some(note), _) => note,
                (None, Some(instead)) => format!("it is not in Tailor's PyTorch subset; {instead}"),
                (None, None) => "it is not in Tailor's PyTorch subset".to_string(),
            };
            FrontendError::Unsupported {
                span,
                construct,
                note,
            }
        }
        "NameError" => {
            let name = attribute("name")
                .filter(|n| !vm.is_none(n))
                .and_then(|n| n.str(vm).ok())
                .map_or(message, |n| n.to_string_lossy().into_owned());
            let skipped = session
                .skipped_names
                .borrow()
                .iter()
                .find(|(skipped, ..)| *skipped == name)
                .map(|(_, at, why)| (*at, why.clone()));
            FrontendError::Name {
                span,
                name,
                skipped,
            }
        }
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

/// What to write instead of the unsupported `path` (`Tensor.amin`), when there is a
/// supported alternative or a close spelling.
fn instead(vm: &VirtualMachine, path: &str) -> Option<String> {
    let module = vm.import("_tailor_surface", 0).ok()?;
    let answer = vm
        .call_method(&module, "instead", (path.to_string(),))
        .ok()?;
    answer.try_into_value::<Option<String>>(vm).ok().flatten()
}
