// The benchmark view: the material's demo (SimpleNet; warm-up 8, 8, then batches
// 8, 16, 32, 16, 8, 64, 16, 8 three times each) under dynamic=False and dynamic=True, each
// from a cold kernel cache, with T_total = T_compile + Σ T_run + Σ T_recompile from the
// measured calls; then the three kernel specialisations (static / override / dynamic WGSL)
// compared per shape in the steady state. Everything goes through the JS API (model.call,
// compilation.run), one awaited call at a time, so the page keeps painting. Without WebGPU
// the same runs use the CPU backend, and the view says GPU timings are missing.
//
// A second run, "the figures" (issues 10 and 11), measures in one go: the CPU backend's
// figures (SimpleNet b8 per call, a 3→16 conv at 64×64 per call, the 256×1024→1024→1024 MLP's
// GFLOP/s, each against graph::eval timed in the same run, and the memory plan's peak) through
// Tailor.cpuBenchmark, sample by sample with the browser painting in between; and, with WebGPU,
// SimpleNet's first call per policy, a new batch under the dynamic entry (and the pipelines it
// created), the steady call per batch, the MLP's first call and GFLOP/s, and the form each
// product kernel ran as, every GPU timing next to its adapter.

import { fill, h, m, s, yieldToBrowser } from "./dom.js";
import { formatBytes, formatMs } from "./format.js";
import { errorText, t } from "./i18n.js";
import { MODES } from "./kernels.js";
import { callTotals, median, trimmedMean } from "./stats.js";

const WARM_UP = [8, 8];
const BATCHES = [8, 16, 32, 16, 8, 64, 16, 8];
const RUNS_PER_BATCH = 3;
const SHAPES = [8, 16, 32, 64];
const STEADY_RUNS = 10;

/** The CPU figures: samples per workload, each at least SAMPLE_MS long (calls repeat). */
const CPU_SAMPLES = 5;
const REFERENCE_SAMPLES = 3;
const SAMPLE_MS = 20;
/** Steady calls per GPU figure (the MLP's: fewer; one call is hundreds of ms emulated). */
const GPU_STEADY = 5;
/**
 * First calls at a new batch under a dynamic entry, each from a fresh model compiled at
 * batch 8 (the kernel cache kept): one such call may end just before a read-back nudge or
 * just after it, so one sample is a coin toss; the view shows their median.
 */
const NEW_BATCH_MODELS = 5;
const GPU_MLP_STEADY = 3;
const POLICIES = ["false", "true", "auto"];

const $ = (id) => document.getElementById(id);
const modeName = (dynamic) => `dynamic=${dynamic === "true" ? "True" : "False"}`;

/** The demo under one policy, from a cold kernel cache: per call, action and times. */
async function demo(ctx, dynamic, alive) {
  await ctx.tailor.clearKernelCache();
  const model = ctx.tailor.compile(ctx.presets[0].source, { dynamic });
  try {
    const plan = [...WARM_UP.map((b) => [b, false]), ...BATCHES.flatMap((b) => Array(RUNS_PER_BATCH).fill([b, true]))];
    const calls = [];
    for (const [batch, measured] of plan) {
      if (!alive()) return null;
      const r = await model.call(`x=${batch},64`);
      calls.push({ batch, measured, action: r.action, ms: r.ms });
      await yieldToBrowser();
    }
    return summarise(dynamic, calls);
  } finally {
    model.free();
  }
}

function summarise(dynamic, calls) {
  const cost = (c) => c.ms.guard + c.ms.compile + c.ms.run;
  return {
    dynamic,
    calls,
    ...callTotals(calls),
    measured: calls.filter((c) => c.measured).reduce((sum, c) => sum + cost(c), 0),
  };
}

/** Steady-state time per call of each specialisation (one mode on the CPU) at each shape. */
async function specialisations(ctx, alive, progress) {
  // Cold, so that each mode's first build pays for its pipelines.
  await ctx.tailor.clearKernelCache();
  const model = ctx.tailor.compile(ctx.presets[0].source, { dynamic: "true" });
  const compilation = model.trace("x=8,64");
  // Immediates where the device has them (WGSL's immediate_address_space and setImmediates).
  const modes = ctx.tailor.device === "gpu"
    ? MODES.filter((mode) => mode !== "immediate" || ctx.tailor.adapter?.immediates)
    : ["dynamic"];
  try {
    const rows = [];
    for (const batch of SHAPES) {
      const row = { batch, modes: {} };
      for (const mode of modes) {
        if (!alive()) return null;
        const options = { mode, shapes: `x=${batch},64` };
        const first = await compilation.run({ ...options, check: true });
        const samples = [];
        for (let i = 0; i < STEADY_RUNS; i++) {
          samples.push((await compilation.run({ ...options, check: false })).ms.run);
          await yieldToBrowser();
        }
        row.modes[mode] = { build: first.ms.build, steady: trimmedMean(samples), maxAbsErr: first.maxAbsErr };
        progress();
      }
      rows.push(row);
    }
    return { modes, rows };
  } finally {
    compilation.free();
    model.free();
  }
}

/**
 * The CPU backend's figures, one workload at a time on a CPU backend of its own (whatever
 * the page's device): a warm-up call that binds the kernels, then CPU_SAMPLES samples of the
 * kernels and REFERENCE_SAMPLES of graph::eval, medians, with the browser painting between.
 */
async function cpuFigures(ctx, alive, progress) {
  const Tailor = ctx.bindings.Tailor;
  const rows = [];
  for (const workload of Tailor.cpuWorkloads()) {
    const bench = Tailor.cpuBenchmark(workload.name);
    try {
      bench.timeCalls(0);
      await yieldToBrowser();
      const calls = [];
      for (let i = 0; i < CPU_SAMPLES; i++) {
        if (!alive()) return null;
        calls.push(bench.timeCalls(SAMPLE_MS));
        await yieldToBrowser();
      }
      const references = [];
      for (let i = 0; i < REFERENCE_SAMPLES; i++) {
        if (!alive()) return null;
        references.push(bench.timeReference(SAMPLE_MS));
        await yieldToBrowser();
      }
      const ms = median(calls);
      const referenceMs = median(references);
      const throughput = workload.flops !== null && workload.flops !== undefined;
      const gflops = throughput ? workload.flops / (ms * 1e6) : null;
      const referenceGflops = throughput ? workload.referenceFlops / (referenceMs * 1e6) : null;
      rows.push({
        ...workload,
        ms,
        referenceMs,
        gflops,
        referenceGflops,
        speedup: throughput ? gflops / referenceGflops : referenceMs / ms,
        memory: bench.memory,
      });
      progress();
    } finally {
      bench.free();
    }
  }
  return rows;
}

/** One call through the page's API, timed end to end (compile, when it compiles, included). */
async function timedCall(model, shapes) {
  const started = performance.now();
  const result = await model.call(shapes);
  return { ms: performance.now() - started, result };
}

async function steadyMs(model, shapes, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    samples.push((await timedCall(model, shapes)).ms);
    await yieldToBrowser();
  }
  return median(samples);
}

/**
 * Issue 11's figures on WebGPU, each policy from a cold kernel cache: SimpleNet's first call
 * at batch 8 and its steady call; under dynamic=True a new batch (16), the median of
 * NEW_BATCH_MODELS such first calls, the pipelines they created, and its steady call; then
 * the MLP's first call and steady GFLOP/s. Each first call keeps the form every product
 * kernel ran as (`products`).
 */
async function gpuFigures(ctx, alive, mlp, progress) {
  const pipelines = async () => (await ctx.tailor.gpuStats())?.pipelinesCreated ?? 0;
  const simplenet = [];
  for (const dynamic of POLICIES) {
    if (!alive()) return null;
    await ctx.tailor.clearKernelCache();
    const model = ctx.tailor.compile(ctx.presets[0].source, { dynamic });
    try {
      const first = await timedCall(model, "x=8,64");
      const row = { dynamic, first: first.ms, products: first.result.products, steady: await steadyMs(model, "x=8,64", GPU_STEADY) };
      if (dynamic === "true") {
        const newBatch = async (entry) => {
          const before = await pipelines();
          const fresh = await timedCall(entry, "x=16,64");
          return { ...fresh, created: (await pipelines()) - before };
        };
        const fresh = await newBatch(model);
        const samples = [fresh.ms];
        let created = fresh.created;
        while (samples.length < NEW_BATCH_MODELS && alive()) {
          const again = ctx.tailor.compile(ctx.presets[0].source, { dynamic });
          try {
            await again.call("x=8,64");
            const next = await newBatch(again);
            samples.push(next.ms);
            created += next.created;
          } finally {
            again.free();
          }
          await yieldToBrowser();
        }
        row.newBatch = { ms: median(samples), samples: samples.length, pipelines: created, products: fresh.result.products };
        row.newBatch.steady = await steadyMs(model, "x=16,64", GPU_STEADY);
      }
      simplenet.push(row);
      progress();
    } finally {
      model.free();
    }
  }
  if (!alive()) return null;
  await ctx.tailor.clearKernelCache();
  const model = ctx.tailor.compile(mlp.source, { dynamic: "false" });
  try {
    const first = await timedCall(model, mlp.shapes);
    const steady = await steadyMs(model, mlp.shapes, GPU_MLP_STEADY);
    progress();
    const tiered = await tieredFirstCall(ctx, mlp);
    return { simplenet, mlp: { first: first.ms, steady, gflops: mlp.flops / (steady * 1e6), products: first.result.products }, tiered };
  } finally {
    model.free();
  }
}

/**
 * The MLP's first call with tiers on, from a cold kernel cache (what `tailor bench` reports
 * as `first_call_ms.bigmlp.tiered`, `tier_ready_ms.bigmlp`, `background_build_ms.bigmlp`
 * and `tuned_call_ms.bigmlp`): the call runs its products naive while the browser builds
 * their large forms, then the time until those are ready, then the next call, in them.
 */
async function tieredFirstCall(ctx, mlp) {
  const background = async () => (await ctx.tailor.gpuStats())?.backgroundMs ?? 0;
  const was = await ctx.tailor.setTiers(true);
  await ctx.tailor.clearKernelCache();
  const model = ctx.tailor.compile(mlp.source, { dynamic: "false" });
  try {
    const before = await background();
    const started = performance.now();
    const first = await timedCall(model, mlp.shapes);
    await ctx.tailor.waitForBuilds();
    const ready = performance.now() - started;
    const tuned = await timedCall(model, mlp.shapes);
    return { first: first.ms, products: first.result.products, ready, background: (await background()) - before, tuned: tuned.ms, tunedProducts: tuned.result.products };
  } finally {
    model.free();
    await ctx.tailor.setTiers(was);
  }
}

/** A table cell holding one figure; `data-metric`/`data-value` let tests read the number. */
const figure = (metric, value, text) => h("td", { dataset: { metric, value: String(value) } }, text);

/** `k0_linear_relu: naive, k1_linear_1: blocked`, each form marked for tests. */
const productList = (products) => products.length
  ? h("span", { class: "products" }, ...products.flatMap((p, i) => [i ? ", " : "", h("code", {}, p.kernel), ": ", h("span", { class: "product-form", dataset: { strategy: p.strategy } }, p.strategy),
    ...(p.building ? [h("span", { class: "tier-building", dataset: { building: p.building } }, t("run.building", p.building))] : [])]))
  : h("span", { class: "hint" }, t("bench.fig.noProducts"));

function cpuTable(rows) {
  const head = ["bench.fig.workload", "bench.fig.tailor", "bench.fig.reference", "bench.fig.speedup", "bench.fig.peak", "bench.fig.held"];
  const body = rows.map((row) => {
    const throughput = row.gflops !== null;
    const own = throughput
      ? figure("gflops", row.gflops, `${row.gflops.toFixed(2)} GFLOP/s`)
      : figure("ms", row.ms, formatMs(row.ms));
    const reference = throughput
      ? figure("reference-gflops", row.referenceGflops, `${row.referenceGflops.toFixed(2)} GFLOP/s`)
      : figure("reference-ms", row.referenceMs, formatMs(row.referenceMs));
    return h("tr", { dataset: { workload: row.name } },
      h("th", { scope: "row" }, t(`bench.fig.${row.name}`), " ", h("code", {}, row.shapes)),
      own,
      reference,
      figure("speedup", row.speedup, `${row.speedup.toFixed(1)}×`),
      figure("peak-bytes", row.memory.plannedBytes, formatBytes(row.memory.plannedBytes)),
      figure("held-bytes", row.memory.arenaBytes + row.memory.scratchBytes,
        t("bench.fig.heldParts", formatBytes(row.memory.arenaBytes), formatBytes(row.memory.scratchBytes))));
  });
  const mlp = rows.find((row) => row.gflops !== null && row.shapes !== row.referenceShapes);
  return [
    h("div", { class: "table-scroll" }, h("table", { class: "compare bench-cpu", dataset: { testid: "bench-cpu" } },
      h("thead", {}, h("tr", {}, ...head.map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...body))),
    h("p", { class: "hint" }, t("bench.fig.cpuNote", CPU_SAMPLES, REFERENCE_SAMPLES, mlp ? mlp.referenceShapes : "")),
  ];
}

function gpuTable(gpu, adapter) {
  const head = ["bench.fig.what", "bench.fig.time", "bench.fig.adapter", "bench.fig.products"];
  const adapterCell = () => h("td", { class: "adapter" }, adapter);
  const rows = [];
  for (const row of gpu.simplenet) {
    const policy = `dynamic=${{ false: "False", true: "True", auto: "None" }[row.dynamic]}`;
    rows.push(h("tr", { dataset: { figure: `first.${row.dynamic}` } },
      h("th", { scope: "row" }, t("bench.fig.first", policy)),
      figure("first-ms", row.first, formatMs(row.first)), adapterCell(), h("td", {}, productList(row.products))));
    rows.push(h("tr", { dataset: { figure: `steady.${row.dynamic}` } },
      h("th", { scope: "row" }, t("bench.fig.steady", "x=8,64", policy)),
      figure("steady-ms", row.steady, formatMs(row.steady)), adapterCell(), h("td", {})));
    if (row.newBatch) {
      rows.push(h("tr", { dataset: { figure: "new-batch" } },
        h("th", { scope: "row" }, t("bench.fig.newBatch", "x=16,64", row.newBatch.pipelines, row.newBatch.samples)),
        figure("new-batch-ms", row.newBatch.ms, formatMs(row.newBatch.ms)), adapterCell(),
        h("td", { dataset: { pipelines: String(row.newBatch.pipelines) } }, productList(row.newBatch.products))));
      rows.push(h("tr", { dataset: { figure: "steady.b16" } },
        h("th", { scope: "row" }, t("bench.fig.steady", "x=16,64", policy)),
        figure("steady-ms", row.newBatch.steady, formatMs(row.newBatch.steady)), adapterCell(), h("td", {})));
    }
  }
  rows.push(h("tr", { dataset: { figure: "mlp.first" } },
    h("th", { scope: "row" }, t("bench.fig.mlpFirst")),
    figure("first-ms", gpu.mlp.first, formatMs(gpu.mlp.first)), adapterCell(), h("td", {}, productList(gpu.mlp.products))));
  rows.push(h("tr", { dataset: { figure: "mlp.gflops" } },
    h("th", { scope: "row" }, t("bench.fig.mlpSteady", formatMs(gpu.mlp.steady))),
    figure("gflops", gpu.mlp.gflops, `${gpu.mlp.gflops.toFixed(2)} GFLOP/s`), adapterCell(), h("td", {})));
  rows.push(h("tr", { dataset: { figure: "mlp.tiered" } },
    h("th", { scope: "row" }, t("bench.fig.mlpTiered")),
    figure("first-ms", gpu.tiered.first, formatMs(gpu.tiered.first)), adapterCell(), h("td", {}, productList(gpu.tiered.products))));
  rows.push(h("tr", { dataset: { figure: "mlp.tier-ready" } },
    h("th", { scope: "row" }, t("bench.fig.tierReady", formatMs(gpu.tiered.background))),
    figure("ready-ms", gpu.tiered.ready, formatMs(gpu.tiered.ready)), adapterCell(), h("td", {})));
  rows.push(h("tr", { dataset: { figure: "mlp.tuned" } },
    h("th", { scope: "row" }, t("bench.fig.mlpTuned")),
    figure("tuned-ms", gpu.tiered.tuned, formatMs(gpu.tiered.tuned)), adapterCell(), h("td", {}, productList(gpu.tiered.tunedProducts))));
  return [
    h("div", { class: "table-scroll" }, h("table", { class: "compare bench-gpu", dataset: { testid: "bench-gpu" } },
      h("thead", {}, h("tr", {}, ...head.map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...rows))),
    h("p", { class: "hint" }, t("bench.fig.gpuNote", GPU_STEADY, GPU_MLP_STEADY)),
  ];
}

/** Horizontal stacked bars, one per policy: T_compile, Σ T_recompile, Σ T_run. */
function totalsChart(results) {
  const parts = [["first", "part-compile"], ["recompile", "part-recompile"], ["run", "part-run"]];
  const width = 640;
  const left = 120;
  const barH = 28;
  const height = 24 + results.length * (barH + 16);
  const top = Math.max(...results.map((r) => r.total)) || 1;
  const x = (ms) => ((width - left - 90) * ms) / top;
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "bench-svg totals" },
    s("title", {}, t("bench.totalsTitle")));
  results.forEach((r, i) => {
    const y = 12 + i * (barH + 16);
    const bar = s("g", { class: "bench-bar", dataset: { dynamic: r.dynamic } },
      s("text", { x: left - 8, y: y + barH / 2 + 4, "text-anchor": "end", class: "axis" }, modeName(r.dynamic)));
    let offset = left;
    for (const [key, cls] of parts) {
      const w = x(r[key]);
      if (w <= 0) continue;
      bar.append(s("rect", { x: offset, y, width: Math.max(1, w), height: barH, class: cls },
        s("title", {}, `${t(`bench.part.${key}`)}: ${formatMs(r[key])}`)));
      offset += w;
    }
    bar.append(s("text", { x: offset + 6, y: y + barH / 2 + 4, class: "axis value" }, formatMs(r.total)));
    svg.append(bar);
  });
  const legend = h("ul", { class: "legend" },
    ...parts.map(([key, cls]) => h("li", {}, h("span", { class: `swatch ${cls}` }), t(`bench.part.${key}`))));
  return h("div", {}, h("div", { class: "chart-scroll" }, svg), legend);
}

/** `T_total = a + b + c = d ms` with the measured numbers, as MathML. */
function formula(r) {
  const num = (ms) => m("mn", {}, ms.toFixed(2));
  const term = (sub) => m("msub", {}, m("mi", {}, "T"), m("mtext", {}, sub));
  return m("math", { display: "block", class: "formula filled", "aria-label": `T total ${r.total.toFixed(2)} ms` },
    m("mrow", {}, term("total"), m("mo", {}, "="), num(r.first), m("mo", {}, "+"), num(r.run), m("mo", {}, "+"),
      num(r.recompile), m("mo", {}, "="), num(r.total), m("mtext", {}, "\u2009ms")));
}

/** Grouped vertical bars: per shape, the steady time of each specialisation. */
function specialisationChart(result) {
  const groupW = result.modes.length * 26 + 24;
  const left = 68;
  const height = 220;
  const plot = height - 56;
  const width = left + result.rows.length * groupW + 12;
  const top = Math.max(...result.rows.flatMap((row) => Object.values(row.modes).map((v) => v.steady))) || 1;
  const y = (ms) => 16 + plot * (1 - ms / top);
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "bench-svg specialisations" },
    s("title", {}, t("bench.specTitle")));
  for (const value of [0, top / 2, top]) {
    svg.append(s("line", { x1: left - 4, x2: width - 8, y1: y(value), y2: y(value), class: "grid" }),
      s("text", { x: left - 8, y: y(value) + 4, "text-anchor": "end", class: "axis" }, formatMs(value)));
  }
  result.rows.forEach((row, i) => {
    const x0 = left + i * groupW + 12;
    const group = s("g", { class: "bench-group", dataset: { batch: row.batch } });
    result.modes.forEach((mode, k) => {
      const v = row.modes[mode];
      group.append(s("rect", { x: x0 + k * 26, y: y(v.steady), width: 22, height: Math.max(1, y(0) - y(v.steady)), class: `spec-${mode}`, dataset: { mode } },
        s("title", {}, `x=${row.batch},64 ${mode}: ${formatMs(v.steady)}`)));
    });
    group.append(s("text", { x: x0 + (result.modes.length * 26) / 2 - 2, y: height - 22, "text-anchor": "middle", class: "axis" }, `B=${row.batch}`));
    svg.append(group);
  });
  const legend = h("ul", { class: "legend" },
    ...result.modes.map((mode) => h("li", {}, h("span", { class: `swatch spec-${mode}` }), result.modes.length === 1 ? t("bench.cpuSeries") : mode)));
  return h("div", {}, h("div", { class: "chart-scroll" }, svg), legend);
}

export function setupBench(ctx, events) {
  const ui = {
    run: $("bench-run"),
    status: $("bench-status"),
    device: $("bench-device"),
    chart: $("bench-chart"),
    totals: $("bench-totals"),
    spec: $("bench-specialisations"),
    figuresRun: $("bench-figures-run"),
    figuresStatus: $("bench-figures-status"),
    figures: $("bench-figures"),
  };
  let last = null;
  /** The last figures run: `{ cpu, gpu }` (`gpu` null without WebGPU). */
  let figures = null;
  let figuresStatus = () => "";
  const sayFigures = (text) => {
    figuresStatus = text;
    ui.figuresStatus.textContent = figuresStatus();
  };
  let running = false;
  let generation = 0;
  /** The status line as a function, so that it follows the language switch. */
  let status = () => "";
  const say = (text) => {
    status = text;
    ui.status.textContent = status();
  };

  function renderDevice() {
    const gpu = ctx.tailor?.device === "gpu";
    const webgpu = ctx.tailor?.webgpu;
    ui.device.dataset.device = gpu ? "gpu" : "cpu";
    fill(ui.device, gpu ? t("bench.onGpu", (webgpu?.adapter ?? "WebGPU") + (webgpu?.emulated ? t("gpu.emulatedTag") : "")) : t("bench.onCpu", webgpu?.reason ?? ""));
    ui.device.classList.toggle("note", !gpu);
  }

  /** The adapter's name as the page labels it everywhere: an emulation says so. */
  const adapterLabel = () => {
    const webgpu = ctx.tailor?.webgpu;
    return (webgpu?.adapter ?? ctx.tailor?.adapter?.name ?? "WebGPU") + (webgpu?.emulated ? t("gpu.emulatedTag") : "");
  };

  function renderFigures() {
    ui.figuresStatus.textContent = figuresStatus();
    if (!figures) return fill(ui.figures, h("p", { class: "hint" }, t("bench.fig.empty")));
    const gpu = figures.gpu
      ? [h("h5", {}, t("bench.fig.gpuHeading", adapterLabel())), ...gpuTable(figures.gpu, adapterLabel())]
      : [h("p", { class: "note", dataset: { testid: "bench-no-gpu" } }, t("bench.fig.noGpu", ctx.tailor?.webgpu?.reason ?? ""))];
    fill(ui.figures, h("h5", {}, t("bench.fig.cpuHeading")), ...cpuTable(figures.cpu), ...gpu);
  }

  function render() {
    ui.status.textContent = status();
    renderDevice();
    renderFigures();
    if (!last) {
      fill(ui.chart, h("p", { class: "hint" }, t("bench.empty")));
      fill(ui.totals);
      fill(ui.spec);
      return;
    }
    const [fixed, dynamic] = last.demo;
    const rows = last.demo.map((r) => h("tr", { dataset: { dynamic: r.dynamic } },
      h("th", { scope: "row" }, modeName(r.dynamic)),
      h("td", {}, String(r.compiles)), h("td", {}, formatMs(r.first)), h("td", {}, formatMs(r.recompile)),
      h("td", {}, formatMs(r.run)), h("td", {}, formatMs(r.total)), h("td", {}, formatMs(r.measured))));
    fill(ui.chart, totalsChart(last.demo));
    fill(ui.totals,
      h("div", { class: "table-scroll" }, h("table", { class: "compare" },
        h("thead", {}, h("tr", {}, ...["compare.mode", "compare.compiles", "compare.first", "compare.recompile", "compare.run", "compare.total", "bench.measured"].map((key) => h("th", { scope: "col" }, t(key))))),
        h("tbody", {}, ...rows))),
      ...last.demo.flatMap((r) => [h("p", { class: "formula-label" }, modeName(r.dynamic)), formula(r)]),
      h("p", { class: "bench-ratio" }, t("bench.ratio", (fixed.measured / Math.max(dynamic.measured, 1e-9)).toFixed(2), (fixed.total / Math.max(dynamic.total, 1e-9)).toFixed(2))));
    const spec = last.spec;
    const series = spec.modes.length === 1 ? ["cpu"] : spec.modes;
    const head = ["bench.shape", ...series.flatMap((name) => [`bench.steady.${name}`, `bench.build.${name}`]), "bench.err"];
    const specRows = spec.rows.map((row) => h("tr", { dataset: { batch: row.batch } },
      h("th", { scope: "row" }, h("code", {}, `x=${row.batch},64`)),
      ...spec.modes.flatMap((mode) => [h("td", {}, formatMs(row.modes[mode].steady)), h("td", {}, formatMs(row.modes[mode].build))]),
      h("td", {}, h("code", {}, Math.max(...spec.modes.map((mode) => row.modes[mode].maxAbsErr ?? Infinity)).toExponential(1)))));
    fill(ui.spec,
      specialisationChart(spec),
      h("div", { class: "table-scroll" }, h("table", { class: "compare" },
        h("thead", {}, h("tr", {}, ...head.map((key) => h("th", { scope: "col" }, t(key))))),
        h("tbody", {}, ...specRows))),
      h("p", { class: "hint" }, t(spec.modes.length === 1 ? "bench.specCpu" : "bench.specNote", STEADY_RUNS)));
  }

  async function runFigures() {
    if (running || !ctx.tailor) return;
    running = true;
    ui.run.disabled = ui.figuresRun.disabled = true;
    const mine = ++generation;
    const alive = () => mine === generation;
    const started = performance.now();
    try {
      await ctx.guarded(async () => {
        const workloads = ctx.bindings.Tailor.cpuWorkloads();
        let done = 0;
        const onGpu = ctx.tailor.device === "gpu";
        const total = workloads.length + (onGpu ? POLICIES.length + 1 : 0);
        const progress = () => {
          done += 1;
          sayFigures(() => t("bench.fig.running", done, total));
        };
        sayFigures(() => t("bench.fig.running", done, total));
        await yieldToBrowser();
        const cpu = await cpuFigures(ctx, alive, progress);
        if (!cpu) return;
        const mlp = workloads.find((w) => w.name === "bigmlp");
        const gpu = onGpu ? await gpuFigures(ctx, alive, mlp, progress) : null;
        if (onGpu && !gpu) return;
        figures = { cpu, gpu };
        const took = formatMs(performance.now() - started);
        sayFigures(() => t("bench.done", took));
      });
    } catch (error) {
      sayFigures(() => errorText(error));
    } finally {
      running = false;
      ui.run.disabled = ui.figuresRun.disabled = false;
      // Counts finished figure runs on <section id="bench" data-figure-runs>, for tests.
      const section = $("bench");
      section.dataset.figureRuns = String(Number(section.dataset.figureRuns ?? 0) + 1);
    }
    render();
  }

  async function run() {
    if (running || !ctx.tailor) return;
    running = true;
    ui.run.disabled = ui.figuresRun.disabled = true;
    const mine = ++generation;
    const alive = () => mine === generation;
    const started = performance.now();
    try {
      await ctx.guarded(async () => {
        const results = [];
        for (const dynamic of ["false", "true"]) {
          say(() => t("bench.runningDemo", modeName(dynamic)));
          const result = await demo(ctx, dynamic, alive);
          if (!result) return;
          results.push(result);
        }
        let done = 0;
        const gpuModes = MODES.filter((mode) => mode !== "immediate" || ctx.tailor.adapter?.immediates);
        const total = SHAPES.length * (ctx.tailor.device === "gpu" ? gpuModes.length : 1);
        say(() => t("bench.runningSpec", done, total));
        const spec = await specialisations(ctx, alive, () => {
          done += 1;
          say(() => t("bench.runningSpec", done, total));
        });
        if (!spec) return;
        last = { demo: results, spec };
        const took = formatMs(performance.now() - started);
        say(() => t("bench.done", took));
      });
    } catch (error) {
      say(() => errorText(error));
    } finally {
      running = false;
      ui.run.disabled = ui.figuresRun.disabled = false;
      // Counts finished runs on <section id="bench" data-runs>, so tests can wait for one.
      const section = $("bench");
      section.dataset.runs = String(Number(section.dataset.runs ?? 0) + 1);
    }
    render();
  }

  ui.run.addEventListener("click", run);
  ui.run.disabled = false;
  ui.figuresRun.addEventListener("click", runFigures);
  ui.figuresRun.disabled = false;
  events.on("restart", () => {
    generation += 1;
  });
  events.on("language", render);
  render();
}
