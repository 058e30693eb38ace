//! Module attributes a capture read: what Dynamo guards as `L['self'].training == True` or
//! `L['self'].scale == 2`, and their values at a later call.
//!
//! Input: reads reported by `nn.Module.__getattribute__` (`py/torch/nn/modules.py`) while a
//! graph is captured, and the entry's module instance. Output: each read attribute once, as
//! a path from `self` through `_modules` with the value the trace saw (`Capture::attributes`,
//! then `Segment::attributes`); the length of a global dict a traced library reads (einops'
//! backend registry); and, at a call, the current values of given paths.
//! Invariant: only what can steer a trace is kept, the bool, int and float attributes in a
//! module's own `__dict__` of the modules under `self`: those the user's code reads, and
//! `training` wherever it is read (the layers of `py/torch` read it as PyTorch's do; their
//! other constants, such as `eps` or `stride`, are fixed by construction and not guarded).

use super::call::Call;
use super::objects::Session;
use super::objects::TensorBase;
use super::ops::{ConstTensor, TensorRef};
use super::program::{EntryPoint, Program};
use super::source::FILE_NAME;
use crate::graph::{Holder, Init};
use crate::guard::{ArgValue, AttributePath};
use rustpython_vm::builtins::{PyCode, PyDict, PyFloat, PyInt};
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};
use std::cell::RefCell;
use std::rc::Rc;

/// The attribute every layer reads to choose between training and inference.
const TRAINING: &str = "training";

/// Records that the capture in progress read `module.name` and saw `value`, when the read
/// is one Tailor guards (see the module's invariant), or a plain tensor attribute, which the
/// capture lifts as Dynamo does (`L['self'].A`, `Capture::holders`). Never fails: a read
/// that cannot be placed under `self` is not kept.
pub(super) fn record(
    vm: &VirtualMachine,
    session: &Session,
    module: &PyObjectRef,
    name: &str,
    value: &PyObjectRef,
) {
    if session
        .capture
        .try_borrow()
        .map_or(true, |capture| capture.is_none())
    {
        return;
    }
    let in_own_dict = module
        .dict()
        .is_some_and(|dict| dict.get_item_opt(name, vm).ok().flatten().is_some());
    if in_own_dict && let Some(proxy) = value.downcast_ref::<TensorBase>() {
        hold_values(session, proxy);
    }
    let lifted = match value.downcast_ref::<TensorBase>().map(|t| t.tensor()) {
        Some(TensorRef::Const(c)) if !c.is_param => Some(c.id),
        Some(_) => return,
        None => None,
    };
    if lifted.is_none() && name != TRAINING && !read_by_user(vm) {
        return;
    }
    let seen = constant(vm, value);
    if !in_own_dict || (lifted.is_none() && seen.is_none()) {
        return;
    }
    // `try_borrow`: a break holds the run while it reads Python's locals.
    let root = session
        .forward
        .try_borrow()
        .ok()
        .and_then(|forward| forward.as_ref().and_then(|run| run.root.clone()));
    let Some(modules) = root.and_then(|root| path_to(vm, &root, module)) else {
        return;
    };
    let Ok(mut capture) = session.capture.try_borrow_mut() else {
        return;
    };
    let Some(capture) = capture.as_mut() else {
        return;
    };
    match (lifted, seen) {
        (Some(id), _) => {
            let holder = Holder::Attribute {
                modules,
                name: name.to_string(),
            };
            capture.holders.entry(id).or_insert(holder);
        }
        (None, Some(value)) => {
            let path = AttributePath::of_module(modules, name);
            if !capture.attributes.iter().any(|(seen, _)| *seen == path) {
                capture.attributes.push((path, value));
            }
        }
        (None, None) => {}
    }
}

/// Makes a tensor computed outside forward (by ops in `__init__`: SimpleViT's sin-cos
/// position embedding, Swin's relative-position indices) that a module keeps as a plain
/// attribute a constant holding its values, seen through every reference to it: Dynamo
/// lifts such an attribute as an input like any tensor attribute (`L['self'].pos_embedding`),
/// and a constant is what `record` lifts (its values taken at capture, as for every lifted
/// tensor: docs/python-values.md). A tensor computed at module level stays a value, refused
/// in a capture (`Ops::value_node`).
fn hold_values(session: &Session, proxy: &TensorBase) {
    let TensorRef::Value(values, dtype) = proxy.tensor() else {
        return;
    };
    let id = session.new_const_id();
    let constant = ConstTensor {
        id,
        shape: values.shape.iter().map(|&d| d as i64).collect(),
        init: RefCell::new(Init::Data(values.data.clone().into())),
        name: RefCell::new(String::new()),
        is_param: false,
        dtype,
        made_in: 0,
    };
    proxy.rebind(TensorRef::Const(Rc::new(constant)), 0);
}

/// The current values of `paths` on the entry's module (`None` where a path no longer
/// leads to a bool, int or float, or the entry is a function).
pub fn read(
    program: &Program,
    entry: &EntryPoint,
    paths: &[AttributePath],
) -> Vec<Option<ArgValue>> {
    program.interpreter.enter(|vm| {
        paths
            .iter()
            .map(|path| {
                if let Some(module) = &path.global_dict {
                    return global_dict_length(vm, module, &path.name).map(ArgValue::Int);
                }
                let mut module = entry.module.clone()?;
                for name in &path.modules {
                    module = own_item(vm, &module, "_modules")
                        .and_then(|modules| item(vm, &modules, name))?;
                }
                own_item(vm, &module, &path.name).and_then(|value| constant(vm, &value))
            })
            .collect()
    })
}

/// Records that the capture in progress read the dict `name`, a global of the module
/// `module` (dotted), as Dynamo guards a global dict a traced library reads: by its keys,
/// here its length (`len(G['__import_einops_dot__backends']._type2backend) == 1`). The
/// first read of a capture is kept: what the trace itself adds to the dict after it is a
/// side effect Dynamo applies after the graph, which the next call's check then sees.
pub(super) fn record_global_dict(vm: &VirtualMachine, session: &Session, module: &str, name: &str) {
    let Some(length) = global_dict_length(vm, module, name) else {
        return;
    };
    let Ok(mut capture) = session.capture.try_borrow_mut() else {
        return;
    };
    let Some(capture) = capture.as_mut() else {
        return;
    };
    let path = AttributePath::global_dict_length(module, name);
    if !capture.attributes.iter().any(|(seen, _)| *seen == path) {
        capture.attributes.push((path, ArgValue::Int(length)));
    }
}

/// The length of the dict `name` in the module `module` (from `sys.modules`), if both exist.
fn global_dict_length(vm: &VirtualMachine, module: &str, name: &str) -> Option<i64> {
    let modules = vm.sys_module.get_attr("modules", vm).ok()?;
    let module = item(vm, &modules, module)?;
    let dict = own_item(vm, &module, name)?;
    i64::try_from(dict.downcast_ref::<PyDict>()?.__len__()).ok()
}

/// Whether the frame reading the attribute (the caller of `__getattribute__`) is the
/// user's code.
fn read_by_user(vm: &VirtualMachine) -> bool {
    let reader = vm
        .current_frame()
        .map(PyObjectRef::from)
        .and_then(|frame| frame.get_attr("f_back", vm).ok())
        .filter(|back| !vm.is_none(back));
    reader
        .and_then(|frame| frame.get_attr("f_code", vm).ok())
        .and_then(|code| code.downcast::<PyCode>().ok())
        .is_some_and(|code| code.source_path().as_str() == FILE_NAME)
}

/// A bool, an int that fits in 64 bits, or a float, as an argument value.
fn constant(vm: &VirtualMachine, value: &PyObjectRef) -> Option<ArgValue> {
    if value.class().is(vm.ctx.types.bool_type) {
        return Some(ArgValue::Bool(value.clone().is_true(vm).ok()?));
    }
    if let Some(int) = value.downcast_ref_if_exact::<PyInt>(vm) {
        return int.try_to_primitive::<i64>(vm).ok().map(ArgValue::Int);
    }
    value
        .downcast_ref_if_exact::<PyFloat>(vm)
        .map(|float| ArgValue::Float(float.to_f64()))
}

/// `object.__dict__[name]`, without running any Python (`__getattribute__` included).
fn own_item(vm: &VirtualMachine, object: &PyObjectRef, name: &str) -> Option<PyObjectRef> {
    object.dict()?.get_item_opt(name, vm).ok().flatten()
}

fn item(vm: &VirtualMachine, dict: &PyObjectRef, name: &str) -> Option<PyObjectRef> {
    dict.downcast_ref::<PyDict>()?
        .get_item_opt(name, vm)
        .ok()
        .flatten()
}

/// The names of the submodules from `root` to `target` (empty for the root itself), in
/// registration order, depth first: the first path `named_modules` would give.
fn path_to(vm: &VirtualMachine, root: &PyObjectRef, target: &PyObjectRef) -> Option<Vec<String>> {
    if root.is(target) {
        return Some(Vec::new());
    }
    let modules = own_item(vm, root, "_modules")?;
    let modules = modules.downcast_ref::<PyDict>()?;
    for (name, child) in modules {
        let Ok(name) = name.try_into_value::<String>(vm) else {
            continue;
        };
        if vm.is_none(&child) {
            continue;
        }
        if let Some(mut rest) = path_to(vm, &child, target) {
            rest.insert(0, name);
            return Some(rest);
        }
    }
    None
}

/// `_tailor.tracing()`: whether a graph is being captured now.
pub(super) fn tracing(vm: &VirtualMachine) -> bool {
    Call::session(vm).is_ok_and(|session| session.capture.borrow().is_some())
}
