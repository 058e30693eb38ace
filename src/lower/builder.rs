//! The kernel builder: the state lowering carries from one fusion group to the next, and
//! the helpers every per-op builder in `ops/` shares (buffers, loads through views,
//! elementwise chains, epilogues, finishing a kernel).
//!
//! In: the graph and the ranges of its shape symbols; then, through `ops/`, the fusion
//! groups in launch order. Out: logical buffers and kernels in launch order, which the
//! memory plan (`plan.rs`) then maps to memory.
//! Invariant: index variables and derived sizes belong to the kernel being built
//! (`begin_kernel` clears them), and a node is only ever read from a buffer it was stored
//! to — an input, a parameter, an earlier group's tail — through any views in between.

use super::LowerError;
use super::fuse::Group;
use super::index::{Index, numel};
use super::kernel::{
    Body, Bound, Buffer, BufferId, IndexVar, Kernel, Load, MAP_WORKGROUP, MAX_VARS, Role,
    SMALL_WORKGROUP, SizeVar, Value,
};
use crate::graph::dtype::{CastStep, cast_step};
use crate::graph::{self, BinaryOp, Graph, NodeId, Op, Scalar, Tensor, UnaryOp};
use crate::symbolic::{Expr, Sym, ValueRange};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Builds kernels group by group; buffers are logical until the memory plan maps them.
pub(super) struct Builder<'a> {
    pub(super) graph: &'a Graph,
    shape_ranges: &'a dyn Fn(Sym) -> ValueRange,
    first_index_sym: u32,
    /// Ranges of the kernel being built's index variables.
    var_ranges: Vec<ValueRange>,
    /// Derived sizes of the kernel being built.
    sizes: Vec<SizeVar>,
    pub(super) buffers: Vec<Buffer>,
    /// The buffer holding each node's value, once stored.
    pub(super) stored: Vec<Option<BufferId>>,
    /// Parameter values by node.
    params: BTreeMap<NodeId, Arc<[f32]>>,
    /// The output buffer of each returned node.
    pub(super) output_buffers: BTreeMap<NodeId, BufferId>,
    pub(super) kernels: Vec<Kernel>,
    pub(super) notes: Vec<String>,
}

impl<'a> Builder<'a> {
    /// A builder with no buffers or kernels yet, whose index variables are numbered from
    /// `first_index_sym`.
    pub(super) fn new(
        graph: &'a Graph,
        shape_ranges: &'a dyn Fn(Sym) -> ValueRange,
        first_index_sym: u32,
    ) -> Self {
        Builder {
            graph,
            shape_ranges,
            first_index_sym,
            var_ranges: Vec::new(),
            sizes: Vec::new(),
            buffers: Vec::new(),
            stored: vec![None; graph.nodes.len()],
            params: BTreeMap::new(),
            output_buffers: BTreeMap::new(),
            kernels: Vec::new(),
            notes: Vec::new(),
        }
    }
}

impl Builder<'_> {
    pub(super) fn inputs_of(&self, graph: &Graph) -> Vec<BufferId> {
        graph
            .inputs
            .iter()
            .map(|&node| self.stored[node.index()].expect("inputs have buffers"))
            .collect()
    }

    pub(super) fn add_buffer(&mut self, name: String, role: Role, len_elems: Expr) -> BufferId {
        self.buffers.push(Buffer {
            name,
            role,
            len_elems,
        });
        BufferId(self.buffers.len() as u32 - 1)
    }

    /// Index variable number `k` of the kernel being built.
    pub(super) fn var(&self, k: u32) -> Expr {
        Expr::sym(Sym(self.first_index_sym + k))
    }

    /// Starts a kernel: no derived sizes, no index variables yet.
    pub(super) fn begin_kernel(&mut self) {
        self.sizes.clear();
        self.var_ranges.clear();
    }

    /// Sets the kernel's index variables to run over `[0, extent)`.
    pub(super) fn set_extents(&mut self, extents: &[Expr]) {
        self.var_ranges = extents
            .iter()
            .map(|extent| {
                let hi = extent.bounds(self.shape_ranges).hi;
                ValueRange::new(Some(0), hi.map(|hi| (hi - 1).max(0)))
            })
            .collect();
    }

    fn range(&self, sym: Sym) -> ValueRange {
        match sym.0.checked_sub(self.first_index_sym) {
            Some(k) if (k as usize) < MAX_VARS => self.var_ranges[k as usize],
            Some(k) => self.sizes[k as usize - MAX_VARS].range,
            None => (self.shape_ranges)(sym),
        }
    }

    /// `size` itself when it is a constant or a symbol, else a derived size `z{k}` that
    /// stands for it in this kernel (so index formulas stay short and the value is computed
    /// once per thread, not once per use).
    fn dim(&mut self, size: &Expr) -> Expr {
        if size.as_int().is_some() || size.as_sym().is_some() {
            return size.clone();
        }
        if let Some(known) = self.sizes.iter().find(|s| s.value == *size) {
            return Expr::sym(known.sym);
        }
        let k = self.sizes.len();
        let sym = Sym(self.first_index_sym + (MAX_VARS + k) as u32);
        self.sizes.push(SizeVar {
            sym,
            name: format!("z{k}"),
            value: size.clone(),
            range: size.bounds(self.shape_ranges),
        });
        Expr::sym(sym)
    }

    /// The shape of `node` in this kernel's terms (derived sizes for compound dims).
    pub(super) fn shape(&mut self, node: NodeId) -> Vec<Expr> {
        let shape = self.graph.shape(node).clone();
        shape.iter().map(|d| self.dim(d)).collect()
    }

    pub(super) fn simplify(&self, expr: &Expr) -> Expr {
        expr.simplify_in(&|sym| self.range(sym))
    }

    pub(super) fn node_error(&self, node: NodeId, reason: &str) -> LowerError {
        let this = self.graph.node(node);
        LowerError::Unsupported {
            id: node,
            node: this.name.clone(),
            op: this.op.name(),
            reason: reason.to_string(),
        }
    }

    /// The values of a parameter or constant node, made as the reference makes them.
    pub(super) fn param_values(&mut self, node: NodeId) -> Result<Arc<[f32]>, LowerError> {
        if let Some(values) = self.params.get(&node) {
            return Ok(values.clone());
        }
        let this = self.graph.node(node);
        let (name, init) = match &this.op {
            Op::Param { path, init } => (path, init.clone()),
            Op::Constant { name, init } => (name, init.clone()),
            _ => unreachable!("only parameters and constants have compile-time values"),
        };
        // A lifted tensor's shape may be symbolic; its sizes are fixed.
        let shape: Option<Vec<usize>> = match self.graph.lifted_sizes(node) {
            Some(sizes) => sizes.iter().map(|&v| usize::try_from(v).ok()).collect(),
            None => this
                .shape
                .iter()
                .map(|d| d.as_int().and_then(|v| usize::try_from(v).ok()))
                .collect(),
        };
        let shape = shape.ok_or_else(|| LowerError::SymbolicParam {
            id: node,
            node: this.name.clone(),
            name: name.clone(),
            shape: graph::shape_to_string(&this.shape),
        })?;
        let values: Arc<[f32]> = Tensor::init(shape, init, graph::seed_of(name)).data.into();
        self.params.insert(node, values.clone());
        Ok(values)
    }

    /// The buffer of an input, a stored group result or a parameter (created on first use).
    pub(super) fn leaf_buffer(&mut self, node: NodeId) -> Result<BufferId, LowerError> {
        if let Some(id) = self.stored[node.index()] {
            return Ok(id);
        }
        let values = self.param_values(node)?;
        let this = self.graph.node(node);
        let name = match &this.op {
            Op::Param { path, .. } => format!("p_{}", sanitize(path)),
            Op::Constant { name, .. } => format!("c_{}", sanitize(name)),
            _ => unreachable!("other leaves are stored before they are read"),
        };
        let len = Expr::int(values.len() as i64);
        let id = self.add_buffer(name, Role::Param(values), len);
        self.stored[node.index()] = Some(id);
        Ok(id)
    }

    /// The value of `node` at `index`: a load, through any views in between.
    pub(super) fn load(&mut self, node: NodeId, index: &Index) -> Result<Value, LowerError> {
        self.load_masked(node, index, Vec::new())
    }

    /// `load` restricted to positions inside `mask` (zero elsewhere). The mask travels
    /// down the views to the buffer read, with padding's bounds added on the way, so no
    /// read outside them happens.
    pub(super) fn load_masked(
        &mut self,
        node: NodeId,
        index: &Index,
        mut mask: Vec<Bound>,
    ) -> Result<Value, LowerError> {
        let this = self.graph.node(node);
        if !this.op.is_view() {
            let buffer = self.leaf_buffer(node)?;
            return Ok(Value::Load(Load {
                buffer,
                offset_elems: self.simplify(&index.to_flat()),
                mask: mask
                    .into_iter()
                    .map(|b| Bound {
                        expr: self.simplify(&b.expr),
                        limit: b.limit,
                    })
                    .collect(),
            }));
        }
        let input = this.inputs[0];
        let in_shape = &self.shape(input);
        let in_index = match &this.op {
            Op::Reshape => index.reshaped(in_shape),
            Op::Expand => index.broadcast_to(in_shape),
            Op::Permute { perm } => {
                let multi = index.to_multi();
                let mut in_multi = vec![Expr::int(0); multi.len()];
                for (d, &p) in perm.iter().enumerate() {
                    in_multi[p] = multi[d].clone();
                }
                Index::multi(in_shape, in_multi)
            }
            Op::Slice { dim, start, step } => {
                let mut multi = index.to_multi();
                multi[*dim] = start + &multi[*dim] * *step;
                Index::multi(in_shape, multi)
            }
            Op::Select { dim, index: at } => {
                let mut multi = index.to_multi();
                multi.insert(*dim, at.clone());
                Index::multi(in_shape, multi)
            }
            Op::Pad {
                dim, before, value, ..
            } => {
                let mut multi = index.to_multi();
                multi[*dim] = &multi[*dim] - before;
                let inside = Bound {
                    expr: multi[*dim].clone(),
                    limit: in_shape[*dim].clone(),
                };
                let (value, in_index) = (*value, Index::multi(in_shape, multi));
                let outside = if mask.is_empty() {
                    Value::Literal(value as f32)
                } else {
                    Value::Select {
                        cond: Box::new(self.inside(&mask)),
                        then: Box::new(Value::Literal(value as f32)),
                        otherwise: Box::new(Value::Literal(0.0)),
                    }
                };
                mask.push(inside.clone());
                let padded = self.load_masked(input, &in_index, mask)?;
                if value == 0.0 {
                    return Ok(padded);
                }
                return Ok(Value::Select {
                    cond: Box::new(self.inside(&[inside])),
                    then: Box::new(padded),
                    otherwise: Box::new(outside),
                });
            }
            Op::UpsampleNearest { dim } => {
                let mut multi = index.to_multi();
                let output = self.shape(node)[*dim].clone();
                multi[*dim] = multi[*dim].nearest_source(&in_shape[*dim], &output);
                Index::multi(in_shape, multi)
            }
            Op::UpsampleLinear { dim, align_corners } => {
                let (dim, align_corners) = (*dim, *align_corners);
                let output = self.shape(node)[dim].clone();
                return self.lerp(input, index, dim, &output, align_corners, mask);
            }
            _ => unreachable!("checked to be a view"),
        };
        self.load_masked(input, &in_index, mask)
    }

    /// Linear interpolation of `input` along `dim` to `output` positions, at `index`, in
    /// exact integer arithmetic: the source position is `num / den` with `low = num // den`
    /// and the fraction `(num % den) / den`; a neighbour outside the input (the clamped
    /// ends) gives way to the other one.
    fn lerp(
        &mut self,
        input: NodeId,
        index: &Index,
        dim: usize,
        output: &Expr,
        align_corners: bool,
        mask: Vec<Bound>,
    ) -> Result<Value, LowerError> {
        let in_shape = self.shape(input);
        let size = in_shape[dim].clone();
        let at = index.to_multi()[dim].clone();
        // Without aligned corners, src = ((2i + 1)·in − out) / (2·out); one more position
        // (`+ 2·out`) keeps the numerator non-negative, so `high = num // den`, `low = high −
        // 1`. With them, src = i·(in − 1)/(out − 1), and 0 for a single output position.
        let (num, den, high) = if !align_corners {
            let num = (&at * 2 + 1) * &size + output;
            let den = output * 2;
            let high = num.floor_div(&den);
            (num, den, high)
        } else if output.as_int() == Some(1) {
            (Expr::int(0), Expr::int(1), Expr::int(1))
        } else {
            let num = &at * (&size - 1);
            let den = output - 1;
            let high = num.floor_div(&den) + 1;
            (num, den, high)
        };
        let low = &high - 1;
        let fraction = Value::Binary(
            BinaryOp::Div,
            Box::new(Value::Size(self.simplify(&num.modulo(&den)))),
            Box::new(Value::Size(self.simplify(&den))),
        );
        let neighbour = |this: &mut Self, position: &Expr| {
            let mut multi = index.to_multi();
            multi[dim] = position.clone();
            let bound = Bound {
                expr: position.clone(),
                limit: size.clone(),
            };
            let mut within = mask.clone();
            within.push(bound.clone());
            let value = this.load_masked(input, &Index::multi(&in_shape, multi), within)?;
            Ok::<_, LowerError>((value, bound))
        };
        let (low_value, low_bound) = neighbour(self, &low)?;
        let (high_value, high_bound) = neighbour(self, &high)?;
        let weight =
            |w: Value, v: &Value| Value::Binary(BinaryOp::Mul, Box::new(w), Box::new(v.clone()));
        let complement = Value::Binary(
            BinaryOp::Sub,
            Box::new(Value::Literal(1.0)),
            Box::new(fraction.clone()),
        );
        let mixed = Value::Binary(
            BinaryOp::Add,
            Box::new(weight(complement, &low_value)),
            Box::new(weight(fraction, &high_value)),
        );
        Ok(Value::Select {
            cond: Box::new(self.inside(&[low_bound])),
            then: Box::new(Value::Select {
                cond: Box::new(self.inside(&[high_bound])),
                then: Box::new(mixed),
                otherwise: Box::new(low_value),
            }),
            otherwise: Box::new(high_value),
        })
    }

    /// 1 where every bound holds, else 0, as a value (for a padding value, which is not a
    /// load's 0).
    fn inside(&self, bounds: &[Bound]) -> Value {
        let bound = |b: &Bound| {
            let at = || Box::new(Value::Size(self.simplify(&b.expr)));
            let low = Value::Binary(BinaryOp::Ge, at(), Box::new(Value::Literal(0.0)));
            let high = Value::Binary(BinaryOp::Lt, at(), Box::new(Value::Size(b.limit.clone())));
            Value::Binary(BinaryOp::Mul, Box::new(low), Box::new(high))
        };
        bounds
            .iter()
            .map(bound)
            .reduce(|a, b| Value::Binary(BinaryOp::Mul, Box::new(a), Box::new(b)))
            .unwrap_or(Value::Literal(1.0))
    }

    /// An elementwise node at `index` (its own shape); `prev` supplies the fused operand.
    pub(super) fn elementwise(
        &mut self,
        node: NodeId,
        index: &Index,
        prev: Option<(NodeId, &Value)>,
    ) -> Result<Value, LowerError> {
        let this = self.graph.node(node);
        let mut operands = Vec::with_capacity(this.inputs.len());
        for &input in &this.inputs {
            let value = match prev {
                Some((fused, value)) if fused == input => value.clone(),
                _ if matches!(this.op, Op::BatchNorm { .. }) && input != this.inputs[0] => {
                    let channel = index.to_multi()[1].clone();
                    let shape = self.shape(input);
                    self.load(input, &Index::multi(&shape, vec![channel]))?
                }
                _ => {
                    let shape = self.shape(input);
                    self.load(input, &index.broadcast_to(&shape))?
                }
            };
            operands.push(value);
        }
        let binary = |op, a: Value, b: Value| Value::Binary(op, Box::new(a), Box::new(b));
        Ok(match &this.op {
            Op::Unary(op) => Value::Unary(*op, Box::new(operands.remove(0))),
            Op::Cast { to } => {
                let value = operands.remove(0);
                match cast_step(self.graph.node(this.inputs[0]).dtype, *to) {
                    CastStep::Keep => value,
                    CastStep::Truncate => Value::Unary(UnaryOp::Trunc, Box::new(value)),
                    CastStep::NonZero => binary(BinaryOp::Ne, value, Value::Literal(0.0)),
                }
            }
            Op::Binary(op) => {
                let rhs = operands.pop().expect("two operands");
                binary(*op, operands.pop().expect("two operands"), rhs)
            }
            Op::Scalar {
                op,
                scalar,
                tensor_on_left,
            } => {
                let scalar = match scalar {
                    Scalar::Number(v) => Value::Literal(*v as f32),
                    Scalar::Size(expr) => Value::Size(expr.clone()),
                };
                let tensor = operands.remove(0);
                if *tensor_on_left {
                    binary(*op, tensor, scalar)
                } else {
                    binary(*op, scalar, tensor)
                }
            }
            Op::BatchNorm { eps } => {
                let [x, mean, var, weight, bias]: [Value; 5] =
                    operands.try_into().expect("batch norm has five operands");
                let std = Value::Unary(
                    UnaryOp::Sqrt,
                    Box::new(binary(BinaryOp::Add, var, Value::Literal(*eps as f32))),
                );
                let scale = binary(BinaryOp::Div, weight, std);
                let centred = binary(BinaryOp::Sub, x, mean);
                binary(BinaryOp::Add, binary(BinaryOp::Mul, centred, scale), bias)
            }
            Op::Where => {
                let [cond, then, otherwise]: [Value; 3] =
                    operands.try_into().expect("where has three operands");
                Value::Select {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise: Box::new(otherwise),
                }
            }
            Op::Triangle { upper, diagonal } => {
                let multi = index.to_multi();
                let [.., row, col] = multi.as_slice() else {
                    unreachable!("the shape rule asks for two dimensions")
                };
                let offset = Value::Size(self.simplify(&(col - row)));
                let test = if *upper { BinaryOp::Ge } else { BinaryOp::Le };
                Value::Select {
                    cond: Box::new(binary(test, offset, Value::Literal(*diagonal as f32))),
                    then: Box::new(operands.remove(0)),
                    otherwise: Box::new(Value::Literal(0.0)),
                }
            }
            Op::Arange { start, step } => {
                let position = Value::Size(index.to_multi()[0].clone());
                let scaled = binary(BinaryOp::Mul, Value::Literal(*step as f32), position);
                binary(BinaryOp::Add, Value::Literal(*start as f32), scaled)
            }
            Op::Full { value } => Value::Literal(*value as f32),
            Op::Random { kind, seed } => Value::Random {
                kind: *kind,
                seed: *seed,
                index: self.simplify(&index.to_flat()),
            },
            other => unreachable!("{} is not elementwise", other.name()),
        })
    }

    /// The fused chain after the root, as a function of `Acc` at `index`.
    pub(super) fn epilogue(&mut self, group: &Group, index: &Index) -> Result<Value, LowerError> {
        let mut value = Value::Acc;
        let mut prev = group.root();
        for &member in &group.members[1..] {
            if group.folded != Some(member) {
                value = self.elementwise(member, index, Some((prev, &value)))?;
            }
            prev = member;
        }
        Ok(value)
    }

    /// The buffer a group's result goes to: an output buffer or a temporary.
    fn result_buffer(&mut self, node: NodeId) -> BufferId {
        if let Some(&id) = self.output_buffers.get(&node) {
            return id;
        }
        let len = numel(self.graph.shape(node));
        let id = match self.graph.outputs().iter().position(|&o| o == node) {
            Some(position) => {
                let id = self.add_buffer(format!("out{position}"), Role::Output(position), len);
                self.output_buffers.insert(node, id);
                id
            }
            // Every part of a `cat` after the first writes into the buffer the first made.
            None => match self.stored[node.index()] {
                Some(id) => return id,
                None => self.add_buffer(String::new(), Role::Temp, len),
            },
        };
        // A returned input or view keeps reading its own buffer; the copy goes to `id`.
        self.stored[node.index()].get_or_insert(id);
        id
    }

    pub(super) fn finish(&mut self, group: &Group, suffix: &str, body: Body, workgroups: Expr) {
        let node_names: Vec<String> = group
            .members
            .iter()
            .map(|&n| self.graph.node(n).name.clone())
            .collect();
        let id = self.kernels.len();
        let name = format!("k{id}_{}{suffix}", node_names.join("_"));
        let vars = body
            .var_names()
            .iter()
            .enumerate()
            .map(|(k, &name)| IndexVar {
                sym: Sym(self.first_index_sym + k as u32),
                name,
                range: self.var_ranges[k],
            })
            .collect();
        let workgroup_size = match &body {
            Body::Map { .. } | Body::Pool(_) => MAP_WORKGROUP,
            Body::Gemm(_) | Body::Rows(_) => SMALL_WORKGROUP,
        };
        let output = self.result_buffer(group.tail());
        let mut kernel = Kernel {
            id,
            name,
            nodes: group.members.clone(),
            node_names,
            body,
            output,
            vars,
            sizes: self.sizes.clone(),
            workgroup_size,
            workgroups,
        };
        // The host evaluates the dispatch formula, so it is written over shape symbols only.
        kernel.workgroups = kernel.expand_sizes(&kernel.workgroups);
        self.kernels.push(kernel);
    }
}

/// A WGSL-safe identifier fragment: `layers.0.weight` → `layers_0_weight`.
pub(super) fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
