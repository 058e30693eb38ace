// The page's events: what one part of the page announces and the others follow. www/app.js
// makes one `PageEvents` and passes it to each part's setup, so a part subscribes to what it
// needs instead of adding hooks or functions to the shared `ctx`, and its parameters name
// every dependency. Pure (no DOM), so that tests/js/ runs it under node.
//
// Listeners run synchronously in the order they subscribed, and an exception in one stops the
// emit and reaches its caller, as a failed step of that caller's work.

/** Every event, with the arguments its listeners get. */
export const EVENTS = {
  /** A compile succeeded and the step-through shows it. */
  compiled: [],
  /** The wasm module was loaded again after a panic: models made before are gone. */
  restart: [],
  /** A preset was loaded into the workbench: `(preset)`. */
  preset: ["preset"],
  /** A quiz scenario was loaded into the workbench: `(calls)`, its shapes per call. */
  scenario: ["calls"],
  /** The cache lab finished a run of its sequence: `(model)`. */
  labRun: ["model"],
  /** The language changed: text that scripts built is built again. */
  language: [],
};

export class PageEvents {
  #listeners = new Map(Object.keys(EVENTS).map((type) => [type, []]));

  /** Calls `listener` on every `emit(type, …)` from now on; returns a function that stops it. */
  on(type, listener) {
    const listeners = this.#of(type);
    listeners.push(listener);
    return () => {
      const index = listeners.indexOf(listener);
      if (index >= 0) listeners.splice(index, 1);
    };
  }

  /** Calls each listener of `type` with `args`, in the order they subscribed. */
  emit(type, ...args) {
    // A copy: a listener that subscribes or stops during the emit changes the next one.
    for (const listener of [...this.#of(type)]) listener(...args);
  }

  #of(type) {
    const listeners = this.#listeners.get(type);
    if (!listeners) throw new Error(`PageEvents: no event "${type}"`);
    return listeners;
  }
}
