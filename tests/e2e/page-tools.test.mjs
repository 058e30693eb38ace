// End-to-end tests of the step-through's tools: the copy buttons of the WGSL, guards and trace
// views put exactly the shown text on the clipboard (and say so when the clipboard is missing
// or refuses, without an uncaught error); the trace export downloads what `tailor explain
// --json` prints (tests/it/cli.rs checks the CLI's side); the dark theme follows
// prefers-color-scheme, and every text of every stage stays readable in it.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { DEMO_SEQUENCE, lowContrast, openPage, runLab, shot } from "./page-helpers.mjs";

const STAGES = ["program", "symbols", "graph", "shapes", "guards", "fusion", "wgsl", "run"];
const GUARDS = STAGES.indexOf("guards");
const WGSL = STAGES.indexOf("wgsl");

let session;
let page;

before(async () => {
  session = await openPage();
  page = session.page;
  const origin = new URL(page.url()).origin;
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin });
});

after(async () => {
  await session?.close();
});

const pill = (index) => page.locator(".stage-pill").nth(index).click();
const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

/** Clicks the first copy button `testId`; resolves to its bar's new state and status text. */
async function copy(testId) {
  const button = page.getByTestId(testId).first();
  const bar = button.locator("xpath=..");
  await bar.evaluate((bar) => delete bar.dataset.state);
  await button.click();
  await bar.and(page.locator("[data-state]")).waitFor();
  return { state: await bar.getAttribute("data-state"), status: await bar.locator(".copy-status").innerText() };
}

/** Empties the clipboard, so a copy that did nothing cannot pass. */
const clearClipboard = () => page.evaluate(() => navigator.clipboard.writeText(""));

test("the guards' copy button copies one guard a line, as the view shows them", async () => {
  await pill(GUARDS);
  const shown = await page.locator('[data-testid="guards-view"] .guard-source').allTextContents();
  assert.ok(shown.length >= 2, `SimpleNet has guards: ${shown}`);
  await clearClipboard();
  const { state, status } = await copy("copy-guards");
  assert.equal(state, "copied");
  assert.equal(status, "已复制");
  assert.equal(await clipboard(), shown.join("\n"));
  assert.match(await clipboard(), /^TENSOR_MATCH: check_tensor\(L\['x'\]/);
});

test("the trace view's copy button copies this step's text", async () => {
  await page.locator("#trace-details > summary").click();
  const shown = await page.getByTestId("trace-view").textContent();
  assert.match(shown, /TENSOR_MATCH/, "the guards stage's text");
  await clearClipboard();
  const { state } = await copy("copy-trace");
  assert.equal(state, "copied");
  assert.equal(await clipboard(), shown);
  await shot(page, "80-copy-guards", page.locator("#steps"));
});

test("each WGSL kernel's copy button copies its source, in the mode shown", async () => {
  await pill(WGSL);
  const sources = await page.locator(".wgsl-source").allTextContents();
  assert.equal(await page.getByTestId("copy-wgsl").count(), sources.length, "one button per kernel");
  await page.getByTestId("lang-toggle").click();
  await clearClipboard();
  const { state, status } = await copy("copy-wgsl");
  assert.equal(state, "copied");
  assert.equal(status, "Copied");
  assert.equal(await clipboard(), sources[0]);
  assert.match(sources[0], /@compute/);
  const named = await page.getByTestId("copy-wgsl").first().innerText();
  assert.match(named, /^Copy/);
  await page.getByTestId("lang-toggle").click();
});

test("the export downloads the trace as tailor explain --json prints it", async () => {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("trace-export").click()]);
  assert.equal(download.suggestedFilename(), "tailor-trace.json");
  const text = await readFile(await download.path(), "utf8");
  const trace = JSON.parse(text);
  // tests/it/cli.rs (explain_json_is_the_library_trace) holds the CLI to the same keys.
  assert.deepEqual(Object.keys(trace), ["stages"]);
  assert.ok(trace.stages.every((stage) => Object.keys(stage).join() === "id,title,text"));
  const expected = await page.evaluate((shapes) => {
    const c = window.tailorPage.model.trace(shapes);
    try {
      return { json: c.traceJson(), text: c.traceText(), ids: c.view.stages.map((stage) => stage.id) };
    } finally {
      c.free();
    }
  }, await page.getByTestId("input-shapes").inputValue());
  assert.equal(text, expected.json, "the same bytes as Compilation.traceJson");
  assert.deepEqual(trace.stages.map((stage) => stage.id), expected.ids);
  const printed = trace.stages.map(({ title, text }) => `== ${title} ==\n${text}${text.endsWith("\n") ? "" : "\n"}`).join("");
  assert.equal(printed, expected.text, "the JSON holds the text tailor explain prints");
  assert.match(await page.locator("#trace-export-status").innerText(), /tailor-trace\.json/);
});

/** Relative luminance of a computed `rgb(…)` colour (WCAG 2). */
function luminance(colour) {
  const [r, g, b] = colour.match(/[\d.]+/g).slice(0, 3).map(Number).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

test("the dark theme follows prefers-color-scheme, and every stage stays readable", async () => {
  await page.emulateMedia({ colorScheme: "dark" });
  const colours = await page.evaluate(() => ({
    bg: getComputedStyle(document.body).backgroundColor,
    text: getComputedStyle(document.body).color,
  }));
  assert.ok(luminance(colours.bg) < 0.05, `a dark background: ${colours.bg}`);
  assert.ok(luminance(colours.text) > 0.6, `light text: ${colours.text}`);
  for (const [index, stage] of STAGES.entries()) {
    await pill(index);
    if (stage === "run") {
      await page.waitForSelector('[data-testid="run-result"]:is([data-state="done"], [data-state="error"])', { timeout: 120_000 });
    }
    assert.deepEqual(await lowContrast(page, "#demo"), [], `dark ${stage} stage`);
    if (["graph", "guards", "fusion", "wgsl"].includes(stage)) await shot(page, `81-dark-${stage}`, page.locator("#steps"));
  }
  await runLab(page, DEMO_SEQUENCE);
  await shot(page, "82-dark-lab", page.locator("#lab"));
  // Answered questions show their feedback (verdicts, the material's differing answers).
  for (const qid of ["q1", "q2", "q3"]) {
    const form = page.locator(`[data-testid="quiz-question"][data-qid="${qid}"]`);
    await form.getByTestId("quiz-option").first().check();
    await form.getByTestId("quiz-submit").click();
    await form.getByTestId("quiz-feedback").waitFor();
  }
  await shot(page, "83-dark-quiz", page.locator("#interview .quiz-list > *").first());
  for (const part of [".page-header", "main"]) assert.deepEqual(await lowContrast(page, part), [], `dark ${part}`);
  await page.emulateMedia({ colorScheme: "light" });
  assert.ok(luminance(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)) > 0.8, "light again");
});

test("without the clipboard API, or when it refuses, a copy button says so and selects the text", async () => {
  await pill(GUARDS);
  await page.evaluate(() => {
    navigator.clipboard.writeText = () => Promise.reject(new DOMException("refused", "NotAllowedError"));
  });
  let { state, status } = await copy("copy-guards");
  assert.equal(state, "failed");
  assert.match(status, /剪贴板拒绝了写入/);
  const selected = await page.evaluate(() => window.getSelection().toString());
  assert.match(selected, /TENSOR_MATCH/, "the guards are selected for Ctrl+C");

  await page.evaluate(() => {
    Object.defineProperty(Navigator.prototype, "clipboard", { get: () => undefined, configurable: true });
  });
  await pill(WGSL);
  ({ state, status } = await copy("copy-wgsl"));
  assert.equal(state, "failed");
  assert.match(status, /不让页面写剪贴板/);
  assert.deepEqual(session.errors, [], "no uncaught error");
  assert.deepEqual(session.dialogs, []);
});
