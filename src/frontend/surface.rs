//! What capture supports, as the page's reference panel and the CLI list it, and what to
//! write instead of a name it lacks.
//!
//! Input: the frozen `torch` package (`py/_tailor_surface.py` reads it) and the op table
//! (`table.rs`). Output: `Surface`, the names of each group (`torch.nn` modules, `torch` and
//! `torch.nn.functional` functions, `Tensor` methods and properties, operators) in name
//! order, and the op table's rows (signature, spellings, shape rule, lowering, reference);
//! and, for an unsupported name, its alternative or closest spelling.
//! Invariant: nothing here is kept by hand: the lists are what the package defines and the
//! rows what the table holds, so a layer added to `py/torch` or an op added to the table is
//! listed without another change.

use super::errors::FrontendError;
use super::program::Vm;
use super::program::package_error;
use super::table::{self, OpRow};
use serde::Serialize;
use std::collections::BTreeMap;

/// What capture supports.
#[derive(Clone, Debug, Serialize)]
pub struct Surface {
    /// Names by group, each list in name order (`"torch.nn"` → `["AdaptiveAvgPool2d", …]`).
    pub groups: BTreeMap<String, Vec<String>>,
    /// The op table, how each op the names reach compiles.
    pub ops: Vec<OpRow>,
}

/// What the `torch` package in `vm` defines.
pub fn surface_in(vm: Vm) -> Result<Surface, FrontendError> {
    vm.0.enter(|vm| {
        let groups = vm
            .import("_tailor_surface", 0)
            .and_then(|module| vm.call_method(&module, "surface", ()))
            .map_err(|exc| package_error(vm, &exc))?;
        let items = vm
            .call_method(&groups, "items", ())
            .and_then(|items| vm.extract_elements_with(&items, Ok))
            .map_err(|exc| package_error(vm, &exc))?;
        let mut groups = BTreeMap::new();
        for item in items {
            let pair: Vec<rustpython_vm::PyObjectRef> = vm
                .extract_elements_with(&item, Ok)
                .map_err(|exc| package_error(vm, &exc))?;
            let [group, names] = pair.as_slice() else {
                continue;
            };
            let group: String = group
                .clone()
                .try_into_value(vm)
                .map_err(|exc| package_error(vm, &exc))?;
            let names: Vec<String> = names
                .clone()
                .try_into_value(vm)
                .map_err(|exc| package_error(vm, &exc))?;
            groups.insert(group, names);
        }
        Ok(Surface {
            groups,
            ops: table::rows(),
        })
    })
}
