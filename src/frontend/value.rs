//! Values of the capture interpreter: Python objects as far as the PyTorch subset needs.
//!
//! Tensors inside `forward` are proxies (`Value::Tensor`, a graph node); tensors made at
//! module level or in `__init__` are constants with a static shape and a seeded fill.
//! Invariant: a `Value` never holds a concrete size where a symbolic one was seen:
//! `Value::Size` carries an `Expr`, and only `Value::Int` is a known integer.

use super::ops::TensorRef;
use crate::graph::{Init, NodeId, PoolKind, UnaryOp};
use crate::symbolic::{Expr, Rel};
use rustpython_parser::ast;
use std::cell::RefCell;
use std::rc::Rc;

/// A tensor created outside `forward`: a parameter, buffer or module-level constant.
#[derive(Debug)]
pub struct ConstTensor {
    /// Unique id, used to give each constant one graph node.
    pub id: usize,
    /// Static shape.
    pub shape: Vec<i64>,
    /// How its values are made.
    pub init: Init,
    /// Name or dotted path, set when the module tree is named (parameters) or at assignment
    /// (globals).
    pub name: RefCell<String>,
    /// True for module parameters and buffers, false for module-level globals.
    pub is_param: bool,
}

/// Which layer a module object is.
#[derive(Clone, Debug)]
pub enum ModuleKind {
    /// A subclass of `nn.Module` written in the source.
    User(Rc<ast::StmtClassDef>),
    /// `nn.Linear`.
    Linear {
        /// `in_features`.
        in_features: i64,
        /// `out_features`.
        out_features: i64,
    },
    /// `nn.Conv1d` / `nn.Conv2d`.
    Conv {
        /// Input channels.
        in_channels: i64,
        /// Output channels.
        out_channels: i64,
        /// Kernel size per spatial dim.
        kernel: Vec<i64>,
        /// Stride per spatial dim.
        stride: Vec<i64>,
        /// Padding per spatial dim.
        padding: Vec<i64>,
        /// Dilation per spatial dim.
        dilation: Vec<i64>,
    },
    /// `nn.BatchNorm1d/2d` (eval mode).
    BatchNorm {
        /// Channels.
        features: i64,
        /// Variance epsilon.
        eps: f64,
    },
    /// `nn.LayerNorm`.
    LayerNorm {
        /// `normalized_shape`.
        shape: Vec<i64>,
        /// Variance epsilon.
        eps: f64,
    },
    /// `nn.MaxPool2d` / `nn.AvgPool2d`.
    Pool {
        /// Max or average.
        kind: PoolKind,
        /// Window.
        kernel: Vec<i64>,
        /// Step.
        stride: Vec<i64>,
        /// Padding.
        padding: Vec<i64>,
    },
    /// `nn.ReLU()` and friends.
    Activation(UnaryOp),
    /// `nn.Softmax(dim)`.
    Softmax(i64),
    /// `nn.Dropout` (identity in eval) and `nn.Identity`.
    Identity,
    /// `nn.Flatten(start_dim, end_dim)`.
    Flatten(i64, i64),
    /// `nn.Embedding`.
    Embedding,
    /// `nn.Sequential`: children run in order.
    Sequential,
    /// `nn.ModuleList`: children indexable and iterable.
    ModuleList,
}

/// An `nn.Module` instance: its kind and attributes in assignment order.
#[derive(Debug)]
pub struct ModuleObj {
    /// Class name as PyTorch prints it (`Linear`, `SimpleNet`).
    pub class_name: String,
    /// What it is.
    pub kind: ModuleKind,
    /// Attributes in assignment order: sub-modules, parameters, plain values.
    pub attrs: Vec<(String, Value)>,
}

impl ModuleObj {
    /// The attribute named `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Sets (or replaces) an attribute, keeping the original position.
    pub fn set(&mut self, name: &str, value: Value) {
        match self.attrs.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((name.to_string(), value)),
        }
    }

    /// Sub-modules in order (for Sequential and ModuleList).
    pub fn children(&self) -> Vec<Value> {
        self.attrs
            .iter()
            .filter(|(_, v)| matches!(v, Value::Module(_)))
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// A shared, mutable module.
pub type ModuleRef = Rc<RefCell<ModuleObj>>;

/// A Python value inside the interpreter.
#[derive(Clone, Debug)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// A known integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// `...`.
    Ellipsis,
    /// A symbolic integer (PyTorch's `SymInt`), e.g. `x.shape[0]` for a dynamic dim.
    Size(Expr),
    /// A symbolic comparison, decided (and guarded) only when used as a condition.
    SymBool(Rel),
    /// A tuple (also `torch.Size`).
    Tuple(Rc<Vec<Value>>),
    /// A list.
    List(Rc<RefCell<Vec<Value>>>),
    /// A tensor inside `forward`: a graph node.
    Tensor(NodeId),
    /// A tensor made outside `forward`.
    Const(Rc<ConstTensor>),
    /// An `nn.Module` instance.
    Module(ModuleRef),
    /// A user function.
    Function(Rc<ast::StmtFunctionDef>),
    /// A user method bound to its module.
    Method(ModuleRef, Rc<ast::StmtFunctionDef>),
    /// A user class.
    Class(Rc<ast::StmtClassDef>),
    /// A library object named by its dotted path: `torch`, `torch.nn.Linear`, `len`.
    Builtin(String),
    /// A library method bound to a receiver: `x.view`, `self.layers.append`.
    BoundBuiltin(Box<Value>, String),
    /// `range(start, stop, step)`.
    Range(i64, i64, i64),
    /// A Python slice `a:b:c` (only inside subscripts).
    Slice(Box<Value>, Box<Value>, Box<Value>),
}

impl Value {
    /// The Python type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Ellipsis => "ellipsis",
            Value::Size(_) => "SymInt",
            Value::SymBool(_) => "SymBool",
            Value::Tuple(_) => "tuple",
            Value::List(_) => "list",
            Value::Tensor(_) | Value::Const(_) => "Tensor",
            Value::Module(_) => "Module",
            Value::Function(_) | Value::Method(..) => "function",
            Value::Class(_) => "type",
            Value::Builtin(_) | Value::BoundBuiltin(..) => "builtin",
            Value::Range(..) => "range",
            Value::Slice(..) => "slice",
        }
    }

    /// An integer value as a size expression (`Int` or `Size`).
    pub fn as_expr(&self) -> Option<Expr> {
        match self {
            Value::Int(v) => Some(Expr::int(*v)),
            Value::Bool(b) => Some(Expr::int(i64::from(*b))),
            Value::Size(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// Wraps an expression, folding constants to `Int`.
    pub fn from_expr(expr: Expr) -> Value {
        match expr.as_int() {
            Some(v) => Value::Int(v),
            None => Value::Size(expr),
        }
    }

    /// A tensor operand as a value.
    pub fn from_tensor(tensor: TensorRef) -> Value {
        match tensor {
            TensorRef::Node(id) => Value::Tensor(id),
            TensorRef::Const(c) => Value::Const(c),
        }
    }

    /// A tuple of values.
    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Rc::new(items))
    }

    /// The items of a tuple or list.
    pub fn items(&self) -> Option<Vec<Value>> {
        match self {
            Value::Tuple(items) => Some(items.as_ref().clone()),
            Value::List(items) => Some(items.borrow().clone()),
            _ => None,
        }
    }
}
