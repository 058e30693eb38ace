//! Lowering: turns a captured `Graph` into a `Schedule` of GPU kernels.
//!
//! In: a graph whose shapes are symbolic (`[s0, 128]`) and the ranges its guards promise for
//! each symbol (`s0 >= 2`). Out: a [`Schedule`] — kernels in launch order, the buffers they
//! read and write, a dispatch formula per kernel, and a memory plan — valid for every
//! binding of the symbols inside those ranges. Nothing here looks at a concrete size, so
//! no guard is needed: one schedule serves every call that hits its cache entry.
//!
//! # How a graph becomes kernels
//!
//! Launching a kernel and writing its result to memory costs more than the arithmetic of a
//! bias or an activation, so lowering fuses (`fuse.rs`). Every *compute* op — linear,
//! matmul, conv, a reduction, softmax, layer norm, pooling, cat, embedding — starts a kernel.
//! An elementwise op (`relu`, `+ bias`, `* 2`, an unfoldable BatchNorm) then *joins the
//! kernel that produces its input* when nothing else reads that input: it becomes part of
//! the kernel's epilogue, applied to each result before it is stored. SimpleNet's
//! `Linear → ReLU → Linear` is therefore two kernels, not three, and a BatchNorm after a
//! convolution costs nothing at run time: its scale and shift are folded into the
//! convolution's weights here, because parameters are known at compile time.
//!
//! Views — `reshape`, `permute`/`transpose`, slices and `select` — launch nothing. A kernel
//! reading through a view computes the element's address with index arithmetic
//! (`index.rs`): a transpose swaps two indices, a slice adds its start, a reshape
//! re-derives the indices from the flat position with `//` and `%`. Those formulas are
//! symbolic `Expr`s over the kernel's index variables (`gid`, `row`, `col`, `kk`, …,
//! symbols numbered from [`Schedule::first_index_sym`]) and the shape symbols, simplified
//! with what the ranges tell (`kk < 64` makes `kk // 64` vanish).
//!
//! Matrix products (linear, matmul, and convolution seen as one big product over
//! `channels × window`) use tiled kernels; reductions use one workgroup per row with a
//! tree in workgroup memory. Finally a liveness-based memory plan (`plan.rs`) lets
//! temporaries whose lifetimes do not overlap share a buffer.

mod fuse;
mod index;
mod kernel;
mod plan;
mod print;

#[cfg(test)]
mod tests;

pub use fuse::{Fusion, FusionPolicy, Group, NodeKind, fuse};
pub use index::{Index, ceil_div, numel, ravel, unravel};
pub use kernel::{
    Body, Bound, Buffer, BufferId, Gemm, GemmStrategy, IndexVar, Kernel, Load, MAP_WORKGROUP,
    MAX_VARS, Placement, Pool, Role, RowOp, Rows, SMALL_WORKGROUP, Schedule, SizeVar, TILE_K,
    TILE_M, TILE_N, Value,
};
pub use plan::verify;

use crate::graph::{self, BinaryOp, Graph, NodeId, Op, Scalar, Tensor, UnaryOp};
use crate::symbolic::{Expr, Sym, ValueRange};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a graph could not be lowered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LowerError {
    /// Parameter values are made at compile time, so their sizes must be known.
    #[error(
        "node '{node}': parameter '{name}' has symbolic shape {shape}; parameters need static sizes"
    )]
    SymbolicParam {
        /// The parameter's node.
        id: NodeId,
        /// Its name.
        node: String,
        /// Its dotted path or global name.
        name: String,
        /// The shape, printed.
        shape: String,
    },
    /// An op configuration the kernels do not cover.
    #[error("node '{node}' ({op}): {reason}")]
    Unsupported {
        /// The node.
        id: NodeId,
        /// Its name.
        node: String,
        /// Its op.
        op: String,
        /// What is missing.
        reason: String,
    },
}

/// Lowers `graph` for every binding of its shape symbols inside `ranges`.
pub fn lower(graph: &Graph, ranges: &dyn Fn(Sym) -> ValueRange) -> Result<Schedule, LowerError> {
    lower_with(graph, ranges, FusionPolicy::Fused)
}

/// Lowers `graph` with the given fusion policy.
pub fn lower_with(
    graph: &Graph,
    ranges: &dyn Fn(Sym) -> ValueRange,
    policy: FusionPolicy,
) -> Result<Schedule, LowerError> {
    let fusion = fuse(graph, policy);
    let first_index_sym = graph_syms(graph).last().map_or(0, |s| s.0 + 1);
    let mut builder = Builder {
        graph,
        shape_ranges: ranges,
        first_index_sym,
        var_ranges: Vec::new(),
        sizes: Vec::new(),
        buffers: Vec::new(),
        stored: vec![None; graph.nodes.len()],
        params: BTreeMap::new(),
        output_buffers: BTreeMap::new(),
        kernels: Vec::new(),
        notes: Vec::new(),
    };
    for (position, &input) in graph.inputs.iter().enumerate() {
        let len = numel(graph.shape(input));
        let id = builder.add_buffer(format!("in{position}"), Role::Input(position), len);
        builder.stored[input.index()] = Some(id);
    }
    for group in &fusion.groups {
        builder.build_group(group)?;
    }
    let mut ranges_map = BTreeMap::new();
    for sym in graph_syms(graph) {
        ranges_map.insert(sym, ranges(sym));
    }
    let outputs: Vec<BufferId> = graph
        .outputs()
        .iter()
        .map(|&node| builder.output_buffers[&node])
        .collect();
    let inputs = builder.inputs_of(graph);
    let schedule = plan::plan(
        builder.buffers,
        builder.kernels,
        &builder.stored,
        graph,
        inputs,
        outputs,
        ranges_map,
        first_index_sym,
        builder.notes,
    );
    debug_assert_eq!(
        plan::verify(&schedule),
        Ok(()),
        "lowering produced a bad schedule"
    );
    Ok(schedule)
}

/// Every shape symbol a graph mentions, ascending.
fn graph_syms(graph: &Graph) -> Vec<Sym> {
    let mut syms = std::collections::BTreeSet::new();
    for node in &graph.nodes {
        for dim in &node.shape {
            syms.extend(dim.free_syms());
        }
        match &node.op {
            Op::Slice { start, .. } => syms.extend(start.free_syms()),
            Op::Select { index, .. } => syms.extend(index.free_syms()),
            Op::Scalar {
                scalar: Scalar::Size(expr),
                ..
            } => syms.extend(expr.free_syms()),
            _ => {}
        }
    }
    syms.into_iter().collect()
}

/// Builds kernels group by group; buffers are logical until the memory plan maps them.
struct Builder<'a> {
    graph: &'a Graph,
    shape_ranges: &'a dyn Fn(Sym) -> ValueRange,
    first_index_sym: u32,
    /// Ranges of the kernel being built's index variables.
    var_ranges: Vec<ValueRange>,
    /// Derived sizes of the kernel being built.
    sizes: Vec<SizeVar>,
    buffers: Vec<Buffer>,
    /// The buffer holding each node's value, once stored.
    stored: Vec<Option<BufferId>>,
    /// Parameter values by node.
    params: BTreeMap<NodeId, Arc<[f32]>>,
    /// The output buffer of each returned node.
    output_buffers: BTreeMap<NodeId, BufferId>,
    kernels: Vec<Kernel>,
    notes: Vec<String>,
}

impl Builder<'_> {
    fn inputs_of(&self, graph: &Graph) -> Vec<BufferId> {
        graph
            .inputs
            .iter()
            .map(|&node| self.stored[node.index()].expect("inputs have buffers"))
            .collect()
    }

    fn add_buffer(&mut self, name: String, role: Role, len_elems: Expr) -> BufferId {
        self.buffers.push(Buffer {
            name,
            role,
            len_elems,
        });
        BufferId(self.buffers.len() as u32 - 1)
    }

    /// Index variable number `k` of the kernel being built.
    fn var(&self, k: u32) -> Expr {
        Expr::sym(Sym(self.first_index_sym + k))
    }

    /// Starts a kernel: no derived sizes, no index variables yet.
    fn begin_kernel(&mut self) {
        self.sizes.clear();
        self.var_ranges.clear();
    }

    /// Sets the kernel's index variables to run over `[0, extent)`.
    fn set_extents(&mut self, extents: &[Expr]) {
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
    fn shape(&mut self, node: NodeId) -> Vec<Expr> {
        let shape = self.graph.shape(node).clone();
        shape.iter().map(|d| self.dim(d)).collect()
    }

    fn simplify(&self, expr: &Expr) -> Expr {
        expr.simplify_in(&|sym| self.range(sym))
    }

    fn node_error(&self, node: NodeId, reason: &str) -> LowerError {
        let this = self.graph.node(node);
        LowerError::Unsupported {
            id: node,
            node: this.name.clone(),
            op: this.op.name(),
            reason: reason.to_string(),
        }
    }

    /// The values of a parameter or constant node, made as the reference makes them.
    fn param_values(&mut self, node: NodeId) -> Result<Arc<[f32]>, LowerError> {
        if let Some(values) = self.params.get(&node) {
            return Ok(values.clone());
        }
        let this = self.graph.node(node);
        let (name, init) = match &this.op {
            Op::Param { path, init } => (path, *init),
            Op::Constant { name, init } => (name, *init),
            _ => unreachable!("only parameters and constants have compile-time values"),
        };
        let shape: Option<Vec<usize>> = this
            .shape
            .iter()
            .map(|d| d.as_int().and_then(|v| usize::try_from(v).ok()))
            .collect();
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
    fn leaf_buffer(&mut self, node: NodeId) -> Result<BufferId, LowerError> {
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
    fn load(&mut self, node: NodeId, index: &Index) -> Result<Value, LowerError> {
        let this = self.graph.node(node);
        let is_view = matches!(
            this.op,
            Op::Reshape | Op::Permute { .. } | Op::Slice { .. } | Op::Select { .. }
        );
        if !is_view {
            let buffer = self.leaf_buffer(node)?;
            return Ok(Value::Load(Load {
                buffer,
                offset_elems: self.simplify(&index.to_flat()),
                mask: Vec::new(),
            }));
        }
        let input = this.inputs[0];
        let in_shape = &self.shape(input);
        let in_index = match &this.op {
            Op::Reshape => index.reshaped(in_shape),
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
            _ => unreachable!("checked to be a view"),
        };
        self.load(input, &in_index)
    }

    /// `load` restricted to positions inside `mask` (zero elsewhere).
    fn load_masked(
        &mut self,
        node: NodeId,
        index: &Index,
        mask: Vec<Bound>,
    ) -> Result<Value, LowerError> {
        let mut value = self.load(node, index)?;
        if let Value::Load(load) = &mut value {
            load.mask = mask
                .into_iter()
                .map(|b| Bound {
                    expr: self.simplify(&b.expr),
                    limit: b.limit,
                })
                .collect();
        }
        Ok(value)
    }

    /// An elementwise node at `index` (its own shape); `prev` supplies the fused operand.
    fn elementwise(
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
            other => unreachable!("{} is not elementwise", other.name()),
        })
    }

    /// The fused chain after the root, as a function of `Acc` at `index`.
    fn epilogue(&mut self, group: &Group, index: &Index) -> Result<Value, LowerError> {
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
            None => self.add_buffer(String::new(), Role::Temp, len),
        };
        // A returned input or view keeps reading its own buffer; the copy goes to `id`.
        self.stored[node.index()].get_or_insert(id);
        id
    }

    fn finish(&mut self, group: &Group, suffix: &str, body: Body, workgroups: Expr) {
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

    fn build_group(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        if group.members.len() > 1 {
            let names: Vec<&str> = group.members[1..]
                .iter()
                .map(|&n| self.graph.node(n).name.as_str())
                .collect();
            self.notes
                .push(format!("fused {} into {}", names.join(", "), root.name));
        }
        match &root.op {
            Op::Linear => self.build_linear(group),
            Op::Matmul => self.build_matmul(group),
            Op::Conv { .. } => self.build_conv(group),
            Op::Pool { .. } => self.build_pool(group),
            Op::Reduce { .. } | Op::Softmax { .. } | Op::LayerNorm { .. } => self.build_rows(group),
            Op::Cat { dim } => self.build_cat(group, *dim),
            _ => self.build_map(group),
        }
    }

    /// Elementwise roots, embedding lookups and copies of returned views or leaves.
    fn build_map(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = group.root();
        self.begin_kernel();
        let shape = self.shape(group.tail());
        let len = numel(&shape);
        self.set_extents(std::slice::from_ref(&len));
        let gid = self.var(0);
        let index = Index::flat(&shape, gid.clone());
        let this = self.graph.node(root);
        let acc = match &this.op {
            op if op.is_elementwise() || matches!(op, Op::BatchNorm { .. }) => {
                self.elementwise(root, &index, None)?
            }
            Op::Embedding => self.embedding(root, &gid)?,
            _ => self.load(root, &index)?,
        };
        let value = self.epilogue(group, &index)?.substitute_acc(&acc);
        let workgroups = ceil_div(&len, i64::from(MAP_WORKGROUP));
        let body = Body::Map {
            len,
            value,
            store: gid,
        };
        self.finish(group, "", body, workgroups);
        Ok(())
    }

    fn embedding(&mut self, node: NodeId, gid: &Expr) -> Result<Value, LowerError> {
        let this = self.graph.node(node);
        let (indices, table) = (this.inputs[0], this.inputs[1]);
        let table_shape = self.shape(table);
        if !matches!(
            self.graph.node(table).op,
            Op::Param { .. } | Op::Constant { .. }
        ) {
            return Err(self.node_error(node, "the embedding table must be a parameter"));
        }
        let width = table_shape[1].clone();
        let row = self.simplify(&gid.floor_div(&width));
        let col = self.simplify(&gid.modulo(&width));
        let indices_shape = self.shape(indices);
        let index = self.load(indices, &Index::flat(&indices_shape, row))?;
        Ok(Value::Embed {
            index: Box::new(index),
            table: self.leaf_buffer(table)?,
            rows: table_shape[0].clone(),
            width,
            col,
        })
    }

    fn build_cat(&mut self, group: &Group, dim: usize) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let mut offset = Expr::int(0);
        for (part_idx, &part) in root.inputs.iter().enumerate() {
            self.begin_kernel();
            let out_shape = self.shape(root.id);
            let part_shape = self.shape(part);
            let len = numel(&part_shape);
            self.set_extents(std::slice::from_ref(&len));
            let gid = self.var(0);
            let part_index = Index::flat(&part_shape, gid);
            let mut out_multi = part_index.to_multi();
            out_multi[dim] = &out_multi[dim] + &offset;
            let out_index = Index::multi(&out_shape, out_multi);
            let acc = self.load(part, &part_index)?;
            let value = self.epilogue(group, &out_index)?.substitute_acc(&acc);
            let store = self.simplify(&out_index.to_flat());
            let workgroups = ceil_div(&len, i64::from(MAP_WORKGROUP));
            let body = Body::Map { len, value, store };
            self.finish(group, &format!("_part{part_idx}"), body, workgroups);
            // The graph's own size, not `part_shape`'s: that may name a derived size of this
            // kernel, which the next part's kernel does not have.
            offset = offset + &self.graph.shape(part)[dim];
        }
        Ok(())
    }

    /// Adds the bias (if any) at output column `col`.
    fn plus_bias(&mut self, bias: Option<BufferId>, col: &Expr) -> Value {
        match bias {
            Some(buffer) => Value::Binary(
                BinaryOp::Add,
                Box::new(Value::Acc),
                Box::new(Value::Load(Load {
                    buffer,
                    offset_elems: col.clone(),
                    mask: Vec::new(),
                })),
            ),
            None => Value::Acc,
        }
    }

    fn build_linear(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let (x, weight, bias) = (root.inputs[0], root.inputs[1], root.inputs.get(2).copied());
        self.begin_kernel();
        let x_shape = self.shape(x);
        let w_shape = self.shape(weight);
        let out_shape = self.shape(root.id);
        let lead = &x_shape[..x_shape.len() - 1];
        let (m, n, k) = (
            numel(lead),
            w_shape[0].clone(),
            x_shape[x_shape.len() - 1].clone(),
        );
        self.set_extents(&[Expr::int(1), m.clone(), n.clone(), k.clone()]);
        let (row, col, kk) = (self.var(1), self.var(2), self.var(3));
        let a = self.load(x, &Index::flat(&x_shape, &row * &k + &kk))?;
        let b = self.load(weight, &Index::multi(&w_shape, vec![col.clone(), kk]))?;
        let mut out_multi = unravel(&row, lead);
        out_multi.push(col.clone());
        let flat = &row * &n + &col;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let bias = bias.map(|b| self.leaf_buffer(b)).transpose()?;
        let acc = self.plus_bias(bias, &col);
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&flat);
        self.finish_gemm(group, Expr::int(1), m, n, k, a, b, epilogue, store);
        Ok(())
    }

    #[expect(clippy::too_many_arguments, reason = "the fields of one Gemm, named")]
    fn finish_gemm(
        &mut self,
        group: &Group,
        batch: Expr,
        m: Expr,
        n: Expr,
        k: Expr,
        a: Value,
        b: Value,
        epilogue: Value,
        store: Expr,
    ) {
        let workgroups = &batch * ceil_div(&m, TILE_M) * ceil_div(&n, TILE_N);
        let gemm = Gemm {
            strategy: GemmStrategy::Tiled,
            batch,
            m,
            n,
            k,
            a,
            b,
            epilogue,
            store,
        };
        self.finish(group, "", Body::Gemm(Box::new(gemm)), workgroups);
    }

    fn build_matmul(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let (a_node, b_node) = (root.inputs[0], root.inputs[1]);
        self.begin_kernel();
        let a_shape = self.shape(a_node);
        let b_shape = self.shape(b_node);
        let out_shape = self.shape(root.id);
        let (a_vec, b_vec) = (a_shape.len() == 1, b_shape.len() == 1);
        let a_rank = if a_vec { 2 } else { a_shape.len() };
        let b_rank = if b_vec { 2 } else { b_shape.len() };
        let batch_shape = out_shape[..a_rank.max(b_rank) - 2].to_vec();
        let m = if a_vec {
            Expr::int(1)
        } else {
            a_shape[a_shape.len() - 2].clone()
        };
        let k = a_shape[a_shape.len() - 1].clone();
        let n = if b_vec {
            Expr::int(1)
        } else {
            b_shape[b_shape.len() - 1].clone()
        };
        let batch = numel(&batch_shape);
        self.set_extents(&[batch.clone(), m.clone(), n.clone(), k.clone()]);
        let (bat, row, col, kk) = (self.var(0), self.var(1), self.var(2), self.var(3));
        let bat_index = Index::flat(&batch_shape, bat.clone());
        let batch_part =
            |shape: &[Expr]| bat_index.broadcast_to(&shape[..shape.len() - 2]).to_multi();
        let a_index = if a_vec {
            Index::multi(&a_shape, vec![kk.clone()])
        } else {
            let mut multi = batch_part(&a_shape);
            multi.extend([row.clone(), kk.clone()]);
            Index::multi(&a_shape, multi)
        };
        let b_index = if b_vec {
            Index::multi(&b_shape, vec![kk.clone()])
        } else {
            let mut multi = batch_part(&b_shape);
            multi.extend([kk.clone(), col.clone()]);
            Index::multi(&b_shape, multi)
        };
        let a = self.load(a_node, &a_index)?;
        let b = self.load(b_node, &b_index)?;
        let mut out_multi = bat_index.to_multi();
        if !a_vec {
            out_multi.push(row.clone());
        }
        if !b_vec {
            out_multi.push(col.clone());
        }
        let flat = (&bat * &m + &row) * &n + &col;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let epilogue = self.epilogue(group, &out_index)?;
        let store = self.simplify(&flat);
        self.finish_gemm(group, batch, m, n, k, a, b, epilogue, store);
        Ok(())
    }

    /// Convolution as one product: rows are output positions, columns output channels,
    /// and the reduction runs over input channels × window (an implicit im2col).
    fn build_conv(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let Op::Conv {
            stride,
            padding,
            dilation,
        } = &root.op
        else {
            unreachable!("build_conv is called for convolutions")
        };
        let (x, weight) = (root.inputs[0], root.inputs[1]);
        self.begin_kernel();
        let x_shape = self.shape(x);
        let w_shape = self.shape(weight);
        let out_shape = self.shape(root.id);
        let out_sizes = out_shape[2..].to_vec();
        let window = w_shape[2..].to_vec();
        let (channels, out_channels) = (x_shape[1].clone(), w_shape[0].clone());
        let points = numel(&out_sizes);
        let window_points = numel(&window);
        let m = &x_shape[0] * &points;
        let k = &channels * &window_points;
        self.set_extents(&[Expr::int(1), m.clone(), out_channels.clone(), k.clone()]);
        let (row, col, kk) = (self.var(1), self.var(2), self.var(3));
        let batch_idx = row.floor_div(&points);
        let point = row.modulo(&points);
        let out_pos = unravel(&point, &out_sizes);
        let channel = kk.floor_div(&window_points);
        let tap = unravel(&kk.modulo(&window_points), &window);
        let mut x_multi = vec![batch_idx.clone(), channel];
        let mut mask = Vec::new();
        for d in 0..stride.len() {
            let pos = &out_pos[d] * stride[d] - padding[d] + &tap[d] * dilation[d];
            if padding[d] > 0 {
                mask.push(Bound {
                    expr: pos.clone(),
                    limit: x_shape[2 + d].clone(),
                });
            }
            x_multi.push(pos);
        }
        let a = self.load_masked(x, &Index::multi(&x_shape, x_multi), mask)?;
        let (w_buffer, bias) = self.conv_params(group)?;
        let b = Value::Load(Load {
            buffer: w_buffer,
            offset_elems: self.simplify(&(&col * &k + &kk)),
            mask: Vec::new(),
        });
        let mut out_multi = vec![batch_idx.clone(), col.clone()];
        out_multi.extend(out_pos);
        let flat = (&batch_idx * &out_channels + &col) * &points + &point;
        let out_index = Index::both(&out_shape, flat.clone(), out_multi);
        let acc = self.plus_bias(bias, &col);
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&flat);
        self.finish_gemm(
            group,
            Expr::int(1),
            m,
            out_channels,
            k,
            a,
            b,
            epilogue,
            store,
        );
        Ok(())
    }

    /// The weight and bias buffers of a convolution, with a folded BatchNorm applied.
    fn conv_params(&mut self, group: &Group) -> Result<(BufferId, Option<BufferId>), LowerError> {
        let root = self.graph.node(group.root());
        let (weight, bias) = (root.inputs[1], root.inputs.get(2).copied());
        let Some(bn) = group.folded else {
            let w = self.weight_buffer(weight)?;
            let b = bias.map(|b| self.leaf_buffer(b)).transpose()?;
            return Ok((w, b));
        };
        let bn_node = self.graph.node(bn);
        let Op::BatchNorm { eps } = bn_node.op else {
            unreachable!("folded nodes are batch norms")
        };
        let [mean, var, gamma, beta] = [1, 2, 3, 4].map(|i| bn_node.inputs[i]);
        let w = self.param_values(weight)?;
        let out_channels = self.param_values(mean)?.len();
        let b = match bias {
            Some(b) => self.param_values(b)?,
            None => vec![0.0; out_channels].into(),
        };
        let (mean, var, gamma, beta) = (
            self.param_values(mean)?,
            self.param_values(var)?,
            self.param_values(gamma)?,
            self.param_values(beta)?,
        );
        let scale: Vec<f32> = (0..out_channels)
            .map(|c| gamma[c] / (var[c] + eps as f32).sqrt())
            .collect();
        let per_channel = w.len() / out_channels.max(1);
        let folded_w: Arc<[f32]> = w
            .iter()
            .enumerate()
            .map(|(i, v)| v * scale[i / per_channel.max(1)])
            .collect();
        let folded_b: Arc<[f32]> = (0..out_channels)
            .map(|c| (b[c] - mean[c]) * scale[c] + beta[c])
            .collect();
        let conv_name = sanitize(&root.name);
        let w_len = Expr::int(folded_w.len() as i64);
        let w_id = self.add_buffer(
            format!("p_{conv_name}_weight_bn"),
            Role::Param(folded_w),
            w_len,
        );
        let b_id = self.add_buffer(
            format!("p_{conv_name}_bias_bn"),
            Role::Param(folded_b),
            Expr::int(out_channels as i64),
        );
        self.notes.push(format!(
            "folded {} into the weights and bias of {}",
            bn_node.name, root.name
        ));
        Ok((w_id, Some(b_id)))
    }

    fn weight_buffer(&mut self, weight: NodeId) -> Result<BufferId, LowerError> {
        match self.graph.node(weight).op {
            Op::Param { .. } | Op::Constant { .. } | Op::Input { .. } => self.leaf_buffer(weight),
            _ => Err(self.node_error(weight, "convolution weights must be a stored tensor")),
        }
    }

    fn build_pool(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let Op::Pool {
            kind,
            kernel,
            stride,
            padding,
        } = &root.op
        else {
            unreachable!("build_pool is called for pooling")
        };
        if kernel.len() != 2 {
            return Err(self.node_error(root.id, "only 2-d pooling is supported"));
        }
        let x = root.inputs[0];
        self.begin_kernel();
        let x_shape = self.shape(x);
        let out_shape = self.shape(root.id);
        let rank = x_shape.len();
        let (h, w) = (x_shape[rank - 2].clone(), x_shape[rank - 1].clone());
        let (oh, ow) = (out_shape[rank - 2].clone(), out_shape[rank - 1].clone());
        let len = numel(&out_shape);
        self.set_extents(&[len.clone(), Expr::int(kernel[0]), Expr::int(kernel[1])]);
        let (gid, ky, kx) = (self.var(0), self.var(1), self.var(2));
        let plane_size = &oh * &ow;
        let plane = gid.floor_div(&plane_size);
        let within = gid.modulo(&plane_size);
        let y = within.floor_div(&ow) * stride[0] - padding[0] + &ky;
        let xx = within.modulo(&ow) * stride[1] - padding[1] + &kx;
        let flat = (plane * &h + &y) * &w + &xx;
        let value = self.load(x, &Index::flat(&x_shape, flat))?;
        let inside = if padding.iter().any(|&p| p > 0) {
            vec![
                Bound {
                    expr: self.simplify(&y),
                    limit: h,
                },
                Bound {
                    expr: self.simplify(&xx),
                    limit: w,
                },
            ]
        } else {
            Vec::new()
        };
        let out_index = Index::flat(&out_shape, gid.clone());
        let epilogue = self.epilogue(group, &out_index)?;
        let workgroups = ceil_div(&len, i64::from(MAP_WORKGROUP));
        let pool = Pool {
            kind: *kind,
            len,
            window: [kernel[0], kernel[1]],
            value,
            inside,
            epilogue,
            store: gid,
        };
        self.finish(group, "", Body::Pool(pool), workgroups);
        Ok(())
    }

    /// Reductions, softmax and layer norm: one workgroup per row.
    fn build_rows(&mut self, group: &Group) -> Result<(), LowerError> {
        let root = self.graph.node(group.root());
        let x = root.inputs[0];
        self.begin_kernel();
        let x_shape = self.shape(x);
        let out_shape = self.shape(root.id);
        let (op, rows, len) = row_extents(&root.op, &x_shape);
        self.set_extents(&[rows.clone(), len.clone()]);
        let (row, e) = (self.var(0), self.var(1));
        let in_index = row_index(&root.op, &x_shape, &row, &e, &len);
        let input = self.load(x, &in_index)?;
        let out_index = if op.is_reduction() {
            Index::flat(&out_shape, row.clone())
        } else {
            in_index.clone()
        };
        let mut acc = Value::Acc;
        if let (Op::LayerNorm { .. }, [_, weight, bias]) = (&root.op, root.inputs.as_slice()) {
            let w_shape = self.shape(*weight);
            let b_shape = self.shape(*bias);
            let w = self.load(*weight, &Index::flat(&w_shape, e.clone()))?;
            let b = self.load(*bias, &Index::flat(&b_shape, e.clone()))?;
            acc = Value::Binary(
                BinaryOp::Add,
                Box::new(Value::Binary(BinaryOp::Mul, Box::new(acc), Box::new(w))),
                Box::new(b),
            );
        }
        let epilogue = self.epilogue(group, &out_index)?.substitute_acc(&acc);
        let store = self.simplify(&out_index.to_flat());
        let body = Body::Rows(Rows {
            op,
            rows: rows.clone(),
            len,
            input,
            epilogue,
            store,
        });
        self.finish(group, "", body, rows);
        Ok(())
    }
}

/// What a row op computes, its number of rows and the elements per row.
fn row_extents(op: &Op, x_shape: &[Expr]) -> (RowOp, Expr, Expr) {
    let rank = x_shape.len();
    match op {
        Op::Reduce { kind, dims, .. } => {
            let (kept, reduced) = split_dims(x_shape, dims);
            let op = match kind {
                graph::ReduceKind::Sum => RowOp::Sum,
                graph::ReduceKind::Mean => RowOp::Mean,
                graph::ReduceKind::Amax => RowOp::Max,
            };
            (op, numel(&kept), numel(&reduced))
        }
        Op::Softmax { dim } => {
            let rows = numel(&x_shape[..*dim]) * numel(&x_shape[dim + 1..]);
            (RowOp::Softmax, rows, x_shape[*dim].clone())
        }
        Op::LayerNorm {
            normalized_dims,
            eps,
        } => {
            let split = rank - normalized_dims;
            let op = RowOp::LayerNorm { eps: *eps as f32 };
            (op, numel(&x_shape[..split]), numel(&x_shape[split..]))
        }
        _ => unreachable!("row ops only"),
    }
}

/// The input position of element `e` of row `row`.
fn row_index(op: &Op, x_shape: &[Expr], row: &Expr, e: &Expr, len: &Expr) -> Index {
    let rank = x_shape.len();
    match op {
        Op::Reduce { dims, .. } => {
            let trailing = dims
                .iter()
                .enumerate()
                .all(|(i, &d)| d == rank - dims.len() + i);
            if trailing {
                return Index::flat(x_shape, row * len + e);
            }
            let (kept, reduced) = split_dims(x_shape, dims);
            let mut kept_idx = unravel(row, &kept).into_iter();
            let mut red_idx = unravel(e, &reduced).into_iter();
            let multi = (0..rank)
                .map(|d| {
                    let source = if dims.contains(&d) {
                        &mut red_idx
                    } else {
                        &mut kept_idx
                    };
                    source.next().expect("one index per dimension")
                })
                .collect();
            Index::multi(x_shape, multi)
        }
        Op::Softmax { dim } => {
            let inner = numel(&x_shape[dim + 1..]);
            let flat = (row.floor_div(&inner) * len + e) * &inner + row.modulo(&inner);
            Index::flat(x_shape, flat)
        }
        _ => Index::flat(x_shape, row * len + e),
    }
}

/// The sizes of the kept and of the reduced dimensions.
fn split_dims(shape: &[Expr], dims: &[usize]) -> (Vec<Expr>, Vec<Expr>) {
    let kept = (0..shape.len())
        .filter(|d| !dims.contains(d))
        .map(|d| shape[d].clone())
        .collect();
    let reduced = dims.iter().map(|&d| shape[d].clone()).collect();
    (kept, reduced)
}

/// A WGSL-safe identifier fragment: `layers.0.weight` → `layers_0_weight`.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}
