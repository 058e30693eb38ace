//! The kernel IR: what lowering produces and what codegen and both runtimes consume.
//!
//! In: nothing (plain data, built by `lower`). Out: a `Schedule` — buffers, kernels in
//! launch order, and the memory plan — with one `Display` form that the trace, the tests
//! and the page show. Invariant: every size, offset and dispatch count is a symbolic
//! `Expr` over the graph's shape symbols and the kernel's own index variables (symbols
//! from `Schedule::first_index_sym` on), so one `Schedule` serves every binding its guards
//! accept; a kernel reads only buffers written by earlier kernels or given by the caller,
//! and never reads the buffer it writes.

use super::index::ceil_div;
use crate::graph::{BinaryOp, NodeId, PoolKind, RandomKind, UnaryOp};
use crate::symbolic::{Bindings, Expr, Sym, ValueRange};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Index of a buffer in `Schedule::buffers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferId(pub u32);

impl BufferId {
    /// Position in `Schedule::buffers`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a buffer holds and who fills it.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// The caller's tensor argument number `n` (WGSL name `in{n}`).
    Input(usize),
    /// Parameter values known at compile time (WGSL name `p_<path>`).
    Param(Arc<[f32]>),
    /// Returned tensor number `n` (WGSL name `out{n}`).
    Output(usize),
    /// Scratch memory shared by temporaries whose lifetimes do not overlap (`t{n}`).
    Temp,
}

/// One physical buffer of f32 elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    /// Its WGSL identifier: `in0`, `p_layers_0_weight`, `out0`, `t1`.
    pub name: String,
    /// What it holds.
    pub role: Role,
    /// Length in elements (for a temporary: the largest tenant).
    pub len_elems: Expr,
}

/// `0 <= expr < limit`: the condition under which a masked load reads memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// The index being checked.
    pub expr: Expr,
    /// Its exclusive upper limit.
    pub limit: Expr,
}

/// A read of one element; reads outside any `mask` bound give 0 (zero padding).
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// Buffer read.
    pub buffer: BufferId,
    /// Element offset: index arithmetic over the kernel's index variables.
    pub offset_elems: Expr,
    /// Conditions for the read to happen (empty: always).
    pub mask: Vec<Bound>,
}

/// A scalar f32 expression evaluated per element: loads, constants and elementwise ops.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// The kernel's accumulated result at this element (matmul sum, reduction, …).
    Acc,
    /// A constant.
    Literal(f32),
    /// A symbolic size used as a number (`x / x.shape[1]`).
    Size(Expr),
    /// A buffer element.
    Load(Load),
    /// `table[(trunc(|index|) mod rows) * width + col]`: an embedding row lookup.
    Embed {
        /// The float holding the row number.
        index: Box<Value>,
        /// The table.
        table: BufferId,
        /// Rows in the table.
        rows: Expr,
        /// Row length.
        width: Expr,
        /// Column read.
        col: Expr,
    },
    /// An elementwise function.
    Unary(UnaryOp, Box<Value>),
    /// Elementwise arithmetic.
    Binary(BinaryOp, Box<Value>, Box<Value>),
    /// Element `index` of a random stream (`graph::random_value`).
    Random {
        /// The distribution.
        kind: RandomKind,
        /// The stream.
        seed: u32,
        /// The element's flat position in the random tensor.
        index: Expr,
    },
    /// `then` where `cond` is non-zero, else `otherwise` (`torch.where`, masks).
    Select {
        /// The condition, a 0/1 value.
        cond: Box<Value>,
        /// Where it holds.
        then: Box<Value>,
        /// Where it does not.
        otherwise: Box<Value>,
    },
}

impl Value {
    /// Calls `f` on every load, embedding table included (as a load at offset 0).
    pub fn visit_loads(&self, f: &mut dyn FnMut(&Load)) {
        match self {
            Value::Acc | Value::Literal(_) | Value::Size(_) | Value::Random { .. } => {}
            Value::Load(load) => f(load),
            Value::Embed { index, table, .. } => {
                index.visit_loads(f);
                f(&Load {
                    buffer: *table,
                    offset_elems: Expr::int(0),
                    mask: Vec::new(),
                });
            }
            Value::Unary(_, inner) => inner.visit_loads(f),
            Value::Binary(_, lhs, rhs) => {
                lhs.visit_loads(f);
                rhs.visit_loads(f);
            }
            Value::Select {
                cond,
                then,
                otherwise,
            } => {
                cond.visit_loads(f);
                then.visit_loads(f);
                otherwise.visit_loads(f);
            }
        }
    }

    /// Rewrites every buffer id with `f` (used by the memory plan).
    pub fn map_buffers(&mut self, f: &dyn Fn(BufferId) -> BufferId) {
        match self {
            Value::Acc | Value::Literal(_) | Value::Size(_) | Value::Random { .. } => {}
            Value::Load(load) => load.buffer = f(load.buffer),
            Value::Embed { index, table, .. } => {
                index.map_buffers(f);
                *table = f(*table);
            }
            Value::Unary(_, inner) => inner.map_buffers(f),
            Value::Binary(_, lhs, rhs) => {
                lhs.map_buffers(f);
                rhs.map_buffers(f);
            }
            Value::Select {
                cond,
                then,
                otherwise,
            } => {
                cond.map_buffers(f);
                then.map_buffers(f);
                otherwise.map_buffers(f);
            }
        }
    }

    /// Calls `f` on every size expression inside the value.
    pub fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Value::Acc | Value::Literal(_) => {}
            Value::Size(expr) | Value::Random { index: expr, .. } => f(expr),
            Value::Load(load) => {
                f(&load.offset_elems);
                for bound in &load.mask {
                    f(&bound.expr);
                    f(&bound.limit);
                }
            }
            Value::Embed {
                index,
                rows,
                width,
                col,
                ..
            } => {
                index.visit_exprs(f);
                f(rows);
                f(width);
                f(col);
            }
            Value::Unary(_, inner) => inner.visit_exprs(f),
            Value::Binary(_, lhs, rhs) => {
                lhs.visit_exprs(f);
                rhs.visit_exprs(f);
            }
            Value::Select {
                cond,
                then,
                otherwise,
            } => {
                cond.visit_exprs(f);
                then.visit_exprs(f);
                otherwise.visit_exprs(f);
            }
        }
    }

    /// Replaces `Acc` by `acc` (composes an epilogue with the value it finishes).
    pub fn substitute_acc(&self, acc: &Value) -> Value {
        match self {
            Value::Acc => acc.clone(),
            Value::Unary(op, inner) => Value::Unary(*op, Box::new(inner.substitute_acc(acc))),
            Value::Binary(op, lhs, rhs) => Value::Binary(
                *op,
                Box::new(lhs.substitute_acc(acc)),
                Box::new(rhs.substitute_acc(acc)),
            ),
            Value::Select {
                cond,
                then,
                otherwise,
            } => Value::Select {
                cond: Box::new(cond.substitute_acc(acc)),
                then: Box::new(then.substitute_acc(acc)),
                otherwise: Box::new(otherwise.substitute_acc(acc)),
            },
            Value::Embed {
                index,
                table,
                rows,
                width,
                col,
            } => Value::Embed {
                index: Box::new(index.substitute_acc(acc)),
                table: *table,
                rows: rows.clone(),
                width: width.clone(),
                col: col.clone(),
            },
            other => other.clone(),
        }
    }
}

/// How a matrix product is tiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GemmStrategy {
    /// `TILE_M x Gemm::tile_n` outputs per workgroup of 64 threads (`TILE_THREAD_M` rows
    /// by `tile_n / 8` columns each), operands staged through workgroup memory `TILE_K`
    /// columns at a time.
    Tiled,
    /// `BLOCK_M x BLOCK_N` outputs per thread, operands read from global memory: no
    /// workgroup memory, so its pipeline builds about as fast as the naive one's, and each
    /// loaded value is used once per row or column of the block.
    Blocked,
    /// One thread per output element reading its row and column from global memory (the
    /// baseline the benchmark compares against).
    Naive,
}

impl GemmStrategy {
    /// Every strategy.
    pub const ALL: [GemmStrategy; 3] = [
        GemmStrategy::Tiled,
        GemmStrategy::Blocked,
        GemmStrategy::Naive,
    ];

    /// The strategy worth running for a product of these sizes (`batch` products of
    /// `m x k` by `k x n`): `large`, the adapter's form for large products, where both
    /// sides fill at least half a tile and the product repays a pipeline build; anything
    /// smaller runs the naive kernel, whose one thread per output keeps every core of a
    /// small product busy.
    pub fn for_sizes(batch: i64, m: i64, n: i64, k: i64, large: GemmStrategy) -> GemmStrategy {
        let macs = batch.saturating_mul(m).saturating_mul(n).saturating_mul(k);
        if m >= LARGE_MIN_SIDE && n >= LARGE_MIN_SIDE && macs >= TILED_MIN_MACS {
            large
        } else {
            GemmStrategy::Naive
        }
    }

    /// `tiled`, `blocked` or `naive`, as reports and the page name it.
    pub fn name(self) -> &'static str {
        match self {
            GemmStrategy::Tiled => "tiled",
            GemmStrategy::Blocked => "blocked",
            GemmStrategy::Naive => "naive",
        }
    }
}

/// Multiply-adds from which a product runs in its adapter's large form (2^22: a 64-row
/// batch through a 256-by-256 layer). Chosen so that SimpleNet-sized calls, whose run takes
/// a few ms, never wait for a tiled pipeline (about 0.5 s each on SwiftShader); it is not
/// tuned per adapter.
pub const TILED_MIN_MACS: i64 = 1 << 22;

/// Output rows per thread of a blocked product; its columns are [`BLOCK_N`]. A CPU
/// emulation runs each thread's block as a CPU kernel runs its register tile: the larger
/// the block, the fewer loads per multiply-add, and the longer the emulator's compiler
/// takes. Measured for a 256×1024×1024 product with its bias and ReLU, operands read as
/// `vec4`s ([`Kernel::vec4_operands`]), rows × columns per thread: in headless Chromium on
/// SwiftShader (raw WebGPU, one kernel a submit, 64 threads a workgroup), GFLOP/s and the
/// pipeline's build, 4×4 2.7–2.8 (84–141 ms), 8×8 4.3–4.7 (61–82 ms), 16×8 5.4–5.5
/// (100–153 ms), 16×16 7.0 (194–227 ms); natively on lavapipe (`tailor bench`, Mesa's
/// shader cache off), the MLP's first call and steady GFLOP/s, 4×4 424 ms and 9.5, 8×8
/// 1030 ms and 15.6, 16×8 2590 ms and 19.1. 8×8 builds as fast as 4×4 on SwiftShader and
/// keeps four times the threads of 16×8 for a many-core emulation. With scalar operands
/// (`a @ b`, `b` as `[k, n]`, raw WGSL, 256×1024 by 1024×1024), 8×4 against 8×8: 2.1 and
/// 2.9 GFLOP/s on SwiftShader (74 and 50 ms to build), 2.8 and 5.7 on lavapipe.
pub const BLOCK_M: i64 = 8;
/// Output columns per thread of a blocked product (two `vec4` accumulators a row).
pub const BLOCK_N: i64 = 8;

/// Rows and columns from which a product counts as large ([`GemmStrategy::for_sizes`]):
/// half a tile's rows, and a narrow tile's columns.
pub const LARGE_MIN_SIDE: i64 = 32;

/// Output rows per tiled workgroup. Each of its 64 threads owns [`TILE_THREAD_M`] rows by
/// `tile_n / 8` columns: eight multiply-adds per value read from workgroup memory, where
/// the 32×32 tile of 4×4 per thread did four. Measured natively on lavapipe (raw WGSL,
/// 256×1024 by 1024×1024, median of 7), the kernel alone against the naive one:
/// 32×32 tiles of 4×4, 32 deep, 3.3×; 64×32 of 8×4, 16 deep, 4.8×; 64×64 of 8×8, 16 or
/// 32 deep, 6.1–6.3×.
pub const TILE_M: i64 = 64;
/// Output columns per tiled workgroup, where the product has at least that many or its
/// columns are symbolic ([`Gemm::tile_n`]).
pub const TILE_N: i64 = 64;
/// Output columns per tiled workgroup of a product with fewer than [`TILE_N`] columns (a
/// convolution's 32 output channels), so that it does not pad 32 columns to 64.
pub const TILE_N_NARROW: i64 = 32;
/// Output rows each thread of a tiled product owns.
pub const TILE_THREAD_M: i64 = 8;
/// Reduction depth staged per step: 16 keeps both tiles of a 64×64 tile in 8 KiB of
/// workgroup memory (32 deep measured the same on lavapipe, with twice the memory).
pub const TILE_K: i64 = 16;
/// Threads per workgroup for tiled and naive products and for row reductions.
pub const SMALL_WORKGROUP: u32 = 64;
/// Threads per workgroup for elementwise (map) and pooling kernels.
pub const MAP_WORKGROUP: u32 = 256;

/// A product's operands read as `vec4`s along the reduction ([`Kernel::vec4_operands`]):
/// `a[bat, row, 4*k4 .. 4*k4 + 4]` is `vec4` number `a_base + k4` of buffer `a`, and
/// likewise for `b` at `bat, col`.
#[derive(Clone, Debug, PartialEq)]
pub struct Vec4Operands {
    /// The left operand's buffer.
    pub a: BufferId,
    /// Its first `vec4` at `bat, row` (over `bat`, `row` and sizes).
    pub a_base: Expr,
    /// The right operand's buffer.
    pub b: BufferId,
    /// Its first `vec4` at `bat, col`.
    pub b_base: Expr,
}

/// `out[store(bat,row,col)] = epilogue(sum over kk of a(bat,row,kk) * b(bat,kk,col))`.
#[derive(Clone, Debug, PartialEq)]
pub struct Gemm {
    /// Tiled, blocked or naive.
    pub strategy: GemmStrategy,
    /// Independent products (broadcast batch dims flattened).
    pub batch: Expr,
    /// Rows of the result.
    pub m: Expr,
    /// Columns of the result.
    pub n: Expr,
    /// Reduction length.
    pub k: Expr,
    /// Left operand over `bat, row, kk`.
    pub a: Value,
    /// Right operand over `bat, kk, col`.
    pub b: Value,
    /// The fused epilogue over `Acc` and `bat, row, col`.
    pub epilogue: Value,
    /// Output offset over `bat, row, col`.
    pub store: Expr,
    /// Output columns of its tiled form's workgroup tile: [`TILE_N_NARROW`] where `n` is a
    /// constant under [`TILE_N`], else [`TILE_N`] (chosen when lowered, from `n`).
    pub tile_n: i64,
    /// Whether `a` gathers an image's windows (a convolution's im2col, with floor division
    /// and padding masks in its index): such a product never runs blocked, because
    /// SwiftShader hung (more than 5 minutes, then a lost device or a crashed browser) on
    /// blocked 1x1 and 3x3 convolutions that lavapipe runs correctly.
    pub gathers_windows: bool,
}

impl Gemm {
    /// [`Gemm::tile_n`] for a product of `n` columns.
    pub fn tile_columns(n: &Expr) -> i64 {
        match n.as_int() {
            Some(n) if n < TILE_N => TILE_N_NARROW,
            _ => TILE_N,
        }
    }

    /// The workgroups of its tiled form: one per tile of each product.
    pub fn tiled_workgroups(&self) -> Expr {
        &self.batch * ceil_div(&self.m, TILE_M) * ceil_div(&self.n, self.tile_n)
    }
}

/// What a row reduction computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowOp {
    /// One output per row: the sum.
    Sum,
    /// One output per row: the mean.
    Mean,
    /// One output per row: the maximum.
    Max,
    /// One output per element: `exp(x - max) / sum(exp(x - max))`.
    Softmax,
    /// One output per element: `x - max - log(sum(exp(x - max)))`.
    LogSoftmax,
    /// One output per element: `(x - mean) / sqrt(var + eps)` (affine part in the epilogue).
    LayerNorm {
        /// Added to the variance.
        eps: f32,
    },
}

impl RowOp {
    /// Whether each row produces one value (else one per element).
    pub fn is_reduction(self) -> bool {
        matches!(self, RowOp::Sum | RowOp::Mean | RowOp::Max)
    }

    /// Its display name.
    pub fn name(self) -> &'static str {
        match self {
            RowOp::Sum => "sum",
            RowOp::Mean => "mean",
            RowOp::Max => "max",
            RowOp::Softmax => "softmax",
            RowOp::LogSoftmax => "log_softmax",
            RowOp::LayerNorm { .. } => "layer_norm",
        }
    }
}

/// One workgroup per row, reducing `len` elements with a tree in workgroup memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Rows {
    /// Which reduction.
    pub op: RowOp,
    /// Number of rows.
    pub rows: Expr,
    /// Elements per row.
    pub len: Expr,
    /// The element read over `row, e`.
    pub input: Value,
    /// Epilogue over `Acc` and `row` (reductions) or `row, e` (the normalisations).
    pub epilogue: Value,
    /// Output offset over the same variables.
    pub store: Expr,
}

/// Window reduction (pooling): one thread per output element `gid`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pool {
    /// Max or average.
    pub kind: PoolKind,
    /// Output elements.
    pub len: Expr,
    /// Window height and width.
    pub window: [i64; 2],
    /// The input element over `gid, ky, kx`.
    pub value: Value,
    /// Where that element lies inside the input (else it is padding).
    pub inside: Vec<Bound>,
    /// Epilogue over `Acc` and `gid`.
    pub epilogue: Value,
    /// Output offset over `gid`.
    pub store: Expr,
}

/// The computation a kernel performs.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// One thread per output element `gid < len`: `out[store] = value`.
    Map {
        /// Number of elements.
        len: Expr,
        /// The element over `gid`.
        value: Value,
        /// Output offset over `gid`.
        store: Expr,
    },
    /// A (batched) matrix product with a fused epilogue.
    Gemm(Box<Gemm>),
    /// A row-wise reduction with a fused epilogue.
    Rows(Rows),
    /// Pooling with a fused epilogue.
    Pool(Pool),
}

impl Body {
    /// The extents of its loops, one per index variable (`var_names`): their product is
    /// the steps the kernel takes in a call.
    pub fn loop_extents(&self) -> Vec<Expr> {
        match self {
            Body::Map { len, .. } => vec![len.clone()],
            Body::Gemm(gemm) => vec![
                gemm.batch.clone(),
                gemm.m.clone(),
                gemm.n.clone(),
                gemm.k.clone(),
            ],
            Body::Rows(rows) => vec![rows.rows.clone(), rows.len.clone()],
            Body::Pool(pool) => vec![
                pool.len.clone(),
                Expr::int(pool.window[0]),
                Expr::int(pool.window[1]),
            ],
        }
    }

    /// Names of the index variables, in symbol order.
    pub fn var_names(&self) -> &'static [&'static str] {
        match self {
            Body::Map { .. } => &["gid"],
            Body::Gemm(_) => &["bat", "row", "col", "kk"],
            Body::Rows(_) => &["row", "e"],
            Body::Pool(_) => &["gid", "ky", "kx"],
        }
    }

    /// Calls `f` on every value of the body.
    pub fn visit_values(&self, f: &mut dyn FnMut(&Value)) {
        match self {
            Body::Map { value, .. } => f(value),
            Body::Gemm(gemm) => {
                f(&gemm.a);
                f(&gemm.b);
                f(&gemm.epilogue);
            }
            Body::Rows(rows) => {
                f(&rows.input);
                f(&rows.epilogue);
            }
            Body::Pool(pool) => {
                f(&pool.value);
                f(&pool.epilogue);
            }
        }
    }

    /// Calls `f` on every value of the body, mutably.
    pub fn visit_values_mut(&mut self, f: &mut dyn FnMut(&mut Value)) {
        match self {
            Body::Map { value, .. } => f(value),
            Body::Gemm(gemm) => {
                f(&mut gemm.a);
                f(&mut gemm.b);
                f(&mut gemm.epilogue);
            }
            Body::Rows(rows) => {
                f(&mut rows.input);
                f(&mut rows.epilogue);
            }
            Body::Pool(pool) => {
                f(&mut pool.value);
                f(&mut pool.epilogue);
            }
        }
    }

    /// Calls `f` on every expression of the body: sizes, offsets, masks.
    pub fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Body::Map { len, store, .. } => {
                f(len);
                f(store);
            }
            Body::Gemm(gemm) => {
                for expr in [&gemm.batch, &gemm.m, &gemm.n, &gemm.k, &gemm.store] {
                    f(expr);
                }
            }
            Body::Rows(rows) => {
                f(&rows.rows);
                f(&rows.len);
                f(&rows.store);
            }
            Body::Pool(pool) => {
                f(&pool.len);
                f(&pool.store);
                for bound in &pool.inside {
                    f(&bound.expr);
                    f(&bound.limit);
                }
            }
        }
        self.visit_values(&mut |value| value.visit_exprs(f));
    }
}

/// An index variable of a kernel: a symbol bound per thread (or per loop step).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexVar {
    /// The symbol standing for it in offsets.
    pub sym: Sym,
    /// Its WGSL and display name (`gid`, `row`, `kk`, …).
    pub name: &'static str,
    /// Values it takes: `[0, extent - 1]`, as far as the shape ranges tell.
    pub range: ValueRange,
}

/// The most index variables a kernel has; derived sizes are numbered after them.
pub const MAX_VARS: usize = 4;

/// A compound size used by a kernel, such as `(s1 - 1)//2 + 1`, named once (`z0`) so
/// index formulas stay short; each thread computes it once from the shape symbols.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeVar {
    /// The symbol standing for it in the kernel's formulas.
    pub sym: Sym,
    /// Its WGSL and display name (`z0`, `z1`, …).
    pub name: String,
    /// Its value over the shape symbols.
    pub value: Expr,
    /// Its range under the shape symbols' ranges.
    pub range: ValueRange,
}

/// One GPU program: a fusion group of graph nodes computed in one dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Position in the schedule (`k0`, `k1`, …).
    pub id: usize,
    /// `k{id}_` plus the fused nodes' names, e.g. `k0_linear_relu`.
    pub name: String,
    /// Graph nodes computed here: the root, then the fused elementwise chain.
    pub nodes: Vec<NodeId>,
    /// Their names, for display.
    pub node_names: Vec<String>,
    /// What it computes.
    pub body: Body,
    /// The buffer it writes.
    pub output: BufferId,
    /// Its index variables, in symbol order.
    pub vars: Vec<IndexVar>,
    /// Its derived sizes, each defined over shape symbols only.
    pub sizes: Vec<SizeVar>,
    /// Threads per workgroup.
    pub workgroup_size: u32,
    /// The dispatch formula: how many workgroups to launch.
    pub workgroups: Expr,
}

impl Kernel {
    /// Buffers read, ascending, without repeats.
    pub fn reads(&self) -> Vec<BufferId> {
        let mut reads = BTreeSet::new();
        self.body.visit_values(&mut |value| {
            value.visit_loads(&mut |load| {
                reads.insert(load.buffer);
            })
        });
        reads.into_iter().collect()
    }

    /// The shape symbols the kernel depends on, ascending (the fields of its `dims` uniform).
    pub fn shape_syms(&self) -> Vec<Sym> {
        let local: BTreeSet<Sym> = self
            .vars
            .iter()
            .map(|v| v.sym)
            .chain(self.sizes.iter().map(|s| s.sym))
            .collect();
        let mut syms = BTreeSet::new();
        let mut add = |expr: &Expr| syms.extend(expr.free_syms());
        self.body.visit_exprs(&mut add);
        add(&self.workgroups);
        for size in &self.sizes {
            add(&size.value);
        }
        syms.retain(|sym| !local.contains(sym));
        syms.into_iter().collect()
    }

    /// The range of a symbol in this kernel: an index variable, a derived size, or (via
    /// `shape`) a shape symbol.
    pub fn range(&self, sym: Sym, shape: &dyn Fn(Sym) -> ValueRange) -> ValueRange {
        if let Some(var) = self.vars.iter().find(|v| v.sym == sym) {
            return var.range;
        }
        match self.sizes.iter().find(|s| s.sym == sym) {
            Some(size) => size.range,
            None => shape(sym),
        }
    }

    /// `expr` with derived sizes replaced by their values over shape symbols.
    pub fn expand_sizes(&self, expr: &Expr) -> Expr {
        self.sizes.iter().rev().fold(expr.clone(), |acc, size| {
            acc.substitute(size.sym, &size.value)
        })
    }

    /// This kernel with its matrix product computed by `strategy` (the benchmark compares
    /// tiled and naive code); other kernels are returned unchanged.
    pub fn with_strategy(&self, strategy: GemmStrategy) -> Kernel {
        let mut kernel = self.clone();
        if let Body::Gemm(gemm) = &mut kernel.body {
            gemm.strategy = strategy;
            let workgroups = match strategy {
                GemmStrategy::Tiled => gemm.tiled_workgroups(),
                GemmStrategy::Naive => ceil_div(
                    &(&gemm.batch * &gemm.m * &gemm.n),
                    i64::from(SMALL_WORKGROUP),
                ),
                GemmStrategy::Blocked => ceil_div(
                    &(&gemm.batch * ceil_div(&gemm.m, BLOCK_M) * ceil_div(&gemm.n, BLOCK_N)),
                    i64::from(SMALL_WORKGROUP),
                ),
            };
            kernel.workgroups = self.expand_sizes(&workgroups);
        }
        kernel
    }

    /// Where a product reads both operands as `vec4`s along the reduction: each operand is
    /// an unmasked load whose offset is `kk + base` with `base` a multiple of 4 at every
    /// row, column and batch, `K` is a multiple of 4, and neither buffer is read anywhere
    /// else in the kernel (its binding is declared `array<vec4<f32>>`). A linear layer's
    /// input and weight (`[out, in]`, PyTorch's layout) qualify when `in` is a multiple of
    /// 4; `x @ w` with `w` as `[k, n]` does not (its `b` strides by `n` along `kk`). `None`
    /// for other kernels.
    pub fn vec4_operands(&self) -> Option<Vec4Operands> {
        let Body::Gemm(gemm) = &self.body else {
            return None;
        };
        let kk = self.vars.get(3).filter(|v| v.name == "kk")?;
        let four = Expr::int(4);
        let multiple_of_four = |expr: &Expr| expr.modulo(&four).as_int() == Some(0);
        if !multiple_of_four(&self.expand_sizes(&gemm.k)) {
            return None;
        }
        let ranges = |sym: Sym| self.range(sym, &|_| ValueRange::unbounded());
        let operand = |value: &Value| {
            let Value::Load(load) = value else {
                return None;
            };
            if !load.mask.is_empty() {
                return None;
            }
            let (stride, base) = load.offset_elems.affine_in(kk.sym, &ranges)?;
            (stride == 1 && multiple_of_four(&self.expand_sizes(&base)))
                .then(|| (load.buffer, base.floor_div(&four)))
        };
        let (a, a_base) = operand(&gemm.a)?;
        let (b, b_base) = operand(&gemm.b)?;
        let mut elsewhere = false;
        gemm.epilogue.visit_loads(&mut |load| {
            elsewhere |= load.buffer == a || load.buffer == b;
        });
        (!elsewhere && a != self.output && b != self.output).then_some(Vec4Operands {
            a,
            a_base,
            b,
            b_base,
        })
    }

    /// The strategy a tiled product kernel is worth running with at these sizes
    /// ([`GemmStrategy::for_sizes`], `large` where it pays); `None` for other kernels, for
    /// products already naive, and where a size does not evaluate.
    pub fn strategy_at(&self, bindings: &Bindings, large: GemmStrategy) -> Option<GemmStrategy> {
        let Body::Gemm(gemm) = &self.body else {
            return None;
        };
        if gemm.strategy != GemmStrategy::Tiled {
            return None;
        }
        let large = match large {
            GemmStrategy::Blocked if gemm.gathers_windows => GemmStrategy::Tiled,
            large => large,
        };
        let size = |expr: &Expr| self.expand_sizes(expr).eval(bindings);
        Some(GemmStrategy::for_sizes(
            size(&gemm.batch)?,
            size(&gemm.m)?,
            size(&gemm.n)?,
            size(&gemm.k)?,
            large,
        ))
    }

    /// The display and WGSL name of a kernel-local symbol (index variable or size).
    pub fn local_name(&self, sym: Sym) -> Option<String> {
        self.vars
            .iter()
            .find(|v| v.sym == sym)
            .map(|v| v.name.to_string())
            .or_else(|| {
                self.sizes
                    .iter()
                    .find(|s| s.sym == sym)
                    .map(|s| s.name.clone())
            })
    }
}

/// Where a materialised graph tensor lives and for how long.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// The graph node whose value is stored.
    pub node: NodeId,
    /// Its name, for display.
    pub node_name: String,
    /// The buffer holding it.
    pub buffer: BufferId,
    /// Its length in elements.
    pub len_elems: Expr,
    /// The kernel that writes it first.
    pub first_kernel: usize,
    /// The last kernel that reads it (`None`: read only by the caller).
    pub last_kernel: Option<usize>,
}

/// The lowered program: buffers, kernels in launch order, and the memory plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Every buffer: inputs, parameters, outputs, temporaries.
    pub buffers: Vec<Buffer>,
    /// Kernels in launch order.
    pub kernels: Vec<Kernel>,
    /// The buffer of each graph input, in order.
    pub inputs: Vec<BufferId>,
    /// Symbolic shape of each graph input (the runtime binds symbols from them).
    pub input_shapes: Vec<Vec<Expr>>,
    /// The size expression of each int argument, in order (the runtime binds the symbols
    /// of dynamic ones from the call's values).
    pub int_inputs: Vec<Expr>,
    /// The shape of each lifted tensor (`graph::Lifted`) with its sizes, which bind its
    /// symbols at every call.
    pub lifted: Vec<(Vec<Expr>, Vec<i64>)>,
    /// The buffer of each returned tensor, in order.
    pub outputs: Vec<BufferId>,
    /// Symbolic shape of each returned tensor.
    pub output_shapes: Vec<Vec<Expr>>,
    /// Where each materialised tensor lives (the liveness-based memory plan).
    pub placements: Vec<Placement>,
    /// Ranges of the shape symbols (guards hold them; codegen relies on them).
    pub ranges: BTreeMap<Sym, ValueRange>,
    /// Index variables are `Sym(first_index_sym + i)`; every shape symbol is below it.
    pub first_index_sym: u32,
    /// What lowering decided and why (fusions, folds), for the trace.
    pub notes: Vec<String>,
}

impl Schedule {
    /// The buffer with this id.
    pub fn buffer(&self, id: BufferId) -> &Buffer {
        &self.buffers[id.index()]
    }

    /// The range of a shape symbol (unbounded when unknown).
    pub fn range(&self, sym: Sym) -> ValueRange {
        self.ranges
            .get(&sym)
            .copied()
            .unwrap_or_else(ValueRange::unbounded)
    }

    /// Ranges of shape symbols and, for `kernel`, of its local symbols.
    pub fn ranges_in<'a>(&'a self, kernel: &'a Kernel) -> impl Fn(Sym) -> ValueRange + 'a {
        move |sym| kernel.range(sym, &|s| self.range(s))
    }

    /// Every shape symbol the schedule depends on.
    pub fn shape_syms(&self) -> Vec<Sym> {
        let mut syms = BTreeSet::new();
        for kernel in &self.kernels {
            syms.extend(kernel.shape_syms());
        }
        for buffer in &self.buffers {
            syms.extend(buffer.len_elems.free_syms());
        }
        syms.into_iter().collect()
    }
}
