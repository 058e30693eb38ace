//! Benchmarks of the compiler itself, reported as medians (the project's `bench` command).
//!
//! Input: a clock in milliseconds (injected: the CLI uses `Instant`, the page
//! `performance.now()`). Output: named metrics such as `compile_us.simplenet`. Invariant:
//! nothing here asserts a speed; figures are reported, and compared as ratios.

use crate::cache::{Clock, CompileConfig, DynamicMode};
use crate::guard::CallShapes;
use crate::{CallMarks, SIMPLENET_SOURCE};
use std::collections::BTreeMap;
use std::hint::black_box;

/// Named results; each value is a median in the unit its name ends with.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BenchReport {
    /// `compile_us.simplenet`, `guard_check_ns.simplenet`, …
    pub metrics: BTreeMap<String, f64>,
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn simplenet_call(batch: i64) -> CallShapes {
    CallShapes::new(vec![("x".into(), vec![batch, 64])])
}

/// Capture → guards for SimpleNet at `x=8,64` (parse, construct, trace, produce guards).
fn compile_us(clock: Clock<'_>, rounds: usize) -> f64 {
    let samples = (0..rounds)
        .map(|_| {
            let start = clock();
            let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
            let event = cache.call(
                0,
                &CompileConfig::default(),
                &simplenet_call(8),
                &CallMarks::default(),
                &|| 0.0,
            );
            black_box(event);
            (clock() - start) * 1e3
        })
        .collect();
    median(samples)
}

/// One guard check of SimpleNet's dynamic entry (a hit at batch 16).
fn guard_check_ns(clock: Clock<'_>, rounds: usize) -> f64 {
    let config = CompileConfig {
        dynamic: DynamicMode::True,
        ..CompileConfig::default()
    };
    let mut cache = crate::load(SIMPLENET_SOURCE, None).expect("SimpleNet loads");
    cache.call(
        0,
        &config,
        &simplenet_call(8),
        &CallMarks::default(),
        &|| 0.0,
    );
    let entry = &cache.entries_mru()[0];
    let call = simplenet_call(16);
    let marked = [false];
    const CHECKS_PER_ROUND: usize = 100_000;
    let samples = (0..rounds)
        .map(|_| {
            let start = clock();
            for _ in 0..CHECKS_PER_ROUND {
                black_box(entry.guards.check(black_box(&call), black_box(&marked)))
                    .expect("batch 16 passes");
            }
            (clock() - start) * 1e6 / CHECKS_PER_ROUND as f64
        })
        .collect();
    median(samples)
}

/// Runs every benchmark; `rounds` samples each (the median is reported).
pub fn run(clock: Clock<'_>, rounds: usize) -> BenchReport {
    let rounds = rounds.max(1);
    let mut metrics = BTreeMap::new();
    metrics.insert(
        "compile_us.simplenet".to_string(),
        compile_us(clock, rounds),
    );
    metrics.insert(
        "guard_check_ns.simplenet".to_string(),
        guard_check_ns(clock, rounds),
    );
    BenchReport { metrics }
}
