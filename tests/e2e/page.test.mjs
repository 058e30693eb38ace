// End-to-end test of the built page (dist/, from `trunk build --release`): the page loads the
// compiler, compiles SimpleNet on load, and reports a broken model as an error that names
// the line. Screenshots go to test-results/ (git-ignored) for people to look at.
//
// Run: `node --test tests/e2e/` (scripts/test.sh builds dist/ first).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DIST_DIR, RESULTS_DIR, launchChromium, serveStatic } from "./harness.mjs";

const LOAD_TIMEOUT_MS = 60_000;

let server;
let browser;
let page;
const pageErrors = [];
const consoleErrors = [];

before(async () => {
  assert.ok(existsSync(join(DIST_DIR, "index.html")), "dist/index.html missing: run trunk build --release");
  await mkdir(RESULTS_DIR, { recursive: true });
  server = await serveStatic(DIST_DIR);
  browser = await launchChromium();
  page = browser.context.pages()[0] ?? (await browser.context.newPage());
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Text of the error box if it is shown, else `null`. */
async function shownError() {
  const errorBox = page.getByTestId("error-message");
  return (await errorBox.isVisible()) ? await errorBox.textContent() : null;
}

test("on load, the page compiles SimpleNet at x=8,64 and shows its trace", { timeout: LOAD_TIMEOUT_MS + 30_000 }, async (t) => {
  await page.goto(server.url);
  await page.waitForFunction(
    () =>
      document.querySelector('[data-testid="trace-view"]').textContent.trim() !== "" ||
      !document.querySelector('[data-testid="error-message"]').hidden,
    null,
    { timeout: LOAD_TIMEOUT_MS },
  );
  await page.screenshot({ path: join(RESULTS_DIR, "01-loaded.png"), fullPage: true });

  for (const message of consoleErrors) t.diagnostic(`console.error: ${message}`);
  assert.deepEqual(pageErrors, [], "uncaught errors on the page");
  assert.match(await page.getByTestId("model-editor").inputValue(), /class SimpleNet\(nn\.Module\)/);
  assert.equal(await page.getByTestId("input-shapes").inputValue(), "x=8,64");
  assert.equal(await page.getByTestId("mode-select").inputValue(), "auto");

  const error = await shownError();
  assert.equal(error, null, `the page shows an error instead of a trace: ${error}`);
  assert.match(await page.getByTestId("trace-view").textContent(), /SimpleNet/);
});

test("a syntax error in the model is shown as an error that names the line", async () => {
  const compileButton = page.getByTestId("compile-button");
  assert.ok(await compileButton.isEnabled(), "the compile button is disabled (the compiler did not load)");
  const editor = page.getByTestId("model-editor");
  const source = await editor.inputValue();
  const broken = source.replace("def forward(self, x):", "def forward(self x):");
  assert.notEqual(broken, source, "the SimpleNet source has no `def forward(self, x):` line to break");

  await editor.fill(broken);
  await compileButton.click();
  const errorBox = page.getByTestId("error-message");
  await errorBox.waitFor({ state: "visible", timeout: 10_000 });
  await page.screenshot({ path: join(RESULTS_DIR, "02-syntax-error.png"), fullPage: true });

  assert.match(await errorBox.textContent(), /line/i);
  assert.equal(await page.getByTestId("trace-view").textContent(), "", "a stale trace is still shown");
});

test("the page fits a 375 px wide screen without horizontal scrolling", async () => {
  await page.setViewportSize({ width: 375, height: 812 });
  await page.screenshot({ path: join(RESULTS_DIR, "03-narrow-375px.png"), fullPage: true });
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scrollWidth <= 375, `page is ${scrollWidth} px wide at a 375 px viewport`);
});
