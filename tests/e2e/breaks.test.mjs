// End-to-end tests of the graph-breaks stage: the break_net preset (a print, then a branch on
// a tensor's value) lists its graphs [0/0], [1/0], [2/0] with the breaks between them —
// line:col, PyTorch's reason text, the resume functions — in both languages; a click draws
// another graph and reveals a break's line; the lab shows each frame's action and the resume
// frames recompiling for a new batch; a model without breaks has no such stage.
// Screenshots at 1400 px and 375 px in both languages go to test-results/.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { afterCompile, compileSource, lowContrast, openPage, runLab, shot, shownError } from "./page-helpers.mjs";

let session;
let page;

before(async () => {
  session = await openPage();
  page = session.page;
  await page.setViewportSize({ width: 1400, height: 900 });
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("break_net"));
});

after(async () => {
  await session?.close();
});

const PRINT_REASON = "Dynamo does not know how to trace builtin operator `print` with argument types ['str', 'Size'] (has_kwargs False)";

/** The stage pills' `data-stage`-like names, as their text. */
async function pills() {
  return page.locator(".stage-pill").allTextContents();
}

/** Opens the graph-breaks stage through its pill. */
async function openBreaks(name) {
  await page.locator(".stage-pill", { hasText: name }).click();
  assert.equal(await page.getByTestId("stage-title").getAttribute("data-stage"), "breaks");
}

/** Text that looks like an i18n key the table lacks (`breaks.at`, `lab.frames`, …). */
function rawKeys(text) {
  return text.match(/\b(?:breaks|stage|explain|lab|action)\.[A-Za-z.]+\b/g) ?? [];
}

async function stageText() {
  return page.locator("#steps").innerText();
}

test("the break_net preset has a graph-breaks stage right after the graph stage", async () => {
  assert.equal(await shownError(page), null);
  assert.deepEqual(await pills(), ["程序与设置", "输入符号（ShapeEnv）", "捕获计算图（FX）", "图中断", "形状传播", "守卫", "融合分组", "WGSL 内核", "运行与校验"]);
  await page.getByTestId("step-next").click();
  await page.getByTestId("step-next").click();
  assert.equal(await page.getByTestId("stage-title").getAttribute("data-stage"), "graph");
  await page.getByTestId("step-next").click();
  assert.equal(await page.getByTestId("stage-title").getAttribute("data-stage"), "breaks");
  assert.match(page.url(), /model=break_net/);
  assert.match(page.url(), /step=3/);
});

test("the stage lists each graph as [frame/compile] and the breaks between them, in Chinese", async () => {
  await openBreaks("图中断");
  const view = page.getByTestId("breaks-view");
  const ids = await view.locator(".graph-card").evaluateAll((cards) => cards.map((card) => card.dataset.id));
  assert.deepEqual(ids, ["0/0", "1/0", "2/0"]);
  const actions = await view.locator(".graph-card").evaluateAll((cards) => cards.map((card) => card.dataset.action));
  assert.deepEqual(actions, ["compile", "compile", "compile"]);
  const text = await view.innerText();
  assert.match(text, /\[0\/0\] forward/);
  assert.match(text, /\[1\/0\] torch_dynamo_resume_in_forward_at_15/);
  assert.match(text, /\[2\/0\].*torch_dynamo_resume_in_forward_at_16/);
  // The print at line 15, col 9, with PyTorch's reason as PyTorch writes it.
  const breaks = view.locator(".break-card");
  assert.equal(await breaks.count(), 2);
  assert.equal(await breaks.nth(0).getAttribute("data-line"), "15");
  assert.equal(await breaks.nth(0).getAttribute("data-col"), "9");
  assert.match(await breaks.nth(0).innerText(), /图中断：第 15 行，第 9 列/);
  const printReason = await breaks.nth(0).locator(".break-reason").textContent();
  assert.ok(printReason.includes("Failed to trace builtin operator"), printReason);
  assert.ok(printReason.includes(PRINT_REASON), printReason);
  assert.match(await breaks.nth(0).locator(".printed").textContent(), /^hidden torch\.Size\(\[8, 128\]\)\n$/);
  // The branch on h.mean() > 0 at line 16, col 12: Python went into the if.
  assert.equal(await breaks.nth(1).getAttribute("data-kind"), "branch");
  assert.match(await breaks.nth(1).innerText(), /图中断：第 16 行，第 12 列/);
  assert.equal(await breaks.nth(1).locator(".break-reason").textContent(), "Data-dependent branching");
  assert.match(await breaks.nth(1).innerText(), /走进了 if 分支/);
  assert.match(await breaks.nth(1).innerText(), /torch_dynamo_resume_in_forward_at_16 继续/);
  // Each graph's text and guards are there to open.
  assert.match(await view.locator(".graph-card").nth(1).locator(".graph-text pre").textContent(), /relu|mean|gt/);
  assert.match(await view.locator(".graph-card").nth(1).locator(".graph-guards pre").textContent(), /TENSOR_MATCH: check_tensor\(L\['h'\]/);
  assert.match(await page.getByTestId("stage-title").textContent(), /图中断/);
  assert.match(await page.locator("#stage-explain").textContent(), /torch_dynamo_resume_in_forward_at_/);
  assert.deepEqual(rawKeys(await stageText()), []);
  // Both breaks are marked in the editor and in the source.
  assert.equal(await page.locator(".code-editor .cm-lintRange-warning").count(), 2);
  const marked = await page.locator("#source-view li.marked").evaluateAll((items) => items.map((li) => li.dataset.line));
  assert.deepEqual(marked, ["15", "16"]);
  await shot(page, "30-breaks-1400-zh", page.locator("#steps"));
});

test("a click on a graph draws it; a click on a break reveals its line", async () => {
  const view = page.getByTestId("breaks-view");
  assert.match(await page.getByTestId("graph-caption").textContent(), /\[0\/0\]/);
  // Forward's graph is fc1 and relu; the last resume function's, h * 2 and fc2.
  const ops = async () => page.locator('[data-testid="graph-view"] svg .node.op .node-sub').allTextContents();
  const forwardOps = (await ops()).join(" ");
  await view.locator(".graph-card").nth(2).locator(".graph-pick").click();
  assert.match(await page.getByTestId("graph-caption").textContent(), /\[2\/0\].*torch_dynamo_resume_in_forward_at_16/);
  assert.equal(await view.locator(".graph-card").nth(2).locator(".graph-pick").getAttribute("aria-pressed"), "true");
  const resumeOps = (await ops()).join(" ");
  assert.match(forwardOps, /relu/);
  assert.doesNotMatch(resumeOps, /relu/);
  assert.match(resumeOps, /mul/);
  await view.locator(".break-card").nth(1).locator(".break-where").click();
  const marked = await page.locator("#source-view li.marked").evaluateAll((items) => items.map((li) => li.dataset.line));
  assert.deepEqual(marked, ["16"]);
  const selected = await page.evaluate(() => {
    const { state } = window.tailorPage.editor.view;
    const line = state.doc.lineAt(state.selection.main.head);
    return { line: line.number, text: state.sliceDoc(state.selection.main.from, state.selection.main.to) };
  });
  assert.deepEqual(selected, { line: 16, text: "h" });
  await view.locator(".graph-card").nth(0).locator(".graph-pick").click();
});

test("in English the stage has its own text, and PyTorch's reason stays as PyTorch wrote it", async () => {
  await page.getByTestId("lang-toggle").click();
  try {
    assert.ok((await pills()).includes("Graph breaks"));
    const view = page.getByTestId("breaks-view");
    const text = await view.innerText();
    assert.match(text, /Graph break at line 15, col 9/);
    assert.match(text, /Graph break at line 16, col 12/);
    assert.match(text, /This call went through 2 graph breaks: 3 graphs/);
    assert.match(text, /resumes as torch_dynamo_resume_in_forward_at_15/);
    assert.ok(text.includes(PRINT_REASON));
    assert.doesNotMatch(text, /[\u4e00-\u9fff]/, "no Chinese left in the English stage");
    assert.match(await page.getByTestId("stage-title").textContent(), /Graph breaks/);
    assert.deepEqual(rawKeys(await stageText()), []);
    await shot(page, "31-breaks-1400-en", page.locator("#steps"));
    await page.setViewportSize({ width: 375, height: 812 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 375, "no sideways scrolling at 375 px (en)");
    await shot(page, "32-breaks-375-en", page.locator("#steps"));
  } finally {
    await page.getByTestId("lang-toggle").click();
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 375, "no sideways scrolling at 375 px (zh)");
  await shot(page, "33-breaks-375-zh", page.locator("#steps"));
  await page.setViewportSize({ width: 1400, height: 900 });
});

test("the lab shows each frame's action; a new batch recompiles the resume frames", async () => {
  const actions = await runLab(page, "x=8,64 x=16,64 x=32,64");
  assert.deepEqual(actions, ["compile", "compile", "hit"]);
  const frames = await page.locator('[data-testid="cache-events"] > li [data-testid="call-frames"]').evaluateAll((rows) =>
    rows.map((row) => [...row.querySelectorAll(".frame")].map((f) => `${f.querySelector("code").textContent} ${f.dataset.action}`)));
  assert.deepEqual(frames, [
    ["0/0 compile", "1/0 compile", "2/0 compile"],
    ["0/1 compile", "1/1 compile", "2/1 compile"],
    ["0/1 hit", "1/1 hit", "2/1 hit"],
  ]);
  const second = await page.locator('[data-testid="cache-events"] > li').nth(1).innerText();
  assert.match(second, /0\/1 编译 → 1\/1 编译 → 2\/1 编译/);
  assert.match(second, /1\/0: tensor 'h' size mismatch at index 0\. expected 8, actual 16/);
  assert.match(second, /2\/0: tensor 'h' size mismatch at index 0\. expected 8, actual 16/);
  assert.deepEqual(rawKeys(await page.getByTestId("cache-events").innerText()), []);
  await shot(page, "34-breaks-lab", page.getByTestId("cache-events"));
});

test("the stage and the lab's frames keep AA contrast in the light and the dark theme", async () => {
  await openBreaks("图中断");
  await page.getByTestId("breaks-view").locator(".graph-card").nth(1).locator(".graph-guards summary").click();
  try {
    for (const scheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme: scheme });
      assert.deepEqual(await lowContrast(page, "#steps"), [], `${scheme}: the graph-breaks stage`);
      assert.deepEqual(await lowContrast(page, "#cache-events"), [], `${scheme}: the lab's calls`);
    }
    await shot(page, "35-breaks-dark", page.getByTestId("breaks-view"));
  } finally {
    await page.emulateMedia({ colorScheme: "light" });
  }
});

test("a model without graph breaks has no graph-breaks stage", async () => {
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("simplenet"));
  assert.ok(!(await pills()).includes("图中断"));
  assert.equal(await page.locator(".stage-pill").count(), 8);
  const stages = [];
  for (let i = 0; i < 20; i++) {
    stages.push(await page.getByTestId("stage-title").getAttribute("data-stage"));
    if (await page.getByTestId("step-next").isDisabled()) break;
    await page.getByTestId("step-next").click();
  }
  assert.ok(!stages.includes("breaks"), `${stages}`);
  assert.equal(await page.locator(".code-editor .cm-lintRange-warning").count(), 0);
});

test("a custom model whose branch goes the other way says so", async () => {
  const source = [
    "import torch",
    "",
    "",
    "def f(x):",
    "    y = x.relu() * -1",
    "    if y.sum() > 0:",
    "        return y + 1",
    "    return y - 1",
    "",
  ].join("\n");
  await compileSource(page, source, "x=4,8");
  assert.equal(await shownError(page), null);
  await openBreaks("图中断");
  const view = page.getByTestId("breaks-view");
  const ids = await view.locator(".graph-card").evaluateAll((cards) => cards.map((card) => card.dataset.id));
  assert.deepEqual(ids, ["0/0", "1/0"]);
  assert.match(await view.innerText(), /\[1\/0\] torch_dynamo_resume_in_f_at_6/);
  assert.match(await view.locator(".break-card").innerText(), /没有走进 if 分支/);
  await afterCompile(page, () => page.getByTestId("preset-select").selectOption("simplenet"));
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
