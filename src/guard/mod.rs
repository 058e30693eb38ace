//! Guards: the conditions under which a compiled entry may be reused, and their fast check.
//!
//! Input: the `ShapeEnv` after capture (symbols, replacements, recorded guards) and the
//! arguments as traced (tensors' symbolic shapes, ints as constants or symbols, bools).
//! Output: a `GuardSet` in PyTorch's order — one value guard per int or bool (`EQUALS_MATCH`,
//! `TYPE_MATCH` for a symbolic int, `TRUE_MATCH`/`FALSE_MATCH`), one tensor guard per tensor
//! (rank and static sizes) and one per tensor the trace lifted (`G['W']`, `L['self'].A`: read
//! by the function without being passed, fixed for the program's life), one per module
//! attribute the trace read (`L['self'].training == True`, checked on the values the cache
//! reads at the call), then shape guards: the leaf
//! (dimension-marking) guards, each input's equalities and inferred strides, the recorded
//! guards that the ranges do not already imply, and one range guard per symbol. Each is made by its own producer, and
//! every producer appends through one `push`, guard and compiled check together. Guards print
//! in source form (`2 <= L['x'].size()[0]`) and symbol form (`2 <= s0`) with provenance.
//! Invariant: `GuardSet::check` accepts exactly the calls on which every printed guard
//! holds, and it allocates nothing: relations are compiled over flat slots (each tensor's
//! dims, each int's value).
//!
//! Here: the `GuardSet` and its check. `args.rs`: a call's arguments (`CallShapes`);
//! `kinds.rs`: each kind of guard and why a check failed; `produce.rs`: producing them;
//! `order.rs`: Dynamo's check order; `provenance.rs`: why each guard exists.

mod args;
mod kinds;
mod order;
mod produce;
mod provenance;

use crate::graph::{DType, Holder, Shape};
use crate::symbolic::{CmpOp, CompiledRel, Expr, Sym};
pub use args::{ArgValue, CallShapes, python_float};
pub use kinds::*;
use order::AttributeNode;
pub use provenance::Provenance;
use std::fmt;

/// Every guard of one cache entry, with its compiled check.
#[derive(Clone, Debug)]
pub struct GuardSet {
    /// One per tensor argument, in parameter order.
    pub tensors: Vec<TensorGuard>,
    /// One per lifted tensor (a module-level tensor, a plain tensor attribute), in PyTorch's
    /// install order (source length, then text). Their sizes are fixed for the program's
    /// life, so these always hold.
    pub lifted: Vec<TensorGuard>,
    /// One per Python-value argument (int, bool), in parameter order.
    pub values: Vec<ValueGuard>,
    /// The children of PyTorch's guard tree's root in the order they are checked: the
    /// arguments (values, then tensors, at first) and the module's attributes, re-sorted
    /// by failures as calls fail them (`order.rs`).
    accessors: Vec<Accessor>,
    /// The module attributes the trace read, in reading order.
    pub attributes: Vec<AttributeGuard>,
    /// Where each attribute sits under `L['self']`, in check order.
    attribute_tree: AttributeNode,
    /// Shape guards in check order.
    pub shape: Vec<Guard>,
    /// Compiled form of `shape` (marking guards are checked separately).
    compiled: Vec<Check>,
}

/// Which guard of a `GuardSet` checks one argument.
#[derive(Clone, Copy, Debug)]
enum ArgGuard {
    Tensor(usize),
    Value(usize),
}

/// One child of the guard tree's root, with how many checks it failed.
#[derive(Clone, Copy, Debug)]
struct Accessor {
    guard: RootGuard,
    fails: u32,
}

/// What a root accessor checks: the argument at a parameter position, or `L['self']`.
#[derive(Clone, Copy, Debug)]
enum RootGuard {
    Arg(usize, ArgGuard),
    Module,
}

/// Where a check failed in the tree: the root accessor and, under `L['self']`, the path of
/// children; `None` for the shape guards after the tree.
type FailedAt = Option<(usize, Vec<usize>)>;

#[derive(Clone, Debug)]
enum Check {
    Rel(CompiledRel),
    Unmarked(usize),
    /// A decision about the float argument at this position: `value op rhs` holds.
    Float(usize, CmpOp, f64),
    /// The float argument at this position is not NaN.
    NotNan(usize),
    /// A stride guard: calls pass contiguous tensors, so it holds by construction.
    Contiguous,
    /// A leaf guard of a lifted tensor, which no call passes or marks: it holds.
    Lifted,
}

impl Check {
    /// Whether `call` (with `marked` its `mark_dynamic`-ed arguments) passes.
    fn passes(&self, call: &CallShapes, marked: &[bool]) -> bool {
        let float = |position: usize| match call.args.get(position) {
            Some((_, ArgValue::Float(value))) => Some(*value),
            _ => None,
        };
        match self {
            Check::Rel(rel) => rel.eval(&call.flat).unwrap_or(false),
            Check::Unmarked(input) => !marked.get(*input).copied().unwrap_or(false),
            Check::Float(position, op, rhs) => float(*position).is_some_and(|v| op.holds(v, *rhs)),
            Check::NotNan(position) => float(*position).is_some_and(|v| !v.is_nan()),
            Check::Contiguous | Check::Lifted => true,
        }
    }
}

/// A tensor the traced function read without receiving it, lifted into the graph as
/// Dynamo lifts it (`graph::Lifted`), as the guards see it.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftedArg {
    /// Where it is read from, `G['W']`.
    pub holder: Holder,
    /// Its shape as traced (symbols under `dynamic=True`).
    pub shape: Shape,
    /// Its sizes, fixed for the program's life.
    pub sizes: Vec<i64>,
    /// Its dtype.
    pub dtype: DType,
}

/// Where a guard check reads a symbol's value: a slot of the call's flat sizes, or a
/// lifted tensor's size, which no call changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueAt {
    Slot(usize),
    Fixed(i64),
}

impl ValueAt {
    /// The value as an expression over the call's slots (`Sym(i)` is slot `i`).
    fn expr(self) -> Expr {
        match self {
            ValueAt::Slot(slot) => Expr::sym(Sym(slot as u32)),
            ValueAt::Fixed(value) => Expr::int(value),
        }
    }
}

impl GuardSet {
    /// These guards with one per module attribute the trace read (`reads`, in reading
    /// order, with the values it saw).
    pub fn with_attributes(mut self, reads: &[(AttributePath, ArgValue)]) -> GuardSet {
        self.attributes = reads
            .iter()
            .filter_map(|(path, seen)| AttributeGuard::new(path.clone(), seen))
            .collect();
        let paths: Vec<&AttributePath> = self.attribute_paths().collect();
        self.attribute_tree = AttributeNode::tree(&paths);
        self.accessors
            .retain(|a| !matches!(a.guard, RootGuard::Module));
        if !self.attributes.is_empty() {
            // `L['self']` after the arguments, as PyTorch installs it.
            self.accessors.push(Accessor {
                guard: RootGuard::Module,
                fails: 0,
            });
        }
        self
    }

    /// How many arguments the entry was compiled with.
    fn arity(&self) -> usize {
        self.tensors.len() + self.values.len()
    }

    /// The attribute paths these guards read at a call.
    pub fn attribute_paths(&self) -> impl Iterator<Item = &AttributePath> {
        self.attributes.iter().map(|guard| &guard.path)
    }

    /// Checks a call. `marked[i]` says whether argument `i` carries a `mark_dynamic` now.
    /// The failure is the first in the current check order (PyTorch's verbose check, which
    /// gives a recompile's reason).
    pub fn check(&self, call: &CallShapes, marked: &[bool]) -> Result<(), Failure> {
        self.first_failure(call, marked)
            .map_err(|(failure, _)| failure)
    }

    /// [`GuardSet::check`] as the cache runs it on a call (PyTorch's fast check): a failure
    /// is counted where it happened and re-sorts the tree, so the next check (and the reason
    /// printed for this call) starts with what failed most.
    pub fn check_and_learn(&mut self, call: &CallShapes, marked: &[bool]) -> Result<(), Failure> {
        let (failure, at) = match self.first_failure(call, marked) {
            Ok(()) => return Ok(()),
            Err(failed) => failed,
        };
        if let Some((index, path)) = at {
            self.accessors[index].fails += 1;
            if matches!(self.accessors[index].guard, RootGuard::Module) {
                self.attribute_tree.count_failure(&path);
            }
            if index > 0 {
                order::sort_by_failures(&mut self.accessors, |a| a.fails);
            }
        }
        Err(failure)
    }

    /// The first failure in check order, and where in the tree it happened.
    fn first_failure(&self, call: &CallShapes, marked: &[bool]) -> Result<(), (Failure, FailedAt)> {
        if call.args.len() != self.arity() {
            let failure = Failure::Arity {
                expected: self.arity(),
                actual: call.args.len(),
            };
            return Err((failure, None));
        }
        for (index, accessor) in self.accessors.iter().enumerate() {
            let failed = match accessor.guard {
                RootGuard::Arg(position, guard) => self
                    .check_arg(call, position, guard)
                    .err()
                    .map(|failure| (failure, Vec::new())),
                RootGuard::Module => self
                    .attribute_tree
                    .first_failure(&|i| {
                        !self.attributes[i].passes(call.attribute(&self.attributes[i].path))
                    })
                    .map(|(guard, path)| (Failure::Attribute(guard), path)),
            };
            if let Some((failure, path)) = failed {
                return Err((failure, Some((index, path))));
            }
        }
        for (index, check) in self.compiled.iter().enumerate() {
            if !check.passes(call, marked) {
                return Err((Failure::Shape(index), None));
            }
        }
        Ok(())
    }

    /// The guard of the argument at `position`.
    fn check_arg(
        &self,
        call: &CallShapes,
        position: usize,
        guard: ArgGuard,
    ) -> Result<(), Failure> {
        let Some((name, value)) = call.args.get(position) else {
            return Ok(());
        };
        match guard {
            ArgGuard::Tensor(i) => {
                let tensor = &self.tensors[i];
                let ArgValue::Tensor(dims, dtype) = value else {
                    return Err(Failure::Type {
                        name: name.clone(),
                        expected: ArgValue::Tensor(Vec::new(), DType::Float32).type_name(),
                        actual: value.type_name(),
                    });
                };
                // PyTorch's `check_tensor` compares the dtype before the rank and sizes.
                if tensor.dtype != *dtype {
                    return Err(Failure::DType {
                        input: i,
                        actual: *dtype,
                    });
                }
                if tensor.sizes.len() != dims.len() {
                    return Err(Failure::Rank {
                        input: i,
                        expected: tensor.sizes.len(),
                        actual: dims.len(),
                    });
                }
                for (dim, (expected, &actual)) in tensor.sizes.iter().zip(dims).enumerate() {
                    if let Some(expected) = *expected {
                        if expected != actual {
                            return Err(Failure::Size {
                                input: i,
                                dim,
                                expected,
                                actual,
                            });
                        }
                    }
                }
                Ok(())
            }
            ArgGuard::Value(i) => match self.values[i].check(value) {
                Ok(()) => Ok(()),
                Err(ValueFailure::Value) => Err(Failure::Value(i)),
                Err(ValueFailure::Type) => Err(Failure::Type {
                    name: name.clone(),
                    expected: self.values[i].type_name(),
                    actual: value.type_name(),
                }),
            },
        }
    }

    /// Each attribute guard's verdict for a call (in `attributes`' order).
    pub fn attribute_verdicts(&self, call: &CallShapes) -> Vec<bool> {
        self.attributes
            .iter()
            .map(|guard| guard.passes(call.attribute(&guard.path)))
            .collect()
    }

    /// Every shape guard's verdict for a call, one per element of `shape` (check order), so a
    /// page can show which guards pass and which fail; `check` stops at the first failure.
    /// Meaningful only when every input has the rank the entry was compiled for (the tensor
    /// guards' rank check), since the relations read the call's flat sizes by position.
    pub fn shape_verdicts(&self, call: &CallShapes, marked: &[bool]) -> Vec<bool> {
        self.compiled
            .iter()
            .map(|check| check.passes(call, marked))
            .collect()
    }

    /// Each value guard's verdict for a call (in `values`' order): the argument of that name
    /// has the type and, when specialised, the value the entry was compiled for.
    pub fn value_verdicts(&self, call: &CallShapes) -> Vec<bool> {
        self.values
            .iter()
            .map(|guard| {
                call.args
                    .iter()
                    .find(|(name, _)| *name == guard.input)
                    .is_some_and(|(_, value)| guard.check(value).is_ok())
            })
            .collect()
    }

    /// Whether every argument of `call` has the kind (tensor or Python value) this entry
    /// was compiled for, so that its sizes and values sit in the slots the shape guards read.
    pub fn kinds_match(&self, call: &CallShapes) -> bool {
        call.args.len() == self.arity()
            && self.accessors.iter().all(|accessor| match accessor.guard {
                RootGuard::Arg(position, guard) => matches!(
                    (guard, &call.args[position].1),
                    (ArgGuard::Tensor(_), ArgValue::Tensor(..))
                        | (
                            ArgGuard::Value(_),
                            ArgValue::Int(_) | ArgValue::Bool(_) | ArgValue::Float(_)
                        )
                ),
                RootGuard::Module => true,
            })
    }

    /// PyTorch's failure reason for a failed check.
    pub fn reason(&self, failure: &Failure) -> String {
        match failure {
            Failure::DType { input, actual } => format!(
                "tensor '{}' dtype mismatch. expected {}, actual {}",
                self.tensors[*input].input,
                self.tensors[*input].dtype.scalar_type(),
                actual.scalar_type()
            ),
            Failure::Rank {
                input,
                expected,
                actual,
            } => {
                format!(
                    "tensor '{}' rank mismatch. expected {expected}, actual {actual}",
                    self.tensors[*input].input
                )
            }
            Failure::Size {
                input,
                dim,
                expected,
                actual,
            } => {
                format!(
                    "tensor '{}' size mismatch at index {dim}. expected {expected}, actual {actual}",
                    self.tensors[*input].input
                )
            }
            Failure::Type {
                name,
                expected,
                actual,
            } => format!("expected type of '{name}' to be {expected}, but found {actual}"),
            Failure::Arity { expected, actual } => {
                format!("expected {expected} arguments, got {actual}")
            }
            Failure::Value(index) => self.values[*index].reason(),
            Failure::Attribute(index) => self.attributes[*index].reason(),
            Failure::Shape(index) => self.shape[*index].reason.clone(),
        }
    }

    /// Every printed guard once (range guards with two bounds are checked twice).
    pub fn printed(&self) -> Vec<&Guard> {
        let mut out: Vec<&Guard> = Vec::new();
        for guard in &self.shape {
            if out
                .last()
                .is_none_or(|last| !std::ptr::eq(*last, guard) && **last != *guard)
            {
                out.push(guard);
            }
        }
        out
    }

    /// PyTorch's `NO_TENSOR_ALIASING` guard, present with two or more tensor inputs (the
    /// arguments, then the lifted tensors). Tailor's calls always pass distinct tensors, and
    /// a lifted tensor is the program's own, so it is printed but never fails.
    pub fn aliasing(&self) -> Option<String> {
        (self.tensors.len() + self.lifted.len() >= 2).then(|| {
            let names: Vec<&str> = self
                .tensors
                .iter()
                .chain(&self.lifted)
                .map(|t| t.source.as_str())
                .collect();
            format!(
                "NO_TENSOR_ALIASING: check_no_aliasing({})",
                names.join(", ")
            )
        })
    }

    /// All guards as PyTorch prints them: value and tensor matches, the aliasing guard,
    /// the lifted tensors' matches, module attributes, then shape guards.
    pub fn source_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.values.iter().map(ToString::to_string).collect();
        lines.extend(self.tensors.iter().map(ToString::to_string));
        lines.extend(self.aliasing());
        lines.extend(self.lifted.iter().map(ToString::to_string));
        lines.extend(self.attributes.iter().map(ToString::to_string));
        lines.extend(self.printed().iter().map(|g| g.source.clone()));
        lines
    }

    /// Where the attribute guards start in `source_lines()`.
    pub fn first_attribute_line(&self) -> usize {
        self.values.len()
            + self.tensors.len()
            + usize::from(self.aliasing().is_some())
            + self.lifted.len()
    }
}

impl fmt::Display for GuardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for value in &self.values {
            writeln!(f, "{value}")?;
        }
        for tensor in &self.tensors {
            writeln!(f, "{tensor}")?;
        }
        if let Some(aliasing) = self.aliasing() {
            writeln!(f, "{aliasing}")?;
        }
        for tensor in &self.lifted {
            writeln!(f, "{tensor}")?;
        }
        for attribute in &self.attributes {
            writeln!(f, "{attribute}")?;
        }
        for guard in self.printed() {
            writeln!(f, "{}", guard.source)?;
            writeln!(
                f,
                "    symbols: {}    from: {}",
                guard.symbolic, guard.provenance
            )?;
        }
        Ok(())
    }
}
