//! Reading a `_tailor` call's Python arguments as the ops' Rust values: tensors (proxies,
//! numbers as 0-dimensional constants), ints and sizes (plain or symbolic), scalars, dims
//! and index items.
//!
//! In: Python objects. Out: `TensorRef`, `Expr`, `Scalar`, ints, or a `TypeError` naming
//! what was expected. Invariant: a proxy of an earlier capture is never an operand.

use super::*;
use crate::frontend::errors::FrontendError;
use crate::frontend::objects::{SymIntBase, TensorBase};
use crate::frontend::ops::ConstTensor;
use crate::frontend::ops::{IndexItem, TensorRef};
use crate::graph::{DType, Init, Scalar, Shape};
use crate::symbolic::Expr;
use rustpython_vm::builtins::{PyFloat, PyInt, PySlice};
use rustpython_vm::{AsObject, PyObjectRef};
use std::cell::RefCell;
use std::rc::Rc;

impl<'vm> Call<'vm> {
    // ---- reading arguments ---------------------------------------------------------------

    /// Whether `value` is a tensor proxy.
    pub fn is_tensor(&self, value: &PyObjectRef) -> bool {
        value.downcast_ref::<TensorBase>().is_some()
    }

    /// A tensor operand; a constant without a name yet is named after the variable of the
    /// user's frame that holds it (as Dynamo names a global it lifts).
    pub fn tensor(&self, value: &PyObjectRef) -> Result<TensorRef> {
        let Some(proxy) = value.downcast_ref::<TensorBase>() else {
            return Err(
                self.type_error(format!("expected a Tensor, got {}", self.type_name(value)))
            );
        };
        match &proxy.tensor() {
            TensorRef::Node(_) if Some(proxy.capture()) != self.capture_number() => Err(self
                .unsupported(
                    "a tensor of an earlier capture",
                    "a graph tensor was kept after forward returned (on self or in a global)",
                )),
            TensorRef::Const(c) => {
                self.name_constant(value, c);
                Ok(proxy.tensor())
            }
            TensorRef::Value(value, _) => Ok(self
                .resume_input(value)?
                .map_or_else(|| proxy.tensor(), TensorRef::Node)),
            TensorRef::Node(_) => {
                let tensor = proxy.tensor();
                self.check_fresh(&tensor)?;
                Ok(tensor)
            }
        }
    }

    /// A tensor operand, or a Python number as a 0-dimensional constant (`torch.where(c,
    /// x, 0.0)`, `masked_fill(mask, float('-inf'))`).
    pub fn tensor_or_number(&self, value: &PyObjectRef) -> Result<TensorRef> {
        if self.is_tensor(value) {
            return self.tensor(value);
        }
        // Its dtype is the number's: `where(mask, ids, 0)` stays int64, as in PyTorch.
        let (number, dtype) = match (value.downcast_ref::<PyFloat>(), self.small_int(value)) {
            (Some(float), _) => (float.to_f64(), DType::Float32),
            (None, Some(int)) if value.class().is(self.vm.ctx.types.bool_type) => {
                (int? as f64, DType::Bool)
            }
            (None, Some(int)) => (int? as f64, DType::Int64),
            (None, None) => {
                return Err(self.type_error(format!(
                    "expected a Tensor or a number, got {}",
                    self.type_name(value)
                )));
            }
        };
        let id = self.session.new_const_id();
        Ok(TensorRef::Const(Rc::new(ConstTensor {
            id,
            shape: Vec::new(),
            init: RefCell::new(Init::Fill(number)),
            name: RefCell::new(String::new()),
            is_param: false,
            dtype,
            made_in: self.capture_number().unwrap_or(0),
        })))
    }

    /// A tensor operand or `None`.
    pub fn optional_tensor(&self, value: &PyObjectRef) -> Result<Option<TensorRef>> {
        if self.vm.is_none(value) {
            Ok(None)
        } else {
            self.tensor(value).map(Some)
        }
    }

    /// The shape of a tensor argument (reading it realises a traced call's argument).
    pub fn shape_of(&self, value: &PyObjectRef) -> Result<Shape> {
        let tensor = self.tensor(value)?;
        self.with_ops(|ops| {
            ops.realise(&tensor, self.span)?;
            Ok(ops.shape_of(&tensor))
        })
    }

    /// A Python int that fits in 64 bits (bools count), or `None`.
    pub(super) fn small_int(&self, value: &PyObjectRef) -> Option<std::result::Result<i64, Raise>> {
        let int = value.downcast_ref::<PyInt>()?;
        Some(int.try_to_primitive::<i64>(self.vm).map_err(|_| {
            self.type_error(format!(
                "integer {} does not fit in 64 bits",
                int.as_bigint()
            ))
        }))
    }

    /// A constant int argument (sizes of layers, dims, …).
    pub fn int(&self, value: &PyObjectRef, name: &str) -> Result<i64> {
        if let Some(int) = self.small_int(value) {
            return int;
        }
        if let Some(expr) = self.size_expr(value) {
            return Err(self.unsupported(
                format!("a symbolic size ({expr}) as '{name}'"),
                "this argument must be a constant",
            ));
        }
        Err(self.type_error(format!(
            "argument '{name}' must be an int, not {}",
            self.type_name(value)
        )))
    }

    /// A list of constant ints.
    pub fn ints(&self, values: &[PyObjectRef], name: &str) -> Result<Vec<i64>> {
        values.iter().map(|v| self.int(v, name)).collect()
    }

    /// An int, bool or `SymInt` of this capture as a size expression.
    pub fn size_expr(&self, value: &PyObjectRef) -> Option<Expr> {
        if let Some(int) = self.small_int(value) {
            return int.ok().map(Expr::int);
        }
        let sym = value.downcast_ref::<SymIntBase>()?;
        (Some(sym.capture) == self.capture_number()).then(|| sym.expr.clone())
    }

    /// A size list for a view: `-1` is the inferred size (`None`).
    pub fn sizes(&self, values: &[PyObjectRef]) -> Result<Vec<Option<Expr>>> {
        values
            .iter()
            .map(|value| match self.small_int(value) {
                Some(Ok(-1)) => Ok(None),
                Some(Ok(i)) if i < -1 => {
                    Err(self.type_error(format!("invalid shape dimension {i}")))
                }
                _ => self.size_expr(value).map(Some).ok_or_else(|| {
                    self.type_error(format!(
                        "a size must be an int, not {}",
                        self.type_name(value)
                    ))
                }),
            })
            .collect()
    }

    /// Static sizes for a tensor made outside forward (`torch.randn(64, 32)`).
    pub fn static_sizes(&self, values: &[PyObjectRef]) -> Result<Vec<i64>> {
        self.sizes(values)?
            .iter()
            .map(|size| match size.as_ref().and_then(Expr::as_int) {
                Some(v) if v >= 0 => Ok(v),
                Some(v) => Err(self.type_error(format!("negative dimension {v}"))),
                None => Err(self.unsupported(
                    "creating a tensor whose size is symbolic",
                    "derive it from an input with an op instead",
                )),
            })
            .collect()
    }

    /// A number or size combined with a tensor.
    pub fn scalar(&self, value: &PyObjectRef) -> Option<Scalar> {
        if let Some(float) = value.downcast_ref::<PyFloat>() {
            return Some(Scalar::Number(float.to_f64()));
        }
        match self.small_int(value) {
            Some(Ok(i)) => Some(Scalar::Number(i as f64)),
            Some(Err(_)) => None,
            None => self.size_expr(value).map(Scalar::Size),
        }
    }

    /// A dims argument: `None` (every dim) or a list of ints.
    pub fn dims(&self, value: &PyObjectRef) -> Result<Option<Vec<i64>>> {
        if self.vm.is_none(value) {
            return Ok(None);
        }
        let items: Vec<PyObjectRef> = self.vm.extract_elements_with(value, Ok)?;
        items
            .iter()
            .map(|d| match self.small_int(d) {
                Some(d) => d,
                None => {
                    Err(self.type_error(format!("dims must be ints, not {}", self.type_name(d))))
                }
            })
            .collect::<Result<Vec<i64>>>()
            .map(Some)
    }

    /// A failure as a front-end error, for the ops that take an operand still to check
    /// (a Python exception there comes from reading a value, a type error of the call).
    pub fn frontend(&self, raise: Raise) -> FrontendError {
        match raise {
            Raise::Frontend(err) => err,
            Raise::Python(exc) => {
                let message = exc
                    .as_object()
                    .str(self.vm)
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                crate::frontend::ops::type_error(self.span, message)
            }
        }
    }

    /// One item of a tensor subscript.
    pub fn index_item(&self, value: &PyObjectRef) -> std::result::Result<IndexItem, FrontendError> {
        let vm = self.vm;
        let frontend = |raise: Raise| self.frontend(raise);
        if vm.is_none(value) {
            return Ok(IndexItem::NewAxis);
        }
        if value.is(&vm.ctx.ellipsis) {
            return Ok(IndexItem::Ellipsis);
        }
        if let Some(slice) = value.downcast_ref::<PySlice>() {
            let step = match &slice.step {
                Some(step) if !vm.is_none(step) => match self.small_int(step) {
                    Some(Ok(s)) => s,
                    _ => return Err(frontend(self.unsupported("a symbolic slice step", ""))),
                },
                _ => 1,
            };
            let bound = |v: Option<&PyObjectRef>| match v {
                None => Ok(None),
                Some(v) if vm.is_none(v) => Ok(None),
                Some(v) => self
                    .size_expr(v)
                    .map(Some)
                    .ok_or_else(|| frontend(self.type_error("slice indices must be integers"))),
            };
            return Ok(IndexItem::Slice {
                lower: bound(slice.start.as_ref())?,
                upper: bound(Some(&slice.stop))?,
                step,
            });
        }
        self.size_expr(value).map(IndexItem::Select).ok_or_else(|| {
            frontend(self.unsupported(
                format!("indexing a tensor with a {}", self.type_name(value)),
                "advanced indexing is not in the subset",
            ))
        })
    }
}
