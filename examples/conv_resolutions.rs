//! A YOLO-style convolution stack (`models/yolo_stack.py`) called at the resolutions a
//! detection service sees — 320, 416 and 640 pixels — compiled static and dynamic. For
//! each policy it prints how many entries were compiled, how many GPU pipelines were
//! created, how much GPU memory the runtime's caches hold and the time of the six calls
//! (compiling included), and checks every result against the CPU reference.
//!
//! Each call goes the CLI's way, through a `Session`: its guard cache decides, its executor
//! runs the entry's kernels (`Session::call`); the backend's counters (`Backend::stats`)
//! show what each policy built.
//!
//! ```text
//! cargo run --release --example conv_resolutions
//! ```

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Instant;
use tailor::config::{CompileConfig, DynamicMode};
use tailor::session::Session;
use tailor::session::executor::{self, Backend, Device, RunOptions};
use tailor::{CallMarks, CallShapes};

const SOURCE: &str = include_str!("../models/yolo_stack.py");
const RESOLUTIONS: [usize; 3] = [320, 416, 640];

fn main() {
    let start = Instant::now();
    let clock: Rc<dyn Fn() -> f64> = Rc::new(move || start.elapsed().as_secs_f64() * 1e3);
    let gpu_clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    let backend = match pollster::block_on(Backend::open(Device::Gpu, gpu_clock)) {
        Ok(backend) => Rc::new(backend),
        Err(why) => {
            println!("this example needs a GPU adapter: {why}");
            return;
        }
    };
    let adapter = backend.adapter().expect("a GPU backend has an adapter");
    println!(
        "TinyDetector at {RESOLUTIONS:?}, each resolution called twice, on {} ({})\n",
        adapter.name, adapter.backend
    );
    println!(
        "{:<14} {:>8} {:>10} {:>14} {:>12} {:>13}",
        "policy", "compiles", "pipelines", "GPU memory", "GPU ms", "max |error|"
    );
    let gpu_stats = || pollster::block_on(backend.stats()).expect("on the GPU");
    let mut references = BTreeMap::new();
    for (policy, dynamic) in [
        ("dynamic=False", DynamicMode::False),
        ("dynamic=True", DynamicMode::True),
        ("dynamic=None", DynamicMode::Auto),
    ] {
        // Each policy starts as a fresh process would: no pipelines, no kept kernels.
        pollster::block_on(backend.clear_cache());
        let before = gpu_stats();
        let config = CompileConfig {
            dynamic,
            ..CompileConfig::default()
        };
        let cache = tailor::load(SOURCE, None).expect("the model loads");
        let mut session = Session::new(cache, Rc::clone(&backend), Rc::clone(&clock));
        let mut worst = 0.0f32;
        let mut total_ms = 0.0;
        for side in RESOLUTIONS.iter().flat_map(|&s| [s, s]) {
            let call =
                CallShapes::new(vec![("image".into(), vec![1, 3, side as i64, side as i64])]);
            let inputs = executor::call_inputs(&call, Vec::new(), side as u64)
                .expect("a 640x640 image fits the runtimes");
            let started = Instant::now();
            let (event, ran) = pollster::block_on(session.call(
                0,
                &config,
                &call,
                &CallMarks::default(),
                inputs.clone(),
                RunOptions::default(),
            ));
            let outcome = ran.expect("the model compiles and runs");
            total_ms += started.elapsed().as_secs_f64() * 1e3;
            // The reference is slow at 640 x 640, so each resolution's is computed once and
            // shared by every call and policy, rather than asked of each run (`check`).
            let expected = references.entry(side).or_insert_with(|| {
                let id = event.entry.expect("the call ran an entry");
                let entry = session.cache.entry(id).expect("the entry exists");
                executor::reference(&entry.graph, &call, &inputs).expect("the reference runs")
            });
            worst = worst.max(executor::max_abs_err(&outcome.outputs, expected));
        }
        let stats = gpu_stats();
        println!(
            "{policy:<14} {:>8} {:>10} {:>10} KiB {:>12.1} {:>13.2e}",
            session.cache.compiles(),
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
