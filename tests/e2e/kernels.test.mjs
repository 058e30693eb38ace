// End-to-end tests of the GPU half of the page: the fusion and WGSL stages from the real
// schedule (each of the four emission modes), the run stage on WebGPU (SwiftShader in the
// test Chromium) checked against the CPU reference, the page staying responsive while
// pipelines compile, the benchmark view, and all of it again with WebGPU hidden (the CPU
// CPU backend). Screenshots go to test-results/.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { afterCompile, openPage, selectMode, shot } from "./page-helpers.mjs";

const FUSION = 5;
const WGSL = 6;
const RUN = 7;
// The GPU tests' tolerance (tests/it/gpu.rs): 2e-3 relative to the largest output.
const TOLERANCE = 2e-3;
// A benchmark on a software adapter compiles about twenty pipelines.
const BENCH_TIMEOUT_MS = 300_000;

let session;
let page;
let webgpu;

before(async () => {
  session = await openPage();
  page = session.page;
  webgpu = await page.evaluate(() => window.tailorPage.tailor.webgpu.available);
});

after(async () => {
  await session?.close();
});

const pill = (p, index) => p.locator(".stage-pill").nth(index).click();
const kernels = (p) => p.getByTestId("kernels-view");

/** Waits for the run stage to finish; resolves to its data attributes and text. */
async function runStage(p) {
  await p.waitForSelector('[data-testid="run-result"]:is([data-state="done"], [data-state="error"])', { timeout: 120_000 });
  const result = p.getByTestId("run-result");
  return {
    state: await result.getAttribute("data-state"),
    device: await result.getAttribute("data-device"),
    check: await result.getAttribute("data-check"),
    err: Number(await result.locator(".max-abs-err").textContent()),
    text: await result.textContent(),
  };
}

test("WebGPU is used when the browser has it, and the banner says so", async () => {
  const device = await page.evaluate(() => window.tailorPage.tailor.device);
  const banner = page.getByTestId("webgpu-status");
  const asked = await page.evaluate(async () => {
    const tailor = await window.tailorPage.bindings.Tailor.create({ device: "cpu" });
    const device = tailor.device;
    tailor.free();
    return device;
  });
  assert.equal(asked, "cpu", "device: 'cpu' is honoured");
  if (webgpu) {
    assert.equal(device, "gpu");
    assert.equal(await banner.getAttribute("data-state"), "gpu");
    assert.match(await banner.textContent(), /WGSL 内核在你的 GPU 上运行/);
  } else {
    assert.equal(device, "cpu");
  }
});

test("the fusion stage shows the kernels, the groups in the graph and the memory plan", async () => {
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("bert_block"));
  await pill(page, FUSION);
  const view = kernels(page);
  const cards = await view.locator(".kernel-card").count();
  assert.ok(cards >= 5, `BERT block: ${cards} kernels`);
  assert.match(await view.textContent(), /layer_norm|softmax/);
  assert.ok((await page.locator('[data-testid="graph-view"] .node.grouped').count()) >= cards);
  const roles = await view.locator(".memory-plan tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.role));
  for (const role of ["input", "param", "output", "temporary"]) assert.ok(roles.includes(role), `a ${role} buffer`);
  await shot(page, "30-fusion-bert", page.locator("#steps"));
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("simplenet"));
});

test("the WGSL stage re-emits every kernel in each mode", async () => {
  await selectMode(page, "true");
  await pill(page, WGSL);
  const view = kernels(page);
  assert.equal(await view.getAttribute("data-mode"), "dynamic", "a dynamic entry runs dynamic kernels");
  const expected = {
    static: [/const M: i32 = 8i;/, /dims\./],
    override: [/override s0: i32;/, /dims\./],
    dynamic: [/var<uniform> dims: Dims/, /override s0/],
    immediate: [/var<immediate> dims: Dims;/, /var<uniform>/],
  };
  for (const [mode, [present, absent]] of Object.entries(expected)) {
    await page.getByTestId(`wgsl-mode-${mode}`).check();
    assert.equal(await view.getAttribute("data-mode"), mode);
    const sources = await view.locator(".wgsl-source").allTextContents();
    assert.equal(sources.length, 2, "one source per kernel");
    assert.ok(sources.every((source) => present.test(source)), `${mode}: ${present}`);
    assert.ok(sources.every((source) => !absent.test(source)), `${mode}: no ${absent}`);
    assert.ok((await view.locator(".wgsl-source .tok-keyword").count()) > 10, "keywords highlighted");
    await shot(page, `31-wgsl-${mode}`, page.locator("#steps"));
  }
  // The page's spans hold the text itself: no markup came from the WGSL.
  const markup = await view.locator(".wgsl-source").first().evaluate((pre) => pre.querySelectorAll("*:not(code):not(span)").length);
  assert.equal(markup, 0);
  await page.getByTestId("wgsl-mode-dynamic").check();
});

test("the run stage runs the kernels on WebGPU and matches the CPU reference", async () => {
  await selectMode(page, "true");
  // Time the main thread while the first run compiles its pipelines: it must keep ticking.
  await page.evaluate(() => {
    window.__gaps = { last: performance.now(), max: 0 };
    window.__ticker = setInterval(() => {
      const now = performance.now();
      window.__gaps.max = Math.max(window.__gaps.max, now - window.__gaps.last);
      window.__gaps.last = now;
    }, 10);
  });
  await pill(page, RUN);
  const first = await runStage(page);
  const gap = await page.evaluate(() => {
    clearInterval(window.__ticker);
    return window.__gaps.max;
  });
  assert.equal(first.state, "done", first.text);
  assert.equal(first.device, webgpu ? "gpu" : "cpu");
  assert.equal(first.check, "pass", first.text);
  assert.ok(first.err <= TOLERANCE, `max abs err ${first.err}`);
  assert.match(first.text, /\[8, 64\]/);
  assert.ok(gap < 2000, `the page froze for ${gap.toFixed(0)} ms while pipelines compiled`);
  await shot(page, "32-run-webgpu", page.locator("#steps"));

  await page.getByTestId("run-result").getByRole("button").click();
  const again = await runStage(page);
  assert.equal(again.check, "pass");
  const build = await page.evaluate(async () => {
    const c = window.tailorPage.model.trace("x=8,64");
    const warm = await c.run({});
    const steady = await c.run({});
    c.free();
    return { warm: warm.ms.build, steady: steady.ms.build, err: steady.maxAbsErr };
  });
  assert.ok(build.steady < build.warm || build.warm === 0, `kept kernels build nothing: ${JSON.stringify(build)}`);
  console.log(`run stage: main thread's longest pause ${gap.toFixed(0)} ms; first build ${build.warm.toFixed(1)} ms, then ${build.steady.toFixed(2)} ms`);
});

test("model.call runs the entry's kernels and checks them against the reference", async () => {
  const results = await page.evaluate(async () => {
    const { tailor, bindings } = window.tailorPage;
    const model = tailor.compile(bindings.Tailor.presets()[0].source, { dynamic: "true" });
    const out = [];
    for (const batch of [8, 3, 64]) {
      const r = await model.call(`x=${batch},64`, { check: true });
      out.push({ action: r.action, device: r.device, err: r.maxAbsErr, shape: r.outputs[0].shape, ms: r.ms });
    }
    model.free();
    return out;
  });
  assert.deepEqual(results.map((r) => r.action), ["compile", "hit", "hit"]);
  for (const r of results) {
    assert.equal(r.device, webgpu ? "gpu" : "cpu");
    assert.ok(r.err <= TOLERANCE, `max abs err ${r.err}`);
    assert.ok(r.ms.run > 0, "run time measured");
  }
  assert.deepEqual(results[2].shape, [64, 64]);
  assert.ok(results[0].ms.build > 0 && results[0].ms.compile >= results[0].ms.build, "a compile builds its kernels");
  assert.equal(results[1].ms.build, 0, "a hit reuses the entry's kernels");
});

test("nearest interpolation to a symbolic size reads PyTorch's float32 positions on the device", async () => {
  // 2 -> 82 and 3 -> 123 are where PyTorch's float32 scale and exact integer arithmetic part
  // ways (output 41 reads position 0, not 1): the kernels must read what the reference reads.
  const source = [
    "import torch.nn as nn",
    "import torch.nn.functional as F",
    "class Up(nn.Module):",
    "    def forward(self, a, skip):",
    "        return F.interpolate(a, size=skip.shape[2:], mode='nearest') + skip",
    "",
  ].join("\n");
  const results = await page.evaluate(async (source) => {
    const { tailor } = window.tailorPage;
    const model = tailor.compile(source, { dynamic: "true" });
    const out = [];
    for (const shapes of ["a=1,2,2,3;skip=1,2,82,123", "a=1,2,3,4;skip=1,2,164,7"]) {
      const r = await model.call(shapes, { check: true });
      out.push({ action: r.action, device: r.device, err: r.maxAbsErr, shape: r.outputs[0].shape });
    }
    model.free();
    return out;
  }, source);
  for (const r of results) {
    assert.equal(r.device, webgpu ? "gpu" : "cpu");
    assert.equal(r.err, 0, `max abs err ${r.err}`);
  }
  assert.deepEqual(results.map((r) => r.shape), [[1, 2, 82, 123], [1, 2, 164, 7]]);
});

test("every preset's kernels emit WGSL in each mode and match the reference", { timeout: 180_000 }, async () => {
  const results = await page.evaluate(async () => {
    const { tailor, bindings } = window.tailorPage;
    const out = [];
    for (const preset of bindings.Tailor.presets()) {
      const model = tailor.compile(preset.source, { dynamic: "true" });
      const c = model.trace(preset.shapes);
      const kernels = c.schedule.kernels.length;
      const emitted = ["static", "override", "dynamic"].map((mode) => c.wgsl(mode).length);
      const r = await c.run({ check: true });
      let largest = 1;
      for (const output of r.outputs) for (const v of output.data) largest = Math.max(largest, Math.abs(v));
      out.push({ id: preset.id, kernels, emitted, device: r.device, err: r.maxAbsErr, bound: 2e-3 * largest });
      c.free();
      model.free();
    }
    return out;
  });
  assert.equal(results.length, 7);
  for (const r of results) {
    assert.ok(r.kernels >= 1, r.id);
    assert.deepEqual(r.emitted, [r.kernels, r.kernels, r.kernels], `${r.id}: WGSL per kernel in each mode`);
    assert.equal(r.device, webgpu ? "gpu" : "cpu");
    assert.ok(r.err !== null && r.err <= r.bound, `${r.id}: max abs err ${r.err} > ${r.bound}`);
  }
});

test("the benchmark runs the material's demo and fills its charts", { timeout: BENCH_TIMEOUT_MS }, async () => {
  await page.locator("#bench").scrollIntoViewIfNeeded();
  await page.getByTestId("bench-run").click();
  await page.waitForFunction(() => Number(document.getElementById("bench").dataset.runs ?? 0) > 0, null, { timeout: BENCH_TIMEOUT_MS });
  assert.equal(await page.locator('[data-testid="bench-chart"] .bench-bar').count(), 2, "static and dynamic");
  const bars = await page.locator('[data-testid="bench-specialisations"] .bench-group rect').count();
  const immediates = await page.evaluate(() => window.tailorPage.tailor.adapter?.immediates ?? false);
  assert.equal(bars, webgpu ? 4 * (immediates ? 4 : 3) : 4, "a bar per shape and specialisation");
  const rows = await page.locator("#bench-totals tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.children, (td) => td.textContent)));
  assert.deepEqual(rows.map((r) => r[1]), ["4", "1"], "compiles: 4 static entries, 1 dynamic");
  assert.match(await page.locator("#bench-totals").textContent(), /T\s*total/);
  assert.equal(await page.getByTestId("bench-device").getAttribute("data-device"), webgpu ? "gpu" : "cpu");
  console.log(`benchmark: ${await page.locator(".bench-ratio").textContent()}`);
  console.log(`benchmark rows: ${JSON.stringify(rows)}`);
  const spec = await page.locator('[data-testid="bench-specialisations"] tbody tr').evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.children, (td) => td.textContent).join(" | ")));
  console.log(`specialisations:\n  ${spec.join("\n  ")}`);
  await shot(page, "33-bench", page.locator("#bench"));
});

test("without WebGPU the kernels run on the CPU backend and the benchmark says why", { timeout: BENCH_TIMEOUT_MS }, async () => {
  const other = await openPage({ init: () => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined }) });
  try {
    const p = other.page;
    assert.equal(await p.evaluate(() => window.tailorPage.tailor.device), "cpu");
    const refused = await p.evaluate(() =>
      window.tailorPage.bindings.Tailor.create({ device: "gpu" }).then(() => "created", (error) => `${error.kind}: ${error.message}`));
    assert.match(refused, /^device: device 'gpu': this browser has no WebGPU/);
    await pill(p, FUSION);
    assert.equal(await kernels(p).locator(".kernel-card").count(), 2);
    await pill(p, WGSL);
    assert.match(await kernels(p).textContent(), /@compute/);
    await pill(p, RUN);
    const run = await runStage(p);
    assert.equal(run.device, "cpu");
    assert.equal(run.check, "pass", run.text);
    assert.match(run.text, /没有可用的 WebGPU/);
    await shot(p, "34-run-cpu", p.locator("#steps"));
    await p.getByTestId("bench-run").click();
    await p.waitForFunction(() => Number(document.getElementById("bench").dataset.runs ?? 0) > 0, null, { timeout: BENCH_TIMEOUT_MS });
    assert.match(await p.getByTestId("bench-device").textContent(), /GPU 计时缺失/);
    assert.equal(await p.locator('[data-testid="bench-chart"] .bench-bar').count(), 2);
    assert.equal(await p.locator('[data-testid="bench-specialisations"] .bench-group rect').count(), 4);
    await shot(p, "35-bench-cpu", p.locator("#bench"));
    assert.deepEqual(other.errors, []);
  } finally {
    await other.close();
  }
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
