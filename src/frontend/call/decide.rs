//! Deciding sizes in a `_tailor` call: a Python truth value asked of a symbolic relation is
//! answered by the `ShapeEnv`, which records the guard, and an int needed as a constant is
//! specialised.
//!
//! In: `SymInt`/`SymBool` proxies and relations. Out: bools and ints, with guards recorded.
//! Invariant: every branch on a symbol goes through `ShapeEnv::evaluate`.

use super::*;
use crate::frontend::objects::SymBoolBase;
use crate::frontend::source::Decision;
use crate::graph::Span;
use crate::shape::{Asker, Origin};
use crate::symbolic::{CmpOp, Expr, Rel};
use rustpython_vm::PyObjectRef;

impl<'vm> Call<'vm> {
    // ---- deciding sizes ------------------------------------------------------------------

    /// The relation whose truth a `SymInt` (`!= 0`) or `SymBool` stands for.
    pub fn rel_of(&self, value: &PyObjectRef) -> Result<Rel> {
        let current = self.capture_number();
        if let Some(b) = value.downcast_ref::<SymBoolBase>() {
            if Some(b.capture) == current {
                return Ok(b.rel.clone());
            }
        }
        if let Some(expr) = self.size_expr(value) {
            return Ok(Rel::new(expr, CmpOp::Ne, Expr::int(0)));
        }
        Err(self.unsupported(
            "a size of an earlier capture",
            "a symbolic size was kept after forward returned",
        ))
    }

    /// The construct around the user's current instruction that asks for a truth value.
    pub fn decision(&self) -> Option<Decision> {
        let (line, col) = self.position?;
        self.session
            .source
            .borrow()
            .as_ref()?
            .decision_at(line, col)
    }

    /// Decides `rel` for the sizes seen now; the `ShapeEnv` records the guard.
    pub fn decide(&self, rel: &Rel) -> Result<bool> {
        let decision = self.decision().unwrap_or(Decision {
            what: "condition",
            span: self.span,
        });
        self.evaluate(rel, decision.what, decision.span)
    }

    fn evaluate(&self, rel: &Rel, what: &'static str, span: Span) -> Result<bool> {
        let mut capture = self.session.capture.borrow_mut();
        let Some(capture) = capture.as_mut() else {
            return Err(self.unsupported("a condition on a tensor size outside forward", ""));
        };
        capture.env.node_cursor = capture.graph.nodes.len();
        let origin = Origin {
            what: Asker::SizeCondition(what),
            span: Some(span),
        };
        Ok(capture.env.evaluate(rel, &origin))
    }

    /// A `SymInt` as the int it is now, guarded to stay that int.
    pub fn specialize(&self, value: &PyObjectRef) -> Result<i64> {
        let expr = self.size_expr(value).ok_or_else(|| {
            self.unsupported(
                "a size of an earlier capture",
                "a symbolic size was kept after forward returned",
            )
        })?;
        let hint = match &*self.session.capture.borrow() {
            Some(capture) => capture.env.hint(&expr),
            None => None,
        };
        let hint = hint.ok_or_else(|| self.unsupported(format!("int() of the size {expr}"), ""))?;
        self.evaluate(
            &Rel::new(expr, CmpOp::Eq, Expr::int(hint)),
            "int()",
            self.span,
        )?;
        Ok(hint)
    }
}
