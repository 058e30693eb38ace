//! `tailor bench`: medians of the compiler's timings and, when a GPU adapter works, of the
//! kernels' (`tailor::bench`), as a text table or one JSON object.
//!
//! In: the parsed [`BenchArgs`]. Out: the report on stdout and the exit code; without an
//! adapter (or the `gpu` feature) a note on stderr and only the compiler's figures.
//!
//! Invariant: the JSON object is `{ "adapter": { "name", "backend" }, "metrics": { … } }`
//! whatever ran, so a tool reads the same keys on every machine.

use crate::args::BenchArgs;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

/// Runs the benchmarks and prints their medians.
pub fn bench(args: &BenchArgs) -> ExitCode {
    let rounds = args.rounds;
    let start = Instant::now();
    let clock = || start.elapsed().as_secs_f64() * 1e3;
    let mut report = tailor::bench::run(&clock, rounds);
    let adapter = match gpu_bench(start, rounds, &mut report.metrics) {
        Ok(adapter) => adapter,
        Err(code) => return code,
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "adapter": adapter, "metrics": report.metrics })
        );
    } else {
        println!(
            "tailor bench ({rounds} rounds, medians; adapter: {} on {})",
            adapter["name"].as_str().unwrap_or_default(),
            adapter["backend"].as_str().unwrap_or_default()
        );
        for (name, value) in &report.metrics {
            println!("  {name:<34} {value:>12.3}");
        }
    }
    ExitCode::SUCCESS
}

/// Adds the GPU figures to `metrics` when an adapter exists; returns the adapter as JSON.
#[cfg(feature = "gpu")]
fn gpu_bench(
    start: Instant,
    rounds: usize,
    metrics: &mut BTreeMap<String, f64>,
) -> Result<serde_json::Value, ExitCode> {
    use std::rc::Rc;
    use tailor::session::executor::{Backend, Device};

    let gpu_clock = Box::new(move || start.elapsed().as_secs_f64() * 1e3);
    let backend = match pollster::block_on(Backend::open(Device::Gpu, gpu_clock)) {
        Ok(backend) => Rc::new(backend),
        Err(err) => {
            eprintln!("note: {err}; only the compiler's figures are reported");
            return Ok(serde_json::json!({ "name": "none (CPU only)", "backend": "cpu" }));
        }
    };
    let adapter = match backend.adapter() {
        Some(adapter) => serde_json::json!({ "name": adapter.name, "backend": adapter.backend }),
        None => serde_json::json!({ "name": "none (CPU only)", "backend": "cpu" }),
    };
    let clock: tailor::bench::SharedClock = Rc::new(move || start.elapsed().as_secs_f64() * 1e3);
    match pollster::block_on(tailor::bench::run_gpu(&backend, &clock, rounds, metrics)) {
        Ok(()) => Ok(adapter),
        Err(err) => {
            eprintln!("error: GPU benchmark failed: {err}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// Without the GPU runtime only the compiler's figures exist.
#[cfg(not(feature = "gpu"))]
fn gpu_bench(
    _start: Instant,
    _rounds: usize,
    _metrics: &mut BTreeMap<String, f64>,
) -> Result<serde_json::Value, ExitCode> {
    Ok(serde_json::json!({ "name": "none (built without the gpu feature)", "backend": "cpu" }))
}
