//! A call's future as a JavaScript promise, polled by the waker it hands out.
//!
//! In: every future of the page that holds the GPU (`Model::call`'s and
//! `Compilation::run`'s runs of kernels, and the `Tailor` methods that change or read the
//! GPU runtime). Out: a promise that settles with it. wasm-bindgen-futures'
//! `future_to_promise` polls a woken future on its own queue, a microtask after the wake,
//! through its task and queue objects; here a wake from a JavaScript callback (the call's
//! output mapped) polls the future at once, on that callback's stack, and settles the
//! promise from there: a steady call's read-back goes on without the queue's hop (issue
//! 11's "after the mapping"). The first poll runs inside [`promise`], so a call's kernels
//! are submitted before it returns.
//!
//! Invariants: a future is never polled inside another poll of a driven future (a wake
//! from inside one, such as a run handing the GPU to the calls waiting for it, comes from
//! code in the middle of changing its state): such a wake is deferred to a microtask.
//! Whoever wakes holds no lock or borrow a poll may take (`Signal`, `Held`). A wake of a
//! future while it is being polled makes that poll run again, so no wake is lost. Wakers
//! hold only the task's number (`Wake` needs `Send + Sync`, and the crate has no `unsafe`):
//! a wake after the task settled finds nothing and does nothing.

use js_sys::{Function, Promise};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function tailorDeferred() {
  let settle;
  const promise = new Promise((resolve, reject) => { settle = [resolve, reject]; });
  return [promise, ...settle];
}
export function tailorSoon(task) {
  queueMicrotask(task);
}
"#)]
extern "C" {
    /// `[promise, resolve, reject]`: a pending promise and the functions that settle it.
    #[wasm_bindgen(js_name = tailorDeferred)]
    fn js_deferred() -> js_sys::Array;

    /// Runs `task` in a microtask.
    #[wasm_bindgen(js_name = tailorSoon)]
    fn js_soon(task: JsValue);
}

/// The result a driven future gives: what its promise resolves or rejects with.
type Settled = Result<JsValue, JsValue>;

/// A future being driven, and how to settle its promise.
struct Task {
    future: RefCell<Option<Pin<Box<dyn Future<Output = Settled>>>>>,
    /// The promise's `resolve` and `reject`, once the first poll left it pending.
    settle: RefCell<Option<(Function, Function)>>,
    /// Set by a wake that came while the task was being polled.
    woken_while_polled: Cell<bool>,
}

thread_local! {
    /// The tasks not settled yet, by number.
    static TASKS: RefCell<HashMap<u64, Rc<Task>>> = RefCell::new(HashMap::new());
    /// The next task's number.
    static NEXT_TASK: Cell<u64> = const { Cell::new(0) };
    /// The task being polled, if any.
    static POLLING: Cell<Option<u64>> = const { Cell::new(None) };
}

/// A waker of task `.0`.
struct Wakeup(u64);

impl Wake for Wakeup {
    fn wake(self: Arc<Self>) {
        drive(self.0);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        drive(self.0);
    }
}

/// `future` as a promise: polled once now, then whenever woken, until it settles.
pub(super) fn promise(future: impl Future<Output = Settled> + 'static) -> Promise {
    let id = NEXT_TASK.with(|next| next.replace(next.get() + 1));
    let task = Rc::new(Task {
        future: RefCell::new(Some(Box::pin(future))),
        settle: RefCell::new(None),
        woken_while_polled: Cell::new(false),
    });
    TASKS.with(|tasks| tasks.borrow_mut().insert(id, Rc::clone(&task)));
    match poll_task(id, &task) {
        Some(Ok(value)) => Promise::resolve(&value),
        Some(Err(error)) => Promise::reject(&error),
        None => {
            let parts = js_deferred();
            let (resolve, reject) = (parts.get(1).unchecked_into(), parts.get(2).unchecked_into());
            task.settle.replace(Some((resolve, reject)));
            parts.get(0).unchecked_into()
        }
    }
}

/// Polls task `id` where that is safe now; otherwise notes or defers the wake.
fn drive(id: u64) {
    match POLLING.get() {
        Some(polled) if polled == id => {
            if let Some(task) = TASKS.with(|tasks| tasks.borrow().get(&id).cloned()) {
                task.woken_while_polled.set(true);
            }
        }
        Some(_) => js_soon(Closure::once_into_js(move || drive(id))),
        None => {
            let Some(task) = TASKS.with(|tasks| tasks.borrow().get(&id).cloned()) else {
                return;
            };
            if let Some(settled) = poll_task(id, &task) {
                let Some((resolve, reject)) = task.settle.take() else {
                    return;
                };
                // Settling a promise calls no JavaScript at once: it cannot throw.
                let _ = match settled {
                    Ok(value) => resolve.call1(&JsValue::UNDEFINED, &value),
                    Err(error) => reject.call1(&JsValue::UNDEFINED, &error),
                };
            }
        }
    }
}

/// Polls the task until it is pending with no wake noted, or settled (then forgets it and
/// returns its result).
fn poll_task(id: u64, task: &Task) -> Option<Settled> {
    let mut future = task.future.borrow_mut().take()?;
    let waker = Waker::from(Arc::new(Wakeup(id)));
    let mut context = Context::from_waker(&waker);
    let outer = POLLING.replace(Some(id));
    let settled = loop {
        task.woken_while_polled.set(false);
        match future.as_mut().poll(&mut context) {
            Poll::Ready(settled) => break Some(settled),
            Poll::Pending if task.woken_while_polled.get() => continue,
            Poll::Pending => break None,
        }
    };
    match settled {
        Some(_) => {
            // Dropped while still marked as polled: what it held (the GPU) wakes others.
            drop(future);
            TASKS.with(|tasks| tasks.borrow_mut().remove(&id));
        }
        None => {
            task.future.replace(Some(future));
        }
    }
    POLLING.set(outer);
    settled
}
