//! Unit tests of lowering: index arithmetic, fusion decisions and the memory plan, each
//! checked on the smallest program that shows it.

use super::*;
use crate::config::{CompileConfig, DynamicMode};
use crate::graph::{self, Graph};
use crate::symbolic::{Bindings, Expr};

/// A module whose `__init__` runs `init` and whose `forward(x)` runs `forward`.
fn module(init: &str, forward: &str) -> String {
    format!(
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        {init}\n    def forward(self, x):\n        {forward}\n"
    )
}

/// Compiles `source` with `dynamic=True` at `x`; the entry's graph and its lowering under
/// `policy`.
fn lowered(source: &str, x: &str, policy: FusionPolicy) -> (Graph, Schedule) {
    let mut cache = crate::session::load(source, None).expect("loads");
    let call = crate::spec::parse_shapes(x, &cache.entry_point().inputs).expect("shapes");
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    let id = cache
        .call(0, &config, &call, &Default::default(), &|| 0.0)
        .entry
        .expect("compiles");
    let entry = cache.entry(id).expect("entry");
    let schedule = lower_with(&entry.graph, &|sym| entry.env.range(sym), policy).expect("lowers");
    (entry.graph.clone(), schedule)
}

/// Lowers `forward` (the body of a module with `init`) compiled with `dynamic=True` at `x`.
fn schedule(init: &str, forward: &str, x: &str) -> Schedule {
    lowered(&module(init, forward), x, FusionPolicy::Fused).1
}

/// Runs `schedule` on the CPU backend at input sizes `shape` and checks it against the
/// graph reference, within `1e-4 * max(1, |reference|)` per element.
#[track_caller]
fn assert_matches_reference(graph: &Graph, schedule: &Schedule, shape: &[usize]) {
    let inputs = graph::random_inputs(&[("x".to_string(), shape.to_vec())], 3);
    let mut bindings = Bindings::new();
    for (dim, &size) in graph.shape(graph.inputs[0]).iter().zip(shape) {
        if let Some(sym) = dim.as_sym() {
            bindings.set(sym, size as i64);
        }
    }
    let expected = graph::eval(graph, &bindings, &inputs).expect("the reference runs");
    let actual = crate::runtime::cpu::run(schedule, &inputs, &[]).expect("the CPU backend runs");
    assert_eq!(actual.len(), expected.len());
    for (a, e) in actual.iter().zip(&expected) {
        assert_eq!(a.shape, e.shape);
        for (x, y) in a.data.iter().zip(&e.data) {
            assert!((x - y).abs() <= 1e-4 * y.abs().max(1.0), "{x} != {y}");
        }
    }
}

fn kernel_names(schedule: &Schedule) -> Vec<&str> {
    schedule.kernels.iter().map(|k| k.name.as_str()).collect()
}

#[test]
fn unravel_inverts_ravel() {
    let shape = [Expr::int(3), Expr::int(4), Expr::int(5)];
    let flat = Expr::sym(Sym(0));
    let back = ravel(&unravel(&flat, &shape), &shape);
    for value in 0..60 {
        let bindings: Bindings = [(Sym(0), value)].into_iter().collect();
        assert_eq!(back.eval(&bindings), Some(value));
    }
}

#[test]
fn elementwise_of_two_producers_joins_the_later_one() {
    let schedule = schedule(
        "self.a = nn.Linear(4, 4)\n        self.b = nn.Linear(4, 4)",
        "return self.a(x) + self.b(x)",
        "x=3,4",
    );
    assert_eq!(kernel_names(&schedule), ["k0_linear", "k1_linear_1_add"]);
}

#[test]
fn a_value_read_twice_is_stored_not_fused() {
    let schedule = schedule(
        "self.fc = nn.Linear(4, 4)",
        "y = self.fc(x)\n        return torch.relu(y), y",
        "x=3,4",
    );
    assert_eq!(kernel_names(&schedule), ["k0_linear", "k1_relu"]);
}

#[test]
fn memory_plan_reuses_dead_temporaries() {
    let schedule = schedule(
        "self.fc = nn.Linear(4, 4)",
        "return self.fc(self.fc(self.fc(self.fc(x))))",
        "x=3,4",
    );
    let temps: Vec<&str> = schedule
        .placements
        .iter()
        .map(|p| schedule.buffer(p.buffer).name.as_str())
        .collect();
    assert_eq!(temps, ["t0", "t1", "t0", "out0"]);
}

#[test]
fn views_cost_no_kernel() {
    let schedule = schedule(
        "self.fc = nn.Linear(6, 2)",
        "return self.fc(x.transpose(0, 1)[:, 1:])",
        "x=7,5",
    );
    assert_eq!(kernel_names(&schedule), ["k0_linear"]);
}

const CONV_BATCH_NORM: (&str, &str) = (
    "self.conv = nn.Conv2d(3, 4, 3, padding=1)\n        self.bn = nn.BatchNorm2d(4)",
    "return self.bn(self.conv(x))",
);

#[test]
fn simplenet_is_two_kernels_fused_and_three_per_op() {
    let (_, fused) = lowered(
        crate::session::SIMPLENET_SOURCE,
        "x=8,64",
        FusionPolicy::Fused,
    );
    assert_eq!(kernel_names(&fused), ["k0_linear_relu", "k1_linear_1"]);
    let (_, per_op) = lowered(
        crate::session::SIMPLENET_SOURCE,
        "x=8,64",
        FusionPolicy::PerOp,
    );
    assert_eq!(
        kernel_names(&per_op),
        ["k0_linear", "k1_relu", "k2_linear_1"]
    );
    assert!(per_op.notes.is_empty(), "{:?}", per_op.notes);
}

#[test]
fn batch_norm_folds_into_the_conv_only_when_fused() {
    let source = module(CONV_BATCH_NORM.0, CONV_BATCH_NORM.1);
    let (_, fused) = lowered(&source, "x=1,3,8,8", FusionPolicy::Fused);
    assert_eq!(kernel_names(&fused), ["k0_conv2d_batch_norm"]);
    assert!(
        fused
            .notes
            .iter()
            .any(|n| n.starts_with("folded batch_norm"))
    );
    let (_, per_op) = lowered(&source, "x=1,3,8,8", FusionPolicy::PerOp);
    assert_eq!(kernel_names(&per_op), ["k0_conv2d", "k1_batch_norm"]);
    assert!(per_op.notes.is_empty(), "{:?}", per_op.notes);
}

#[test]
fn per_op_views_still_cost_no_kernel() {
    let source = module(
        "self.fc = nn.Linear(6, 2)",
        "return torch.relu(self.fc(x.transpose(0, 1)[:, 1:]))",
    );
    let (_, per_op) = lowered(&source, "x=7,5", FusionPolicy::PerOp);
    assert_eq!(kernel_names(&per_op), ["k0_linear", "k1_relu"]);
}

#[test]
fn per_op_schedules_verify_and_match_the_reference() {
    let conv = module(CONV_BATCH_NORM.0, CONV_BATCH_NORM.1);
    let residual = module(
        "self.fc = nn.Linear(8, 8)",
        "return torch.relu(self.fc(x) * 2 + x).sum(-1)",
    );
    let cases: [(&str, &str, &[&[usize]]); 3] = [
        (
            crate::session::SIMPLENET_SOURCE,
            "x=8,64",
            &[&[8, 64], &[5, 64]],
        ),
        (&conv, "x=2,3,8,9", &[&[2, 3, 8, 9], &[3, 3, 7, 5]]),
        (&residual, "x=4,8", &[&[4, 8], &[9, 8]]),
    ];
    for (source, x, shapes) in cases {
        let (graph, schedule) = lowered(source, x, FusionPolicy::PerOp);
        assert_eq!(super::plan::verify(&schedule), Ok(()), "{schedule}");
        for shape in shapes {
            assert_matches_reference(&graph, &schedule, shape);
        }
    }
}

#[test]
fn a_product_runs_its_large_form_only_where_it_fills_half_a_tile_and_is_large() {
    let cases = [
        // (batch, m, n, k): SimpleNet's first layer at batch 8, 1024, and a 31-row product.
        ((1, 8, 128, 64), GemmStrategy::Naive),
        ((1, 1024, 128, 64), GemmStrategy::Tiled),
        ((1, 31, 4096, 4096), GemmStrategy::Naive),
        ((1, 4096, 31, 4096), GemmStrategy::Naive),
        ((1, 32, 32, 4096), GemmStrategy::Tiled),
        ((1, 32, 32, 4095), GemmStrategy::Naive),
        ((4, 32, 32, 1024), GemmStrategy::Tiled),
        (
            (i64::MAX, i64::MAX, i64::MAX, i64::MAX),
            GemmStrategy::Tiled,
        ),
    ];
    for ((batch, m, n, k), expected) in cases {
        assert_eq!(
            GemmStrategy::for_sizes(batch, m, n, k, GemmStrategy::Tiled),
            expected,
            "batch {batch}, {m}x{k} by {k}x{n}"
        );
        let blocked = match expected {
            GemmStrategy::Tiled => GemmStrategy::Blocked,
            small => small,
        };
        assert_eq!(
            GemmStrategy::for_sizes(batch, m, n, k, GemmStrategy::Blocked),
            blocked,
            "batch {batch}, {m}x{k} by {k}x{n}, blocked where large"
        );
    }
    let linear = schedule(
        "self.fc = nn.Linear(64, 128)",
        "return self.fc(x)",
        "x=8,64",
    );
    let kernel = &linear.kernels[0];
    let s0 = linear.input_shapes[0][0].as_sym().expect("a dynamic batch");
    let at = |batch: i64| {
        let mut bindings = Bindings::new();
        bindings.set(s0, batch);
        kernel.strategy_at(&bindings, GemmStrategy::Blocked)
    };
    assert_eq!(at(8), Some(GemmStrategy::Naive));
    assert_eq!(at(1024), Some(GemmStrategy::Blocked));
    let naive = kernel.with_strategy(GemmStrategy::Naive);
    assert_eq!(
        naive.strategy_at(&Bindings::new(), GemmStrategy::Tiled),
        None,
        "already naive"
    );
    // A convolution gathers windows: large, it runs tiled even where products run blocked.
    let conv = schedule(
        "self.conv = nn.Conv2d(32, 32, 3, padding=1)",
        "return self.conv(x)",
        "x=1,32,64,64",
    );
    let kernel = &conv.kernels[0];
    let mut bindings = Bindings::new();
    for (dim, &size) in conv.input_shapes[0].iter().zip(&[1, 32, 64, 64]) {
        if let Some(sym) = dim.as_sym() {
            bindings.set(sym, size);
        }
    }
    assert_eq!(
        kernel.strategy_at(&bindings, GemmStrategy::Blocked),
        Some(GemmStrategy::Tiled)
    );
}

#[test]
fn a_tiled_product_is_as_wide_as_its_columns_need() {
    let tile_n = |init: &str, forward: &str, x: &str| {
        let schedule = schedule(init, forward, x);
        let Body::Gemm(gemm) = &schedule.kernels[0].body else {
            panic!("a product kernel first");
        };
        (gemm.tile_n, schedule.kernels[0].workgroups.to_string())
    };
    // 32 output channels: a 64-wide tile would leave half its threads without columns.
    assert_eq!(
        tile_n(
            "self.conv = nn.Conv2d(32, 32, 3, padding=1)",
            "return self.conv(x)",
            "x=1,32,64,64",
        )
        .0,
        TILE_N_NARROW
    );
    let (wide, workgroups) = tile_n(
        "self.fc = nn.Linear(64, 128)",
        "return self.fc(x)",
        "x=8,64",
    );
    assert_eq!(wide, TILE_N);
    assert_eq!(workgroups, format!("2*((s0 + {})//{TILE_M})", TILE_M - 1));
    // Columns known only at the call (`x`'s rows, dynamic): the wide tile.
    assert_eq!(
        tile_n("pass", "return x @ x.transpose(0, 1)", "x=8,64").0,
        TILE_N,
        "symbolic columns"
    );
}

#[test]
fn a_blocked_product_reads_vec4s_only_along_aligned_unit_strides() {
    let blocked = |init: &str, forward: &str, x: &str| {
        let schedule = schedule(init, forward, x);
        let kernel = schedule.kernels[0].with_strategy(GemmStrategy::Blocked);
        (kernel.vec4_operands(), schedule, kernel)
    };
    // A linear layer: x[row, kk] and weight[col, kk], both contiguous along kk.
    let (vec4, schedule, kernel) = blocked(
        "self.fc = nn.Linear(64, 128)",
        "return self.fc(x)",
        "x=8,64",
    );
    let vec4 = vec4.expect("a linear layer of 64 inputs reads vec4s");
    assert_eq!(schedule.buffer(vec4.a).name, "in0");
    assert_eq!(schedule.buffer(vec4.b).name, "p_fc_weight");
    let (row, col) = (Expr::sym(kernel.vars[1].sym), Expr::sym(kernel.vars[2].sym));
    assert_eq!(vec4.a_base, &Expr::int(16) * &row, "vec4 16*row of in0");
    assert_eq!(
        vec4.b_base,
        &Expr::int(16) * &col,
        "vec4 16*col of the weight"
    );
    let s0 = schedule.input_shapes[0][0]
        .as_sym()
        .expect("a dynamic batch");
    let mut bindings = Bindings::new();
    bindings.set(s0, 65);
    // 8 rows by 8 columns per thread: ceil(65 / 8) * (128 / 8) = 144 threads, 3 workgroups.
    assert_eq!(kernel.workgroups.eval(&bindings), Some(3));
    // 30 inputs: kk runs in steps of 1 from 30*row, not a multiple of 4.
    let (vec4, _, kernel) = blocked(
        "self.fc = nn.Linear(30, 128)",
        "return self.fc(x)",
        "x=8,30",
    );
    assert_eq!(vec4, None);
    assert_eq!(
        kernel.workgroups.eval(&bindings),
        Some(3),
        "scalar reads, the same 8 by 8 block per thread"
    );
    // x @ w with w as [k, n]: b strides by n along kk.
    let (vec4, _, _) = blocked(
        "self.w = nn.Parameter(torch.randn(64, 128))",
        "return x @ self.w",
        "x=8,64",
    );
    assert_eq!(vec4, None);
    // x @ w.t(): the transpose is a view, so b is w[col, kk] again.
    let (vec4, _, _) = blocked(
        "self.w = nn.Parameter(torch.randn(128, 64))",
        "return x @ self.w.t()",
        "x=8,64",
    );
    assert!(vec4.is_some(), "a transposed view reads along its rows");
    // A residual that reads the product's input again keeps scalar reads.
    let (vec4, _, _) = blocked(
        "self.fc = nn.Linear(64, 64)",
        "return self.fc(x) + x",
        "x=8,64",
    );
    assert_eq!(vec4, None);
}
