//! `tailor run`: each `--call` (or the one call of `--inputs`) through the guard cache,
//! then its kernels through the executor on the chosen device.
//!
//! In: the parsed [`RunArgs`] and the model's source; the `--weights` and `--inputs` files.
//! Out: a [`RunResults`] — the cache after every call, each call's event and outputs, and
//! the device they ran on — for `report` to print, and the `--outputs` file; or the error
//! that stops the run before any call (a bad shape, mark, weights or inputs file, an input
//! too big for the CPU reference, no GPU when `--device gpu` asks for one), or that leaves
//! `--outputs` unwritten (the call did not run).
//!
//! Invariant: every call is decided by the cache and run by the executor, in order, with
//! the `--inputs` values or inputs seeded by the call's index, so a run is reproducible; a
//! call the cache rejects runs nothing, and its error is the call's, not the run's, unless
//! it is in the program or `--outputs` wants its results.

use crate::args::RunArgs;
use std::rc::Rc;
use std::time::Instant;
use tailor::cache::{Action, CodeCache};
use tailor::graph::Tensor;
use tailor::session::Session;
use tailor::session::executor::{self, Backend, Executor, RunOptions};
use tailor::{CallEvent, Error, spec, weights};

/// What one call returned.
#[derive(Default)]
pub struct CallOutput {
    /// The returned tensors.
    pub tensors: Vec<Tensor>,
    /// With `--check`: the largest difference from the CPU reference.
    pub max_abs_err: Option<f32>,
}

/// One call: what the cache did, and what running its kernels gave.
pub type CallResult = (CallEvent, Result<CallOutput, Error>);

/// A finished run, for the reports.
pub struct RunResults {
    /// The cache after every call: its entries and their guards.
    pub cache: CodeCache,
    /// Every call, in order.
    pub calls: Vec<CallResult>,
    /// `gpu` or `cpu`.
    pub device: &'static str,
    /// The adapter's name and backend, on the GPU.
    pub adapter: Option<(String, String)>,
}

impl RunResults {
    /// The error in the program itself (not in one call's sizes), which fails the whole run.
    /// A call whose kernels could not run (a buffer or a loop past what the runtimes
    /// hold) fails it too: the report shows every call, and the exit code says one failed.
    pub fn failure(&self) -> Option<Error> {
        let in_program = self
            .calls
            .iter()
            .map(|(event, _)| event)
            .find(|event| event.error_in_program)
            .map(|event| Error::Call {
                message: event.error.clone().unwrap_or_default(),
                span: event.error_span,
            });
        in_program.or_else(|| {
            self.calls
                .iter()
                .find_map(|(_, outputs)| outputs.as_ref().err().cloned())
        })
    }
}

/// Runs every call of `args` on the model in `source`.
pub fn run(args: &RunArgs, source: &str) -> Result<RunResults, Error> {
    let model = &args.model;
    let mut cache = tailor::load(source, model.entry.as_deref())?;
    if let Some(path) = &args.weights {
        cache.load_state(&read_file("--weights", path)?)?;
    }
    let names = cache.entry_point().inputs.clone();
    let marks = model.marks(&names)?;
    let mut calls = args
        .calls
        .iter()
        .map(|text| {
            Ok((
                format!("--call {text}"),
                spec::parse_shapes(text, &names)?,
                Vec::new(),
            ))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    if let Some(path) = &args.inputs {
        let entry = &cache.entry_point().name;
        let read = weights::read_call(entry, &names, &read_file("--inputs", path)?)?;
        calls.push((format!("--inputs {path}"), read.call, read.values));
    }
    for (_, call, _) in &calls {
        spec::check_marks(call, &marks.dynamic, &marks.fixed)?;
    }
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1e3;
    let backend = pollster::block_on(Backend::open(args.device, Box::new(clock)))?;
    let mut session = Session::new(cache, Rc::new(backend), Rc::new(clock));
    let options = RunOptions {
        check: args.check,
        timing: false,
    };
    let mut results = Vec::new();
    for (index, (flag, call, values)) in calls.into_iter().enumerate() {
        // A call whose inputs the runtimes could not hold fails naming its flag and input.
        let inputs =
            executor::call_inputs(&call, values, index as u64).map_err(|err| Error::Call {
                message: format!("{flag}: {err}"),
                span: None,
            })?;
        let (event, ran) =
            pollster::block_on(session.call(0, &model.config, &call, &marks, inputs, options));
        // A call the cache refused ran nothing; its error is in its event.
        let outputs = match event.action {
            Action::Error => Ok(CallOutput::default()),
            _ => ran.map(|outcome| CallOutput {
                tensors: outcome.outputs,
                max_abs_err: outcome.max_abs_err,
            }),
        };
        results.push((event, outputs));
    }
    if let Some(path) = &args.outputs {
        write_outputs(path, &results, &session.cache)?;
    }
    Ok(RunResults {
        device: session.executor.backend().name(),
        adapter: adapter(&session.executor),
        cache: session.cache,
        calls: results,
    })
}

/// The adapter's name and backend, on the GPU.
#[cfg(feature = "gpu")]
fn adapter(executor: &Executor) -> Option<(String, String)> {
    let adapter = executor.backend().adapter()?;
    Some((adapter.name.clone(), adapter.backend.clone()))
}

/// Without the GPU runtime there is no adapter.
#[cfg(not(feature = "gpu"))]
fn adapter(_: &Executor) -> Option<(String, String)> {
    None
}

/// The bytes of the file `path` that `flag` names.
fn read_file(flag: &str, path: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|err| Error::Call {
        message: format!("cannot read {flag} {path}: {err}"),
        span: None,
    })
}

/// Writes the one call's returned tensors to `path` (`out0`, `out1`, …); a call that did
/// not run is the run's error, and nothing is written.
fn write_outputs(path: &str, results: &[CallResult], cache: &CodeCache) -> Result<(), Error> {
    let Some((event, outputs)) = results.first() else {
        return Ok(());
    };
    if event.action == Action::Error {
        return Err(Error::Call {
            message: format!(
                "--outputs {path}: the call did not run: {}",
                event.error.as_deref().unwrap_or("its compilation failed")
            ),
            span: event.error_span,
        });
    }
    let outputs = outputs.as_ref().map_err(Error::clone)?;
    // The returned tensors' dtypes are the entry's (an eager call's: float32).
    let dtypes = event
        .entry
        .and_then(|id| cache.entry(id))
        .map(|entry| entry.graph.output_dtypes())
        .unwrap_or_default();
    let bytes = weights::write_outputs(&outputs.tensors, &dtypes)?;
    std::fs::write(path, bytes).map_err(|err| Error::Call {
        message: format!("cannot write --outputs {path}: {err}"),
        span: None,
    })
}
