//! Where a graph's tensor comes from (Dynamo's `Source`): an argument of the function, or
//! state it reads that the capture lifts into an input of its own.
//!
//! In: names from the user's code. Out: the source forms guards and failure reasons print
//! (`L['x']`, `G['W']`, `L['self']._modules['enc'].A`). Invariant: the forms are PyTorch
//! 2.15's, character for character, since learners compare them with its logs.

use serde::Serialize;

/// Where a tensor comes from: an argument of the function, or state the function reads that
/// Dynamo lifts into the graph as an input of its own (a module-level tensor `G['W']`, or a
/// module's plain tensor attribute `L['self'].A`; parameters and buffers are not lifted).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Holder {
    /// The argument of this name, `L['x']`; an item of one, `___stack0[1][0]` (a value a
    /// graph break hands back), is `L['___stack0'][1][0]`.
    Arg(String),
    /// The module-level name, `G['W']`.
    Global(String),
    /// A tensor attribute in a module's own `__dict__`: the submodule names from `self`,
    /// outermost first, then the attribute (`L['self']._modules['enc'].A`).
    Attribute {
        /// Submodule names from `self`.
        modules: Vec<String>,
        /// The attribute.
        name: String,
    },
}

impl Holder {
    /// PyTorch's source form: `L['x']`, `G['W']`, `L['self']._modules['enc'].A`.
    pub fn to_source(&self) -> String {
        match self {
            Holder::Arg(name) => match name.split_once('[') {
                Some((base, items)) => format!("L['{base}'][{items}"),
                None => format!("L['{name}']"),
            },
            Holder::Global(name) => format!("G['{name}']"),
            Holder::Attribute { .. } => format!("L['self']{}", &self.to_short()["self".len()..]),
        }
    }

    /// The failure-reason form: `x`, `G['W']`, `self._modules['enc'].A`.
    pub fn to_short(&self) -> String {
        match self {
            Holder::Arg(name) => name.clone(),
            Holder::Global(_) => self.to_source(),
            Holder::Attribute { modules, name } => {
                let mut text = "self".to_string();
                for module in modules {
                    text.push_str(&format!("._modules['{module}']"));
                }
                format!("{text}.{name}")
            }
        }
    }

    /// The argument's name, for an argument.
    pub fn arg(&self) -> Option<&str> {
        match self {
            Holder::Arg(name) => Some(name),
            _ => None,
        }
    }
}
