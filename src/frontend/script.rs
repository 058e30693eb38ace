//! Script mode, the front end's half: a whole Python script runs as Python would, and its
//! `torch.compile`d calls go to a [`ScriptHost`] (the guard cache and the executor, above
//! the front end: `crate::script`).
//!
//! Input: the script's text and the host. Output: what it printed and what the host logged,
//! in order, and the error that stopped it, at its line:col. Outside `forward` tensor ops
//! run eagerly (`Call::eager_op`); inside a compiled call they are captured as ever.
//! Invariant: the host is taken out of the session before `run_script` returns, so no
//! cache (which holds the interpreter) outlives the run inside the interpreter itself; and
//! the run is bounded by `STEP_LIMIT` lines and `SCRIPT_TIME_LIMIT_MS`.

use super::budget::budgeted;
use super::call::{Call, Raise};
use super::errors::FrontendError;
use super::host::{CallArg, DimMark, GradMode, SCRIPT_TIME_LIMIT_MS, ScriptHost, ScriptOutcome};
use super::load::prepare;
use super::objects::{Session, TensorBase};
use super::ops::TensorRef;
use super::program::{EntryPoint, Program, Vm, package_error};
use super::raised::frontend_error;
use super::source::{FILE_NAME, UserSource};
use crate::config::{
    CallMarks, CompileConfig, CompilerBackend, DEFAULT_RECOMPILE_LIMIT, DynamicMode, MarkDynamic,
};
use crate::graph::{Returned, ReturnedItem, Tensor};
use crate::shape::rules;
use rustpython_vm::compiler::Mode;
use rustpython_vm::{AsObject, PyObjectRef, PyRef, PyResult, VirtualMachine};
use std::cell::RefMut;
use std::rc::Rc;

/// Runs the whole of `source` as a script, its compiled calls through `host`; `clock`
/// gives ms for the time limit.
pub fn run_script(
    vm: Vm,
    source: &str,
    host: Box<dyn ScriptHost>,
    clock: Rc<dyn Fn() -> f64>,
) -> ScriptOutcome {
    let user = match UserSource::parse(source) {
        Ok(user) => Rc::new(user),
        Err(error) => {
            return ScriptOutcome {
                output: Vec::new(),
                error: Some(error),
            };
        }
    };
    let interpreter = Rc::new(vm.0);
    let error = interpreter.enter(|vm| {
        let session = match Call::session(vm) {
            Ok(session) => session,
            Err(exc) => return Some(package_error(vm, &exc)),
        };
        *session.interpreter.borrow_mut() = Rc::downgrade(&interpreter);
        *session.host.borrow_mut() = Some(host);
        *session.clock.borrow_mut() = Some(clock.clone());
        session.deadline.set(Some(clock() + SCRIPT_TIME_LIMIT_MS));
        let result = budgeted(vm, || run(vm, &session, &user)).and_then(|r| r);
        session.host.borrow_mut().take();
        result.err()
    });
    let output = interpreter.enter(|vm| {
        Call::session(vm)
            .map(|session| std::mem::take(&mut *session.output.borrow_mut()))
            .unwrap_or_default()
    });
    ScriptOutcome { output, error }
}

fn run(
    vm: &VirtualMachine,
    session: &PyRef<Session>,
    source: &Rc<UserSource>,
) -> Result<(), FrontendError> {
    let package = |exc| package_error(vm, &exc);
    let helper = prepare(vm, session, source)?;
    vm.call_method(&helper, "install_clock", ())
        .map_err(package)?;
    let scope = vm.new_scope_with_main().map_err(package)?;
    let code = vm
        .compile(source.text(), Mode::Exec, FILE_NAME)
        .map_err(|err| err.into_pyexception(vm, Some(source.text())))
        .map_err(|exc| frontend_error(vm, session, exc))?;
    vm.run_code_obj(code, scope)
        .map(drop)
        .map_err(|exc| frontend_error(vm, session, exc))
}

// ---- the `_tailor` calls of script mode ------------------------------------------------------

/// Why a script-only call is refused in a model file.
const NOT_IN_A_SCRIPT: &str = "Tailor is the compiler: choose dynamic=None/True/False in the controls or on the command line (or run the whole file with `tailor script`)";

/// `torch.compile(target, dynamic=…, recompile_limit=…)`: registers a wrapper with the host.
pub(super) fn compile(
    vm: &VirtualMachine,
    target: &PyObjectRef,
    dynamic: &PyObjectRef,
    recompile_limit: &PyObjectRef,
    backend: &PyObjectRef,
    settings: &str,
) -> PyResult<usize> {
    Call::run_with(vm, |call| {
        let session = call.session_ref();
        let interpreter = session.interpreter.borrow().upgrade();
        let Some(interpreter) = interpreter else {
            return Err(call.unsupported("torch.compile inside the model", NOT_IN_A_SCRIPT));
        };
        let dynamic = if vm.is_none(dynamic) {
            DynamicMode::Auto
        } else if dynamic.clone().try_into_value::<bool>(vm)? {
            DynamicMode::True
        } else {
            DynamicMode::False
        };
        let recompile_limit = if vm.is_none(recompile_limit) {
            DEFAULT_RECOMPILE_LIMIT
        } else {
            call.int(recompile_limit, "recompile_limit")?.max(0) as usize
        };
        let backend = if let Ok(name) = backend.clone().try_into_value::<String>(vm) {
            CompilerBackend::named(&name).ok_or_else(|| {
                call.unsupported(
                    format!("torch.compile(backend={name:?})"),
                    "Tailor knows the back ends \"inductor\" (the default), \"aot_eager\" and \"eager\", or a callable",
                )
            })?
        } else if backend.is_callable() {
            let name = match backend.get_attr("__name__", vm) {
                Ok(name) => name.str(vm)?,
                Err(_) => backend.str(vm)?,
            };
            CompilerBackend::Callable {
                name: name.to_string_lossy().into_owned(),
            }
        } else {
            return Err(call.type_error(format!(
                "torch.compile's backend must be a name or a callable, not {}",
                call.type_name(backend)
            )));
        };
        let (entry, key) = EntryPoint::of_target(vm, target)?;
        let program = Program::of_script(vm, session, interpreter)
            .ok_or_else(|| call.type_error("torch.compile before the script started"))?;
        let mut host = borrow_host(call, session, "torch.compile")?;
        let config = CompileConfig {
            dynamic,
            recompile_limit,
            backend,
            backend_settings: settings_number(settings),
        };
        Ok(host.compile(key, program, entry, config))
    })
}

/// `settings` as a number (FNV-1a): wrappers with equal text compare equal.
fn settings_number(settings: &str) -> u64 {
    settings.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The argument names of compiled wrapper `wrapper`'s function (`_tailor.compiled_inputs`).
pub(super) fn compiled_inputs(call: &Call<'_>, wrapper: usize) -> Result<Vec<String>, Raise> {
    let session = call.session_ref().clone();
    let host = borrow_host(call, &session, "calling a torch.compile'd function")?;
    Ok(host.inputs(wrapper))
}

/// A call of a compiled wrapper: the tensors' values and marks go to the host, its log to
/// the output, and its outputs come back as values (a tuple when there are several), each
/// tensor with the dims the back end stamped dynamic on it (as are the arguments it saved
/// for backward). `trainable`: see `_tailor.call_compiled`.
pub(super) fn call_compiled(
    vm: &VirtualMachine,
    wrapper: usize,
    args: &[PyObjectRef],
    trainable: Option<Vec<String>>,
) -> PyResult {
    Call::run(vm, |call| {
        let session = call.session_ref().clone();
        let mut inputs = Vec::with_capacity(args.len());
        let mut marks = Vec::with_capacity(args.len());
        let grad = trainable.map(|params| GradMode {
            params,
            args: args
                .iter()
                .map(|arg| {
                    arg.downcast_ref::<TensorBase>()
                        .is_some_and(|t| t.requires_grad() == Some(true))
                })
                .collect(),
        });
        for arg in args {
            if let Some(value) = python_value(vm, arg) {
                inputs.push(value);
                marks.push(Vec::new());
                continue;
            }
            if !call.is_tensor(arg) {
                return Err(call.unsupported(
                    format!("a {} argument to a compiled function", call.type_name(arg)),
                    "Tailor's compiled calls take tensors, ints, floats and bools",
                ));
            }
            inputs.push(match call.tensor(arg)? {
                TensorRef::Value(value, dtype) => CallArg::Tensor(Tensor::clone(&value), dtype),
                TensorRef::Const(constant) => CallArg::Tensor(constant.observed(), constant.dtype),
                TensorRef::Node(_) => {
                    return Err(call.unsupported(
                        "calling a torch.compile'd function inside forward",
                        "Dynamo would inline it; call it at the script's level",
                    ));
                }
            });
            marks.push(
                arg.downcast_ref::<TensorBase>()
                    .map(|t| t.marks.borrow().clone())
                    .unwrap_or_default(),
            );
        }
        let mut host = borrow_host(call, &session, "calling a torch.compile'd function")?;
        let names = host.inputs(wrapper);
        if names.len() != inputs.len() {
            return Err(call.type_error(format!(
                "the compiled function takes {} argument(s) ({}) but {} were given",
                names.len(),
                names.join(", "),
                inputs.len()
            )));
        }
        let call_marks = call_marks(&names, &marks);
        let result = host.call(wrapper, inputs, call_marks, grad, call.span);
        drop(host);
        let result = result?;
        for piece in &result.log {
            session.write(piece.stream, &piece.text);
        }
        for (position, dims) in &result.stamps.args {
            if let Some(arg) = args.get(*position) {
                stamp(arg, dims);
            }
        }
        let mut dtypes = result.dtypes.into_iter();
        let mut stamps = result.stamps.outputs.into_iter();
        let mut outputs = result
            .outputs
            .into_iter()
            .map(|tensor| {
                let dtype = dtypes.next().unwrap_or_default();
                let output = call.wrap_tensor(TensorRef::Value(Rc::new(tensor), dtype))?;
                stamp(&output, &stamps.next().unwrap_or_default());
                Ok(output)
            })
            .collect::<Result<Vec<_>, Raise>>()?;
        Ok(match &result.returned {
            Returned::Tensor if outputs.len() == 1 => outputs.remove(0),
            Returned::Tensor => vm.ctx.new_tuple(outputs).into(),
            Returned::Tree(tree) => rebuilt(vm, tree, &outputs)?,
        })
    })
}

/// Adds `dims` to the dims a compiled call stamped dynamic on `tensor` (AOTAutograd's
/// `mark_dynamo_propagated_dynamic_indices`: a union with what is there).
fn stamp(tensor: &PyObjectRef, dims: &[usize]) {
    let Some(proxy) = tensor.downcast_ref::<TensorBase>() else {
        return;
    };
    let mut marks = proxy.marks.borrow_mut();
    for &dim in dims {
        let mark = DimMark::Propagated { dim };
        if !marks.contains(&mark) {
            marks.push(mark);
        }
    }
}

/// The Python value of a returned structure whose outputs are `outputs`.
fn rebuilt(vm: &VirtualMachine, item: &ReturnedItem, outputs: &[PyObjectRef]) -> PyResult {
    let all = |items: &[ReturnedItem]| -> PyResult<Vec<PyObjectRef>> {
        items
            .iter()
            .map(|item| rebuilt(vm, item, outputs))
            .collect()
    };
    Ok(match item {
        ReturnedItem::Output(i) => outputs.get(*i).cloned().unwrap_or_else(|| vm.ctx.none()),
        ReturnedItem::None => vm.ctx.none(),
        ReturnedItem::Tuple(items) => vm.ctx.new_tuple(all(items)?).into(),
        ReturnedItem::List(items) => vm.ctx.new_list(all(items)?).into(),
        ReturnedItem::Dict(items) => {
            let dict = vm.ctx.new_dict();
            for (key, item) in items {
                dict.set_item(key.as_str(), rebuilt(vm, item, outputs)?, vm)?;
            }
            dict.into()
        }
    })
}

/// A Python int or bool argument as its value (a bool first: it is an int subclass).
fn python_value(vm: &VirtualMachine, arg: &PyObjectRef) -> Option<CallArg> {
    if arg.class().is(vm.ctx.types.bool_type) {
        return Some(CallArg::Bool(arg.clone().try_into_value::<bool>(vm).ok()?));
    }
    if arg.class().is(vm.ctx.types.int_type) {
        return arg.clone().try_into_value::<i64>(vm).ok().map(CallArg::Int);
    }
    if arg.class().is(vm.ctx.types.float_type) {
        return arg
            .clone()
            .try_into_value::<f64>(vm)
            .ok()
            .map(CallArg::Float);
    }
    None
}

/// The marks of a call's inputs, by input name.
fn call_marks(names: &[String], marks: &[Vec<DimMark>]) -> CallMarks {
    let mut call_marks = CallMarks::default();
    for (name, marks) in names.iter().zip(marks) {
        for mark in marks {
            match *mark {
                DimMark::Dynamic { dim, min, max } => call_marks.dynamic.push(MarkDynamic {
                    input: name.clone(),
                    dim,
                    min,
                    max,
                }),
                DimMark::Static { dim } => call_marks.fixed.push((name.clone(), dim)),
                DimMark::Propagated { dim } => call_marks.propagated.push((name.clone(), dim)),
            }
        }
    }
    call_marks
}

/// Runs `body` on the script's host (`torch._logging.set_logs`, `torch._dynamo.reset`).
pub(super) fn with_host(
    vm: &VirtualMachine,
    what: &str,
    body: impl FnOnce(&mut dyn ScriptHost),
) -> PyResult<()> {
    Call::run_with(vm, |call| {
        let mut host = borrow_host(call, call.session_ref(), what)?;
        body(host.as_mut());
        Ok(())
    })
}

/// The script's host, borrowed for `what`: refused while a compiled call runs (its
/// capture holds the host) and in a model file (which has none).
fn borrow_host<'s>(
    call: &Call<'_>,
    session: &'s Session,
    what: &str,
) -> Result<RefMut<'s, Box<dyn ScriptHost>>, Raise> {
    let slot = session.host.try_borrow_mut().map_err(|_| {
        call.unsupported(
            format!("{what} while a compiled function runs"),
            "call it at the script's level",
        )
    })?;
    RefMut::filter_map(slot, Option::as_mut)
        .map_err(|_| call.unsupported(format!("{what} inside the model"), NOT_IN_A_SCRIPT))
}

/// `torch._dynamo.mark_dynamic` / `mark_static` on a tensor of a script.
pub(super) fn mark(
    vm: &VirtualMachine,
    tensor: &PyObjectRef,
    dynamic: bool,
    dim: &PyObjectRef,
    min: &PyObjectRef,
    max: &PyObjectRef,
) -> PyResult<()> {
    Call::run_with(vm, |call| {
        let what = if dynamic {
            "mark_dynamic"
        } else {
            "mark_static"
        };
        if call
            .session_ref()
            .host
            .try_borrow()
            .is_ok_and(|h| h.is_none())
        {
            return Err(call.unsupported(
                format!("torch._dynamo.{what} inside the model"),
                "give marks in the controls or with --mark-dynamic/--mark-static, or run the whole file with `tailor script`",
            ));
        }
        let shape = call.shape_of(tensor)?;
        let dim = call.int(dim, "dim")?;
        let dim = rules::normalize_dim(&call.op_ctx(what), dim, shape.len())?;
        let bound = |value: &PyObjectRef, name| -> Result<Option<i64>, Raise> {
            if vm.is_none(value) {
                Ok(None)
            } else {
                call.int(value, name).map(Some)
            }
        };
        let mark = if dynamic {
            DimMark::Dynamic {
                dim,
                min: bound(min, "min")?,
                max: bound(max, "max")?,
            }
        } else {
            DimMark::Static { dim }
        };
        if let Some(proxy) = tensor.downcast_ref::<TensorBase>() {
            let mut marks = proxy.marks.borrow_mut();
            // A stamp is another attribute than the user's marks: it stays beside them.
            marks.retain(|m| matches!(m, DimMark::Propagated { .. }) || mark_dim(m) != dim);
            marks.push(mark);
        }
        Ok(())
    })
}

fn mark_dim(mark: &DimMark) -> usize {
    match *mark {
        DimMark::Dynamic { dim, .. } | DimMark::Static { dim } | DimMark::Propagated { dim } => dim,
    }
}
