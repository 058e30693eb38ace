//! One model's session: its guard cache and the executor that runs its entries' kernels,
//! and the one sequence every caller (the CLI, the page, script mode, the benchmark) makes a
//! call with.
//!
//! In: a call's sizes and ints (`CallShapes`), its tensors, the wrapper's settings and marks.
//! Out: what the cache recorded (`CallEvent`: hit, compile, eager or error, per frame), then
//! the runs of the call's kernels (`Job`s) and, for callers that can wait, their `Outcome`.
//! Invariant: a call is decided by the cache before anything runs, and its runs are the
//! function's kernels (its entry's, or per-op kernels for an eager call) followed by those of
//! each resume function after its graph breaks, in order; a call the cache refused runs
//! nothing. Callers that must not hold the session across an await (the page) take the jobs
//! from `start_runs`, run them with `Executor::run` and give their kernels back with
//! `Executor::keep`.

use super::executor::{self, Backend, Executor, Job, Outcome, RunOptions};
use crate::cache::{CallEvent, CodeCache};
use crate::config::{CallMarks, CompileConfig};
use crate::error::Error;
use crate::graph::Tensor;
use crate::guard::CallShapes;
use std::rc::Rc;

/// A model's guard cache and the executor that runs and keeps its kernels.
pub struct Session {
    /// The guard cache of the model's function: its entries and every call's event.
    pub cache: CodeCache,
    /// Runs the entries' kernels on one backend and keeps them.
    pub executor: Executor,
    /// Milliseconds, for the cache's compile times and the executor's.
    clock: Rc<dyn Fn() -> f64>,
}

impl Session {
    /// A session of `cache` whose kernels run on `backend`; `clock` gives milliseconds.
    pub fn new(cache: CodeCache, backend: Rc<Backend>, clock: Rc<dyn Fn() -> f64>) -> Session {
        Session {
            cache,
            executor: Executor::new(backend, Rc::clone(&clock)),
            clock,
        }
    }

    /// Decides a call through wrapper `wrapper`: the entries' guards are checked, a new
    /// entry compiled where none passes (an eager run past the recompile limit), and where
    /// the function's graph ends at a break, Python runs on to the return with `inputs`.
    /// Returns what the cache recorded.
    pub fn decide(
        &mut self,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        inputs: &[Tensor],
    ) -> &CallEvent {
        let arguments = || executor::call_values(call, inputs);
        let clock = Rc::clone(&self.clock);
        self.cache
            .call_values(wrapper, config, call, marks, Some(&arguments), &*clock)
    }

    /// The runs of a decided call, in order: the function's kernels, then each resume
    /// function's on the values Python held at its break. A call the cache refused
    /// (`Action::Error`) has none: that is an error naming the call.
    pub fn start_runs(
        &mut self,
        event: &CallEvent,
        call: &CallShapes,
        inputs: Vec<Tensor>,
        options: RunOptions,
    ) -> Result<Vec<Job>, Error> {
        let mut jobs = vec![
            self.executor
                .start_call(&self.cache, event, call, inputs, options)?,
        ];
        jobs.extend(self.executor.start_resumes(&self.cache, event, options)?);
        Ok(jobs)
    }

    /// Runs `jobs` in order, keeping their kernels, for callers that can wait: one
    /// `Outcome` for them all, with the last run's outputs.
    pub async fn finish(&mut self, jobs: Vec<Job>) -> Result<Outcome, Error> {
        let mut jobs = jobs.into_iter();
        let Some(first) = jobs.next() else {
            return Err(Error::Call {
                message: "the call had nothing to run".into(),
                span: None,
            });
        };
        let mut outcome = self.executor.execute(first).await?;
        for job in jobs {
            outcome = outcome.then(self.executor.execute(job).await?);
        }
        Ok(outcome)
    }

    /// A whole call for callers that can wait: decided, then run. The event comes back
    /// whatever running gave.
    pub async fn call(
        &mut self,
        wrapper: usize,
        config: &CompileConfig,
        call: &CallShapes,
        marks: &CallMarks,
        inputs: Vec<Tensor>,
        options: RunOptions,
    ) -> (CallEvent, Result<Outcome, Error>) {
        let event = self.decide(wrapper, config, call, marks, &inputs).clone();
        let ran = match self.start_runs(&event, call, inputs, options) {
            Ok(jobs) => self.finish(jobs).await,
            Err(err) => Err(err),
        };
        (event, ran)
    }
}
