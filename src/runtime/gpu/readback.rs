//! Getting a call's results off the GPU without blocking: outputs and timestamps copied to
//! mappable buffers, mapped, and read as a future.
//!
//! In: a call's recorded commands, its device buffers and timestamp queries. Out: a
//! future of the output tensors and per-kernel times. Invariant: nothing here blocks on the
//! web — completion is the browser's promise, awaited, and each buffer is read with one
//! call into JavaScript (`browser.rs`); natively wgpu's callbacks set `Signal`s, run by
//! `device.poll` before the future is first polled.

use super::objects::{QuerySet, Recorder};
use super::{CallPlan, Gpu, GpuError, Program};
use crate::graph::Tensor;
use std::future::Future;
use std::pin::Pin;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// The usage of the buffers outputs and timestamps are copied to and mapped from.
pub(super) const MAPPABLE: wgpu::BufferUsages =
    wgpu::BufferUsages::MAP_READ.union(wgpu::BufferUsages::COPY_DST);

/// The most nudges of one read-back. The nudges of a pending read-back in the page: while a call's outputs are not mapped,
/// an empty command list is submitted every 1 ms (`browser::NUDGE_EVERY_MS`), `count` times
/// at most. Measured in headless Chromium (SwiftShader), the browser's GPU process notices
/// that submitted work has finished when it handles a command from the page, or else on its
/// own timer: about 2 ms after the last command from the page, then every 1 ms while work is
/// pending. A nudge is such a command, so it notices work finished before it, and it moves
/// the timer to 2 ms after itself. One nudge at 1 ms therefore helps a call done by then
/// (steady SimpleNet b8: 2.6 ms without, 1.5 ms with) and costs one that ends between 1 and
/// 2 ms a whole millisecond (b24: 1.41× as long as without). Nudging every 1 ms until the
/// mapping leaves no such gap while it lasts, and the last nudge opens one between it and
/// the timer: 8 at most, since each costs the GPU process a little (at 14.6 ms, b256, 16
/// nudges made a call 1.085× as long, 4 nudges 0.99×). A call whose same-shaped call last
/// waited longer than [`LONG_WAIT_MS`] is not nudged: past 2 ms the timer polls every 1 ms,
/// as nudges would. Natively nothing is nudged: `device.poll` waits for the mapping.
pub(super) const MAX_NUDGES: u32 = 8;

/// A call whose plan's last read-back waited longer than this, in ms, is not nudged
/// (`MAX_NUDGES`).
pub(super) const LONG_WAIT_MS: f64 = 4.0;

/// A one-shot value set by a callback and awaited as a future (read-back on the web must
/// not block, so completion is signalled, not waited for).
struct Signal<T> {
    state: Arc<Mutex<(Option<T>, Option<Waker>)>>,
}

impl<T> Signal<T> {
    fn new() -> (Signal<T>, impl FnOnce(T) + Clone) {
        let state = Arc::new(Mutex::new((None, None::<Waker>)));
        let setter_state = state.clone();
        let set = move |value: T| {
            let waker = {
                let mut guard = setter_state.lock().expect("signal lock");
                guard.0 = Some(value);
                guard.1.take()
            };
            // Woken with the lock released: a waker may poll the future at once (the
            // page's calls do), and its poll takes the lock.
            if let Some(waker) = waker {
                waker.wake();
            }
        };
        (Signal { state }, set)
    }
}

impl<T> Future for Signal<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut guard = self.state.lock().expect("signal lock");
        match guard.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                guard.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Gpu {
    /// Copies the outputs (and resolved timestamps) to mappable buffers, submits the call's
    /// recording, and returns a future of the tensors and kernel times. Natively the mapping
    /// completes here, by polling; on the web the browser completes it and the future waits,
    /// nudged `nudges` times at most.
    #[expect(clippy::too_many_arguments, reason = "a read-back is all of these")]
    pub(super) fn read_back(
        &mut self,
        mut recorder: Recorder,
        program: &Program,
        plan: &CallPlan,
        buffers: &[wgpu::Buffer],
        queries: Option<&QuerySet>,
        held: &mut Vec<wgpu::Buffer>,
        nudges: u32,
    ) -> Result<impl Future<Output = ReadBack> + use<>, GpuError> {
        let schedule = &program.schedule;
        let mut targets: Vec<(wgpu::Buffer, u64)> = Vec::new();
        for (&id, &bytes) in schedule.outputs.iter().zip(&plan.output_bytes) {
            let target = self.pool.acquire(&self.device, MAPPABLE, bytes);
            if bytes > 0 {
                recorder.copy(&buffers[id.index()], &target, bytes);
            }
            targets.push((target, bytes));
        }
        let n_queries = 2 * schedule.kernels.len() as u32;
        if let Some(query_set) = queries {
            let bytes = u64::from(n_queries) * 8;
            let usage = wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC;
            let resolve = self.pool.acquire(&self.device, usage, bytes);
            let target = self.pool.acquire(&self.device, MAPPABLE, bytes);
            recorder.resolve(query_set, n_queries, &resolve);
            recorder.copy(&resolve, &target, bytes);
            held.push(resolve);
            targets.push((target, bytes));
        }
        let submitted = recorder.submit(&self.queue);
        held.extend(targets.iter().map(|(target, _)| target.clone()));
        submitted?;
        let mapped = map_targets(&targets, &self.queue, nudges, &self.nudges_sent);
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        // The kernels' names and the tick's length, only for a timed call.
        let timestamps = queries.is_some().then(|| {
            let names: Vec<String> = schedule.kernels.iter().map(|k| k.name.clone()).collect();
            (names, f64::from(self.queue.get_timestamp_period()))
        });
        let out_shapes = plan.outputs.clone();
        Ok(async move {
            mapped.await?;
            let mut mapped = targets.iter();
            let mut outputs = Vec::new();
            for shape in out_shapes {
                let (target, bytes) = mapped.next().expect("one per output");
                let data = read_mapped(target, *bytes)?;
                outputs.push(Tensor { shape, data });
            }
            let mut times = Vec::new();
            if let Some((names, period_ns)) = timestamps {
                let (target, bytes) = mapped.next().expect("the timestamps");
                let ticks: Vec<u64> = read_mapped(target, *bytes)?;
                for (k, name) in names.into_iter().enumerate() {
                    let elapsed = ticks[2 * k + 1].saturating_sub(ticks[2 * k]);
                    times.push((name, elapsed as f64 * period_ns / 1e6));
                }
            }
            Ok((outputs, times))
        })
    }

    /// Turns the page's read-back nudges ([`MAX_NUDGES`]) on or off (on by default); returns
    /// whether they were on. The steady benchmark measures both ways.
    pub fn set_nudges(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.nudges_on, on)
    }

    /// How many times the read-back of a call is nudged at most, given how long its plan's
    /// last read-back waited (none for a new plan).
    pub(super) fn nudges_for(&self, last_wait_ms: Option<f64>) -> u32 {
        match last_wait_ms {
            _ if !self.nudges_on => 0,
            Some(waited) if waited > LONG_WAIT_MS => 0,
            _ => MAX_NUDGES,
        }
    }

    /// Waits until the queue is idle (natively by polling, on the web by a callback).
    pub(super) async fn wait_idle(&self) {
        let (signal, set) = Signal::new();
        self.queue.on_submitted_work_done(move || set(()));
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
        signal.await;
    }
}

/// The tensors and per-kernel times of a call, once read back.
pub(super) type ReadBack = Result<(Vec<Tensor>, Vec<(String, f64)>), GpuError>;

/// Maps the first bytes of each target for reading (none of an empty one): a future that
/// ends once all are mapped, natively once `device.poll` has run wgpu's callbacks (so
/// there is nothing to nudge).
#[cfg(not(target_arch = "wasm32"))]
fn map_targets(
    targets: &[(wgpu::Buffer, u64)],
    _queue: &wgpu::Queue,
    _nudges: u32,
    _nudges_sent: &Arc<AtomicU64>,
) -> impl Future<Output = Result<(), GpuError>> + use<> {
    let mut signals = Vec::with_capacity(targets.len());
    for (target, bytes) in targets {
        let (signal, set) = Signal::new();
        if *bytes > 0 {
            target.slice(..*bytes).map_async(wgpu::MapMode::Read, set);
        } else {
            set(Ok(()));
        }
        signals.push(signal);
    }
    async move {
        for signal in signals {
            signal
                .await
                .map_err(|e| GpuError::ReadBack(e.to_string()))?;
        }
        Ok(())
    }
}

/// In the page the browser's buffers are mapped and read directly (`browser.rs`).
#[cfg(target_arch = "wasm32")]
use super::browser::map_read as map_targets;

/// A mapped buffer's first `bytes` as values, copied out once; unmaps it afterwards.
#[cfg(not(target_arch = "wasm32"))]
fn read_mapped<T: bytemuck::Pod>(target: &wgpu::Buffer, bytes: u64) -> Result<Vec<T>, GpuError> {
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let view = target
        .slice(..bytes)
        .get_mapped_range()
        .map_err(|e| GpuError::ReadBack(e.to_string()))?;
    let data = bytemuck::pod_collect_to_vec(&view);
    drop(view);
    target.unmap();
    Ok(data)
}

/// A mapped buffer's first `bytes` as values, copied by the browser straight into them;
/// unmaps it afterwards.
#[cfg(target_arch = "wasm32")]
fn read_mapped<T: bytemuck::Pod>(target: &wgpu::Buffer, bytes: u64) -> Result<Vec<T>, GpuError> {
    let mut data = vec![T::zeroed(); bytes as usize / size_of::<T>()];
    if bytes > 0 {
        super::browser::read_mapped(target, bytemuck::cast_slice_mut(&mut data))?;
    }
    Ok(data)
}
