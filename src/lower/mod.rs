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
//! matmul, conv, a reduction, (log-)softmax, layer norm, pooling, cat, embedding — starts a
//! kernel.
//! An elementwise op (`relu`, `+ bias`, `* 2`, an unfoldable BatchNorm) then *joins the
//! kernel that produces its input* when nothing else reads that input: it becomes part of
//! the kernel's epilogue, applied to each result before it is stored. SimpleNet's
//! `Linear → ReLU → Linear` is therefore two kernels, not three, and a BatchNorm after a
//! convolution costs nothing at run time: its scale and shift are folded into the
//! convolution's weights here, because parameters are known at compile time. Eager PyTorch
//! fuses nothing — one library kernel per op — and [`lower_with`] under
//! [`FusionPolicy::PerOp`] lowers a graph that way, for comparison.
//!
//! Views — `reshape`, `expand`, `permute`/`transpose`, slices and `select` — launch
//! nothing. A kernel reading through a view computes the element's address with index
//! arithmetic (`index.rs`): a transpose swaps two indices, a slice adds its start, an
//! expand reads index 0 of a size-1 dim, a reshape re-derives the indices from the flat
//! position with `//` and `%`. Those formulas are
//! symbolic `Expr`s over the kernel's index variables (`gid`, `row`, `col`, `kk`, …,
//! symbols numbered from [`Schedule::first_index_sym`]) and the shape symbols, simplified
//! with what the ranges tell (`kk < 64` makes `kk // 64` vanish).
//!
//! Matrix products (linear, matmul, and convolution seen as one big product over
//! `channels × window`) use tiled kernels; reductions use one workgroup per row with a
//! tree in workgroup memory. Finally a liveness-based memory plan (`plan.rs`) lets
//! temporaries whose lifetimes do not overlap share a buffer.
//!
//! # Where the code is
//!
//! This file holds the driver ([`lower`]): fuse, build each group's kernels, plan memory.
//! `builder.rs` holds the state carried from group to group and the helpers every kernel
//! uses (buffers, loads through views, epilogues); `ops/` holds one builder per family of
//! compute ops (maps and `cat`, matrix products, convolution, pooling, row ops).

mod builder;
mod decompose;
mod fuse;
mod index;
mod kernel;
mod ops;
mod plan;
mod print;

#[cfg(test)]
mod tests;

pub use fuse::{Fusion, FusionPolicy, Group, NodeKind, fuse};
pub use index::{Index, ceil_div, numel, ravel, unravel};
pub use kernel::{
    BLOCK_M, BLOCK_N, Body, Bound, Buffer, BufferId, Gemm, GemmStrategy, IndexVar, Kernel,
    LARGE_MIN_SIDE, Load, MAP_WORKGROUP, MAX_VARS, Placement, Pool, Role, RowOp, Rows,
    SMALL_WORKGROUP, Schedule, SizeVar, TILE_K, TILE_M, TILE_N, TILE_N_NARROW, TILE_THREAD_M,
    Value, Vec4Operands,
};
pub use ops::Lowering;
pub use plan::verify;

use crate::graph::{Graph, NodeId, Op, Scalar};
use crate::symbolic::{Sym, ValueRange};
use builder::Builder;
use std::collections::BTreeMap;

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

/// Lowers `graph` for every binding of its shape symbols inside `ranges`, fusing
/// elementwise chains and BatchNorms into the kernels that produce their inputs.
pub fn lower(graph: &Graph, ranges: &dyn Fn(Sym) -> ValueRange) -> Result<Schedule, LowerError> {
    lower_with(graph, ranges, FusionPolicy::Fused)
}

/// [`lower`] with kernels grouped by `policy`: `FusionPolicy::PerOp` gives the schedule an
/// eager call runs, one kernel per op.
pub fn lower_with(
    graph: &Graph,
    ranges: &dyn Fn(Sym) -> ValueRange,
    policy: FusionPolicy,
) -> Result<Schedule, LowerError> {
    let Some(decomposed) = decompose::decompose(graph) else {
        return lower_graph(graph, ranges, policy);
    };
    // The kernels compute the rewritten graph; they and their errors are named by the
    // captured graph a learner sees.
    let origin = |id: NodeId| decomposed.origin[id.index()];
    let mut schedule = lower_graph(&decomposed.graph, ranges, policy).map_err(|err| match err {
        LowerError::SymbolicParam {
            id, name, shape, ..
        } => LowerError::SymbolicParam {
            id: origin(id),
            node: graph.node(origin(id)).name.clone(),
            name,
            shape,
        },
        LowerError::Unsupported { id, op, reason, .. } => LowerError::Unsupported {
            id: origin(id),
            node: graph.node(origin(id)).name.clone(),
            op,
            reason,
        },
    })?;
    for kernel in &mut schedule.kernels {
        let mut nodes: Vec<NodeId> = Vec::with_capacity(kernel.nodes.len());
        for &id in &kernel.nodes {
            if !nodes.contains(&origin(id)) {
                nodes.push(origin(id));
            }
        }
        kernel.node_names = nodes
            .iter()
            .map(|&id| graph.node(id).name.clone())
            .collect();
        kernel.nodes = nodes;
    }
    for placement in &mut schedule.placements {
        placement.node = origin(placement.node);
        placement.node_name = graph.node(placement.node).name.clone();
    }
    schedule.notes.extend(decomposed.notes);
    Ok(schedule)
}

/// [`lower_with`] for a graph with nothing to rewrite.
fn lower_graph(
    graph: &Graph,
    ranges: &dyn Fn(Sym) -> ValueRange,
    policy: FusionPolicy,
) -> Result<Schedule, LowerError> {
    let fusion = fuse(graph, policy);
    let first_index_sym = graph_syms(graph).last().map_or(0, |s| s.0 + 1);
    let mut builder = Builder::new(graph, ranges, first_index_sym);
    for (position, &input) in graph.inputs.iter().enumerate() {
        let len = numel(graph.shape(input));
        let id = builder.add_buffer(format!("in{position}"), Role::Input(position), len);
        builder.stored[input.index()] = Some(id);
    }
    let integral: Vec<String> = graph
        .nodes
        .iter()
        .filter(|node| node.inputs.is_empty() && !node.dtype.is_floating())
        .map(|node| format!("{} ({})", node.name, node.dtype.name()))
        .collect();
    if !integral.is_empty() {
        // `graph::dtype`'s carrier, said where a learner reads the kernels.
        builder.notes.push(format!(
            "{} computed and stored as float32: WGSL has no 64-bit integers, and whole numbers within ±2^24 are exact",
            integral.join(", ")
        ));
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
            Op::Pad { before, after, .. } => {
                syms.extend(before.free_syms());
                syms.extend(after.free_syms());
            }
            Op::Scalar {
                scalar: Scalar::Size(expr),
                ..
            } => syms.extend(expr.free_syms()),
            _ => {}
        }
    }
    for (_, expr) in &graph.int_inputs {
        syms.extend(expr.free_syms());
    }
    syms.into_iter().collect()
}
