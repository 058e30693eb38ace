// End-to-end tests of fidelity and robustness on the page: the symbol-names choice
// (PyTorch 2.8+'s hashed names, `s77` for `L['x'].size()[0]`, in the step-through and the
// cache lab's entries, the kernels keeping Tailor's numbers, `s0` back again, the choice kept
// in the share link), and an input too large for the runtimes, which is an error in place
// that leaves the page working, also after a reload at the run step. Screenshots go to
// test-results/.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { afterCompile, openPage, runLab, selectMode, shot } from "./page-helpers.mjs";

const SYMBOLS = 1;
const WGSL = 6;
const RUN = 7;

let session;
let page;

before(async () => {
  session = await openPage();
  page = session.page;
});

after(async () => {
  await session?.close();
});

const stageText = async (index) => {
  await page.locator(".stage-pill").nth(index).click();
  return page.locator("#steps").textContent();
};

test("PyTorch's symbol names are a choice: s77 up to the guards and in the lab, the kernels keep s0", async () => {
  await selectMode(page, "true");
  assert.match(await stageText(SYMBOLS), /\bs0\b/);
  await afterCompile(page, () => page.getByTestId("symbol-names").selectOption("pytorch"));
  const symbols = await stageText(SYMBOLS);
  assert.equal(await page.getByTestId("stage-title").getAttribute("data-stage"), "symbols");
  assert.match(symbols, /\bs77\b/);
  assert.match(symbols, /s77 is s0/, "the stage says which number the kernels use");
  await shot(page, "50-symbol-names-pytorch", page.locator("#steps"));
  assert.match(await stageText(WGSL), /dims\.s0\b/, "kernels keep Tailor's numbers");
  assert.match(page.url(), /names=pytorch/, "the share link keeps the choice");

  await runLab(page, "x=8,64 x=16,64");
  const entries = await page.getByTestId("cache-entries").textContent();
  assert.match(entries, /\bs77\b/);
  assert.doesNotMatch(entries, /\bs0\b/);

  await afterCompile(page, () => page.getByTestId("symbol-names").selectOption("tailor"));
  const numbered = await stageText(SYMBOLS);
  assert.match(numbered, /\bs0\b/);
  assert.doesNotMatch(numbered, /\bs77\b/);
  assert.doesNotMatch(page.url(), /names=/);
});

test("an input past the page's memory budget (1 GiB) is an error at the run step, and the page keeps working", async () => {
  await page.getByTestId("input-shapes").fill("x=5000000,64");
  await afterCompile(page, () => page.getByTestId("compile-button").click());
  await page.locator(".stage-pill").nth(RUN).click();
  const result = page.getByTestId("run-result");
  await page.waitForSelector('[data-testid="run-result"]:is([data-state="done"], [data-state="error"])', { timeout: 120_000 });
  assert.equal(await result.getAttribute("data-state"), "error");
  assert.match(await result.textContent(), /输入 'x' 将有 320000000 个元素/);
  await shot(page, "51-input-too-large", page.locator("#steps"));

  assert.match(page.url(), /step=/, "the link keeps the run step");
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 60_000 });
  await page.waitForSelector('[data-testid="run-result"]:is([data-state="done"], [data-state="error"])', { timeout: 120_000 });
  assert.equal(await page.getByTestId("run-result").getAttribute("data-state"), "error");

  await page.getByTestId("input-shapes").fill("x=8,64");
  await afterCompile(page, () => page.getByTestId("compile-button").click());
  await page.locator(".stage-pill").nth(RUN).click();
  await page.waitForSelector('[data-testid="run-result"][data-state="done"]', { timeout: 120_000 });
  // In the lab the call is refused before the cache sees it, as a bad input is: the run stops
  // there with the message, and the next run works.
  await page.getByTestId("cache-sequence").fill("x=8,64 x=5000000,64");
  await page.getByTestId("cache-run").click();
  await page.waitForFunction(() => /将有 320000000 个元素/.test(document.getElementById("lab-status").textContent));
  assert.deepEqual(await runLab(page, "x=8,64 x=16,64"), ["compile", "hit"]);
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
