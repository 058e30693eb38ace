//! Jobs on threads: rayon's pool natively, the calling thread alone in wasm32 (which has
//! no threads), and the proof that parallel jobs write disjoint memory.
//!
//! In: a kernel's jobs, each with the hull (smallest and largest offset) of what it writes.
//! Out: the jobs run, each with a `Window` — the slice of the output buffer covering its
//! hull. Invariant: jobs run in parallel only when their hulls are pairwise disjoint and
//! inside the buffer, which is what lets safe code hand each one its own `&mut` slice;
//! otherwise they run one after another over the whole buffer, in order, which is the
//! sequential semantics of the kernel.

use super::super::RunError;
use super::memory::Window;
use std::ops::Range;

/// Work (elements times steps) below which a kernel runs as one job: starting and joining
/// a job costs about as much as computing this many elements.
const MIN_JOB_WORK: usize = 1 << 15;

/// Threads jobs can run on.
pub(super) fn threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        rayon::current_num_threads()
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// How many jobs to cut `work` into: one per `MIN_JOB_WORK`, at most four per thread (so a
/// slow job does not leave the other threads idle for long).
pub(super) fn job_count(work: usize) -> usize {
    let threads = threads();
    if threads <= 1 {
        return 1;
    }
    (work / MIN_JOB_WORK).clamp(1, 4 * threads)
}

/// `range` cut into `parts` consecutive pieces of nearly equal length (no empty piece).
pub(super) fn split_range(range: Range<i64>, parts: usize) -> Vec<Range<i64>> {
    let len = (range.end - range.start).max(0);
    let parts = (parts as i64).clamp(1, len.max(1));
    (0..parts)
        .map(|p| range.start + len * p / parts..range.start + len * (p + 1) / parts)
        .filter(|piece| !piece.is_empty())
        .collect()
}

/// Runs `f` on every job, on the threads there are; the first error is returned.
pub(super) fn run_jobs<J: Send>(
    jobs: Vec<J>,
    f: impl Fn(J) -> Result<(), RunError> + Sync + Send,
) -> Result<(), RunError> {
    #[cfg(not(target_arch = "wasm32"))]
    if jobs.len() > 1 {
        use rayon::prelude::*;
        return jobs.into_par_iter().try_for_each(f);
    }
    jobs.into_iter().try_for_each(f)
}

/// Runs `f(job, window)` for every `(hull, job)`: in parallel with one window per hull when
/// the hulls are disjoint and inside `out`, else in order with the whole buffer as window.
pub(super) fn for_each_window<J: Send>(
    out: &mut [f32],
    jobs: Vec<(Range<i64>, J)>,
    f: impl Fn(J, &mut Window<'_>) -> Result<(), RunError> + Sync + Send,
) -> Result<(), RunError> {
    let buffer_len = out.len();
    let hulls: Vec<Range<i64>> = jobs.iter().map(|(hull, _)| hull.clone()).collect();
    if jobs.len() > 1
        && let Some(windows) = windows(out, &hulls)
    {
        let jobs = jobs.into_iter().map(|(_, job)| job).zip(windows).collect();
        return run_jobs(jobs, |(job, mut window)| f(job, &mut window));
    }
    let mut window = Window {
        data: out,
        start: 0,
        buffer_len,
    };
    jobs.into_iter()
        .try_for_each(|(_, job)| f(job, &mut window))
}

/// One window per hull, in the hulls' order, when they are disjoint and inside `out`.
fn windows<'a>(out: &'a mut [f32], hulls: &[Range<i64>]) -> Option<Vec<Window<'a>>> {
    let buffer_len = out.len();
    let mut order: Vec<usize> = (0..hulls.len()).collect();
    order.sort_by_key(|&i| hulls[i].start);
    let mut end = 0i64;
    for &i in &order {
        let hull = &hulls[i];
        if hull.start < end || hull.end < hull.start || hull.end > buffer_len as i64 {
            return None;
        }
        end = hull.end;
    }
    let mut slots: Vec<Option<Window<'a>>> = (0..hulls.len()).map(|_| None).collect();
    let (mut rest, mut at) = (out, 0i64);
    for &i in &order {
        let hull = &hulls[i];
        let (_, tail) = rest.split_at_mut((hull.start - at) as usize);
        let (data, tail) = tail.split_at_mut((hull.end - hull.start) as usize);
        slots[i] = Some(Window {
            data,
            start: hull.start,
            buffer_len,
        });
        (rest, at) = (tail, hull.end);
    }
    slots.into_iter().collect()
}

/// The smallest range holding `a` and `b` (either may be empty).
pub(super) fn union(a: Range<i64>, b: Range<i64>) -> Range<i64> {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b,
        (_, true) => a,
        _ => a.start.min(b.start)..a.end.max(b.end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_hulls_get_their_own_windows() {
        let mut out = vec![0.0; 10];
        let windows = windows(&mut out, &[6..9, 0..2, 2..2, 2..5]).expect("disjoint");
        let spans: Vec<(i64, usize)> = windows.iter().map(|w| (w.start, w.data.len())).collect();
        assert_eq!(spans, [(6, 3), (0, 2), (2, 0), (2, 3)]);
    }

    #[test]
    fn overlapping_or_outside_hulls_do_not() {
        let mut out = vec![0.0; 10];
        assert!(windows(&mut out, &[0..5, 4..6]).is_none());
        assert!(windows(&mut out, &[0..5, 5..11]).is_none());
    }

    #[test]
    fn ranges_split_evenly() {
        assert_eq!(split_range(0..10, 3), [0..3, 3..6, 6..10]);
        assert_eq!(split_range(0..2, 5), [0..1, 1..2]);
        assert_eq!(split_range(0..0, 4), Vec::<Range<i64>>::new());
    }
}
