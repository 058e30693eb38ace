//! Lowering and fusion, checked numerically without a GPU: the CPU backend
//! (`runtime::cpu`, which runs the fused kernels, shared buffers and all) against the graph
//! reference (`graph::eval`), for every op and every preset model.
//!
//! Tolerance: every element within `1e-4 * max(1, |reference|)`. The CPU backend computes
//! elementwise chains and row reductions in the reference's order; its matrix products sum
//! in blocks (SIMD lanes), and fusion or folding changes the arithmetic (a bias added after
//! the dot product instead of before it, BatchNorm folded into conv weights), which moves
//! results by a few ulps.

use crate::models::{self, sizes};
use tailor::config::DynamicMode;
use tailor::graph::{self, Graph, Tensor};
use tailor::lower::{self, Schedule};
use tailor::symbolic::Bindings;
use tailor::{CallMarks, CompileConfig, runtime, spec};

/// Relative tolerance of the CPU backend against the reference.
pub const CPU_TOLERANCE: f32 = 1e-4;

/// A compiled cache entry and its schedule.
pub struct Compiled {
    /// The entry's graph (the reference runs it).
    pub graph: Graph,
    /// Its lowering.
    pub schedule: Schedule,
}

/// Compiles `source` once for `shapes` (`x=8,64`) under `dynamic`, and lowers the entry.
pub fn compile(source: &str, shapes: &str, dynamic: DynamicMode) -> Compiled {
    let mut cache = tailor::load(source, None).expect("the model loads");
    let call = spec::parse_shapes(shapes, &cache.entry_point().inputs).expect("shapes parse");
    let config = CompileConfig {
        dynamic,
        ..CompileConfig::default()
    };
    let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
    let id = event
        .entry
        .unwrap_or_else(|| panic!("compiles: {:?}", event.error));
    let entry = cache.entry(id).expect("the entry exists");
    let schedule = lower::lower(&entry.graph, &|sym| entry.env.range(sym)).expect("lowers");
    Compiled {
        graph: entry.graph.clone(),
        schedule,
    }
}

/// Seeded inputs for a call with these sizes (one list per graph input).
pub fn inputs(shapes: &[Vec<usize>], seed: u64) -> Vec<Tensor> {
    let named: Vec<(String, Vec<usize>)> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("input{i}"), s.clone()))
        .collect();
    graph::random_inputs(&named, seed)
}

/// Seeded inputs for `graph` at `case`'s sizes, each of its input's dtype (int64 ids as
/// whole numbers in 0..16, bools as 0 or 1).
pub fn case_inputs(graph: &Graph, case: &str, seed: u64) -> Vec<Tensor> {
    inputs(&sizes(case), seed)
        .into_iter()
        .zip(&graph.inputs)
        .map(|(tensor, &id)| tensor.as_random(graph.node(id).dtype))
        .collect()
}

/// The reference result of `graph` on `inputs`.
pub fn reference(graph: &Graph, inputs: &[Tensor]) -> Vec<Tensor> {
    let mut bindings = Bindings::new();
    for (&id, tensor) in graph.inputs.iter().zip(inputs) {
        for (dim, &size) in graph.shape(id).iter().zip(&tensor.shape) {
            if let Some(sym) = dim.as_sym() {
                bindings.set(sym, size as i64);
            }
        }
    }
    graph::eval(graph, &bindings, inputs).expect("the reference runs")
}

/// Panics unless every element of `actual` is within `tolerance * max(1, |expected|)`.
#[track_caller]
pub fn assert_close(what: &str, actual: &[Tensor], expected: &[Tensor], tolerance: f32) {
    assert_eq!(actual.len(), expected.len(), "{what}: number of outputs");
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(a.shape, e.shape, "{what}: output shape");
        for (i, (x, y)) in a.data.iter().zip(&e.data).enumerate() {
            let limit = tolerance * y.abs().max(1.0);
            assert!(
                (x - y).abs() <= limit,
                "{what}: element {i} is {x}, the reference says {y} (tolerance {limit})"
            );
        }
    }
}

/// Compiles the model for each of its cases (under `dynamic=True`) and compares the
/// CPU backend with the reference at those sizes; then compiles one dynamic entry at the
/// first case and runs it at every case whose sizes it accepts.
#[track_caller]
fn check(name: &str) {
    let model = models::get(name);
    for (n, case) in model.cases.iter().enumerate() {
        let compiled = compile(&model.source, &model.spec(case), DynamicMode::True);
        let inputs = case_inputs(&compiled.graph, case, n as u64);
        let actual = runtime::cpu::run(&compiled.schedule, &inputs, &[])
            .unwrap_or_else(|e| panic!("{case}: {e}\n{}", compiled.schedule));
        let expected = reference(&compiled.graph, &inputs);
        assert_close(case, &actual, &expected, CPU_TOLERANCE);
    }
    let shared = compile(
        &model.source,
        &model.spec(model.cases[0]),
        DynamicMode::True,
    );
    for case in model.cases {
        let inputs = case_inputs(&shared.graph, case, 7);
        let actual = match runtime::cpu::run(&shared.schedule, &inputs, &[]) {
            Ok(actual) => actual,
            // A size the entry specialised (1, or a dim met by a static size) is a cache
            // miss in the real flow, not something this entry may run.
            Err(runtime::RunError::InputShape { .. }) => continue,
            Err(other) => panic!("shared entry at {case}: {other}"),
        };
        let expected = reference(&shared.graph, &inputs);
        assert_close(
            &format!("shared entry at {case}"),
            &actual,
            &expected,
            CPU_TOLERANCE,
        );
    }
}

#[test]
fn linear_with_bias_and_relu_is_one_kernel() {
    check("linear_relu");
    let model = models::get("linear_relu");
    let compiled = compile(&model.source, "x=8,64", DynamicMode::True);
    assert_eq!(compiled.schedule.kernels.len(), 1);
}

#[test]
fn linear_without_bias_over_three_dims() {
    check("linear_3d_no_bias");
}

#[test]
fn matmul_broadcasts_batch_and_vectors() {
    check("matmul_broadcast");
}

#[test]
fn matmul_of_transposed_views_reads_in_place() {
    check("matmul_transposed_views");
}

#[test]
fn conv1d_with_padding_and_dilation() {
    check("conv1d_dilated");
}

#[test]
fn reshuffles_pads_and_group_norm() {
    check("reshuffles");
}

#[test]
fn constant_pads_of_symbolic_amounts() {
    check("pads");
}

#[test]
fn nearest_resizes_to_symbolic_sizes() {
    check("nearest");
}

#[test]
fn bilinear_and_linear_interpolation() {
    check("bilinear");
}

#[test]
fn trigonometry_erf_and_roundings() {
    check("unary_functions");
}

#[test]
fn powers_of_negative_bases_and_whole_numbers() {
    check("powers");
}

#[test]
fn random_draws_in_forward() {
    check("random");
}

/// `randn_like` draws a standard normal and `rand_like` a uniform in [0, 1); two draws of
/// one graph are different streams.
#[test]
fn random_draws_have_their_distributions() {
    let source = "import torch\n\n\ndef f(x):\n    return torch.randn_like(x), torch.rand_like(x), torch.randn_like(x)\n";
    let compiled = compile(source, "x=64,1024", DynamicMode::True);
    let inputs = inputs(&[vec![64, 1024]], 0);
    let outputs = runtime::cpu::run(&compiled.schedule, &inputs, &[]).expect("runs");
    let moments = |t: &Tensor| {
        let n = t.data.len() as f64;
        let mean = t.data.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = t
            .data
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n;
        (mean, var)
    };
    let (mean, var) = moments(&outputs[0]);
    assert!(
        mean.abs() < 0.01 && (var - 1.0).abs() < 0.02,
        "normal: {mean} {var}"
    );
    let (mean, var) = moments(&outputs[1]);
    assert!(
        (mean - 0.5).abs() < 0.01 && (var - 1.0 / 12.0).abs() < 0.005,
        "unit: {mean} {var}"
    );
    assert!(outputs[1].data.iter().all(|&v| (0.0..1.0).contains(&v)));
    assert_ne!(outputs[0].data, outputs[2].data, "two draws, two streams");
}

#[test]
fn transposed_conv_strided_padded_and_grouped() {
    check("conv_transpose");
}

#[test]
fn grouped_and_depthwise_conv() {
    check("grouped_conv");
}

/// The reference's grouped convolution is, group by group, the plain convolution of the
/// group's channels (PyTorch's definition), here as slices and a cat.
#[test]
fn grouped_conv_reference_is_a_conv_per_group() {
    let source = "import torch\nimport torch.nn.functional as F\n\n\ndef f(x, w):\n    grouped = F.conv2d(x, w, stride=2, padding=1, groups=3)\n    parts = [F.conv2d(x[:, 2 * g:2 * g + 2], w[4 * g:4 * g + 4], stride=2, padding=1) for g in range(3)]\n    return grouped, torch.cat(parts, dim=1)\n";
    let mut cache = tailor::load(source, None).expect("the function loads");
    let call = spec::parse_shapes("x=2,6,7,9;w=12,2,3,3", &cache.entry_point().inputs)
        .expect("shapes parse");
    let event = cache.call(
        0,
        &CompileConfig::default(),
        &call,
        &CallMarks::default(),
        &|| 0.0,
    );
    let id = event.entry.expect("captures");
    let graph = &cache.entry(id).expect("the entry exists").graph;
    let inputs = inputs(&[vec![2, 6, 7, 9], vec![12, 2, 3, 3]], 3);
    let outputs = reference(graph, &inputs);
    assert_eq!(outputs[0].shape, [2, 12, 4, 5]);
    assert_close("grouped vs per group", &outputs[..1], &outputs[1..], 1e-6);
}

#[test]
fn conv2d_non_square_without_bias() {
    check("conv2d_no_bias");
}

#[test]
fn conv2d_strided_dilated_and_padded_through_im2col() {
    check("conv2d_strided_dilated");
}

#[test]
fn matmul_of_reshaped_transposes_packs_both_operands() {
    check("matmul_packed_operands");
}

#[test]
fn residual_block_with_a_strided_shortcut() {
    check("residual_block");
}

#[test]
fn batch_norm_folds_into_the_conv() {
    check("conv_batch_norm");
    let model = models::get("conv_batch_norm");
    let compiled = compile(&model.source, "x=1,3,8,8", DynamicMode::True);
    assert_eq!(compiled.schedule.kernels.len(), 1);
    assert!(
        compiled
            .schedule
            .to_string()
            .contains("folded batch_norm into")
    );
}

#[test]
fn batch_norm_after_linear_is_an_epilogue() {
    check("linear_batch_norm");
}

#[test]
fn layer_norm_then_softmax_and_reductions() {
    check("layer_norm_softmax");
}

#[test]
fn softmax_and_reductions_of_any_size() {
    check("reductions");
}

#[test]
fn softmax_over_a_middle_dim() {
    check("softmax_middle_dim");
}

#[test]
fn log_softmax_along_last_middle_and_first_dims() {
    check("log_softmax");
}

#[test]
fn activations_clamps_logs_and_extrema() {
    check("activations");
}

#[test]
fn masks_where_triangles_arange_and_split() {
    check("masks");
}

#[test]
fn layer_norm_module_over_two_dims() {
    check("layer_norm_2d");
}

#[test]
fn pooling_with_padding() {
    check("pooling");
}

#[test]
fn views_slices_and_cat() {
    check("views_and_cat");
}

#[test]
fn elementwise_functions_and_scalars() {
    check("elementwise");
}

#[test]
fn embedding_lookup() {
    check("embedding");
}

#[test]
fn returning_an_input_copies_it() {
    check("returned_input");
}

#[test]
fn simplenet_preset() {
    check("simplenet");
}

#[test]
fn bert_block_preset() {
    check("bert_block");
}

#[test]
fn yolo_stack_preset() {
    check("yolo_stack");
}

#[test]
fn conv1d_preset() {
    check("conv1d");
}

#[test]
fn add_one_preset() {
    check("add_one");
}

#[test]
fn one_program_runs_every_size_in_turn_and_keeps_its_memory() {
    // One dynamic entry's program, as the executor keeps it: calls at changing sizes reuse
    // the kernels bound earlier and the arena, which grows to the largest call only.
    let model = models::get("bert_block");
    let shared = compile(
        &model.source,
        &model.spec(model.cases[0]),
        DynamicMode::True,
    );
    let mut program = runtime::cpu::Program::new(shared.schedule.clone());
    let mut held = Vec::new();
    for round in 0..2 {
        for (n, case) in model.cases.iter().enumerate() {
            let inputs = case_inputs(&shared.graph, case, n as u64);
            let actual = match program.run(&inputs, &[]) {
                Ok(actual) => actual,
                Err(runtime::RunError::InputShape { .. }) => continue,
                Err(other) => panic!("{case}: {other}"),
            };
            let expected = reference(&shared.graph, &inputs);
            assert_close(
                &format!("round {round} at {case}"),
                &actual,
                &expected,
                CPU_TOLERANCE,
            );
            held.push(program.held_elems());
        }
    }
    let (first, second) = held.split_at(held.len() / 2);
    assert_eq!(
        first.last(),
        second.last(),
        "the second round allocates nothing new"
    );
    assert!(second.iter().all(|&h| h == second[0]), "{held:?}");
}

#[test]
fn repeated_calls_at_one_size_hold_the_memory_plan_and_allocate_no_more() {
    // Issue 10: no per-call allocation of intermediate buffers beyond the memory plan. The
    // first call allocates the arena, which is exactly the plan's buffers at the call's
    // sizes; later calls at the same sizes reuse it, and the products' scratch, untouched.
    for name in ["simplenet", "bert_block", "yolo_stack", "conv1d"] {
        let model = models::get(name);
        let case = model.cases[0];
        let compiled = compile(&model.source, &model.spec(case), DynamicMode::False);
        let inputs = inputs(&sizes(case), 0);
        let shapes: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape.clone()).collect();
        let planned = runtime::bind(&compiled.schedule, &shapes, &[])
            .expect("the call binds")
            .planned_elems(&compiled.schedule);
        let mut program = runtime::cpu::Program::new(compiled.schedule.clone());
        assert_eq!(
            program.held_elems(),
            0,
            "{name}: nothing before the first call"
        );
        program.run(&inputs, &[]).expect("the first call runs");
        assert_eq!(
            program.arena_elems(),
            planned,
            "{name}: the arena is the memory plan at {case}"
        );
        let held = (program.arena_elems(), program.scratch_elems());
        for round in 1..4 {
            program.run(&inputs, &[]).expect("the call runs");
            assert_eq!(
                (program.arena_elems(), program.scratch_elems()),
                held,
                "{name}: call {round} at {case} allocated beyond what the first call held"
            );
        }
    }
}

#[test]
fn the_trace_ends_with_the_kernels_stage() {
    let options = tailor::Options {
        config: CompileConfig {
            dynamic: DynamicMode::True,
            ..CompileConfig::default()
        },
        ..tailor::Options::default()
    };
    let trace = tailor::explain(&models::get("simplenet").source, "x=8,64", &options)
        .expect("SimpleNet compiles");
    let stage = trace.stages.last().expect("stages");
    assert_eq!(stage.id, "kernels");
    assert!(
        stage
            .text
            .starts_with("kernels (2):\n  k0_linear_relu: linear + relu\n")
    );
    assert!(stage.text.contains("memory plan:"));
    assert!(
        stage
            .text
            .contains("// k1_linear_1: linear_1 (dynamic sizes)")
    );
    assert!(stage.text.contains("var<uniform> dims: Dims;"));
}
