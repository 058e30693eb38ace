// End-to-end tests of the guard cache lab and the concept widgets: the material's demo
// sequence in each mode (pytorch-semantics.md §9, §12), the recompile limit and the eager
// fallback, the three modes side by side, the Python demo on one shared cache, and the
// widgets of §2, §3, §4 and §7. Screenshots go to test-results/.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { DEMO_SEQUENCE, afterCompile, compileSource, count, openPage, runLab, selectMode, shot } from "./page-helpers.mjs";

let session;
let page;

before(async () => {
  session = await openPage();
  page = session.page;
});

after(async () => {
  await session?.close();
});

test("the demo sequence compiles once with dynamic=True", async () => {
  await selectMode(page, "true");
  const actions = await runLab(page, DEMO_SEQUENCE);
  assert.deepEqual(actions, ["compile", "hit", "hit", "hit", "hit", "hit", "hit", "hit"]);
  assert.equal(await page.locator('[data-testid="cache-entries"] > li.entry').count(), 1);
  assert.match(await page.getByTestId("cache-entries").textContent(), /2 <= L\['x'\]\.size\(\)\[0\]/);
});

test("the demo sequence compiles once per distinct batch with dynamic=False", async () => {
  await selectMode(page, "false");
  const actions = await runLab(page, DEMO_SEQUENCE);
  assert.equal(count(actions, "compile"), 4, `batches 8, 16, 32, 64: ${actions}`);
  assert.equal(count(actions, "hit"), 4);
  assert.match(await page.getByTestId("cache-events").textContent(), /tensor 'x' size mismatch at index 0\. expected 8, actual 16/);
  assert.equal(await page.locator('[data-testid="timeline-chart"] svg .bar').count(), 8);
  await page.locator("#cache-simulate").check();
  assert.match(await page.getByTestId("timeline-chart").textContent(), /Inductor/);
  // On the log axis each phase keeps its share of the bar: the guard check of a simulated 17 s
  // compile is a sliver, not a decade of the axis.
  const first = page.locator('[data-testid="timeline-chart"] svg .bar').first();
  const height = async (part) => Number(await first.locator(`rect.part-${part}`).getAttribute("height"));
  // A guard check the page's clock measured as 0 ms draws no rectangle at all.
  if ((await first.locator("rect.part-guard").count()) > 0) {
    assert.ok((await height("guard")) <= 2, `guard check ${await height("guard")} px`);
  }
  assert.ok((await height("compile")) > 100, `simulated compile ${await height("compile")} px`);
  // The legend's two keys never show the same words twice.
  const legend = await page.$$eval('[data-testid="timeline-chart"] .legend li', (items) => items.map((li) => li.textContent.trim()));
  assert.equal(new Set(legend).size, legend.length, `legend: ${legend}`);
  await shot(page, "10-lab-static", page.locator("#lab"));
  await page.locator("#cache-simulate").uncheck();
});

test("the demo sequence compiles twice by default (static, then dynamic)", async () => {
  await selectMode(page, "auto");
  const actions = await runLab(page, DEMO_SEQUENCE);
  assert.deepEqual(actions, ["compile", "compile", "hit", "hit", "hit", "hit", "hit", "hit"]);
  await shot(page, "11-lab-auto", page.locator("#lab"));
});

test("keeping the entries reuses them on the next run", async () => {
  await page.locator("#cache-keep").check();
  const actions = await runLab(page, "x=8,64 x=100,64");
  assert.deepEqual(actions.slice(-2), ["hit", "hit"]);
  await page.locator("#cache-keep").uncheck();
});

test("ten distinct sizes under dynamic=False hit the limit of 8, then run eagerly", async () => {
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("add_one"));
  await selectMode(page, "false");
  await page.locator('button.chip[data-sequence="limit"]').click();
  const sequence = await page.getByTestId("cache-sequence").inputValue();
  assert.equal(sequence, "x=2 x=3 x=4 x=5 x=6 x=7 x=8 x=9 x=10 x=11");
  const actions = await runLab(page, sequence);
  assert.equal(count(actions, "compile"), 8);
  assert.deepEqual(actions.slice(8), ["eager", "eager"]);
  const meter = await page.locator("#limit-meter").textContent();
  assert.match(meter, /hit config\.recompile_limit \(8\)/);
  await shot(page, "12-lab-limit", page.locator("#lab"));
});

test("sizes 0 and 1 are specialised even under dynamic=True", async () => {
  await selectMode(page, "true");
  const actions = await runLab(page, "x=3 x=4 x=5 x=2 x=1 x=0");
  assert.deepEqual(actions, ["compile", "hit", "hit", "hit", "compile", "compile"]);
});

test("the three modes side by side fill in T_total", async () => {
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("simplenet"));
  await page.getByTestId("cache-sequence").fill(DEMO_SEQUENCE);
  await page.locator("#cache-compare").click();
  await page.waitForSelector("#compare-view table tbody tr:nth-child(3)", { timeout: 60_000 });
  const compiles = await page.$$eval("#compare-view tbody tr", (rows) =>
    Object.fromEntries(rows.map((row) => [row.dataset.mode, Number(row.cells[1].textContent)])));
  assert.deepEqual(compiles, { false: 4, true: 1, auto: 2 });
  // Each mode starts from a cold kernel cache, so it builds all its own pipelines: 2 kernels
  // per static entry (4 for False), 2 for True's one dynamic entry, 2 + 2 for None's static
  // then dynamic entry. Reusing an earlier mode's pipelines would make None's 0 + 0.
  const device = await page.evaluate(() => window.tailorPage.tailor.device);
  const pipelines = await page.$$eval("#compare-view tbody tr", (rows) =>
    Object.fromEntries(rows.map((row) => [row.dataset.mode, Number(row.dataset.pipelines)])));
  if (device === "gpu") assert.deepEqual(pipelines, { false: 8, true: 2, auto: 4 });
  assert.equal(await page.locator("#tradeoff-view math").count(), 6, "per mode: the formula with N and M, then the numbers");
  assert.equal(await page.locator("#deploy-view tbody tr").count(), 3);
  await shot(page, "13-compare", page.locator("#compare-view"));
  await shot(page, "14-tradeoff", page.locator("#tradeoff"));
});

test("the Python demo fills one shared cache with 6 entries, as PyTorch's inductor; batch 13 hits the stamped entry", async () => {
  await page.locator("#python-run").click();
  await page.waitForSelector(".python-entries", { timeout: 60_000 });
  // The last loop's x, stamped by the dynamic call, makes the static wrapper's batch-3
  // entry dynamic: 1 dynamic entry, 4 static ones and [0/5] with a symbol for the batch.
  assert.equal(await page.locator(".python-entries").getAttribute("data-count"), "6");
  assert.equal(await page.locator('.python-entry-list li[data-wrapper="0"]').count(), 1);
  assert.equal(await page.locator('.python-entry-list li[data-wrapper="1"]').count(), 5);
  assert.match(await page.locator('.python-entry-list li[data-wrapper="1"]').last().textContent(), /x=\[s\d+, 64\]/);
  await page.locator("#python-more").click();
  await page.waitForSelector("#python-result .outcome[data-action]");
  assert.equal(await page.locator("#python-result .outcome").getAttribute("data-action"), "hit");
  await shot(page, "15-python-demo", page.locator("#python-demo"));
});

test("the material's script runs verbatim and logs PyTorch's recompile lines", async () => {
  await page.locator("#script-run").click();
  await page.waitForSelector("#script-result .script-summary", { timeout: 60_000 });
  const summary = page.locator("#script-result .script-summary");
  assert.equal(await summary.getAttribute("data-entries"), "6");
  assert.equal(await summary.getAttribute("data-compiles"), "6");
  const output = await page.locator("#script-result .script-output").textContent();
  assert.match(output, /\[0\/5\] \[__recompiles\] Recompiling function forward in demos\/material_demo.py:17/);
  assert.match(output, /- 0\/4: tensor 'x' size mismatch at index 0\. expected 64, actual 3/);
  assert.doesNotMatch(output, /\[0\/6\]/);
  assert.match(output, /动态形状总耗时: \d+\.\d{4}s/);
  assert.match(output, /多种 batch size 下输出形状均正确/);
  assert.equal(await page.locator("#script-result .error-text").count(), 0);
  await shot(page, "15b-python-script", page.locator("#python-demo"));
});

test("the shape-combination widget counts compilations per mode", async () => {
  await page.locator("#grid-run").click();
  await page.waitForSelector('#grid-result li[data-mode="auto"]', { timeout: 60_000 });
  const rows = await page.$$eval("#grid-result li", (items) => items.map((li) => li.textContent));
  assert.match(rows[0], /编译 8 次，eager 1 次/, "9 pairs under dynamic=False: the limit of 8, then eager");
  assert.match(rows[1], /编译 1 次/);
  assert.match(rows[2], /编译 3 次/);
  await shot(page, "16-grid-widget", page.locator("#problem"));
});

test("the matmul widget derives the equality of the inner dims", async () => {
  await page.locator("#matmul-run").click();
  await page.waitForSelector("#matmul-result .guards-view");
  const text = await page.locator("#matmul-result").textContent();
  assert.match(text, /\[s0, s3\]/);
  assert.match(text, /s1 == s2|s2 == s1/);
  assert.match(text, /set_replacement s2 = s1/);
  await shot(page, "17-matmul-widget", page.locator("#symbolic"));
});

test("the guard widget shows which guards a new shape fails", async () => {
  await selectMode(page, "auto");
  await page.locator("#guard-shapes").fill("x=16,64");
  await page.locator("#guard-check").click();
  await page.waitForSelector("#guard-result .outcome");
  assert.equal(await page.locator("#guard-result .outcome").getAttribute("data-outcome"), "recompile");
  assert.ok((await page.locator("#guard-result li.guard.fail").count()) >= 1);
  assert.match(await page.locator("#guard-result").textContent(), /expected 8, actual 16/);
  await page.locator("#guard-shapes").fill("x=8,64");
  await page.locator("#guard-check").click();
  await page.waitForSelector('#guard-result .outcome[data-outcome="hit"]');
  await shot(page, "18-guard-widget", page.locator("#guards"));
});

test("the conv widget derives L_out = s0 for p=1, k=3, s=1", async () => {
  await page.locator("#conv-run").click();
  await page.waitForSelector("#conv-result code.big");
  assert.equal(await page.locator("#conv-result code.big").textContent(), "s0");
  await page.locator("#conv-s").fill("2");
  await page.locator("#conv-run").click();
  await page.waitForFunction(() => document.querySelector("#conv-result code.big")?.textContent !== "s0");
  assert.equal(await page.locator("#conv-result code.big").textContent(), "(s0 - 1)//2 + 1");
  await shot(page, "19-conv-widget", page.locator("#kernels"));
});

test("a scenario button loads its preset and runs the lab", async () => {
  await page.locator('button.scenario[data-preset="yolo_stack"]').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="cache-events"] > li').length === 5, null, { timeout: 60_000 });
  assert.equal(await page.getByTestId("preset-select").inputValue(), "yolo_stack");
});

test("an int argument is a constant, then a symbol; a bool is always a constant", async () => {
  await selectMode(page, "auto");
  const source = "import torch\n\n\ndef scaled(x, n, flag):\n    if flag:\n        return x * n\n    return x + n\n";
  await compileSource(page, source, "x=3;n=int(2);flag=True");
  const call = (n, flag) => `x=3;n=int(${n});flag=${flag}`;
  const actions = await runLab(page, [call(2, "True"), call(3, "True"), call(4, "True"), call(4, "False")].join(" "));
  assert.deepEqual(actions, ["compile", "compile", "hit", "compile"]);
  const entries = await page.getByTestId("cache-entries").textContent();
  assert.match(entries, /EQUALS_MATCH: L\['n'\] == 2/);
  assert.match(entries, /TYPE_MATCH: ___check_type_id\(L\['n'\], <class 'int'>\)/);
  assert.match(entries, /FALSE_MATCH: L\['flag'\] == False/);
  const events = await page.getByTestId("cache-events").textContent();
  assert.match(events, /n == 2/);
  assert.match(events, /flag == True/);
  await shot(page, "13-lab-int-arguments", page.locator("#lab"));
});

test("a trace that records no op skips the code for good, as TorchDynamo does", async () => {
  await selectMode(page, "auto");
  const source = "import torch\n\n\ndef half(x):\n    n = x.shape[0]\n    if n == 1:\n        return x\n    return x[: n // 2] * 2\n";
  await compileSource(page, source, "x=2,4");
  // PyTorch 2.15: compile, compile (automatic dynamic), then the batch of 1 returns x with
  // no op traced: the frame is skipped, and every later call runs eagerly, even one that
  // its second entry would have served.
  const actions = await runLab(page, "x=2,4 x=4,4 x=1,4 x=6,4 x=4,4");
  assert.deepEqual(actions, ["compile", "compile", "eager", "eager", "eager"]);
  assert.match(await page.getByTestId("lab-skipped").textContent(), /No ops traced for the FX graph/);
});

test("a pasted model's lab sequence starts from its compiled call and varies its batch", async () => {
  await selectMode(page, "auto");
  const source = "import torch\nimport torch.nn as nn\n\n\nclass Pooled(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(1, 4, 3)\n\n    def forward(self, x):\n        return self.conv(x).mean((2, 3))\n";
  await compileSource(page, source, "x=2,1,12,12");
  const sequence = await page.getByTestId("cache-sequence").inputValue();
  assert.equal(sequence.split(" ")[0], "x=2,1,12,12", sequence);
  assert.match(sequence, /x=4,1,12,12/);
  const actions = await runLab(page, sequence);
  assert.equal(count(actions, "error"), 0, `${actions}`);
  // PyTorch 2.15 (CPU) gives C C C H C H H: its convolution's fake kernel, choosing a
  // backend, guards the batch at 15, which Tailor does not model; the first four agree.
  assert.deepEqual(actions.slice(0, 4), ["compile", "compile", "compile", "hit"], "batch 2, then 1 (its own entry), then 4 (automatic dynamic), then 8");
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
