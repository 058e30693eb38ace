//! Producing an entry's guards (PyTorch's `produce_guards`): one producer per kind, each
//! appending through one `push`, the guard and its compiled check together.
//!
//! In: the `ShapeEnv` after capture and the arguments as traced. Out: the tensor, lifted,
//! value and shape guards of a `GuardSet`, in PyTorch's order. Invariant: a recorded guard
//! that the value ranges already imply is not emitted, as PyTorch's solver drops it.

use super::*;
use crate::graph::{DType, Holder, Shape, TracedArg};
use crate::shape::{DimSource, ShapeEnv, ShapeEvent, layout};
use crate::symbolic::{CmpOp, CompiledRel, Expr, Rel, Sym, ValueRange};
use std::collections::BTreeMap;

/// `TENSOR_MATCH` of the tensor at `holder` traced with `shape`: its rank and static sizes.
fn tensor_guard(holder: &Holder, shape: &Shape, dtype: DType) -> TensorGuard {
    TensorGuard {
        input: holder.to_short(),
        source: holder.to_source(),
        dtype,
        sizes: shape.iter().map(Expr::as_int).collect(),
    }
}

/// What a symbol's value is read from: its first plain occurrence among the arguments'
/// slots (a tensor's dims, an int itself), then among the lifted tensors' dims.
fn symbol_sources(
    args: &[(String, Shape)],
    kinds: &[ArgKind],
    lifted: &[LiftedArg],
) -> BTreeMap<Sym, (DimSource, ValueAt)> {
    let mut sources = BTreeMap::new();
    let mut slot = 0;
    for ((name, slots), kind) in args.iter().zip(kinds) {
        for (dim, expr) in slots.iter().enumerate() {
            if let Some(sym) = expr.as_sym() {
                sources.entry(sym).or_insert((
                    DimSource {
                        holder: Holder::Arg(name.clone()),
                        dim: (*kind == ArgKind::Tensor).then_some(dim),
                    },
                    ValueAt::Slot(slot),
                ));
            }
            slot += 1;
        }
    }
    for tensor in lifted {
        for (dim, (expr, &size)) in tensor.shape.iter().zip(&tensor.sizes).enumerate() {
            if let Some(sym) = expr.as_sym() {
                sources.entry(sym).or_insert((
                    DimSource {
                        holder: tensor.holder.clone(),
                        dim: Some(dim),
                    },
                    ValueAt::Fixed(size),
                ));
            }
        }
    }
    sources
}

/// Rewrites `expr` over the call's flat slots, so that `CompiledExpr` reads the call's
/// sizes directly: each symbol read from a slot becomes the symbol whose index is that
/// slot, each symbol of a lifted tensor's size its value.
fn to_slots(expr: &Expr, sources: &BTreeMap<Sym, (DimSource, ValueAt)>) -> Expr {
    let slot_of = |at: &ValueAt| match at {
        ValueAt::Slot(slot) => Some(*slot),
        ValueAt::Fixed(_) => None,
    };
    // Two steps (through indices past every slot) so that renaming s0 -> s3 never collides
    // with an s3 still waiting to be renamed.
    let offset = sources
        .values()
        .filter_map(|(_, at)| slot_of(at))
        .max()
        .unwrap_or(0)
        + sources.keys().map(|s| s.index()).max().unwrap_or(0)
        + 1;
    let mut renamed = expr.clone();
    for (sym, (_, at)) in sources {
        let to = match at {
            ValueAt::Slot(slot) => Expr::sym(Sym((offset + slot) as u32)),
            ValueAt::Fixed(value) => Expr::int(*value),
        };
        renamed = renamed.substitute(*sym, &to);
    }
    for slot in sources.values().filter_map(|(_, at)| slot_of(at)) {
        renamed = renamed.substitute(Sym((offset + slot) as u32), &Expr::sym(Sym(slot as u32)));
    }
    renamed
}

/// The printed shape guards and their compiled checks, built up together.
#[derive(Default)]
struct ShapeGuards {
    shape: Vec<Guard>,
    compiled: Vec<Check>,
}

impl ShapeGuards {
    /// Appends a guard with the check that decides it: the one way in, so `compiled[i]` is
    /// always the check of `shape[i]` (`Failure::Shape(i)` names a guard by that index).
    fn push(&mut self, guard: Guard, check: Check) {
        self.shape.push(guard);
        self.compiled.push(check);
    }
}

/// What the guard producers read: the environment after capture, the inputs' shapes under
/// its final replacements, and where each symbol's value is read from.
struct Producer<'a> {
    env: &'a ShapeEnv,
    /// Every argument with the expressions of its slots (a tensor's dims, an int's value,
    /// a bool's 0 or 1), under the final replacements.
    inputs: Vec<(String, Shape)>,
    kinds: Vec<ArgKind>,
    /// Per argument, a tensor's dtype (float32 for the others).
    dtypes: Vec<DType>,
    /// Per argument, whether it was traced as a symbol (a dynamic int), even if tracing
    /// later fixed its value.
    traced_symbolic: Vec<bool>,
    /// Per argument, a constant float's bits (its `EQUALS_MATCH`).
    float_bits: Vec<Option<u64>>,
    /// The lifted tensors, their shapes under the final replacements.
    lifted: Vec<LiftedArg>,
    sources: BTreeMap<Sym, (DimSource, ValueAt)>,
}

/// What kind of value an argument was traced with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgKind {
    Tensor,
    Int,
    Bool,
    Float,
}

impl<'a> Producer<'a> {
    fn new(env: &'a ShapeEnv, args: &[(String, TracedArg)], lifted: &[LiftedArg]) -> Producer<'a> {
        let mut inputs = Vec::with_capacity(args.len());
        let mut kinds = Vec::with_capacity(args.len());
        let mut dtypes = Vec::with_capacity(args.len());
        let mut traced_symbolic = Vec::with_capacity(args.len());
        let mut float_bits = Vec::with_capacity(args.len());
        for (name, arg) in args {
            traced_symbolic.push(match arg {
                TracedArg::Int(e) => e.as_int().is_none(),
                TracedArg::Float { symbolic, .. } => *symbolic,
                _ => false,
            });
            let (kind, slots) = match arg {
                TracedArg::Tensor(shape, _) => (ArgKind::Tensor, shape.clone()),
                TracedArg::Int(expr) => (ArgKind::Int, vec![expr.clone()]),
                TracedArg::Bool(b) => (ArgKind::Bool, vec![Expr::int(i64::from(*b))]),
                // A float has no size slot: its guards read it from the argument.
                TracedArg::Float { .. } => (ArgKind::Float, Vec::new()),
            };
            float_bits.push(match arg {
                TracedArg::Float {
                    value,
                    symbolic: false,
                } => Some(value.to_bits()),
                _ => None,
            });
            inputs.push((name.clone(), slots.iter().map(|d| env.replace(d)).collect()));
            kinds.push(kind);
            dtypes.push(match arg {
                TracedArg::Tensor(_, dtype) => *dtype,
                _ => DType::Float32,
            });
        }
        let lifted: Vec<LiftedArg> = lifted
            .iter()
            .map(|tensor| LiftedArg {
                shape: tensor.shape.iter().map(|d| env.replace(d)).collect(),
                ..tensor.clone()
            })
            .collect();
        let sources = symbol_sources(&inputs, &kinds, &lifted);
        Producer {
            env,
            inputs,
            kinds,
            dtypes,
            traced_symbolic,
            float_bits,
            lifted,
            sources,
        }
    }

    /// The tensor arguments' positions.
    fn tensor_positions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.inputs.len()).filter(|&i| self.kinds[i] == ArgKind::Tensor)
    }

    /// A symbol in PyTorch's source form, `L['x'].size()[0]`.
    fn source_name(&self, sym: Sym) -> String {
        self.sources
            .get(&sym)
            .map_or(sym.to_string(), |(src, _)| src.to_source())
    }

    /// A symbol in failure-reason form, `x.size()[0]`.
    fn short_name(&self, sym: Sym) -> String {
        self.sources
            .get(&sym)
            .map_or(sym.to_string(), |(src, _)| src.to_short())
    }

    /// `TENSOR_MATCH` per input: its rank and static sizes.
    fn tensor_guards(&self) -> Vec<TensorGuard> {
        self.tensor_positions()
            .map(|i| {
                let holder = Holder::Arg(self.inputs[i].0.clone());
                tensor_guard(&holder, &self.inputs[i].1, self.dtypes[i])
            })
            .collect()
    }

    /// `TENSOR_MATCH` per lifted tensor, in PyTorch's install order (source length, then
    /// text, as `order.rs` sorts the guard tree's children).
    fn lifted_guards(&self) -> Vec<TensorGuard> {
        self.lifted_installed()
            .into_iter()
            .map(|tensor| tensor_guard(&tensor.holder, &tensor.shape, tensor.dtype))
            .collect()
    }

    /// The lifted tensors in the order Dynamo installs their guards (`order::install_key`);
    /// `lifted` itself keeps the order the trace met them, which their shape guards follow.
    fn lifted_installed(&self) -> Vec<&LiftedArg> {
        let mut installed: Vec<(String, &LiftedArg)> = self
            .lifted
            .iter()
            .map(|tensor| (tensor.holder.to_source(), tensor))
            .collect();
        installed.sort_by(|(a, _), (b, _)| order::install_key(a).cmp(&order::install_key(b)));
        installed.into_iter().map(|(_, tensor)| tensor).collect()
    }

    /// `EQUALS_MATCH` per int that stayed a constant (`TYPE_MATCH` for a symbolic one),
    /// `TRUE_MATCH`/`FALSE_MATCH` per bool.
    fn value_guards(&self) -> Vec<ValueGuard> {
        self.inputs
            .iter()
            .zip(&self.kinds)
            .zip(&self.traced_symbolic)
            .zip(&self.float_bits)
            .filter_map(|((((name, slots), kind), symbolic), bits)| {
                let expected = match kind {
                    ArgKind::Tensor => return None,
                    // A symbol that tracing fixed keeps its type check; the value is then a
                    // shape guard (`input_equalities`), as PyTorch keeps it in the lambda.
                    ArgKind::Int if *symbolic => ValueMatch::Int(None),
                    ArgKind::Int => ValueMatch::Int(slots[0].as_int()),
                    ArgKind::Bool => ValueMatch::Bool(slots[0].as_int() == Some(1)),
                    ArgKind::Float => ValueMatch::Float(*bits),
                };
                Some(ValueGuard {
                    input: name.clone(),
                    expected,
                })
            })
            .collect()
    }

    /// Every argument in the order PyTorch's guard tree checks them: the value guards
    /// first (Dynamo installs them as tracing meets the values; its tensor guards come after,
    /// together), each group in parameter order.
    fn check_order(&self) -> Vec<(usize, ArgGuard)> {
        let (mut tensors, mut values) = (0, 0);
        let mut order: Vec<(usize, ArgGuard)> = self
            .kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let guard = if *kind == ArgKind::Tensor {
                    tensors += 1;
                    ArgGuard::Tensor(tensors - 1)
                } else {
                    values += 1;
                    ArgGuard::Value(values - 1)
                };
                (i, guard)
            })
            .collect();
        // As Dynamo installs them (`Guard.sort_key`): by the length of the source's name,
        // then the name (`L['n']` before `L['x']` before `L['start_pos']` and
        // `L['___stack0']`), whatever the argument's kind.
        order.sort_by_key(|(position, _)| {
            let name = &self.inputs[*position].0;
            (name.len(), name.clone())
        });
        order
    }

    /// `DIMENSION_DYNAMIC_MARKING_GUARD` for each input that was not marked dynamic.
    fn leaf_guards(&self, marked: &[bool], out: &mut ShapeGuards) {
        for (i, was_marked) in marked.iter().enumerate() {
            if *was_marked || self.kinds.get(i) != Some(&ArgKind::Tensor) {
                continue;
            }
            let input = &self.inputs[i].0;
            let guard = Guard {
                kind: GuardKind::DimensionMarking,
                source: format!(
                    "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr(L['{input}'], '_dynamo_dynamic_indices') == False"
                ),
                reason: format!("hasattr({input}, '_dynamo_dynamic_indices') == False"),
                symbolic: SymbolicForm::Unmarked(input.clone()),
                provenance: Provenance::Unmarked,
            };
            out.push(guard, Check::Unmarked(i));
        }
        for LiftedArg { holder, .. } in self.lifted_installed() {
            let (source, short) = (holder.to_source(), holder.to_short());
            let guard = Guard {
                kind: GuardKind::DimensionMarking,
                source: format!(
                    "DIMENSION_DYNAMIC_MARKING_GUARD: hasattr({source}, '_dynamo_dynamic_indices') == False"
                ),
                reason: format!("hasattr({short}, '_dynamo_dynamic_indices') == False"),
                symbolic: SymbolicForm::Unmarked(short),
                provenance: Provenance::Unmarked,
            };
            out.push(guard, Check::Lifted);
        }
    }

    /// One equality per dynamic dim of input `input` that is not its symbol's own source:
    /// duck sizing gave it an earlier dim's symbol, or tracing solved it to an expression.
    fn input_equalities(&self, input: usize, out: &mut ShapeGuards) {
        let (name, dims) = &self.inputs[input];
        let first_slot: usize = self.inputs[..input].iter().map(|(_, d)| d.len()).sum();
        let tensor = self.kinds[input] == ArgKind::Tensor;
        let value_at = |dim: usize| ValueAt::Slot(first_slot + dim);
        let holder = Holder::Arg(name.clone());
        self.equalities(
            &holder,
            dims,
            tensor,
            self.traced_symbolic[input],
            value_at,
            out,
        );
    }

    /// `input_equalities` of a lifted tensor: its symbols duck-sized to earlier ones.
    fn lifted_equalities(&self, tensor: &LiftedArg, out: &mut ShapeGuards) {
        let value_at = |dim: usize| ValueAt::Fixed(tensor.sizes[dim]);
        self.equalities(&tensor.holder, &tensor.shape, true, false, value_at, out);
    }

    /// The equalities of one tensor's dims (or an int's value), `dims` as traced; a dim's
    /// value at a call is `value_at(dim)`; `traced_symbolic`: an int traced as a symbol.
    fn equalities(
        &self,
        holder: &Holder,
        dims: &Shape,
        tensor: bool,
        traced_symbolic: bool,
        value_at: impl Fn(usize) -> ValueAt,
        out: &mut ShapeGuards,
    ) {
        let source_name = |sym: Sym| self.source_name(sym);
        let short_name = |sym: Sym| self.short_name(sym);
        for (dim, expr) in dims.iter().enumerate() {
            let here = DimSource {
                holder: holder.clone(),
                dim: tensor.then_some(dim),
            };
            let is_own = expr
                .as_sym()
                .and_then(|s| self.sources.get(&s))
                .is_some_and(|(src, _)| *src == here);
            let fixed_symbol = traced_symbolic && expr.as_int().is_some();
            if (expr.as_int().is_some() && !fixed_symbol) || is_own {
                continue;
            }
            let duck = self.env.events().iter().any(
                |(_, event)| matches!(event, ShapeEvent::DuckShared { source, .. } if *source == here.to_source()),
            );
            let (dim_source, value) = (here.to_source(), expr.to_source(&source_name));
            let provenance = if fixed_symbol {
                Provenance::FixedSymbol {
                    dim: dim_source,
                    value,
                }
            } else if duck {
                Provenance::DuckSizing {
                    dim: dim_source,
                    other: value,
                }
            } else {
                Provenance::Solved {
                    dim: dim_source,
                    value,
                }
            };
            let guard = Guard {
                kind: GuardKind::InputEquality,
                source: format!("{} == {}", here.to_source(), expr.to_source(&source_name)),
                reason: format!("{} == {}", here.to_short(), expr.to_source(&short_name)),
                symbolic: SymbolicForm::Equals(here.to_short(), expr.clone()),
                provenance,
            };
            let rel = Rel::new(
                value_at(dim).expr(),
                CmpOp::Eq,
                to_slots(expr, &self.sources),
            );
            out.push(guard, Check::Rel(CompiledRel::new(&rel)));
        }
    }

    /// Contiguous strides follow from the sizes (PyTorch's InferStride); a stride of a
    /// tensor (`holder`, of shape `dims`) that is not a constant is guarded against the sizes
    /// it is the product of.
    fn stride_guards(&self, holder: &Holder, dims: &Shape, out: &mut ShapeGuards) {
        let source_name = |sym: Sym| self.source_name(sym);
        let short_name = |sym: Sym| self.short_name(sym);
        let (source, short) = (holder.to_source(), holder.to_short());
        // The last dim's stride is 1, a constant, like every stride after static sizes.
        for (dim, stride) in layout::contiguous(dims).into_iter().enumerate() {
            if stride.as_int().is_some() {
                continue;
            }
            let guard = Guard {
                kind: GuardKind::Stride,
                source: format!(
                    "{source}.stride()[{dim}] == {}",
                    stride.to_source(&source_name)
                ),
                reason: format!(
                    "{short}.stride()[{dim}] == {}",
                    stride.to_source(&short_name)
                ),
                symbolic: SymbolicForm::Equals(format!("{short}.stride()[{dim}]"), stride),
                provenance: Provenance::Contiguous,
            };
            out.push(guard, Check::Contiguous);
        }
    }

    /// Per symbolic float argument, what the trace decided about it (`L['f'] > 1.0`), then
    /// PyTorch's implicit `not math.isnan(L['f'])`.
    fn float_guards(&self, out: &mut ShapeGuards) {
        for (position, (name, _)) in self.inputs.iter().enumerate() {
            if self.kinds[position] != ArgKind::Float || !self.traced_symbolic[position] {
                continue;
            }
            for decided in self.env.float_guards().iter().filter(|g| g.input == *name) {
                let rhs = python_float(decided.rhs);
                let guard = Guard {
                    kind: GuardKind::Recorded,
                    source: format!("L['{name}'] {} {rhs}", decided.op),
                    reason: format!("{name} {} {rhs}", decided.op),
                    symbolic: SymbolicForm::FloatRel(format!("{name} {} {rhs}", decided.op)),
                    provenance: Provenance::Recorded(decided.origin.clone()),
                };
                out.push(guard, Check::Float(position, decided.op, decided.rhs));
            }
            let guard = Guard {
                kind: GuardKind::Range,
                source: format!("not math.isnan(L['{name}'])"),
                reason: format!("not math.isnan({name})"),
                symbolic: SymbolicForm::NotNan(name.clone()),
                provenance: Provenance::NanSpecialization,
            };
            out.push(guard, Check::NotNan(position));
        }
    }

    /// The guards recorded while tracing, under the final replacements, once each and only
    /// where the symbols' ranges do not already decide them.
    fn recorded_guards(&self, out: &mut ShapeGuards) {
        let env = self.env;
        let ranges = |s: Sym| env.range(s);
        let source_name = |sym: Sym| self.source_name(sym);
        let short_name = |sym: Sym| self.short_name(sym);
        let mut seen = Vec::new();
        for recorded in env.guards() {
            let (lhs, rhs) = (
                env.replace(&recorded.rel.lhs),
                env.replace(&recorded.rel.rhs),
            );
            let rel = Rel::new(lhs, recorded.rel.op, rhs);
            let canonical = rel.simplify();
            if canonical.decide_by_ranges(&ranges) == Some(true) || seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            let to_form = |name: &dyn Fn(Sym) -> String| rel.to_source(name);
            let guard = Guard {
                kind: GuardKind::Recorded,
                source: to_form(&source_name),
                reason: to_form(&short_name),
                symbolic: SymbolicForm::Rel(rel.clone()),
                provenance: Provenance::Recorded(recorded.origin.clone()),
            };
            let slotted = Rel::new(
                to_slots(&rel.lhs, &self.sources),
                rel.op,
                to_slots(&rel.rhs, &self.sources),
            );
            out.push(guard, Check::Rel(CompiledRel::new(&slotted)));
        }
    }

    /// One range guard per symbol with a bound, in symbol order; a guard with both bounds
    /// is pushed twice, once per bound's check.
    fn range_guards(&self, out: &mut ShapeGuards) {
        for (sym, (src, at)) in &self.sources {
            let range = self.env.range(*sym);
            let text = range_text(&range, &src.to_source());
            if text.is_empty() {
                continue;
            }
            let guard = Guard {
                kind: GuardKind::Range,
                source: text,
                reason: range_text(&range, &src.to_short()),
                symbolic: SymbolicForm::Range(range, *sym),
                provenance: self.range_provenance(*sym, range),
            };
            let slot_sym = at.expr();
            let lo = range
                .lo
                .map(|lo| Rel::new(slot_sym.clone(), CmpOp::Ge, Expr::int(lo)));
            let hi = range
                .hi
                .map(|hi| Rel::new(slot_sym.clone(), CmpOp::Le, Expr::int(hi)));
            match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    out.push(guard.clone(), Check::Rel(CompiledRel::new(&lo)));
                    out.push(guard, Check::Rel(CompiledRel::new(&hi)));
                }
                (Some(rel), None) | (None, Some(rel)) => {
                    out.push(guard, Check::Rel(CompiledRel::new(&rel)))
                }
                (None, None) => unreachable!("empty ranges print nothing"),
            }
        }
    }

    /// Why `sym` has `range`: a `mark_dynamic`, 0/1 specialization, or narrowing while tracing.
    fn range_provenance(&self, sym: Sym, range: ValueRange) -> Provenance {
        let info = &self.env.symbols()[sym.index()];
        match (info.mark, range == crate::shape::DEFAULT_RANGE) {
            (Some(mark), _) => {
                let declared = ValueRange::new(mark.min, mark.max);
                let start = crate::shape::DEFAULT_RANGE.intersect(&declared);
                Provenance::MarkDynamic {
                    min: mark.min,
                    max: mark.max,
                    narrowed: (start != Some(range)).then_some(range),
                }
            }
            (None, true) => Provenance::ZeroOneSpecialization,
            (None, false) => Provenance::Narrowed(range),
        }
    }
}

impl GuardSet {
    /// Produces the guards of an entry (PyTorch's `produce_guards`).
    ///
    /// `args` are the arguments as the entry was traced (tensors' symbolic shapes, ints,
    /// bools); `marked[i]` says whether argument `i` carried a `mark_dynamic` when the
    /// entry was compiled.
    pub fn produce(
        env: &ShapeEnv,
        args: &[(String, TracedArg)],
        lifted: &[LiftedArg],
        marked: &[bool],
    ) -> GuardSet {
        let producer = Producer::new(env, args, lifted);
        let mut out = ShapeGuards::default();
        // Leaf guards first (PyTorch checks them in C++ before the shape lambda), then the
        // lambda's: each input's equalities and strides in parameter order, the recorded
        // guards, the ranges.
        producer.leaf_guards(marked, &mut out);
        for input in 0..producer.inputs.len() {
            producer.input_equalities(input, &mut out);
            let (name, dims) = &producer.inputs[input];
            producer.stride_guards(&Holder::Arg(name.clone()), dims, &mut out);
        }
        // Then the lifted tensors', in the order the trace met them.
        for tensor in &producer.lifted {
            producer.lifted_equalities(tensor, &mut out);
            producer.stride_guards(&tensor.holder, &tensor.shape, &mut out);
        }
        producer.recorded_guards(&mut out);
        producer.float_guards(&mut out);
        producer.range_guards(&mut out);
        let accessors = producer
            .check_order()
            .into_iter()
            .map(|(position, guard)| Accessor {
                guard: RootGuard::Arg(position, guard),
                fails: 0,
            })
            .collect();
        GuardSet {
            tensors: producer.tensor_guards(),
            lifted: producer.lifted_guards(),
            values: producer.value_guards(),
            accessors,
            attributes: Vec::new(),
            attribute_tree: AttributeNode::tree(&[]),
            shape: out.shape,
            compiled: out.compiled,
        }
    }
}
