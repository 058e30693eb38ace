// Steady SimpleNet b8 in the page against the hand-written naive WGSL (`naive-wgsl.js`),
// and where a call's host work costs. A cross-origin-isolated page (5 µs timers); Tailor
// (WebGPU, `dynamic=True`) and the naive WGSL called in turn, call by call, so a busy
// moment of the machine slows one sample of each, each both with a read-back nudge (an
// empty submit where the output is not mapped 1 ms after the submit: Tailor's default,
// `Tailor.setNudges`) and without. `GPUQueue.submit` (of a non-empty list) and
// `GPUBuffer.mapAsync` are timed from inside the page, which splits each call into
// `before` (the call to its submit), `submit`, `device` (the submit to the mapped output)
// and `after` (the mapped output to the call's end). Then, with the naive WGSL alone, the
// page's thread is kept busy for 0.1, 0.3 and 1 ms before the submit, or between the submit
// and waiting for the output: `cost_ms` is what that adds to its call (`busy_base_ms`, the
// call without it, through the same patched submit). Prints one JSON object of medians.
// Not a test file: it reports, never asserts a time. Headless Chromium's WebGPU here is
// SwiftShader, a CPU emulation: compare the two measured in one run.
//
//   trunk build --release && node tests/e2e/bench-steady.mjs   # TAILOR_BENCH_ROUNDS=N

import { join } from "node:path";
import { DIST_DIR, REPO_ROOT, launchChromium, serveStatic } from "./harness.mjs";

const ROUNDS = Number(process.env.TAILOR_BENCH_ROUNDS ?? 400);

/** Runs in the page. */
async function measure(rounds) {
  const median = (samples) => +[...samples].sort((a, b) => a - b)[samples.length >> 1].toFixed(3);
  const marks = {};
  const submit = GPUQueue.prototype.submit;
  GPUQueue.prototype.submit = function (...args) {
    if (args[0].length === 0) return submit.apply(this, args);
    marks.submitted = performance.now();
    const result = submit.apply(this, args);
    marks.submitEnded = performance.now();
    return result;
  };
  const mapAsync = GPUBuffer.prototype.mapAsync;
  GPUBuffer.prototype.mapAsync = function (...args) {
    return mapAsync.apply(this, args).then((value) => {
      marks.mapped = performance.now();
      return value;
    });
  };
  const filled = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 0.1);
  const mlp = { batch: 8, widths: [64, 128, 64] };
  const input = filled(mlp.batch * mlp.widths[0]);

  const { default: init, Tailor } = await import("./tailor.js");
  await init();
  const tailor = await Tailor.create({ device: "gpu" });
  if (tailor.device !== "gpu") return { skipped: "no WebGPU in this browser" };
  const source = Tailor.presets().find((preset) => preset.id === "simplenet").source;
  const model = tailor.compile(source, { dynamic: "true" });
  const x = { data: input, shape: [mlp.batch, mlp.widths[0]] };
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const naive = naiveWgslMlp(device, mlp, filled);
  const nudgeAfterMs = 1;
  // Each way's setting, awaited before its call is timed (Tailor's nudges are its own), and
  // its call.
  const runtimes = {
    tailor: [() => tailor.setNudges(true), () => model.call({ x })],
    tailor_no_nudges: [() => tailor.setNudges(false), () => model.call({ x })],
    naive_wgsl: [() => tailor.setNudges(true), () => naive.call(input)],
    naive_wgsl_nudged: [() => tailor.setNudges(true), () => naive.call(input, nudgeAfterMs)],
  };

  const parts = Object.fromEntries(Object.keys(runtimes).map((name) => [name, []]));
  for (let round = -20; round < rounds; round++) {
    for (const [name, [set, call]] of Object.entries(runtimes)) {
      await set();
      const started = performance.now();
      await call();
      const ended = performance.now();
      if (round < 0) continue;
      parts[name].push({
        before: marks.submitted - started,
        submit: marks.submitEnded - marks.submitted,
        device: marks.mapped - marks.submitEnded,
        after: ended - marks.mapped,
        total: ended - started,
      });
    }
  }
  const steady = {};
  for (const [name, samples] of Object.entries(parts)) {
    steady[name] = Object.fromEntries(
      Object.keys(samples[0]).map((part) => [part, median(samples.map((s) => s[part]))]),
    );
  }

  // The naive WGSL with the page's thread busy for `us` before its submit, or between the
  // submit and waiting for the output.
  const busy = (us) => {
    const end = performance.now() + us / 1000;
    while (performance.now() < end);
  };
  const spun = async (where, us) => {
    const patched = GPUQueue.prototype.submit;
    GPUQueue.prototype.submit = function (...args) {
      if (where === "before") busy(us);
      const result = patched.apply(this, args);
      if (where === "after") busy(us);
      return result;
    };
    try {
      await naive.call(input);
    } finally {
      GPUQueue.prototype.submit = patched;
    }
  };
  const ways = [["before", 0], ...[100, 300, 1000].flatMap((us) => [["before", us], ["after", us]])];
  const totals = Object.fromEntries(ways.map((way) => [way.join(":"), []]));
  for (let round = -5; round < rounds >> 1; round++) {
    for (const [where, us] of ways) {
      const started = performance.now();
      await spun(where, us);
      if (round >= 0) totals[`${where}:${us}`].push(performance.now() - started);
    }
  }
  const base = median(totals["before:0"]);
  const cost = {};
  for (const [where, us] of ways.slice(1)) {
    cost[`${where}_submit_${us}us`] = +(median(totals[`${where}:${us}`]) - base).toFixed(3);
  }
  model.free();
  return {
    adapter: tailor.adapter,
    isolated: crossOriginIsolated,
    rounds,
    steady_ms: steady,
    ratio: +(steady.tailor.total / steady.naive_wgsl.total).toFixed(3),
    ratio_without_nudges: +(steady.tailor_no_nudges.total / steady.naive_wgsl.total).toFixed(3),
    ratio_both_nudged: +(steady.tailor.total / steady.naive_wgsl_nudged.total).toFixed(3),
    busy_base_ms: base,
    cost_ms: cost,
  };
}

const server = await serveStatic(DIST_DIR, { isolated: true });
const browser = await launchChromium();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  await page.addScriptTag({ path: join(REPO_ROOT, "tests/e2e/naive-wgsl.js") });
  console.log(JSON.stringify(await page.evaluate(measure, ROUNDS), null, 1));
} finally {
  await browser.close();
  await server.close();
}
