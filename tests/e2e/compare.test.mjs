// End-to-end test of a learner's own PyTorch trace beside Tailor's run (docs/compare.md):
// with the script in the editor, the trace PyTorch 2.15 wrote for it
// (tests/data/traces/conv_batches.log, by scripts/pytorch/record_traces.py) is picked, read
// in the page, and each [frame/compile] set beside Tailor's: the convolution's batch guard
// and PyTorch's third compile are shown as PyTorch's alone. A file that is not a trace is an
// error naming its line, and the page goes on.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./harness.mjs";
import { openPage, setEditorText, shot } from "./page-helpers.mjs";

const TRACES = join(REPO_ROOT, "tests", "data", "traces");

let session;
let page;

before(async () => {
  session = await openPage();
  page = session.page;
});

after(async () => {
  await session?.close();
});

test("a PyTorch trace is set beside Tailor's run of the editor's script", async () => {
  await setEditorText(page, await readFile(join(TRACES, "conv_batches.py"), "utf8"));
  await page.getByTestId("trace-file").setInputFiles(join(TRACES, "conv_batches.log"));
  const result = page.getByTestId("trace-result");
  await result.locator(".trace-summary").waitFor({ timeout: 120_000 });
  const states = await result.locator("tr[data-compile]").evaluateAll((rows) =>
    rows.map((row) => [row.dataset.compile, row.dataset.state]));
  assert.deepEqual(states, [["0/0", "both"], ["0/1", "differ"], ["0/2", "pytorchOnly"]]);
  assert.match(await result.locator(".only-pytorch").first().textContent(), /2 <= L\['x'\]\.size\(\)\[0\] <= 15/);
  assert.match(await result.locator(".trace-instead").textContent(), /\[0\/1\]/, "Tailor hit its second entry instead");
  await shot(page, "trace-compare", result);
});

test("a file that is not a trace is an error naming its line", async () => {
  const file = join(tmpdir(), `not-a-trace-${process.pid}.log`);
  await writeFile(file, "hello\n");
  await page.getByTestId("trace-file").setInputFiles(file);
  const alert = page.getByTestId("trace-result").getByRole("alert");
  await alert.waitFor({ timeout: 60_000 });
  assert.match(await alert.textContent(), /line 1/);
  assert.equal(await page.getByTestId("compile-button").isEnabled(), true, "the page goes on");
});
