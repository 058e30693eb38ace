//! The WGSL `main` of each kernel body: map, tiled, blocked or naive matrix product, row
//! reduction (its threads combined through workgroup memory, or by subgroup where the
//! device has subgroup operations), pooling.
//!
//! In: a `Writer` for one kernel. Out: module-scope workgroup arrays, helper functions that
//! touch them, and `fn main`. Invariants: every `workgroupBarrier` sits in control flow
//! that is uniform across the workgroup (loop bounds and early returns depend only on
//! sizes and the workgroup id); the workgroup id is linear, `wid.x + wid.y * nwg.x`, so
//! the host may split a large dispatch over two grid dimensions, and threads past the end
//! return early; bounds checks are emitted unless static sizes prove them redundant.

use super::value::Writer;
use crate::graph::PoolKind;
use crate::lower::{
    BLOCK_M, BLOCK_N, Body, Gemm, GemmStrategy, MAP_WORKGROUP, Pool, RowOp, Rows, SMALL_WORKGROUP,
    TILE_K, TILE_M, TILE_N, TILE_N_NARROW, TILE_THREAD_M, Value, Vec4Operands,
};
use crate::symbolic::Expr;
use std::fmt::Write;

/// Largest workgroup count a single grid dimension takes (WebGPU's default limit).
const MAX_GRID_DIM: i64 = 65_535;

// A blocked product's columns are the lanes of whole `vec4` accumulators, and its rows
// the lanes of an octet of a subgroup (`block_frame`), a power of two.
const _: () = assert!(
    BLOCK_N % 4 == 0 && BLOCK_M == 8,
    "a blocked product's columns are whole vec4s and its rows a subgroup octet"
);

// A tiled product's thread owns whole `vec4`s of both tiles, at either tile width.
const _: () = {
    let threads = SMALL_WORKGROUP as i64;
    let narrow = TILE_M * TILE_N_NARROW / threads / TILE_THREAD_M;
    let wide = TILE_M * TILE_N / threads / TILE_THREAD_M;
    assert!(
        TILE_THREAD_M % 4 == 0 && narrow % 4 == 0 && wide % 4 == 0,
        "a tiled thread's block is whole vec4s"
    );
    assert!(
        (TILE_M * TILE_K) % threads == 0 && (TILE_K * TILE_N_NARROW) % threads == 0,
        "every thread loads as many tile elements"
    );
};

/// Near the most negative finite f32: the identity of `max` (WGSL may assume no infinities,
/// and Tint rejects a literal that rounds beyond the f32 range, such as -3.40282347e38).
const LOWEST: &str = "-3.4028234e38f";

/// `main` (and what it needs at module scope) of the writer's kernel; `vec4` is where a
/// blocked or naive product reads its operands as `vec4`s (their bindings are declared so);
/// with `subgroups`, a row reduction combines its threads' parts with subgroup operations.
pub fn emit(w: &Writer<'_>, vec4: Option<&Vec4Operands>, subgroups: bool) -> String {
    match &w.kernel.body {
        Body::Map { len, value, store } => map(w, len, value, store),
        Body::Gemm(gemm) => match (gemm.strategy, vec4) {
            (GemmStrategy::Tiled, _) => tiled(w, gemm),
            (GemmStrategy::Naive, None) => naive(w, gemm),
            (GemmStrategy::Naive, Some(vec4)) => naive_vec4(w, gemm, vec4),
            (GemmStrategy::Blocked, vec4) => blocked(w, gemm, vec4, subgroups),
        },
        Body::Rows(rows) => row_reduction(w, rows, subgroups),
        Body::Pool(pool) => pooling(w, pool),
    }
}

/// Which subgroup builtins `main` takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SubgroupBuiltins {
    /// None: the kernel uses no subgroup operation.
    None,
    /// A row reduction's: the lane, the subgroup and the number of subgroups, kept in the
    /// module's private variables for the reduction helpers.
    Reduction,
    /// A blocked product's: the lane (`sg_lane`) and the subgroup's size (`sg_size`).
    Lanes,
}

/// `@compute` attributes and the signature of `main`, with the `builtins` asked for.
fn header(threads: u32, builtins: SubgroupBuiltins) -> String {
    let (builtins, keep) = match builtins {
        SubgroupBuiltins::None => ("", ""),
        SubgroupBuiltins::Reduction => (
            "    @builtin(subgroup_invocation_id) subgroup_lane: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
",
            "    sg_lane = subgroup_lane;
    sg_id = subgroup;
    sg_count = subgroups;
",
        ),
        SubgroupBuiltins::Lanes => (
            "    @builtin(subgroup_invocation_id) sg_lane: u32,
    @builtin(subgroup_size) sg_size: u32,
",
            "",
        ),
    };
    format!(
        "@compute @workgroup_size({threads})
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
{builtins}) {{
{keep}"
    )
}

/// Sizes, the linear workgroup id, and the early return of workgroups past the end
/// (dropped when static sizes make the grid exact).
fn prologue(w: &Writer<'_>, threads: u32) -> String {
    prologue_with(w, threads, SubgroupBuiltins::None)
}

/// [`prologue`], with the subgroup `builtins` asked for.
fn prologue_with(w: &Writer<'_>, threads: u32, builtins: SubgroupBuiltins) -> String {
    let mut text = header(threads, builtins);
    text.push_str(&w.size_lets());
    text.push_str(&w.define("WORKGROUPS", &w.kernel.workgroups));
    text.push_str("    let wg = i32(wid.x + wid.y * nwg.x);\n");
    let exact = w
        .static_int(&w.kernel.workgroups)
        .is_some_and(|n| n <= MAX_GRID_DIM);
    if !exact {
        text.push_str("    if (wg >= WORKGROUPS) {\n        return;\n    }\n");
    }
    text
}

/// Whether static sizes make `expr` a multiple of `per` (so its bounds check is redundant).
fn divides(w: &Writer<'_>, expr: &Expr, per: i64) -> bool {
    w.static_int(expr).is_some_and(|v| v % per == 0)
}

fn store(w: &Writer<'_>, indent: &str, store: &Expr, value: &Value, acc: &str) -> String {
    format!(
        "{indent}{}[{}] = {};\n",
        w.schedule.buffer(w.kernel.output).name,
        w.expr(store),
        w.value(value, acc)
    )
}

fn map(w: &Writer<'_>, len: &Expr, value: &Value, at: &Expr) -> String {
    let mut text = prologue(w, MAP_WORKGROUP);
    text.push_str(&w.define("LEN", len));
    let _ = writeln!(text, "    let gid = wg * {MAP_WORKGROUP}i + i32(lid);");
    if !divides(w, len, i64::from(MAP_WORKGROUP)) {
        text.push_str("    if (gid >= LEN) {\n        return;\n    }\n");
    }
    text.push_str(&store(w, "    ", at, value, "0.0f"));
    text.push_str("}\n");
    text
}

fn define_gemm_sizes(w: &Writer<'_>, gemm: &Gemm) -> String {
    [
        ("BATCH", &gemm.batch),
        ("M", &gemm.m),
        ("N", &gemm.n),
        ("K", &gemm.k),
    ]
    .iter()
    .map(|(name, expr)| w.define(name, expr))
    .collect()
}

/// `TILE_M x tile_n` outputs per workgroup; each of the 64 threads owns `TILE_THREAD_M`
/// rows by `tile_n / 8` columns, and the operands pass through workgroup memory `TILE_K`
/// deep.
fn tiled(w: &Writer<'_>, gemm: &Gemm) -> String {
    let tile_n = gemm.tile_n;
    let threads = i64::from(SMALL_WORKGROUP);
    let thread_n = TILE_M * tile_n / threads / TILE_THREAD_M;
    let (check_m, check_n, check_k) = (
        !divides(w, &gemm.m, TILE_M),
        !divides(w, &gemm.n, tile_n),
        !divides(w, &gemm.k, TILE_K),
    );
    let guard = |conditions: &[(bool, &str)]| {
        let active: Vec<&str> = conditions
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, c)| *c)
            .collect();
        active.join(" && ")
    };
    // `slot` is the `vec4` and component an element goes to in a transposed or plain tile.
    let load = |slot: &str, value: &Value, condition: String| {
        let value = w.value(value, "0.0f");
        if condition.is_empty() {
            format!("            {slot} = {value};\n")
        } else {
            format!(
                "            var v = 0.0f;\n            if ({condition}) {{\n                v = {value};\n            }}\n            {slot} = v;\n"
            )
        }
    };
    let a_guard = guard(&[(check_m, "row < M"), (check_k, "kk < K")]);
    let b_guard = guard(&[(check_k, "kk < K"), (check_n, "col < N")]);
    let out_guard = guard(&[(check_m, "row < M"), (check_n, "col < N")]);
    let (vecs_m, vecs_n) = (TILE_M / 4, tile_n / 4);
    let (thread_vecs_m, thread_vecs_n) = (TILE_THREAD_M / 4, thread_n / 4);
    let mut text = format!(
        "// Both tiles are stored k-major as vec4s: tile_a[p * {vecs_m} + i] holds rows 4i..4i+3 of
// column p of the A tile, tile_b[p * {vecs_n} + j] columns 4j..4j+3 of row p of the B tile.
var<workgroup> tile_a: array<vec4<f32>, {}>;
var<workgroup> tile_b: array<vec4<f32>, {}>;

",
        TILE_K * vecs_m,
        TILE_K * vecs_n,
    );
    text.push_str(&prologue(w, SMALL_WORKGROUP));
    text.push_str(&define_gemm_sizes(w, gemm));
    let accs: Vec<String> = (0..TILE_THREAD_M * thread_vecs_n)
        .map(|i| format!("acc{i}"))
        .collect();
    let _ = write!(
        text,
        "    let tiles_n = (N + {n1}i) / {tile_n}i;
    let tiles = ((M + {m1}i) / {TILE_M}i) * tiles_n;
    let bat = wg / tiles;
    let row0 = ((wg % tiles) / tiles_n) * {TILE_M}i;
    let col0 = (wg % tiles_n) * {tile_n}i;
    let ty = i32(lid) / {threads_n}i;
    let tx = i32(lid) % {threads_n}i;
",
        n1 = tile_n - 1,
        m1 = TILE_M - 1,
        threads_n = tile_n / thread_n,
    );
    for acc in &accs {
        let _ = writeln!(text, "    var {acc} = vec4<f32>();");
    }
    let _ = write!(
        text,
        "    for (var k0 = 0i; k0 < K; k0 += {TILE_K}i) {{
        for (var l = 0i; l < {per_thread_a}i; l++) {{
            let e = l * {threads}i + i32(lid);
            let r = e / {TILE_K}i;
            let p = e % {TILE_K}i;
            let row = row0 + r;
            let kk = k0 + p;
{a}        }}
        for (var l = 0i; l < {per_thread_b}i; l++) {{
            let e = l * {threads}i + i32(lid);
            let p = e / {tile_n}i;
            let c = e % {tile_n}i;
            let kk = k0 + p;
            let col = col0 + c;
{b}        }}
        workgroupBarrier();
        for (var p = 0i; p < {TILE_K}i; p++) {{
",
        per_thread_a = TILE_M * TILE_K / threads,
        per_thread_b = TILE_K * tile_n / threads,
        a = load(
            &format!("tile_a[p * {vecs_m}i + r / 4i][r % 4i]"),
            &gemm.a,
            a_guard
        ),
        b = load(
            &format!("tile_b[p * {vecs_n}i + c / 4i][c % 4i]"),
            &gemm.b,
            b_guard
        ),
    );
    let plus = |i: i64| match i {
        0 => String::new(),
        i => format!(" + {i}i"),
    };
    for i in 0..thread_vecs_m {
        let _ = writeln!(
            text,
            "            let a{i} = tile_a[p * {vecs_m}i + ty * {thread_vecs_m}i{}];",
            plus(i)
        );
    }
    for j in 0..thread_vecs_n {
        let _ = writeln!(
            text,
            "            let b{j} = tile_b[p * {vecs_n}i + tx * {thread_vecs_n}i{}];",
            plus(j)
        );
    }
    for r in 0..TILE_THREAD_M {
        let lane = ["x", "y", "z", "w"][(r % 4) as usize];
        for j in 0..thread_vecs_n {
            let _ = writeln!(
                text,
                "            acc{} += a{}.{lane} * b{j};",
                r * thread_vecs_n + j,
                r / 4
            );
        }
    }
    let _ = write!(
        text,
        "        }}
        workgroupBarrier();
    }}
    let acc = array<vec4<f32>, {count}>({list});
    for (var r = 0i; r < {TILE_THREAD_M}i; r++) {{
        let row = row0 + ty * {TILE_THREAD_M}i + r;
        for (var c = 0i; c < {thread_n}i; c++) {{
            let col = col0 + tx * {thread_n}i + c;
            let sum = acc[r * {thread_vecs_n}i + c / 4i][c % 4i];
",
        count = accs.len(),
        list = accs.join(", "),
    );
    let write = store(w, "                ", &gemm.store, &gemm.epilogue, "sum");
    if out_guard.is_empty() {
        text.push_str(&write.replacen("                ", "            ", 1));
    } else {
        let _ = write!(
            text,
            "            if ({out_guard}) {{\n{write}            }}\n"
        );
    }
    text.push_str("        }\n    }\n}\n");
    text
}

/// One thread per output element, reading its row and column straight from memory.
fn naive(w: &Writer<'_>, gemm: &Gemm) -> String {
    let mut text = naive_frame(w, gemm);
    let ((a, b), invariants) = w.hoisting(&[w.kernel.vars[3].sym], "    ", || {
        (w.value(&gemm.a, "0.0f"), w.value(&gemm.b, "0.0f"))
    });
    let _ = write!(
        text,
        "{invariants}    var sum = 0.0f;
    for (var kk = 0i; kk < K; kk++) {{
        sum += {a} * {b};
    }}
",
    );
    text.push_str(&store(w, "    ", &gemm.store, &gemm.epilogue, "sum"));
    text.push_str("}\n");
    text
}

/// The naive product over `vec4` reads: one thread per output element, each step of the
/// reduction a `vec4` of its row of `a` times one of its column of `b` (4 consecutive
/// `kk`), summed lane-wise and the lanes added at the end. A quarter of the loop steps and
/// loads of [`naive`]; on SwiftShader, SimpleNet's two products at batch 8, run back to back
/// twenty times, took 10.5 ms against 17.1 ms.
fn naive_vec4(w: &Writer<'_>, gemm: &Gemm, vec4: &Vec4Operands) -> String {
    let mut text = naive_frame(w, gemm);
    let (a, b) = (
        &w.schedule.buffer(vec4.a).name,
        &w.schedule.buffer(vec4.b).name,
    );
    let _ = write!(
        text,
        "    let a0 = {};
    let b0 = {};
    let K4 = K / 4i;
    var acc = vec4<f32>();
    for (var k4 = 0i; k4 < K4; k4++) {{
        acc += {a}[a0 + k4] * {b}[b0 + k4];
    }}
    let sum = (acc.x + acc.y) + (acc.z + acc.w);
",
        w.expr(&vec4.a_base),
        w.expr(&vec4.b_base),
    );
    text.push_str(&store(w, "    ", &gemm.store, &gemm.epilogue, "sum"));
    text.push_str("}\n");
    text
}

/// What precedes a naive product's loop: its sizes, and the output element (`bat`, `row`,
/// `col`) this thread computes; threads past the last element return. The divisors are
/// at least 1: a product with no output launches no thread, but its static code must
/// still validate, and WGSL refuses a constant division by zero.
fn naive_frame(w: &Writer<'_>, gemm: &Gemm) -> String {
    let mut text = prologue(w, SMALL_WORKGROUP);
    text.push_str(&define_gemm_sizes(w, gemm));
    let _ = write!(
        text,
        "    let gid = wg * {SMALL_WORKGROUP}i + i32(lid);
    if (gid >= BATCH * M * N) {{
        return;
    }}
    let bat = gid / max(M * N, 1i);
    let row = (gid % max(M * N, 1i)) / max(N, 1i);
    let col = gid % max(N, 1i);
",
    );
    text
}

/// `BLOCK_M x BLOCK_N` outputs per thread read straight from global memory, without
/// workgroup memory (whose size is what makes a tiled pipeline slow to build on CPU
/// emulations); `vec4` where both operands are read as `vec4`s ([`blocked_vec4_loop`]),
/// else scalar ones ([`blocked_scalar_loop`]). With `subgroups`, the threads of a subgroup
/// that share their rows of `a` load them once between them ([`block_frame`]).
fn blocked(w: &Writer<'_>, gemm: &Gemm, vec4: Option<&Vec4Operands>, subgroups: bool) -> String {
    let (mut text, tail) = block_frame(w, gemm, subgroups);
    let reduction_loop = |shuffled: bool| match vec4 {
        Some(vec4) => blocked_vec4_loop(w, vec4, shuffled),
        None => blocked_scalar_loop(w, gemm, shuffled),
    };
    if subgroups {
        let _ = write!(
            text,
            "    if (octets_share) {{\n{}    }} else {{\n{}    }}\n",
            indent(&reduction_loop(true)),
            indent(&reduction_loop(false))
        );
    } else {
        text.push_str(&reduction_loop(false));
    }
    text.push_str(&tail);
    text
}

/// `text` with every line indented one level more.
fn indent(text: &str) -> String {
    text.lines().map(|line| format!("    {line}\n")).collect()
}

/// Row `r` of `a` in this thread's block, as `a`: `value` (the scalar or `vec4` read of `a`
/// at `row`) at row `row0 + r`, or, `shuffled`, taken from lane `octet | r` of the octet,
/// which loaded it as its `mine`.
fn a_row(r: i64, value: &str, shuffled: bool) -> String {
    if shuffled {
        format!("        {{\n            let a = subgroupShuffle(mine, octet | {r}u);\n")
    } else {
        format!(
            "        {{\n            let row = min(row0 + {r}i, M - 1i);\n            let a = {value};\n"
        )
    }
}

/// The reduction of a blocked product with scalar operands: each step loads `BLOCK_M`
/// values of `a` and `BLOCK_N / 4` `vec4`s of `b` and does `BLOCK_M * BLOCK_N`
/// multiply-adds. A block that runs past the last row or column loads that row or column
/// again (clamped, so the loop has no branch: a guard there halved its speed on
/// SwiftShader) and stores only what is inside.
fn blocked_scalar_loop(w: &Writer<'_>, gemm: &Gemm, shuffled: bool) -> String {
    let per_row = BLOCK_N / 4;
    let mut text = String::from("    for (var kk = 0i; kk < K; kk++) {\n");
    let b = w.value(&gemm.b, "0.0f");
    for j in 0..per_row {
        let _ = writeln!(text, "        var b{j} = vec4<f32>();");
        for (lane_index, lane) in ["x", "y", "z", "w"].iter().enumerate() {
            let _ = writeln!(
                text,
                "        {{\n            let col = min(col0 + {}i, N - 1i);\n            b{j}.{lane} = {b};\n        }}",
                4 * j + lane_index as i64
            );
        }
    }
    let a = w.value(&gemm.a, "0.0f");
    if shuffled {
        let _ = write!(
            text,
            "        var mine: f32;\n        {{\n            let row = min(row0 + i32(sg_lane % {BLOCK_M}u), M - 1i);\n            mine = {a};\n        }}\n"
        );
    }
    for r in 0..BLOCK_M {
        text.push_str(&a_row(r, &a, shuffled));
        for j in 0..per_row {
            let _ = writeln!(text, "            acc{} += a * b{j};", r * per_row + j);
        }
        text.push_str("        }\n");
    }
    text.push_str("    }\n");
    text
}

/// What surrounds a blocked product's loop: before it, the block of `BLOCK_M` by `BLOCK_N`
/// outputs this thread owns (`row0`, `col0`) and `BLOCK_N / 4` `vec4` accumulators per row,
/// `acc{r * BLOCK_N / 4 + j}` holding columns `4j..4j+3` of row `r`; after it, the stores
/// of the outputs inside the result (one loop over an array of the accumulators: stores
/// unrolled per output made SwiftShader's pipeline build 2–5× as long).
///
/// With `subgroups`, threads past the last block do not return (a subgroup operation wants
/// its whole subgroup): they compute the last block again and store nothing (`live`). The
/// lanes of each octet of a subgroup (`8j .. 8j + 7`, `octet`) whose blocks share their
/// rows of `a` (the same `bat` and `row0`) each load one of those rows and shuffle it to the
/// other seven: a load of every row per octet where each thread loaded all eight.
/// `octets_share` says whether every octet of the subgroup shares its rows (the same value
/// on all of its lanes, so the branch on it keeps subgroups whole): so where the columns of
/// a block row are a multiple of 8 blocks and the lanes run along the blocks, else the
/// plain loads.
fn block_frame(w: &Writer<'_>, gemm: &Gemm, subgroups: bool) -> (String, String) {
    let (rows, cols) = (BLOCK_M, BLOCK_N);
    let builtins = match subgroups {
        true => SubgroupBuiltins::Lanes,
        false => SubgroupBuiltins::None,
    };
    let mut head = prologue_with(w, SMALL_WORKGROUP, builtins);
    head.push_str(&define_gemm_sizes(w, gemm));
    let _ = write!(
        head,
        "    let gid = wg * {SMALL_WORKGROUP}i + i32(lid);
    let blocks_n = (N + {n1}i) / {cols}i;
    let blocks = ((M + {m1}i) / {rows}i) * blocks_n;
",
        n1 = cols - 1,
        m1 = rows - 1,
    );
    let block = if subgroups {
        let _ = write!(
            head,
            "    let live = gid < BATCH * blocks;
    let g = max(min(gid, BATCH * blocks - 1i), 0i);
    let octet = sg_lane & ~{mask}u;
    let block_row = g / blocks_n;
    var grouped = sg_size >= {rows}u;
    for (var r = 0u; r < {rows}u; r++) {{
        grouped = grouped & (subgroupShuffle(block_row, octet | r) == block_row);
    }}
    let octets_share = subgroupAll(grouped);
",
            mask = rows - 1,
        );
        "g"
    } else {
        head.push_str("    if (gid >= BATCH * blocks) {\n        return;\n    }\n");
        "gid"
    };
    let _ = write!(
        head,
        "    let bat = {block} / blocks;
    let row0 = (({block} % blocks) / blocks_n) * {rows}i;
    let col0 = ({block} % blocks_n) * {cols}i;
"
    );
    let per_row = cols / 4;
    let accs: Vec<String> = (0..rows * per_row).map(|i| format!("acc{i}")).collect();
    for acc in &accs {
        let _ = writeln!(head, "    var {acc} = vec4<f32>();");
    }
    let inside = match subgroups {
        true => "live && row < M && col < N",
        false => "row < M && col < N",
    };
    let tail = format!(
        "    let acc = array<vec4<f32>, {count}>({});
    for (var r = 0i; r < {rows}i; r++) {{
        let row = row0 + r;
        for (var c = 0i; c < {cols}i; c++) {{
            let col = col0 + c;
            let sum = acc[r * {per_row}i + c / 4i][c % 4i];
            if ({inside}) {{
{}            }}
        }}
    }}
}}
",
        accs.join(", "),
        store(w, "                ", &gemm.store, &gemm.epilogue, "sum"),
        count = accs.len(),
    );
    (head, tail)
}

/// The reduction of a blocked product over `vec4` reads: each step loads one `vec4` of
/// every row of `a` and every column of `b` (4 consecutive `kk`) and takes their dot
/// products, four to a `vec4` accumulator. Rows and columns past the end are clamped as in
/// [`blocked_scalar_loop`]; the loop body is not unrolled (SwiftShader ran an unrolled or
/// nested loop 30–50% slower).
fn blocked_vec4_loop(w: &Writer<'_>, vec4: &Vec4Operands, shuffled: bool) -> String {
    let mut text = String::from("    let K4 = K / 4i;\n    for (var k4 = 0i; k4 < K4; k4++) {\n");
    let (a, b) = (
        &w.schedule.buffer(vec4.a).name,
        &w.schedule.buffer(vec4.b).name,
    );
    for c in 0..BLOCK_N {
        let _ = writeln!(
            text,
            "        var b{c}: vec4<f32>;\n        {{\n            let col = min(col0 + {c}i, N - 1i);\n            b{c} = {b}[{} + k4];\n        }}",
            w.expr(&vec4.b_base)
        );
    }
    let a_read = format!("{a}[{} + k4]", w.expr(&vec4.a_base));
    if shuffled {
        let _ = write!(
            text,
            "        var mine: vec4<f32>;\n        {{\n            let row = min(row0 + i32(sg_lane % {BLOCK_M}u), M - 1i);\n            mine = {a_read};\n        }}\n"
        );
    }
    let per_row = BLOCK_N / 4;
    for r in 0..BLOCK_M {
        text.push_str(&a_row(r, &a_read, shuffled));
        for j in 0..per_row {
            let c = 4 * j;
            let _ = writeln!(
                text,
                "            acc{} += vec4<f32>(dot(a, b{c}), dot(a, b{}), dot(a, b{}), dot(a, b{}));",
                r * per_row + j,
                c + 1,
                c + 2,
                c + 3
            );
        }
        text.push_str("        }\n");
    }
    text.push_str("    }\n");
    text
}

/// A tree reduction over the workgroup's 64 partial results (uniform control flow).
fn reduce_helpers() -> String {
    let half = SMALL_WORKGROUP / 2;
    let mut text = format!("var<workgroup> partial: array<f32, {SMALL_WORKGROUP}>;\n");
    for (name, combine) in [
        ("sum", "partial[lane] + partial[lane + s]"),
        ("max", "max(partial[lane], partial[lane + s])"),
    ] {
        let _ = write!(
            text,
            "
// The workgroup's {name} of each thread's `v`, returned to every thread.
fn workgroup_{name}(v: f32, lane: i32) -> f32 {{
    partial[lane] = v;
    workgroupBarrier();
    for (var s = {half}i; s > 0i; s = s / 2i) {{
        if (lane < s) {{
            partial[lane] = {combine};
        }}
        workgroupBarrier();
    }}
    let total = partial[0];
    workgroupBarrier();
    return total;
}}
"
        );
    }
    text.push('\n');
    text
}

/// The workgroup's sum and maximum through subgroup operations: each subgroup combines its
/// lanes at once (`subgroupAdd`, `subgroupMax`) and leaves one part in workgroup memory,
/// which every thread then adds up: two barriers against the tree's eight.
fn subgroup_reduce_helpers() -> String {
    let mut text = format!(
        "var<workgroup> partial: array<f32, {SMALL_WORKGROUP}>;
var<private> sg_lane: u32;
var<private> sg_id: u32;
var<private> sg_count: u32;
"
    );
    for (name, subgroup_op, init, combine) in [
        ("sum", "subgroupAdd", "0.0f", "total + partial[i]"),
        ("max", "subgroupMax", LOWEST, "max(total, partial[i])"),
    ] {
        let _ = write!(
            text,
            "
// The workgroup's {name} of each thread's `v`, returned to every thread.
fn workgroup_{name}(v: f32, lane: i32) -> f32 {{
    let part = {subgroup_op}(v);
    if (sg_lane == 0u) {{
        partial[sg_id] = part;
    }}
    workgroupBarrier();
    var total = {init};
    for (var i = 0u; i < sg_count; i++) {{
        total = {combine};
    }}
    workgroupBarrier();
    return total;
}}
"
        );
    }
    text.push('\n');
    text
}

/// One workgroup per row; strided passes over the row, combined by `workgroup_sum/max`
/// (with `subgroups`, [`subgroup_reduce_helpers`]' forms of them).
fn row_reduction(w: &Writer<'_>, rows: &Rows, subgroups: bool) -> String {
    let mut text = if subgroups {
        subgroup_reduce_helpers()
    } else {
        reduce_helpers()
    };
    let builtins = match subgroups {
        true => SubgroupBuiltins::Reduction,
        false => SubgroupBuiltins::None,
    };
    text.push_str(&prologue_with(w, SMALL_WORKGROUP, builtins));
    text.push_str(&w.define("ROWS", &rows.rows));
    text.push_str(&w.define("LEN", &rows.len));
    text.push_str("    let row = wg;\n    let lane = i32(lid);\n");
    let (x, invariants) = w.hoisting(&[w.kernel.vars[1].sym], "    ", || {
        w.value(&rows.input, "0.0f")
    });
    text.push_str(&invariants);
    // One strided pass: `var {acc} = {init}; … {acc} = {update};` over this thread's share.
    let pass = |acc: &str, init: &str, update: &str| {
        format!(
            "    var {acc} = {init};
    for (var e = lane; e < LEN; e += {SMALL_WORKGROUP}i) {{
        let x = {x};
        {acc} = {update};
    }}
"
        )
    };
    let write_each = |value: &str| {
        format!(
            "    for (var e = lane; e < LEN; e += {SMALL_WORKGROUP}i) {{
        let x = {x};
        let y = {value};
{}    }}
",
            store(w, "        ", &rows.store, &rows.epilogue, "y")
        )
    };
    let write_once = |value: &str| {
        format!(
            "    if (lane == 0i) {{
        let y = {value};
{}    }}
",
            store(w, "        ", &rows.store, &rows.epilogue, "y")
        )
    };
    match rows.op {
        RowOp::Sum | RowOp::Mean => {
            text.push_str(&pass("part", "0.0f", "part + x"));
            text.push_str("    let total = workgroup_sum(part, lane);\n");
            let value = if rows.op == RowOp::Mean {
                "total / f32(LEN)"
            } else {
                "total"
            };
            text.push_str(&write_once(value));
        }
        RowOp::Max => {
            text.push_str(&pass("part", LOWEST, "max(part, x)"));
            text.push_str("    let total = workgroup_max(part, lane);\n");
            text.push_str(&write_once("total"));
        }
        RowOp::Softmax => {
            text.push_str(&pass("part_max", LOWEST, "max(part_max, x)"));
            text.push_str("    let top = workgroup_max(part_max, lane);\n");
            text.push_str(&pass("part_sum", "0.0f", "part_sum + exp(x - top)"));
            text.push_str("    let total = workgroup_sum(part_sum, lane);\n");
            text.push_str(&write_each("exp(x - top) / total"));
        }
        RowOp::LogSoftmax => {
            text.push_str(&pass("part_max", LOWEST, "max(part_max, x)"));
            text.push_str("    let top = workgroup_max(part_max, lane);\n");
            text.push_str(&pass("part_sum", "0.0f", "part_sum + exp(x - top)"));
            text.push_str("    let log_total = log(workgroup_sum(part_sum, lane));\n");
            text.push_str(&write_each("x - top - log_total"));
        }
        RowOp::LayerNorm { eps } => {
            text.push_str(&pass("part_sum", "0.0f", "part_sum + x"));
            text.push_str("    let mean = workgroup_sum(part_sum, lane) / f32(LEN);\n");
            text.push_str(&pass(
                "part_var",
                "0.0f",
                "part_var + (x - mean) * (x - mean)",
            ));
            let _ = writeln!(
                text,
                "    let inv = 1.0f / sqrt(workgroup_sum(part_var, lane) / f32(LEN) + {});",
                super::value::float_literal(eps)
            );
            text.push_str(&write_each("(x - mean) * inv"));
        }
    }
    text.push_str("}\n");
    text
}

fn pooling(w: &Writer<'_>, pool: &Pool) -> String {
    let mut text = prologue(w, MAP_WORKGROUP);
    text.push_str(&w.define("LEN", &pool.len));
    let _ = writeln!(text, "    let gid = wg * {MAP_WORKGROUP}i + i32(lid);");
    if !divides(w, &pool.len, i64::from(MAP_WORKGROUP)) {
        text.push_str("    if (gid >= LEN) {\n        return;\n    }\n");
    }
    let (init, update) = match pool.kind {
        PoolKind::Max => (LOWEST, "max(acc, x)"),
        PoolKind::Avg => ("0.0f", "acc + x"),
    };
    let window = [w.kernel.vars[1].sym, w.kernel.vars[2].sym];
    let ((inside, x), invariants) = w.hoisting(&window, "    ", || {
        let inside: Vec<String> = pool
            .inside
            .iter()
            .map(|b| format!("inside({}, {})", w.expr(&b.expr), w.expr(&b.limit)))
            .collect();
        (inside, w.value(&pool.value, "0.0f"))
    });
    text.push_str(&invariants);
    let (open, close) = if inside.is_empty() {
        (String::new(), String::new())
    } else {
        (
            format!("            if ({}) {{\n    ", inside.join(" && ")),
            "            }\n".to_string(),
        )
    };
    let _ = write!(
        text,
        "    var acc = {init};
    for (var ky = 0i; ky < {kh}i; ky++) {{
        for (var kx = 0i; kx < {kw}i; kx++) {{
{open}            let x = {x};
{open_pad}            acc = {update};
{close}        }}
    }}
",
        kh = pool.window[0],
        kw = pool.window[1],
        open_pad = if inside.is_empty() { "" } else { "    " },
    );
    if pool.kind == PoolKind::Avg {
        let _ = writeln!(
            text,
            "    acc = acc / {}.0f;",
            pool.window[0] * pool.window[1]
        );
    }
    text.push_str(&store(w, "    ", &pool.store, &pool.epilogue, "acc"));
    text.push_str("}\n");
    text
}
