//! The entry module's state (parameters and persistent buffers) as `state_dict` names, and
//! setting its values before the first capture (`--weights`, the page's weights file).
//!
//! In: the constructed entry module. Out: one [`StateTensor`] per tensor of its state, with
//! every `state_dict` key it has (PyTorch's order: a module's parameters, its buffers, then
//! its children; a tied weight has more than one key) and its shape; `set_values` makes a
//! tensor's fill the given values (`Init::Data`). Invariant: every state tensor is a
//! constant of the session (`_tailor_frontend.state_entries` makes a computed buffer state
//! first), so values set before a capture are the values every backend uses.

use super::errors::FrontendError;
use super::objects::TensorBase;
use super::ops::{ConstTensor, TensorRef};
use super::program::{EntryPoint, Program, package_error};
use crate::graph::{Init, Span};
use rustpython_vm::PyObjectRef;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// One tensor of the entry module's state and the `state_dict` keys that name it.
#[derive(Debug)]
pub struct StateTensor {
    /// Its keys in `state_dict` order (`layers.0.weight`); more than one for a tied weight.
    pub names: Vec<String>,
    /// Its sizes.
    pub shape: Vec<i64>,
    tensor: Rc<ConstTensor>,
}

impl StateTensor {
    /// Makes `values` (row-major, as many as the shape holds) the tensor's values.
    pub fn set_values(&self, values: Arc<[f32]>) {
        *self.tensor.init.borrow_mut() = Init::Data(values);
    }
}

impl Program {
    /// The state of `entry`'s module, or `None` when the entry is a function.
    pub fn state(&self, entry: &EntryPoint) -> Result<Option<Vec<StateTensor>>, FrontendError> {
        let Some(module) = &entry.module else {
            return Ok(None);
        };
        self.interpreter.enter(|vm| {
            let package = |exc| package_error(vm, &exc);
            let helper = vm.import("_tailor_frontend", 0).map_err(package)?;
            let entries = vm
                .call_method(&helper, "state_entries", (module.clone(),))
                .map_err(package)?;
            let entries: Vec<(String, PyObjectRef)> = vm
                .extract_elements_with(&entries, |item| {
                    let pair: Vec<PyObjectRef> = vm.extract_elements_with(&item, Ok)?;
                    match pair.as_slice() {
                        [name, tensor] => Ok((name.clone().try_into_value(vm)?, tensor.clone())),
                        _ => Err(vm.new_type_error("a state entry is (name, tensor)")),
                    }
                })
                .map_err(package)?;
            let mut state: Vec<StateTensor> = Vec::new();
            let mut position_of: BTreeMap<usize, usize> = BTreeMap::new();
            for (name, tensor) in entries {
                let Some(TensorRef::Const(constant)) =
                    tensor.downcast_ref::<TensorBase>().map(|t| t.tensor())
                else {
                    return Err(FrontendError::Type {
                        span: Span { line: 1, col: 1 },
                        message: format!("state_dict entry '{name}' is not module state"),
                    });
                };
                match position_of.get(&constant.id) {
                    Some(&tied) => state[tied].names.push(name),
                    None => {
                        position_of.insert(constant.id, state.len());
                        state.push(StateTensor {
                            names: vec![name],
                            shape: constant.shape.clone(),
                            tensor: constant,
                        });
                    }
                }
            }
            Ok(Some(state))
        })
    }
}
