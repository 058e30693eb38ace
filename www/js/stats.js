// The arithmetic of the page's timings: summaries of samples, an axis bound, and
// T_total = T_compile + Σ T_run + Σ T_recompile over a model's call records (`model.events()`,
// each `{ action, ms: { guard, compile, run } }`), measured or with Inductor's compile costs.
// Pure (no DOM), so that tests/js/ runs it under node.

// Inductor's measured costs on a 2-core CPU (pytorch-semantics.md §12): 12–22 s for the first
// compile, 1–2.5 s per recompile; the midpoints.
export const INDUCTOR_FIRST_MS = 17_000;
export const INDUCTOR_RECOMPILE_MS = 1_750;

/** The middle sample of `samples` (the upper of the two middles for an even count). */
export function median(samples) {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
}

/** The mean of the middle of `samples` (the slowest and fastest fifth dropped). */
export function trimmedMean(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const cut = Math.floor(sorted.length / 5);
  const middle = sorted.slice(cut, sorted.length - cut);
  return middle.reduce((sum, v) => sum + v, 0) / middle.length;
}

/** The nearest-rank `p`th percentile of `values`: the smallest value that at least `p`% of
 * them do not exceed. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least `value`. */
export function niceMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((f) => f * power).find((v) => v >= value);
}

/** T_total's terms for `calls`: the first compile, the recompiles, and every call's guard
 * check and run, in ms, with the number of compiles. */
export function callTotals(calls) {
  const compiles = calls.filter((c) => c.action === "compile");
  const first = compiles[0]?.ms.compile ?? 0;
  const recompile = compiles.slice(1).reduce((sum, c) => sum + c.ms.compile, 0);
  const run = calls.reduce((sum, c) => sum + c.ms.run + c.ms.guard, 0);
  return { compiles: compiles.length, first, recompile, run, total: first + recompile + run };
}

/** What `compiles` compiles would cost under Inductor, in ms. */
export function inductorCompileMs(compiles) {
  return compiles ? INDUCTOR_FIRST_MS + INDUCTOR_RECOMPILE_MS * (compiles - 1) : 0;
}

/** The phases of each call in ms, `{ guard, compile, run }`; with `simulate`, each compile
 * takes Inductor's cost instead (the first compile's, then a recompile's). */
export function callPhases(calls, simulate) {
  let compiled = 0;
  return calls.map((call) => {
    let compile = call.ms.compile;
    if (simulate && call.action === "compile") {
      compile = compiled === 0 ? INDUCTOR_FIRST_MS : INDUCTOR_RECOMPILE_MS;
      compiled += 1;
    }
    return { guard: call.ms.guard, compile, run: call.ms.run };
  });
}
