// End-to-end test of the benchmark view's figures (issues 10 and 11): one press measures the
// CPU backend (SimpleNet b8, the 3→16 conv at 64×64, the 256×1024→1024→1024 MLP, each against
// graph::eval, and the memory plan's peak) and, with WebGPU (SwiftShader in the test
// Chromium), first calls, a new batch under the dynamic entry with the pipelines it created,
// steady calls, the MLP's GFLOP/s and the form each product kernel ran as; the run stage
// lists the products' forms too. Then all of it with WebGPU hidden: the CPU figures only,
// and why. Figures are checked present, finite and positive, never against a speed.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { openPage, shot } from "./page-helpers.mjs";

const FUSION = 5;
const RUN = 7;
const FIGURES_TIMEOUT_MS = 240_000;
const CPU_WORKLOADS = ["simplenet_b8", "conv16_64", "bigmlp"];
const FORMS = ["tiled", "blocked", "naive"];

let session;
let page;
let webgpu;

before(async () => {
  session = await openPage();
  page = session.page;
  webgpu = await page.evaluate(() => window.tailorPage.tailor.device === "gpu");
});

after(async () => {
  await session?.close();
});

/** Presses "measure the figures" and waits until that run finished. */
async function measure(p) {
  await p.locator("#bench").scrollIntoViewIfNeeded();
  await p.getByTestId("bench-figures-run").click();
  await p.waitForFunction(() => Number(document.getElementById("bench").dataset.figureRuns ?? 0) > 0, null, { timeout: FIGURES_TIMEOUT_MS });
}

/** Every `[data-metric]` cell under `selector`: `{ row, metric, value, text }`. */
async function cells(p, selector) {
  return p.locator(`${selector} [data-metric]`).evaluateAll((tds) => tds.map((td) => ({
    row: td.closest("tr").dataset.workload ?? td.closest("tr").dataset.figure,
    metric: td.dataset.metric,
    value: Number(td.dataset.value),
    text: td.textContent,
  })));
}

/** Checks the CPU table: a row per workload, every figure finite and positive. */
async function checkCpu(p) {
  const figures = await cells(p, '[data-testid="bench-cpu"]');
  const rows = await p.locator('[data-testid="bench-cpu"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.workload));
  assert.deepEqual(rows, CPU_WORKLOADS);
  for (const workload of CPU_WORKLOADS) {
    const mine = figures.filter((f) => f.row === workload);
    const metrics = mine.map((f) => f.metric);
    const own = workload === "bigmlp" ? ["gflops", "reference-gflops"] : ["ms", "reference-ms"];
    assert.deepEqual(metrics, [...own, "speedup", "peak-bytes", "held-bytes"], workload);
    for (const f of mine) assert.ok(Number.isFinite(f.value) && f.value > 0, `${workload} ${f.metric}: ${f.value}`);
    const peak = mine.find((f) => f.metric === "peak-bytes").value;
    const held = mine.find((f) => f.metric === "held-bytes").value;
    assert.ok(held >= peak, `${workload}: the arena holds the plan (${held} >= ${peak})`);
  }
  console.log(`CPU figures: ${JSON.stringify(figures.map((f) => `${f.row} ${f.metric} ${f.text}`))}`);
  return figures;
}

test("the figures: the CPU backend against graph::eval with the memory plan's peak, and WebGPU's", { timeout: FIGURES_TIMEOUT_MS }, async () => {
  await measure(page);
  assert.doesNotMatch(await page.locator("#bench-figures-status").textContent(), /error|错误/i);
  await checkCpu(page);
  const zh = await page.getByTestId("bench-figures").textContent();
  assert.match(zh, /graph::eval（参考）/);
  assert.match(zh, /内存计划的峰值/);
  assert.match(zh, /MLP 的参考只跑 x=32,1024/);
  if (!webgpu) {
    assert.equal(await page.getByTestId("bench-no-gpu").count(), 1);
    return;
  }
  const gpu = await cells(page, '[data-testid="bench-gpu"]');
  for (const f of gpu) assert.ok(Number.isFinite(f.value) && f.value > 0, `${f.row} ${f.metric}: ${f.value}`);
  const rows = gpu.map((f) => f.row);
  for (const row of ["first.false", "first.true", "first.auto", "steady.false", "steady.true", "steady.auto", "new-batch", "steady.b16", "mlp.first", "mlp.gflops", "mlp.tiered", "mlp.tier-ready", "mlp.tuned"]) {
    assert.ok(rows.includes(row), `the ${row} figure is shown`);
  }
  const pipelines = await page.locator('[data-testid="bench-gpu"] tr[data-figure="new-batch"] [data-pipelines]').getAttribute("data-pipelines");
  assert.equal(pipelines, "0", "a new batch under the dynamic entry creates no pipeline");
  const newBatch = await page.locator('[data-testid="bench-gpu"] tr[data-figure="new-batch"] th').textContent();
  assert.match(newBatch, /5 个新编译的模型各自首次调用的中位数/, "the new batch is a median over fresh models");
  // Every GPU timing sits next to its adapter, and an emulation is labelled as one.
  const adapters = await page.locator('[data-testid="bench-gpu"] td.adapter').allTextContents();
  assert.equal(adapters.length, gpu.length);
  const emulated = await page.evaluate(() => window.tailorPage.tailor.webgpu.emulated);
  for (const adapter of adapters) if (emulated) assert.match(adapter, /CPU 模拟/);
  const forms = await page.locator('[data-testid="bench-gpu"] tr[data-figure="mlp.first"] .product-form').evaluateAll((spans) => spans.map((s) => s.dataset.strategy));
  assert.equal(forms.length, 2, "the MLP's two products");
  for (const form of forms) assert.ok(FORMS.includes(form), form);
  // Tiers: the first call ran both products naive while the browser built their large forms,
  // and the call after those were ready ran them.
  const tiered = await page.locator('[data-testid="bench-gpu"] tr[data-figure="mlp.tiered"] .product-form').evaluateAll((spans) => spans.map((s) => s.dataset.strategy));
  assert.deepEqual(tiered, ["naive", "naive"], "the tiered first call runs the naive tier");
  const built = await page.locator('[data-testid="bench-gpu"] tr[data-figure="mlp.tiered"] .tier-building').evaluateAll((spans) => spans.map((s) => s.dataset.building));
  const tuned = await page.locator('[data-testid="bench-gpu"] tr[data-figure="mlp.tuned"] .product-form').evaluateAll((spans) => spans.map((s) => s.dataset.strategy));
  assert.deepEqual(built, forms, "the forms built in the background are the ones a call waits for without tiers");
  assert.deepEqual(tuned, forms, "the next call runs the forms built in the background");
  const simplenet = await page.locator('[data-testid="bench-gpu"] tr[data-figure="first.true"] .product-form').count();
  assert.equal(simplenet, 2, "SimpleNet's two products");
  console.log(`GPU figures: ${JSON.stringify(gpu.map((f) => `${f.row} ${f.metric} ${f.text}`))}; MLP products ${forms.join(", ")}`);
  await shot(page, "36-bench-figures", page.getByTestId("bench-figures"));

  await page.getByTestId("lang-toggle").click();
  try {
    const en = await page.getByTestId("bench-figures").textContent();
    assert.match(en, /graph::eval \(reference\)/);
    assert.match(en, /Memory plan's peak/);
    assert.match(en, /first call/);
    assert.match(en, /A new batch under the dynamic entry: x=16,64 \(median of the first calls of 5 freshly compiled models; 0 new pipelines\)/);
    assert.match(en, /GFLOP\/s/);
    for (const adapter of await page.locator('[data-testid="bench-gpu"] td.adapter').allTextContents()) {
      if (emulated) assert.match(adapter, /CPU emulation/);
    }
  } finally {
    await page.getByTestId("lang-toggle").click();
  }
});

test("the run stage shows the form each product kernel ran as, and the fusion stage names the same", { timeout: 120_000 }, async () => {
  await page.locator(".stage-pill").nth(FUSION).click();
  await page.waitForSelector(".kernel-card");
  const named = Object.fromEntries(await page.locator(".kernel-card").evaluateAll((cards) => cards.flatMap((card) => {
    const form = card.querySelector(".fusion-form");
    return form ? [[card.querySelector(".kernel-name").textContent, form.dataset.strategy]] : [];
  })));
  assert.equal(Object.keys(named).length, 2, "SimpleNet's two products, named in the fusion stage");
  await page.locator(".stage-pill").nth(RUN).click();
  await page.waitForSelector('[data-testid="run-result"]:is([data-state="done"], [data-state="error"])', { timeout: 120_000 });
  const result = page.getByTestId("run-result");
  assert.equal(await result.getAttribute("data-state"), "done");
  if (!webgpu) {
    assert.equal(await page.getByTestId("run-products").count(), 0, "the CPU backend's products have no WGSL form");
    for (const form of Object.values(named)) assert.equal(form, "cpu");
    return;
  }
  const ran = Object.fromEntries(await page.locator('[data-testid="run-products"] code').evaluateAll((codes) =>
    codes.map((code) => [code.textContent, code.nextElementSibling?.dataset.strategy])));
  assert.equal(Object.keys(ran).length, 2, "SimpleNet's two products");
  for (const form of Object.values(ran)) assert.ok(FORMS.includes(form), form);
  assert.deepEqual(named, ran, "the fusion stage names the forms the run used");
  assert.match(await page.getByTestId("run-products").textContent(), /矩阵乘内核这次以什么形式运行/);
});

test("without WebGPU the figures are the CPU backend's only, and the view says why", { timeout: FIGURES_TIMEOUT_MS }, async () => {
  const other = await openPage({ init: () => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined }) });
  try {
    const p = other.page;
    assert.equal(await p.evaluate(() => window.tailorPage.tailor.device), "cpu");
    await measure(p);
    await checkCpu(p);
    assert.equal(await p.locator('[data-testid="bench-gpu"]').count(), 0);
    assert.match(await p.getByTestId("bench-no-gpu").textContent(), /没有可用的 WebGPU，所以这里只有 CPU 的数字/);
    await p.getByTestId("lang-toggle").click();
    assert.match(await p.getByTestId("bench-no-gpu").textContent(), /No usable WebGPU, so only the CPU figures are here/);
    assert.match(await p.getByTestId("bench-figures").textContent(), /Tailor \(compiled kernels\)/);
    assert.deepEqual(other.errors, []);
  } finally {
    await other.close();
  }
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
