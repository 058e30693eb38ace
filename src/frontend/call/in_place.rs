//! In-place ops (`x.add_(y)`, `x.masked_fill_(m, v)`, `x[i] = v`), functionalized: the
//! Python package computes the op's out-of-place result, and the tensor proxy is rebound to
//! it, so every Python reference to the tensor sees the write and the graph holds the
//! out-of-place op, as PyTorch's functionalization shows it.
//!
//! In: the written tensor's proxy and the result. Out: the same proxy, now holding the
//! result; or an error where rebinding would not be what PyTorch computes. Invariant: a
//! tensor another write should have reached is never read (a write through a view makes the
//! tensors viewed stale, and reading one is an error naming the write), and a write is
//! refused where it would have to outlive the call (an input of `forward`, module state
//! inside `forward`); outside `forward` a constant (a parameter, a
//! buffer, a factory's tensor) takes the values in place, so the module state sharing it
//! sees them.

use super::*;
use crate::graph::Init;

impl Call<'_> {
    /// `dst`, written in place by the op `op` (`add_`, `__setitem__`), holds `src` from now
    /// on. The caller has cast `src` to `dst`'s dtype; its shape must be `dst`'s.
    pub fn rebind(&self, dst: &PyObjectRef, src: &PyObjectRef, op: &str) -> Result<PyObjectRef> {
        let Some(proxy) = dst.downcast_ref::<TensorBase>() else {
            return Err(self.type_error(format!(
                "Tensor.{op} needs a Tensor, got {}",
                self.type_name(dst)
            )));
        };
        let written = self.tensor(dst)?;
        let result = self.tensor(src)?;
        self.check_same_shape(&written, &result)?;
        if self.is_eager() {
            return self.write_eagerly(dst, proxy, written, result);
        }
        self.check_writable(proxy, &written, op)?;
        let capture = match result {
            TensorRef::Node(_) => self.capture_number().unwrap_or(0),
            TensorRef::Const(_) | TensorRef::Value(..) => 0,
        };
        proxy.rebind(result, capture);
        Ok(dst.clone())
    }

    /// PyTorch's check of an in-place result: it keeps the written tensor's shape (a
    /// broadcast that would grow it is an error).
    fn check_same_shape(&self, written: &TensorRef, result: &TensorRef) -> Result<()> {
        let (shape, broadcast) = self.with_ops(|ops| (ops.shape_of(written), ops.shape_of(result)));
        let (shape, broadcast): (Vec<Expr>, Vec<Expr>) = (
            shape.iter().map(|e| self.replace(e)).collect(),
            broadcast.iter().map(|e| self.replace(e)).collect(),
        );
        if shape == broadcast {
            return Ok(());
        }
        let show = |dims: &[Expr]| {
            let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
            format!("[{}]", dims.join(", "))
        };
        Err(self
            .vm
            .new_runtime_error(format!(
                "output with shape {} doesn't match the broadcast shape {}",
                show(&shape),
                show(&broadcast)
            ))
            .into())
    }

    /// Outside `forward`: a constant takes the result's values in place (every holder of
    /// the parameter, buffer or factory tensor sees them); a computed value is rebound.
    fn write_eagerly(
        &self,
        dst: &PyObjectRef,
        proxy: &TensorBase,
        written: TensorRef,
        result: TensorRef,
    ) -> Result<PyObjectRef> {
        match written {
            TensorRef::Const(constant) => {
                let values = match &result {
                    TensorRef::Value(values, _) => Tensor::clone(values),
                    TensorRef::Const(other) => other.observed(),
                    TensorRef::Node(_) => {
                        return Err(self
                            .type_error("an in-place write outside forward read a graph Tensor"));
                    }
                };
                *constant.init.borrow_mut() = Init::Data(values.data.into());
            }
            TensorRef::Value(..) | TensorRef::Node(_) => proxy.rebind(result, 0),
        }
        Ok(dst.clone())
    }

    /// A write through a view (a reshape, expand, permute or slice of another tensor)
    /// reaches the tensors viewed in PyTorch, not here: each becomes stale, and reading it
    /// later is an error naming the write (`check_fresh`). Most code rebinds the name to the
    /// view (`x = x.view(...)`) and never reads the old tensor again.
    fn mark_viewed_stale(&self, written: &TensorRef, op: &str) -> Result<()> {
        let TensorRef::Node(mut id) = *written else {
            return Ok(());
        };
        let mut capture = self.session.capture.borrow_mut();
        let Some(capture) = capture.as_mut() else {
            return Ok(());
        };
        loop {
            let node = capture.graph.node(id);
            let is_view = super::proxies::shares_memory(&node.op);
            let Some(&base) = node.inputs.first().filter(|_| is_view) else {
                return Ok(());
            };
            // Through a view of an input or a parameter, the write would outlive the call.
            let escapes = match &capture.graph.node(base).op {
                Op::Input { name } => Some(format!("the input '{name}'")),
                Op::Param { path, .. } => Some(format!("the parameter '{path}'")),
                _ => None,
            };
            if let Some(what) = escapes {
                return Err(self.unsupported(
                    format!("Tensor.{op} in forward"),
                    format!(
                        "it writes through a view into {what}, which PyTorch would change \
                         outside the call; compute a new tensor instead"
                    ),
                ));
            }
            capture.stale.entry(base).or_insert(self.span);
            id = base;
        }
    }

    /// Refuses to read a tensor an in-place op wrote through a view of (see
    /// `mark_viewed_stale`).
    pub(super) fn check_fresh(&self, tensor: &TensorRef) -> Result<()> {
        let TensorRef::Node(id) = tensor else {
            return Ok(());
        };
        let written = {
            let capture = self.session.capture.borrow();
            capture.as_ref().and_then(|c| c.stale.get(id).copied())
        };
        let Some(written) = written else {
            return Ok(());
        };
        Err(self.unsupported(
            "reading a tensor written in place through a view",
            format!(
                "the write at line {}, col {} went through a view of it, which PyTorch writes \
                 into this tensor too; write into the tensor itself, or compute a new one",
                written.line, written.col
            ),
        ))
    }

    /// Inside `forward`: refuses a write PyTorch would make visible outside the tensor
    /// itself, which a rebinding cannot.
    fn check_writable(&self, proxy: &TensorBase, written: &TensorRef, op: &str) -> Result<()> {
        let construct = format!("Tensor.{op} in forward");
        let method = op.trim_end_matches('_');
        if proxy.is_view() {
            self.mark_viewed_stale(written, op)?;
        }
        match written {
            // A factory's tensor made in this forward is the call's own.
            TensorRef::Const(constant)
                if !constant.is_param && Some(constant.made_in) == self.capture_number() =>
            {
                Ok(())
            }
            TensorRef::Const(constant) => Err(self.unsupported(
                construct,
                format!(
                    "it writes into '{}', module state or a global, which PyTorch would change \
                     for every later call; compute a new tensor instead (y = x.{method}(...))",
                    constant.label(),
                ),
            )),
            TensorRef::Value(..) => Err(self.unsupported(
                construct,
                "it writes into a tensor made outside forward; compute a new tensor instead",
            )),
            TensorRef::Node(id) => {
                let capture = self.session.capture.borrow();
                match capture.as_ref().map(|capture| &capture.graph.node(*id).op) {
                    Some(Op::Input { name }) => Err(self.unsupported(
                        construct,
                        format!(
                            "it writes into the input '{name}', which PyTorch copies back into \
                             the caller's tensor; compute a new tensor instead \
                             ({name} = {name}.{method}(...))"
                        ),
                    )),
                    _ => Ok(()),
                }
            }
        }
    }
}
