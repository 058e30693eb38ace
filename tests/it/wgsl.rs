//! Every emitted WGSL string is parsed and validated by naga (no GPU needed): all kernels of
//! every model in `models.rs`, at every size it is checked at, in all four modes, tiled and
//! naive products included, and row reductions' subgroup forms (validated with naga's
//! subgroup capability, and immediate code with its immediates capability). SimpleNet's kernels are also kept as golden files in
//! `tests/data/wgsl/` (update with `UPDATE_EXPECT=1`), validated again like every string.

use crate::kernels::compile;
use crate::models::{self, sizes};
use expect_test::expect_file;
use std::collections::HashSet;
use tailor::codegen::{self, Mode, Specialization, Wgsl};
use tailor::config::DynamicMode;
use tailor::lower::{Body, GemmStrategy};
use tailor::runtime;

/// Parses and validates `wgsl` with naga (immediate code for a device with immediates);
/// panics with naga's report and the source.
#[track_caller]
pub fn validate(wgsl: &Wgsl) {
    let capabilities = match wgsl.mode {
        Mode::Immediate => naga::valid::Capabilities::IMMEDIATES,
        _ => naga::valid::Capabilities::default(),
    };
    validate_with(wgsl, capabilities);
}

/// [`validate`], for a device with subgroup operations in compute shaders.
#[track_caller]
fn validate_with_subgroups(wgsl: &Wgsl) {
    let immediates = match wgsl.mode {
        Mode::Immediate => naga::valid::Capabilities::IMMEDIATES,
        _ => naga::valid::Capabilities::default(),
    };
    validate_with(wgsl, naga::valid::Capabilities::SUBGROUP | immediates);
}

#[track_caller]
fn validate_with(wgsl: &Wgsl, capabilities: naga::valid::Capabilities) {
    let module = naga::front::wgsl::parse_str(&wgsl.source).unwrap_or_else(|e| {
        panic!(
            "{} does not parse:\n{}\n{}",
            wgsl.kernel,
            e.emit_to_string(&wgsl.source),
            wgsl.source
        )
    });
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities)
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(naga::valid::SubgroupOperationSet::all())
        .validate(&module)
        .unwrap_or_else(|e| {
            panic!(
                "{} does not validate:\n{}\n{}",
                wgsl.kernel,
                e.emit_to_string(&wgsl.source),
                wgsl.source
            )
        });
}

/// Validates each distinct (source, capabilities) pair once: models and sizes share many
/// kernels, and the same text validates the same way.
#[derive(Default)]
struct Distinct {
    seen: HashSet<(String, bool)>,
}

impl Distinct {
    #[track_caller]
    fn validate(&mut self, wgsl: &Wgsl, subgroups: bool) {
        if self.seen.insert((wgsl.source.clone(), subgroups)) {
            if subgroups {
                validate_with_subgroups(wgsl);
            } else {
                validate(wgsl);
            }
        }
    }
}

#[test]
fn every_kernel_validates_in_all_four_modes() {
    let mut distinct = Distinct::default();
    for model in models::all() {
        for case in model.cases {
            let compiled = compile(&model.source, &model.spec(case), DynamicMode::True);
            let schedule = &compiled.schedule;
            let bound = runtime::bind(schedule, &sizes(case), &[]).expect("the case binds");
            for spec in [
                Specialization::Static(&bound.bindings),
                Specialization::Override,
                Specialization::Dynamic,
                Specialization::Immediate,
            ] {
                for kernel in &schedule.kernels {
                    distinct.validate(&codegen::emit_wgsl(schedule, kernel, &spec), false);
                    if let Some(wgsl) = codegen::emit_wgsl_with_subgroups(schedule, kernel, &spec) {
                        assert!(wgsl.source.contains("subgroupAdd"), "{}", wgsl.source);
                        distinct.validate(&wgsl, true);
                    }
                    if matches!(kernel.body, Body::Gemm(_)) {
                        for strategy in [GemmStrategy::Blocked, GemmStrategy::Naive] {
                            let other = kernel.with_strategy(strategy);
                            distinct.validate(&codegen::emit_wgsl(schedule, &other, &spec), false);
                            let with_subgroups =
                                codegen::emit_wgsl_with_subgroups(schedule, &other, &spec);
                            assert_eq!(
                                with_subgroups.is_some(),
                                strategy == GemmStrategy::Blocked,
                                "a blocked product alone has a subgroup form"
                            );
                            if let Some(wgsl) = with_subgroups {
                                assert!(wgsl.source.contains("subgroupShuffle"), "{}", wgsl.source);
                                distinct.validate(&wgsl, true);
                            }
                        }
                    }
                }
            }
        }
    }
    let validated = distinct.seen.len();
    assert!(
        validated > 400,
        "only {validated} distinct kernels validated"
    );
}

/// SimpleNet compiled as the material's static and dynamic entries, emitted in each mode.
fn simplenet_wgsl() -> (Vec<Wgsl>, Vec<Wgsl>, Vec<Wgsl>) {
    let source = models::get("simplenet").source;
    let fixed = compile(&source, "x=8,64", DynamicMode::False);
    let dynamic = compile(&source, "x=8,64", DynamicMode::True);
    let none = Default::default();
    (
        codegen::emit_schedule(&fixed.schedule, &Specialization::Static(&none)),
        codegen::emit_schedule(&dynamic.schedule, &Specialization::Override),
        codegen::emit_schedule(&dynamic.schedule, &Specialization::Dynamic),
    )
}

#[test]
fn simplenet_kernels_match_their_golden_files() {
    let (fixed, overridden, dynamic) = simplenet_wgsl();
    for wgsl in fixed.iter().chain(&overridden).chain(&dynamic) {
        validate(wgsl);
    }
    expect_file!["../data/wgsl/simplenet_k0.static.wgsl"].assert_eq(&fixed[0].source);
    expect_file!["../data/wgsl/simplenet_k1.static.wgsl"].assert_eq(&fixed[1].source);
    expect_file!["../data/wgsl/simplenet_k0.override.wgsl"].assert_eq(&overridden[0].source);
    expect_file!["../data/wgsl/simplenet_k1.override.wgsl"].assert_eq(&overridden[1].source);
    expect_file!["../data/wgsl/simplenet_k0.dynamic.wgsl"].assert_eq(&dynamic[0].source);
    expect_file!["../data/wgsl/simplenet_k1.dynamic.wgsl"].assert_eq(&dynamic[1].source);
}

#[test]
fn immediate_code_reads_the_dynamic_struct_from_immediates_and_binds_no_uniform() {
    let source = models::get("simplenet").source;
    let compiled = compile(&source, "x=8,64", DynamicMode::True);
    let immediate = codegen::emit_schedule(&compiled.schedule, &Specialization::Immediate);
    let dynamic = codegen::emit_schedule(&compiled.schedule, &Specialization::Dynamic);
    for (wgsl, uniform) in immediate.iter().zip(&dynamic) {
        validate(wgsl);
        assert!(
            wgsl.source.contains("var<immediate> dims: Dims;"),
            "{}",
            wgsl.source
        );
        assert!(!wgsl.resources.contains(&codegen::Resource::Dims));
        assert_eq!(wgsl.resources.len() + 1, uniform.resources.len());
        assert_eq!(wgsl.symbols, uniform.symbols);
    }
    expect_file!["../data/wgsl/simplenet_k0.immediate.wgsl"].assert_eq(&immediate[0].source);
}

#[test]
fn static_code_drops_bounds_checks_only_where_sizes_divide_the_tile() {
    let (fixed, _, dynamic) = simplenet_wgsl();
    // Batch 8 does not divide the 32-row tile; 64 and 128 divide the column tile.
    assert!(fixed[0].source.contains("if (row < M)"));
    assert!(!fixed[0].source.contains("col < N"));
    assert!(dynamic[0].source.contains("if (row < M && col < N)"));
}

#[test]
fn naive_products_read_vec4s_where_the_reduction_runs_along_aligned_rows() {
    let naive_source = |source: &str, shapes: &str| {
        let compiled = compile(source, shapes, DynamicMode::True);
        let kernel = compiled.schedule.kernels[0].with_strategy(GemmStrategy::Naive);
        let wgsl = codegen::emit_wgsl(&compiled.schedule, &kernel, &Specialization::Dynamic);
        validate(&wgsl);
        wgsl.source
    };
    // SimpleNet's first layer, as a batch of 8 runs it: x[row, kk] and weight[col, kk].
    let linear = naive_source(&models::get("simplenet").source, "x=8,64");
    assert!(linear.contains("var<storage, read> in0: array<vec4<f32>>"));
    assert!(linear.contains("var<storage, read> p_layers_0_weight: array<vec4<f32>>"));
    assert!(linear.contains("acc += in0[a0 + k4] * p_layers_0_weight[b0 + k4];"));
    // x @ w with w as [k, n] strides by n along the reduction: scalar reads.
    let matmul = naive_source(
        "import torch\n\ndef f(x, w):\n    return x @ w\n",
        "x=8,64;w=64,32",
    );
    assert!(!matmul.contains("vec4"), "{matmul}");
    assert!(matmul.contains("for (var kk = 0i; kk < K; kk++)"));
}
