//! The front end's costs on SimpleNet: how long the Python VM takes to start, to run the
//! model file's module level, and to capture `forward` (cold, then warm).
//!
//! ```text
//! cargo run --release --ignore-rust-version --example frontend_costs
//! ```

use std::time::{Duration, Instant};
use tailor::SIMPLENET_SOURCE;
use tailor::frontend;
use tailor::graph::{DType, TracedArg};
use tailor::shape::{DimPolicy, DimSource, ShapeEnv};

const WARM_RUNS: u32 = 50;

fn shapes(env: &mut ShapeEnv, batch: i64) -> Vec<(String, TracedArg)> {
    let dims = [batch, 64];
    let shape = dims
        .iter()
        .enumerate()
        .map(|(dim, &value)| {
            let source = DimSource::dim("x", dim);
            env.add_input_dim(source, value, DimPolicy::Duck, None, "dynamic=True")
                .expect("no marks")
        })
        .collect();
    vec![("x".to_string(), TracedArg::Tensor(shape, DType::Float32))]
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    drop(frontend::Vm::fresh());
    println!("interpreter creation            {}", ms(start.elapsed()));

    let start = Instant::now();
    let program = frontend::parse(SIMPLENET_SOURCE)?;
    let entry = program.entry(None)?;
    println!("parse + entry           {}", ms(start.elapsed()));
    let start = Instant::now();
    let mut env = ShapeEnv::new();
    let graph = frontend::capture(&program, &entry, &shapes(&mut env, 8), &mut env)?.graph;
    println!("first capture (cold)    {}", ms(start.elapsed()));
    let start = Instant::now();
    for batch in 0..WARM_RUNS {
        let mut env = ShapeEnv::new();
        frontend::capture(
            &program,
            &entry,
            &shapes(&mut env, 2 + i64::from(batch)),
            &mut env,
        )?;
    }
    println!(
        "capture (warm, mean)    {}",
        ms(start.elapsed() / WARM_RUNS)
    );

    println!("\n{graph}");
    Ok(())
}
