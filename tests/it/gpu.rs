//! The same programs on the GPU: wgpu on the native adapter (lavapipe on CI, any GPU
//! elsewhere) against the graph reference and the CPU backend, for every model and size in
//! `models.rs`, with sizes passed all three ways (row reductions and blocked products in
//! their subgroup forms where the adapter has subgroups, as lavapipe does; their portable
//! forms are checked too).
//! Without an adapter each test prints a note and passes;
//! CI installs lavapipe (`mesa-vulkan-drivers`), so there they run.
//!
//! Tolerance: every element within `2e-3 * max(1, |reference|)` — GPUs reassociate the
//! reductions (tree sums), fuse multiply-adds and approximate `exp`/`tanh`.

use crate::kernels::{Compiled, assert_close, case_inputs, compile, inputs, reference};
use crate::models::{self, sizes};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;
use tailor::codegen::Mode;
use tailor::config::DynamicMode;
use tailor::graph::Tensor;
use tailor::lower::GemmStrategy;
use tailor::runtime::gpu::{Gpu, GpuError, Program};

/// Relative tolerance of GPU results against the reference.
pub const GPU_TOLERANCE: f32 = 2e-3;

/// Opens a GPU runtime on the native adapter; `Err` says why there is none.
pub fn open() -> Result<Gpu, GpuError> {
    let start = Instant::now();
    pollster::block_on(Gpu::new(Box::new(move || {
        start.elapsed().as_secs_f64() * 1e3
    })))
}

/// The one runtime the tests share (a CPU driver runs one test's kernels at a time best,
/// and its pipeline cache then serves them all), or `None` after printing a note when
/// there is no adapter.
fn with_gpu(test: impl FnOnce(&mut Gpu)) {
    static GPU: OnceLock<Result<Mutex<Gpu>, GpuError>> = OnceLock::new();
    match GPU.get_or_init(|| open().map(Mutex::new)) {
        Ok(gpu) => test(&mut gpu.lock().unwrap_or_else(|poisoned| poisoned.into_inner())),
        Err(GpuError::NoAdapter(why)) => crate::no_adapter(why),
        Err(other) => panic!("the adapter exists but failed: {other}"),
    }
}

/// Runs every case of `name` on the GPU with dynamic sizes, and its first two cases with
/// static and override sizes too (each of those is a pipeline per shape, and pipeline
/// creation is the slow part on a CPU driver), comparing with the reference. Products run
/// every way (tiled, blocked, naive), whichever the sizes would choose.
fn check(name: &str) {
    with_gpu(|gpu| check_on(gpu, name));
}

fn check_on(gpu: &mut Gpu, name: &str) {
    let model = models::get(name);
    for (n, case) in model.cases.iter().enumerate() {
        let compiled = compile(&model.source, &model.spec(case), DynamicMode::True);
        let inputs = case_inputs(&compiled.graph, case, n as u64);
        let expected = reference(&compiled.graph, &inputs);
        let cpu =
            tailor::runtime::cpu::run(&compiled.schedule, &inputs, &[]).expect("the CPU runs");
        let bound = tailor::runtime::bind(&compiled.schedule, &sizes(case), &[]).expect("binds");
        let modes: &[Mode] = if n < 2 { &Mode::ALL } else { &[Mode::Dynamic] };
        for (&mode, strategy) in modes.iter().flat_map(|m| GemmStrategy::ALL.map(|s| (m, s))) {
            let mut program = Program::new(compiled.schedule.clone(), mode, &bound.bindings);
            gpu.force_product_strategy(Some(strategy));
            let run = pollster::block_on(gpu.run(&mut program, &inputs, &[], false));
            gpu.force_product_strategy(None);
            let what = format!("{name} {case} {} {}", mode.name(), strategy.name());
            let no_immediates = mode == Mode::Immediate && !gpu.adapter().immediates;
            if no_immediates
                && matches!(&run, Err(GpuError::Limit { limit, .. }) if *limit == "maxImmediateSize")
            {
                // A device without immediates refuses immediate code that needs any.
                continue;
            }
            let run = run.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_close(
                &format!("{what} on {}", gpu.adapter().name),
                &run.outputs,
                &expected,
                GPU_TOLERANCE,
            );
            assert_close(
                &format!("{what} against the CPU backend"),
                &run.outputs,
                &cpu,
                GPU_TOLERANCE,
            );
        }
    }
}

#[test]
fn linear_relu_on_the_gpu() {
    check("linear_relu");
}

#[test]
fn linear_3d_no_bias_on_the_gpu() {
    check("linear_3d_no_bias");
}

#[test]
fn matmul_broadcast_on_the_gpu() {
    check("matmul_broadcast");
}

#[test]
fn matmul_transposed_views_on_the_gpu() {
    check("matmul_transposed_views");
}

#[test]
fn conv1d_dilated_on_the_gpu() {
    check("conv1d_dilated");
}

#[test]
fn conv2d_no_bias_on_the_gpu() {
    check("conv2d_no_bias");
}

#[test]
fn conv_batch_norm_on_the_gpu() {
    check("conv_batch_norm");
}

#[test]
fn linear_batch_norm_on_the_gpu() {
    check("linear_batch_norm");
}

#[test]
fn layer_norm_softmax_on_the_gpu() {
    check("layer_norm_softmax");
}

#[test]
fn reductions_on_the_gpu() {
    check("reductions");
}

#[test]
fn softmax_middle_dim_on_the_gpu() {
    check("softmax_middle_dim");
}

#[test]
fn log_softmax_on_the_gpu() {
    check("log_softmax");
}

#[test]
fn activations_on_the_gpu() {
    check("activations");
}

#[test]
fn reshuffles_on_the_gpu() {
    check("reshuffles");
}

#[test]
fn constant_pads_on_the_gpu() {
    check("pads");
}

#[test]
fn nearest_resizes_on_the_gpu() {
    check("nearest");
}

#[test]
fn bilinear_interpolation_on_the_gpu() {
    check("bilinear");
}

#[test]
fn trigonometry_erf_and_roundings_on_the_gpu() {
    check("unary_functions");
}

#[test]
fn powers_on_the_gpu() {
    check("powers");
}

#[test]
fn random_draws_on_the_gpu() {
    check("random");
}

#[test]
fn transposed_conv_on_the_gpu() {
    check("conv_transpose");
}

#[test]
fn grouped_conv_on_the_gpu() {
    check("grouped_conv");
}

#[test]
fn masks_on_the_gpu() {
    check("masks");
}

#[test]
fn layer_norm_2d_on_the_gpu() {
    check("layer_norm_2d");
}

#[test]
fn pooling_on_the_gpu() {
    check("pooling");
}

#[test]
fn views_and_cat_on_the_gpu() {
    check("views_and_cat");
}

#[test]
fn elementwise_on_the_gpu() {
    check("elementwise");
}

#[test]
fn embedding_on_the_gpu() {
    check("embedding");
}

#[test]
fn returned_input_on_the_gpu() {
    check("returned_input");
}

#[test]
fn conv2d_strided_dilated_on_the_gpu() {
    check("conv2d_strided_dilated");
}

#[test]
fn matmul_packed_operands_on_the_gpu() {
    check("matmul_packed_operands");
}

#[test]
fn residual_block_on_the_gpu() {
    check("residual_block");
}

#[test]
fn simplenet_on_the_gpu() {
    check("simplenet");
}

#[test]
fn bert_block_on_the_gpu() {
    check("bert_block");
}

#[test]
fn yolo_stack_on_the_gpu() {
    check("yolo_stack");
}

#[test]
fn conv1d_on_the_gpu() {
    check("conv1d");
}

#[test]
fn add_one_on_the_gpu() {
    check("add_one");
}

/// Compiles `source` dynamically at `spec` and makes a program in `mode`.
fn program(model: &str, spec: &str, mode: Mode) -> Program {
    let compiled = compile(&models::get(model).source, spec, DynamicMode::True);
    Program::new(compiled.schedule, mode, &Default::default())
}

#[test]
fn dynamic_code_is_one_pipeline_for_every_size() {
    with_gpu(|gpu| {
        let mut program = program("simplenet", "x=8,64", Mode::Dynamic);
        let before = gpu.stats().pipelines_created;
        for batch in [8, 16, 3, 100] {
            let inputs = inputs(&[vec![batch, 64]], 1);
            pollster::block_on(gpu.run(&mut program, &inputs, &[], false)).expect("runs");
        }
        let created = gpu.stats().pipelines_created - before;
        assert!(created <= 2, "{created} pipelines for one dynamic program");
    });
}

/// One call of `program` at batch `batch` (SimpleNet's `x` is `batch × 64`), checked against
/// `compiled`'s reference when it runs; returns the forms its products ran.
fn call_forms(
    gpu: &mut Gpu,
    program: &mut Program,
    compiled: &Compiled,
    batch: usize,
) -> Result<Vec<GemmStrategy>, GpuError> {
    let inputs = inputs(&[vec![batch, 64]], batch as u64);
    let run = pollster::block_on(gpu.run(program, &inputs, &[], false))?;
    assert_close(
        &format!("simplenet at batch {batch}"),
        &run.outputs,
        &reference(&compiled.graph, &inputs),
        GPU_TOLERANCE,
    );
    Ok(run.products.iter().map(|&(_, form)| form).collect())
}

#[test]
fn a_programs_kept_plan_serves_only_calls_that_decide_the_same() {
    with_gpu(|gpu| {
        let compiled = compile(
            &models::get("simplenet").source,
            "x=8,64",
            DynamicMode::True,
        );
        let mut program = Program::new(
            compiled.schedule.clone(),
            Mode::Dynamic,
            &Default::default(),
        );
        let chosen = call_forms(gpu, &mut program, &compiled, 8).expect("runs");
        assert_eq!(
            call_forms(gpu, &mut program, &compiled, 8).expect("runs"),
            chosen
        );
        // A setting changes what the same sizes decide: the kept plan no longer serves.
        gpu.force_product_strategy(Some(GemmStrategy::Tiled));
        let tiled = call_forms(gpu, &mut program, &compiled, 8);
        gpu.force_product_strategy(None);
        assert_eq!(
            tiled.expect("runs"),
            vec![GemmStrategy::Tiled; chosen.len()]
        );
        assert_eq!(
            call_forms(gpu, &mut program, &compiled, 8).expect("runs"),
            chosen
        );
        // Other sizes bind again.
        call_forms(gpu, &mut program, &compiled, 100).expect("runs");
        // Lowered limits are checked again, though the sizes are the plan's.
        let limit = gpu.limits_mut().max_storage_buffer_binding_size;
        gpu.limits_mut().max_storage_buffer_binding_size = 1024;
        let refused = call_forms(gpu, &mut program, &compiled, 100);
        gpu.limits_mut().max_storage_buffer_binding_size = limit;
        assert!(
            matches!(refused, Err(GpuError::Limit { .. })),
            "a 1 KiB binding refuses batch 100: {refused:?}"
        );
        call_forms(gpu, &mut program, &compiled, 100).expect("runs within the limits again");
    });
}

/// Runs `program` with subgroups on or off, checks its outputs against `expected`, and
/// returns how many pipelines the call created.
fn run_counting_pipelines(
    gpu: &mut Gpu,
    program: &mut Program,
    inputs: &[Tensor],
    expected: &[Tensor],
    subgroups: bool,
    what: &str,
) -> usize {
    gpu.set_subgroups(subgroups);
    let before = gpu.stats().pipelines_created;
    let run = pollster::block_on(gpu.run(program, inputs, &[], false));
    let what = format!("{what}, subgroups {subgroups}");
    let run = run.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_close(&what, &run.outputs, expected, GPU_TOLERANCE);
    gpu.stats().pipelines_created - before
}

#[test]
fn row_reductions_run_by_subgroup_where_the_adapter_has_them() {
    with_gpu(|gpu| {
        if !gpu.adapter().subgroups {
            println!("note: {} has no subgroups; skipped", gpu.adapter().name);
            return;
        }
        assert!(gpu.subgroups(), "on by default where the adapter has them");
        let model = models::get("layer_norm_softmax");
        let case = model.cases[0];
        let compiled = compile(&model.source, &model.spec(case), DynamicMode::True);
        let rows = compiled
            .schedule
            .kernels
            .iter()
            .filter(|k| matches!(k.body, tailor::lower::Body::Rows(_)))
            .count();
        assert!(
            rows >= 3,
            "layer norm, softmax and the sums are row reductions"
        );
        let inputs = case_inputs(&compiled.graph, case, 0);
        let expected = reference(&compiled.graph, &inputs);
        let mut program = Program::new(compiled.schedule, Mode::Dynamic, &Default::default());
        // From a cold pipeline cache, so the counts below are this program's alone.
        gpu.clear_cache();
        let what = format!("layer_norm_softmax {case}");
        let mut run = |gpu: &mut Gpu, subgroups: bool| {
            run_counting_pipelines(gpu, &mut program, &inputs, &expected, subgroups, &what)
        };
        let all = run(gpu, true);
        assert_eq!(
            run(gpu, false),
            rows,
            "each row reduction's portable form is another pipeline"
        );
        assert_eq!(
            run(gpu, true),
            0,
            "the subgroup forms were the first call's"
        );
        assert!(all >= rows);
    });
}

#[test]
fn blocked_products_share_their_rows_by_subgroup_where_the_adapter_has_them() {
    with_gpu(|gpu| {
        if !gpu.adapter().subgroups {
            println!("note: {} has no subgroups; skipped", gpu.adapter().name);
            return;
        }
        // Scalar reads (`a @ b`, sizes dynamic) and `vec4` reads (a linear layer of 40
        // inputs); 128 columns are 16 blocks a row, so every octet of lanes shares its rows;
        // 100 and 36 are 13 and 5 blocks, so some subgroups (all, for 36) take the plain
        // loads; 67 rows leave a partial block and lanes past the end.
        let product = "def f(a, b):\n    return a @ b\n".to_string();
        let linear = |n: usize| {
            format!(
                "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        \
                 super().__init__()\n        self.fc = nn.Linear(40, {n}, bias=False)\n    \
                 def forward(self, a):\n        return self.fc(a)\n"
            )
        };
        let cases = [
            (product.clone(), "a=67,40;b=40,128", false),
            (product, "a=67,40;b=40,100", false),
            (linear(128), "a=67,40", true),
            (linear(36), "a=67,40", true),
        ];
        for (body, shapes, reads_vec4) in cases {
            let source = format!("import torch\n{body}");
            let compiled = compile(&source, shapes, DynamicMode::True);
            let blocked = compiled.schedule.kernels[0].with_strategy(GemmStrategy::Blocked);
            assert_eq!(blocked.vec4_operands().is_some(), reads_vec4, "{shapes}");
            let case = shapes.replace("a=", "").replace("b=", "");
            let inputs = case_inputs(&compiled.graph, &case, 5);
            let expected = reference(&compiled.graph, &inputs);
            let mut program = Program::new(compiled.schedule, Mode::Dynamic, &Default::default());
            gpu.force_product_strategy(Some(GemmStrategy::Blocked));
            // Dynamic code is one pipeline for all four cases: count this case's alone.
            gpu.clear_cache();
            let what = format!("{body}at {shapes}");
            let mut run = |gpu: &mut Gpu, subgroups: bool| {
                run_counting_pipelines(gpu, &mut program, &inputs, &expected, subgroups, &what)
            };
            let with = run(gpu, true);
            assert_eq!(
                run(gpu, false),
                1,
                "{shapes}: the portable form is another pipeline"
            );
            assert_eq!(
                run(gpu, true),
                0,
                "{shapes}: the subgroup form was the first call's"
            );
            assert_eq!(with, 1, "{shapes}: one pipeline a form");
            gpu.force_product_strategy(None);
        }
        gpu.set_subgroups(true);
    });
}

/// SimpleNet compiled with `dynamic=True` at `x=8,64`, and its program with dynamic sizes.
fn simplenet_program() -> (Compiled, Program) {
    let compiled = compile(
        &models::get("simplenet").source,
        "x=8,64",
        DynamicMode::True,
    );
    let program = Program::new(
        compiled.schedule.clone(),
        Mode::Dynamic,
        &Default::default(),
    );
    (compiled, program)
}

#[test]
fn a_product_runs_naive_at_small_sizes_and_in_the_adapters_large_form_at_large_ones() {
    with_gpu(|gpu| {
        let (compiled, mut program) = simplenet_program();
        let mut ran = Vec::new();
        // Without tiers, a call waits for its large form (a hardware GPU has them on).
        let tiers = gpu.tiers();
        gpu.set_tiers(false);
        // 8 rows through 64 -> 128 -> 64 is 2^17 multiply-adds per layer; 1024 rows 2^23.
        for batch in [8, 1024, 8] {
            let inputs = inputs(&[vec![batch, 64]], batch as u64);
            let run = pollster::block_on(gpu.run(&mut program, &inputs, &[], false));
            let run = run.unwrap_or_else(|e| {
                gpu.set_tiers(tiers);
                panic!("runs: {e}")
            });
            assert_close(
                &format!("simplenet x={batch},64"),
                &run.outputs,
                &reference(&compiled.graph, &inputs),
                GPU_TOLERANCE,
            );
            let strategies: Vec<&str> = run.products.iter().map(|(_, s)| s.name()).collect();
            ran.push(format!("{batch}: {}", strategies.join(" ")));
        }
        // Blocked on a CPU emulation (lavapipe here), tiled on a hardware GPU.
        let large = gpu.large_products().name();
        assert_eq!(
            large,
            if gpu.adapter().emulated {
                "blocked"
            } else {
                "tiled"
            }
        );
        assert_eq!(
            ran,
            [
                "8: naive naive".to_string(),
                format!("1024: {large} {large}"),
                "8: naive naive".to_string()
            ]
        );
        gpu.set_tiers(tiers);
    });
}

#[test]
fn with_tiers_a_large_product_runs_naive_until_its_large_form_is_built_in_the_background() {
    with_gpu(|gpu| {
        let (compiled, mut program) = simplenet_program();
        let tiers = gpu.tiers();
        gpu.set_tiers(true);
        gpu.clear_cache();
        let large = gpu.large_products();
        let before = gpu.stats();
        let mut call = |gpu: &mut Gpu, batch: usize| {
            let inputs = inputs(&[vec![batch, 64]], batch as u64);
            let run = pollster::block_on(gpu.run(&mut program, &inputs, &[], false));
            let run = run.unwrap_or_else(|e| panic!("x={batch},64 runs: {e}"));
            assert_close(
                &format!("simplenet x={batch},64"),
                &run.outputs,
                &reference(&compiled.graph, &inputs),
                GPU_TOLERANCE,
            );
            let products: Vec<&str> = run.products.iter().map(|(_, s)| s.name()).collect();
            let building: Vec<&str> = run.building.iter().map(|b| b.strategy.name()).collect();
            (products.join(" "), building.join(" "))
        };
        // The first large call runs the naive tier and starts both large forms building.
        let first = call(gpu, 1024);
        let building = gpu.stats().pipelines_created - before.pipelines_created;
        pollster::block_on(gpu.wait_for_builds()).expect("the large forms build");
        let after_wait = gpu.stats();
        // Once built, the next large call runs them; small calls stay naive throughout.
        let tuned = call(gpu, 1024);
        let small = call(gpu, 8);
        let end = gpu.stats();
        gpu.set_tiers(tiers);
        let large = large.name();
        assert_eq!(first, ("naive naive".into(), format!("{large} {large}")));
        assert_eq!(building, 2, "the call built its two naive pipelines itself");
        assert_eq!(after_wait.background_builds - before.background_builds, 2);
        assert!(after_wait.background_ms > before.background_ms);
        assert_eq!(tuned, (format!("{large} {large}"), String::new()));
        assert_eq!(small, ("naive naive".into(), String::new()));
        assert_eq!(
            end.pipelines_created, after_wait.pipelines_created,
            "nothing new"
        );
    });
}

#[test]
fn a_steady_call_reuses_its_buffers_and_bind_groups() {
    with_gpu(|gpu| {
        let (compiled, mut program) = simplenet_program();
        // Each call has data of its own (a seed) and is checked, so a reused input buffer
        // that was not rewritten, or a `dims` uniform left at other sizes, fails here.
        let mut call = |batch: usize, seed: u64| {
            let inputs = inputs(&[vec![batch, 64]], seed);
            let run = pollster::block_on(gpu.run(&mut program, &inputs, &[], false)).expect("runs");
            assert_close(
                &format!("simplenet x={batch},64 (seed {seed})"),
                &run.outputs,
                &reference(&compiled.graph, &inputs),
                GPU_TOLERANCE,
            );
            let stats = gpu.stats();
            (
                stats.bind_groups_created,
                stats.bytes_held,
                stats.unscoped_calls,
            )
        };
        let first = call(8, 1);
        // The first call creates its resources in error scopes.
        let again = call(8, 2);
        assert_eq!(
            (again.0, again.1),
            (first.0, first.1),
            "the same sizes again: nothing created"
        );
        assert_eq!(again.2, first.2 + 1, "so no error scopes");
        // 7 rows fit the buffers of 8 (one size class, 64 KiB): kept, its sizes rewritten.
        let seven = call(7, 3);
        assert_eq!(
            (seven.0, seven.1),
            (first.0, first.1),
            "a batch in the same size class"
        );
        assert_eq!(seven.2, first.2 + 2);
        let larger = call(1000, 4);
        assert!(larger.0 > first.0, "a new size class binds anew");
        assert_eq!(larger.2, first.2 + 2, "in error scopes");
        assert_eq!(call(8, 5).0, larger.0, "the first size class was kept");
        assert_eq!(call(100, 6).0, larger.0, "and so was the second");
    });
}

#[test]
fn a_grid_beyond_65535_workgroups_is_split() {
    with_gpu(|gpu| {
        // One workgroup per row: 70 000 rows need a two-dimensional grid.
        let compiled = compile(
            &models::get("reductions").source,
            "x=70000,2",
            DynamicMode::True,
        );
        let inputs = inputs(&[vec![70_000, 2]], 3);
        let mut program = Program::new(compiled.schedule, Mode::Dynamic, &Default::default());
        let run = pollster::block_on(gpu.run(&mut program, &inputs, &[], false)).expect("runs");
        assert_close(
            "70000 rows",
            &run.outputs,
            &reference(&compiled.graph, &inputs),
            GPU_TOLERANCE,
        );
    });
}

#[test]
fn limits_are_checked_before_dispatch_and_name_the_kernel() {
    let Ok(mut gpu) = open() else { return };
    gpu.limits_mut().max_storage_buffer_binding_size = 1024;
    let mut program = program("simplenet", "x=8,64", Mode::Dynamic);
    let error = pollster::block_on(gpu.run(&mut program, &inputs(&[vec![8, 64]], 1), &[], false))
        .expect_err("2 KiB of input exceeds a 1 KiB binding");
    assert_eq!(
        error.to_string(),
        "k0_linear_relu: needs 2048 but the adapter's maxStorageBufferBindingSize is 1024"
    );
}

#[test]
fn a_lost_device_is_recreated_and_the_call_goes_on() {
    let Ok(mut gpu) = open() else { return };
    let mut program = program("simplenet", "x=8,64", Mode::Dynamic);
    let inputs = inputs(&[vec![8, 64]], 1);
    let before = pollster::block_on(gpu.run(&mut program, &inputs, &[], false)).expect("runs");
    gpu.destroy_device();
    let after = pollster::block_on(gpu.run(&mut program, &inputs, &[], false)).expect("recovers");
    assert_eq!(before.outputs, after.outputs);
    assert_eq!(gpu.stats().devices_recreated, 1);
}

#[test]
fn kernels_are_timed() {
    with_gpu(|gpu| {
        let mut program = program("bert_block", "x=2,8,64", Mode::Dynamic);
        let run =
            pollster::block_on(gpu.run(&mut program, &inputs(&[vec![2, 8, 64]], 1), &[], true))
                .expect("runs");
        assert_eq!(run.kernel_ms.len(), program.schedule().kernels.len());
        assert!(run.kernel_ms.iter().all(|(_, ms)| *ms >= 0.0));
    });
}

#[test]
fn every_preset_is_within_tolerance_through_the_cli() {
    if let Err(why) = open() {
        crate::no_adapter(&why);
        return;
    }
    let presets = [
        ("simplenet", ["x=8,64", "x=16,64", "x=513,64"]),
        ("bert_block", ["x=2,8,64", "x=2,16,64", "x=1,127,64"]),
        (
            "yolo_stack",
            ["image=1,3,64,64", "image=1,3,96,96", "image=1,3,127,127"],
        ),
        ("conv1d", ["x=2,4,16", "x=2,4,33", "x=1,4,513"]),
        ("add_one", ["x=3,5", "x=7,9", "x=64,127"]),
    ];
    for (preset, calls) in presets {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tailor"));
        command.args([
            "run",
            &format!("{}/models/{preset}.py", env!("CARGO_MANIFEST_DIR")),
        ]);
        for call in calls {
            command.args(["--call", call]);
        }
        let output = command
            .args(["--device", "gpu", "--check", "--json"])
            .output()
            .expect("tailor runs");
        assert!(
            output.status.success(),
            "{preset}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        assert_eq!(report["device"], "gpu");
        for call in report["calls"].as_array().expect("calls") {
            let err = call["max_abs_err"].as_f64().expect("checked");
            assert!(
                err <= f64::from(GPU_TOLERANCE),
                "{preset} {}: max_abs_err {err}",
                call["shapes"]
            );
        }
    }
}
