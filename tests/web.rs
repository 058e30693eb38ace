//! The kernels in a browser: the same schedules and WGSL as the native tests, run through
//! WebGPU in headless Chromium (`wasm-bindgen-test`; `.cargo/config.toml` makes
//! wasm-bindgen-test-runner the wasm32 runner and `webdriver.json` gives Chromium its
//! WebGPU flags). Each result is compared with the CPU reference, computed in the same
//! wasm module, within `2e-3 * max(1, |reference|)`. Read-back is awaited, never blocked on.
//!
//! ```text
//! cargo test --target wasm32-unknown-unknown --test web
//! ```
#![cfg(all(target_arch = "wasm32", feature = "gpu"))]

use tailor::codegen::Mode;
use tailor::config::DynamicMode;
use tailor::graph::{self, Tensor};
use tailor::lower;
use tailor::runtime::gpu::{Gpu, Program};
use tailor::symbolic::Bindings;
use tailor::{CallMarks, CallShapes, CompileConfig};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const TOLERANCE: f32 = 2e-3;

/// A model's entry compiled with `dynamic=True` for its first call's shapes, and its
/// schedule.
struct Compiled {
    graph: graph::Graph,
    schedule: lower::Schedule,
}

/// Compiles `source` with `dynamic=True` for `shapes`.
fn compile(source: &str, shapes: &[(&str, Vec<usize>)]) -> Compiled {
    let mut cache = tailor::load(source, None).expect("the model loads");
    let call = CallShapes::new(
        shapes
            .iter()
            .map(|(n, s)| (n.to_string(), s.iter().map(|&d| d as i64).collect()))
            .collect(),
    );
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    let id = cache
        .call(0, &config, &call, &CallMarks::default(), &|| 0.0)
        .entry
        .expect("compiles");
    let entry = cache.entry(id).expect("the entry exists");
    let schedule = lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("lowers");
    Compiled {
        graph: entry.graph.clone(),
        schedule,
    }
}

/// Random inputs of these shapes (`seed` picks them), and the CPU reference's outputs.
fn inputs_and_reference(
    compiled: &Compiled,
    shapes: &[(&str, Vec<usize>)],
    seed: u64,
) -> (Vec<Tensor>, Bindings, Vec<Tensor>) {
    let named: Vec<(String, Vec<usize>)> = shapes
        .iter()
        .map(|(n, s)| (n.to_string(), s.clone()))
        .collect();
    let inputs = graph::random_inputs(&named, seed);
    let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
    let bindings = tailor::runtime::bind(&compiled.schedule, &shapes, &[])
        .expect("binds")
        .bindings;
    let expected = graph::eval(&compiled.graph, &bindings, &inputs).expect("the reference runs");
    (inputs, bindings, expected)
}

/// Compiles `source` with `dynamic=True` for `shapes`, runs it on WebGPU in `mode` and
/// checks the result against the reference.
async fn check(gpu: &mut Gpu, source: &str, shapes: &[(&str, Vec<usize>)], mode: Mode) {
    let compiled = compile(source, shapes);
    let (inputs, bindings, expected) = inputs_and_reference(&compiled, shapes, 1);
    let mut program = Program::new(compiled.schedule, mode, &bindings);
    let run = gpu
        .run(&mut program, &inputs, &[], false)
        .await
        .expect("runs on WebGPU");
    assert_close(&run.outputs, &expected);
}

fn assert_close(actual: &[Tensor], expected: &[Tensor]) {
    assert_eq!(actual.len(), expected.len());
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(a.shape, e.shape);
        for (x, y) in a.data.iter().zip(&e.data) {
            assert!((x - y).abs() <= TOLERANCE * y.abs().max(1.0), "{x} vs {y}");
        }
    }
}

async fn gpu() -> Gpu {
    let gpu = Gpu::new(Box::new(js_sys::Date::now))
        .await
        .expect("headless Chromium offers a WebGPU adapter");
    let adapter = gpu.adapter();
    console_log!("WebGPU adapter: {} ({})", adapter.name, adapter.backend);
    gpu
}

fn preset(name: &str) -> &'static str {
    match name {
        "simplenet" => include_str!("../models/simplenet.py"),
        "bert_block" => include_str!("../models/bert_block.py"),
        "yolo_stack" => include_str!("../models/yolo_stack.py"),
        "conv1d" => include_str!("../models/conv1d.py"),
        _ => include_str!("../models/add_one.py"),
    }
}

#[wasm_bindgen_test]
async fn simplenet_in_all_four_modes() {
    let mut gpu = gpu().await;
    for mode in Mode::ALL {
        for batch in [1, 7, 64] {
            check(
                &mut gpu,
                preset("simplenet"),
                &[("x", vec![batch, 64])],
                mode,
            )
            .await;
        }
    }
}

#[wasm_bindgen_test]
async fn presets_with_dynamic_sizes() {
    let mut gpu = gpu().await;
    check(
        &mut gpu,
        preset("bert_block"),
        &[("x", vec![2, 7, 64])],
        Mode::Dynamic,
    )
    .await;
    check(
        &mut gpu,
        preset("yolo_stack"),
        &[("image", vec![1, 3, 33, 47])],
        Mode::Dynamic,
    )
    .await;
    check(
        &mut gpu,
        preset("conv1d"),
        &[("x", vec![3, 4, 127])],
        Mode::Dynamic,
    )
    .await;
    check(
        &mut gpu,
        preset("add_one"),
        &[("x", vec![3, 513])],
        Mode::Static,
    )
    .await;
}

/// Tiers in the browser: a product whose sizes want its large form runs naive while the
/// browser builds that form with `createComputePipelineAsync`; once built, the next call
/// runs it. Both tiers are checked against the reference.
#[wasm_bindgen_test]
async fn with_tiers_a_large_product_runs_naive_while_the_browser_builds_its_large_form() {
    let mut gpu = gpu().await;
    gpu.set_tiers(true);
    let large = gpu.large_products().name();
    let compiled = compile(preset("simplenet"), &[("x", vec![8, 64])]);
    let mut program = Program::new(
        compiled.schedule.clone(),
        Mode::Dynamic,
        &Bindings::default(),
    );
    let mut call = async |gpu: &mut Gpu, rows: usize| {
        let shapes = [("x", vec![rows, 64])];
        let (inputs, _, expected) = inputs_and_reference(&compiled, &shapes, rows as u64);
        let run = gpu
            .run(&mut program, &inputs, &[], false)
            .await
            .expect("runs on WebGPU");
        assert_close(&run.outputs, &expected);
        let products: Vec<&str> = run.products.iter().map(|(_, s)| s.name()).collect();
        let building: Vec<&str> = run.building.iter().map(|b| b.strategy.name()).collect();
        (products.join(" "), building.join(" "))
    };
    let before = gpu.stats();
    let first = call(&mut gpu, 1024).await;
    assert_eq!(first, ("naive naive".into(), format!("{large} {large}")));
    gpu.wait_for_builds()
        .await
        .expect("the browser builds the large forms");
    let built = gpu.stats();
    assert_eq!(built.background_builds - before.background_builds, 2);
    assert!(built.background_ms > before.background_ms);
    let tuned = call(&mut gpu, 1024).await;
    assert_eq!(tuned, (format!("{large} {large}"), String::new()));
    assert_eq!(
        gpu.stats().pipelines_created,
        built.pipelines_created,
        "nothing new to build"
    );
    console_log!(
        "tiers: {} background builds, {:.0} ms",
        built.background_builds - before.background_builds,
        built.background_ms - before.background_ms
    );
}

/// A shader the browser refuses is a `GpuError::Rejected` naming its kernel, and the device
/// goes on serving the next call (its error scopes were all popped).
#[wasm_bindgen_test]
async fn a_refused_shader_is_an_error_naming_its_kernel_and_the_next_call_runs() {
    let mut gpu = gpu().await;
    let shapes = [("x", vec![8, 64])];
    let compiled = compile(preset("simplenet"), &shapes);
    let (inputs, bindings, expected) = inputs_and_reference(&compiled, &shapes, 3);
    let mut broken = tailor::codegen::emit_schedule(
        &compiled.schedule,
        &tailor::codegen::Specialization::Dynamic,
    );
    broken[0].source.push_str("\nfn main() {}\n");
    let mut refused = Program::from_wgsl(compiled.schedule.clone(), Mode::Dynamic, broken, None);
    // The broken source is the products' lowered (tiled) form: run that form.
    gpu.force_product_strategy(Some(tailor::lower::GemmStrategy::Tiled));
    let ran = gpu.run(&mut refused, &inputs, &[], false).await;
    gpu.force_product_strategy(None);
    match ran {
        Err(tailor::runtime::gpu::GpuError::Rejected { what, message }) => {
            assert!(what.contains("k0_linear_relu"), "{what}: {message}");
        }
        other => panic!("a redefined main is refused: {other:?}"),
    }
    let mut program = Program::new(compiled.schedule, Mode::Dynamic, &bindings);
    let run = gpu
        .run(&mut program, &inputs, &[], false)
        .await
        .expect("the next call runs");
    assert_close(&run.outputs, &expected);
}

/// Per-kernel times through the browser's objects: timestamp queries where the adapter has
/// them (written by each pass, resolved and read back with the outputs), else each kernel
/// submitted alone and waited for; one finite time per kernel either way.
#[wasm_bindgen_test]
async fn kernel_times_come_from_timestamps_where_the_adapter_has_them() {
    let mut gpu = gpu().await;
    let shapes = [("x", vec![8, 64])];
    let compiled = compile(preset("simplenet"), &shapes);
    let (inputs, bindings, expected) = inputs_and_reference(&compiled, &shapes, 4);
    let kernels = compiled.schedule.kernels.len();
    let mut program = Program::new(compiled.schedule, Mode::Dynamic, &bindings);
    let run = gpu
        .run(&mut program, &inputs, &[], true)
        .await
        .expect("runs on WebGPU");
    assert_close(&run.outputs, &expected);
    let expected_timing = match gpu.adapter().timestamps {
        true => tailor::runtime::gpu::Timing::Timestamps,
        false => tailor::runtime::gpu::Timing::SubmitToDone,
    };
    assert_eq!(run.timing, expected_timing);
    assert_eq!(run.kernel_ms.len(), kernels, "{:?}", run.kernel_ms);
    for (kernel, ms) in &run.kernel_ms {
        assert!(ms.is_finite() && *ms >= 0.0, "{kernel}: {ms} ms");
    }
    console_log!("kernel times ({:?}): {:?}", run.timing, run.kernel_ms);
}

/// Subgroups in the browser: where the adapter has them the device is asked for them (wgpu
/// 30's web backend does not map the feature), and row reductions run their subgroup form;
/// both forms match the reference, and the workgroup form is a pipeline of its own.
#[wasm_bindgen_test]
async fn row_reductions_run_by_subgroup_where_the_browser_has_them() {
    let mut gpu = gpu().await;
    console_log!("subgroups: {}", gpu.adapter().subgroups);
    if !gpu.adapter().subgroups {
        return;
    }
    assert!(gpu.subgroups(), "on by default where the adapter has them");
    let shapes = [("x", vec![2, 7, 64])];
    let compiled = compile(preset("bert_block"), &shapes);
    let (inputs, bindings, expected) = inputs_and_reference(&compiled, &shapes, 5);
    let mut created = Vec::new();
    for on in [true, false] {
        gpu.set_subgroups(on);
        let before = gpu.stats().pipelines_created;
        let mut program = Program::new(compiled.schedule.clone(), Mode::Dynamic, &bindings);
        let run = gpu
            .run(&mut program, &inputs, &[], false)
            .await
            .unwrap_or_else(|e| panic!("subgroups {on}: {e}"));
        assert_close(&run.outputs, &expected);
        created.push(gpu.stats().pipelines_created - before);
    }
    gpu.set_subgroups(true);
    assert!(
        created[1] > 0,
        "the workgroup forms are other pipelines: {created:?}"
    );
}
