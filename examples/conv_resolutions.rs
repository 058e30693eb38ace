//! A YOLO-style convolution stack (`models/yolo_stack.py`) called at the resolutions a
//! detection service sees — 320, 416 and 640 pixels — compiled static and dynamic. For
//! each policy it prints how many entries were compiled, how many GPU pipelines were
//! created, how much GPU memory the runtime's caches hold and the time of the six calls
//! (compiling included), and checks every result against the CPU reference.
//!
//! ```text
//! cargo run --release --example conv_resolutions
//! ```

use std::collections::BTreeMap;
use std::time::Instant;
use tailor::cache::{Action, CompileConfig, DynamicMode};
use tailor::codegen;
use tailor::graph;
use tailor::lower;
use tailor::runtime::{self, gpu::Gpu, gpu::Program};
use tailor::symbolic::Bindings;
use tailor::{CallMarks, CallShapes};

const SOURCE: &str = include_str!("../models/yolo_stack.py");
const RESOLUTIONS: [usize; 3] = [320, 416, 640];

fn main() {
    let start = Instant::now();
    let clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    let mut gpu = match pollster::block_on(Gpu::new(clock)) {
        Ok(gpu) => gpu,
        Err(why) => {
            println!("this example needs a GPU adapter: {why}");
            return;
        }
    };
    println!(
        "TinyDetector at {RESOLUTIONS:?}, each resolution called twice, on {} ({})\n",
        gpu.adapter().name,
        gpu.adapter().backend
    );
    println!(
        "{:<14} {:>8} {:>10} {:>14} {:>12} {:>13}",
        "policy", "compiles", "pipelines", "GPU memory", "GPU ms", "max |error|"
    );
    let mut references = BTreeMap::new();
    for (policy, dynamic) in [
        ("dynamic=False", DynamicMode::False),
        ("dynamic=True", DynamicMode::True),
        ("dynamic=None", DynamicMode::Auto),
    ] {
        gpu.clear_cache();
        let before = gpu.stats();
        let config = CompileConfig {
            dynamic,
            ..CompileConfig::default()
        };
        let mut cache = tailor::load(SOURCE, None).expect("the model loads");
        let mut programs: BTreeMap<usize, Program> = BTreeMap::new();
        let mut worst = 0.0f32;
        let mut total_ms = 0.0;
        for side in RESOLUTIONS.iter().flat_map(|&s| [s, s]) {
            let shape = vec![1, 3, side, side];
            let call = CallShapes::new(vec![(
                "image".into(),
                shape.iter().map(|&d| d as i64).collect(),
            )]);
            let started = Instant::now();
            let event = cache.call(0, &config, &call, &CallMarks::default(), &|| 0.0);
            let (id, compiled) = (
                event.entry.expect("the model compiles"),
                event.action == Action::Compile,
            );
            let entry = cache.entry(id).expect("the entry exists");
            if compiled {
                let schedule = lower::lower(&entry.graph, &|s| entry.env.range(s)).expect("lowers");
                let mode = codegen::entry_mode(&schedule);
                programs.insert(id, Program::new(schedule, mode, &Bindings::new()));
            }
            let inputs = graph::random_inputs(&[("image".into(), shape)], side as u64);
            let program = programs.get_mut(&id).expect("compiled above");
            let run = pollster::block_on(gpu.run(program, &inputs, false)).expect("runs");
            total_ms += started.elapsed().as_secs_f64() * 1e3;
            // The reference is slow at 640 x 640, so each resolution's is computed once.
            let expected = references.entry(side).or_insert_with(|| {
                let mut bindings = Bindings::new();
                let input_shape = entry.graph.shape(entry.graph.inputs[0]);
                for (dim, &size) in input_shape.iter().zip(&inputs[0].shape) {
                    if let Some(sym) = dim.as_sym() {
                        bindings.set(sym, size as i64);
                    }
                }
                graph::eval(&entry.graph, &bindings, &inputs).expect("the reference runs")
            });
            worst = worst.max(runtime::executor::max_abs_err(&run.outputs, expected));
        }
        let stats = gpu.stats();
        println!(
            "{policy:<14} {:>8} {:>10} {:>10} KiB {:>12.1} {:>13.2e}",
            cache.compiles(),
            stats.pipelines_created - before.pipelines_created,
            stats.bytes_held / 1024,
            total_ms,
            worst
        );
    }
    println!(
        "\nStatic entries bake each resolution into their kernels: one entry and one set of
pipelines per resolution. The dynamic entry computes sizes such as (s1 - 1)//2 + 1 on the
GPU from one uniform, so every resolution reuses the same pipelines."
    );
}
