//! Making the proxies a `_tailor` call hands back to Python: tensors of the registered
//! `torch.Tensor` class, `SymInt`s, `SymBool`s and `SymFloat`s, and constants made outside
//! forward.
//!
//! In: the ops' Rust values. Out: Python objects of this VM. Invariant: a proxy records the
//! capture it belongs to, so a later capture refuses it.

use super::*;
use crate::frontend::errors::FrontendError;
use crate::frontend::objects::{Classes, SymBoolBase, SymIntBase, TensorBase};
use crate::frontend::ops::ConstTensor;
use crate::frontend::ops::TensorRef;
use crate::graph::{DType, Init, NodeId, Scalar, element_count, max_elements, memory_budget};
use crate::shape::{Asker, Origin};
use crate::symbolic::{Bindings, CmpOp, Expr, Rel};
use rustpython_vm::builtins::PyTypeRef;
use rustpython_vm::{PyObjectRef, PyPayload};
use std::cell::RefCell;
use std::rc::Rc;

impl<'vm> Call<'vm> {
    // ---- making proxies ------------------------------------------------------------------

    fn class_of(&self, pick: impl Fn(&Classes) -> &PyTypeRef) -> Result<PyTypeRef> {
        match &*self.session.classes.borrow() {
            Some(classes) => Ok(pick(classes).clone()),
            None => Err(self
                .vm
                .new_runtime_error("the torch package is not loaded")
                .into()),
        }
    }

    /// A tensor proxy of the registered `torch.Tensor` class.
    pub fn wrap_tensor(&self, tensor: TensorRef) -> Result<PyObjectRef> {
        let view = self.is_view_node(&tensor);
        self.proxy(tensor, view)
    }

    /// A new proxy of `tensor` that is never a view, whatever `tensor` is (a clone's).
    pub fn fresh_proxy(&self, tensor: TensorRef) -> Result<PyObjectRef> {
        self.proxy(tensor, false)
    }

    fn proxy(&self, tensor: TensorRef, view: bool) -> Result<PyObjectRef> {
        let capture = match tensor {
            TensorRef::Node(_) => self.capture_number().unwrap_or(0),
            TensorRef::Const(_) | TensorRef::Value(..) => 0,
        };
        let class = self.class_of(|c| &c.tensor)?;
        let base = if view {
            TensorBase::view(tensor, capture)
        } else {
            TensorBase::new(tensor, capture)
        };
        Ok(base.into_ref_with_type(self.vm, class)?.into())
    }

    /// Whether `tensor` is the result of a view op of the capture in progress (a reshape,
    /// an expand, a permute or a slice, which share their input's memory in PyTorch).
    fn is_view_node(&self, tensor: &TensorRef) -> bool {
        let TensorRef::Node(id) = tensor else {
            return false;
        };
        let capture = self.session.capture.borrow();
        capture
            .as_ref()
            .is_some_and(|capture| shares_memory(&capture.graph.node(*id).op))
    }

    /// The proxy of a symbolic float argument: a `SymFloat`, a 0-dimensional tensor of the
    /// capture whose comparisons with numbers are decided and guarded.
    pub(super) fn wrap_sym_float(&self, id: NodeId) -> Result<PyObjectRef> {
        let capture = self.capture_number().unwrap_or(0);
        let class = self.class_of(|c| &c.symfloat)?;
        Ok(TensorBase::new(TensorRef::Node(id), capture)
            .into_ref_with_type(self.vm, class)?
            .into())
    }

    /// The name and traced value of the symbolic float argument `f` is.
    fn float_argument(&self, f: &PyObjectRef) -> Result<(String, f64)> {
        let argument = match self.tensor(f)? {
            TensorRef::Node(id) => self
                .session
                .capture
                .borrow()
                .as_ref()
                .and_then(|capture| capture.floats.get(&id).cloned()),
            _ => None,
        };
        argument.ok_or_else(|| {
            self.unsupported(
                "a decision on a float computed from a symbolic float",
                "compare the float argument itself, or make it a constant (dynamic=False)",
            )
        })
    }

    /// `f op rhs` for a symbolic float argument, decided on its traced value; the relation
    /// that held becomes a guard of the entry.
    pub fn decide_float(&self, f: &PyObjectRef, op: CmpOp, rhs: f64) -> Result<bool> {
        let (name, value) = self.float_argument(f)?;
        let what = self.decision().map_or("condition", |d| d.what);
        let mut capture = self.session.capture.borrow_mut();
        let Some(capture) = capture.as_mut() else {
            return Err(self.unsupported("a symbolic float outside forward", ""));
        };
        let origin = Origin {
            what: Asker::FloatCondition {
                construct: what,
                name: name.clone(),
            },
            span: Some(self.span),
        };
        Ok(capture.env.decide_float(&name, value, op, rhs, origin))
    }

    /// `float(f)` of a symbolic float argument: its traced value, guarded to stay it.
    pub fn specialize_float(&self, f: &PyObjectRef) -> Result<f64> {
        let (_, value) = self.float_argument(f)?;
        self.decide_float(f, CmpOp::Eq, value)?;
        Ok(value)
    }

    /// A size: an int when constant, else a `SymInt`.
    pub fn wrap_size(&self, expr: Expr) -> Result<PyObjectRef> {
        if let Some(value) = expr.as_int() {
            return Ok(self.vm.ctx.new_int(value).into());
        }
        let capture = self.capture_number().unwrap_or(0);
        let class = self.class_of(|c| &c.symint)?;
        Ok(SymIntBase { expr, capture }
            .into_ref_with_type(self.vm, class)?
            .into())
    }

    /// A comparison of sizes: a bool when both sides are known numbers, else a `SymBool`.
    pub fn wrap_rel(&self, rel: Rel) -> Result<PyObjectRef> {
        let constant = rel.lhs.free_syms().is_empty() && rel.rhs.free_syms().is_empty();
        if let (true, Some(known)) = (constant, rel.eval(&Bindings::new())) {
            return Ok(self.vm.ctx.new_bool(known).into());
        }
        let capture = self.capture_number().unwrap_or(0);
        let class = self.class_of(|c| &c.symbool)?;
        Ok(SymBoolBase { rel, capture }
            .into_ref_with_type(self.vm, class)?
            .into())
    }

    /// A new constant tensor (parameter, buffer or global), refused where it is made when it
    /// is larger than the runtimes hold: its values are made only when a kernel needs them.
    pub fn new_constant(
        &self,
        shape: Vec<i64>,
        init: Init,
        is_param: bool,
        dtype: DType,
    ) -> Result<PyObjectRef> {
        let elements = element_count(&shape);
        let limit = max_elements();
        if elements > limit as u128 {
            return Err(FrontendError::TooLarge {
                span: self.span,
                shape,
                elements,
                limit,
                budget: memory_budget(),
            }
            .into());
        }
        let id = self.session.new_const_id();
        self.wrap_tensor(TensorRef::Const(Rc::new(ConstTensor {
            id,
            shape,
            init: RefCell::new(init),
            name: RefCell::new(String::new()),
            is_param,
            dtype,
            made_in: self.capture_number().unwrap_or(0),
        })))
    }

    /// Tensor arithmetic outside forward: scaling a constant's fill by a number
    /// (`torch.randn(...) * 0.02`) is a new constant (`None`: anything else, an op to run
    /// eagerly).
    pub fn outside_forward(
        &self,
        name: &str,
        lhs: &PyObjectRef,
        rhs: &PyObjectRef,
    ) -> Result<Option<PyObjectRef>> {
        // In a script every op on values runs eagerly, so the same tensor always shows the
        // same values; scaling a fill by a number is for a model file's parameters (which
        // may be too large to draw at module level).
        let script = self.session.interpreter.borrow().upgrade().is_some();
        let scaled = match (lhs.downcast_ref::<TensorBase>(), name, self.scalar(rhs)) {
            _ if script => None,
            (Some(proxy), "mul", Some(Scalar::Number(k))) => match &proxy.tensor() {
                TensorRef::Const(c) => match &*c.init.borrow() {
                    Init::Normal { std } => Some((c.clone(), Init::Normal { std: std * k })),
                    Init::Uniform { bound } => Some((
                        c.clone(),
                        Init::Uniform {
                            bound: bound * k.abs(),
                        },
                    )),
                    Init::Fill(v) => Some((c.clone(), Init::Fill(v * k))),
                    _ => None,
                },
                TensorRef::Node(_) | TensorRef::Value(..) => None,
            },
            _ => None,
        };
        match scaled {
            Some((c, init)) => self
                .new_constant(c.shape.clone(), init, c.is_param, c.dtype)
                .map(Some),
            None if self.is_eager() => Ok(None),
            None => Err(self.unsupported(
                "tensor arithmetic outside forward",
                "create parameters with torch.randn/zeros/ones, optionally scaled by a number",
            )),
        }
    }
}

/// Whether `op` makes a view that shares its input's memory in PyTorch (a reshape, an expand,
/// a permute or a slice), so an in-place write through it reaches the input.
pub(super) fn shares_memory(op: &Op) -> bool {
    matches!(
        op,
        Op::Reshape | Op::Expand | Op::Permute { .. } | Op::Slice { .. }
    )
}
