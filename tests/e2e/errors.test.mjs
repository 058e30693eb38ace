// End-to-end tests of every kind of error the page reports: syntax, unsupported function,
// an endless loop (the step budget), undefined name, shape mismatch, malformed and unknown
// input shapes, mark_dynamic ranges and constraint violations, lab errors, a script's error, user text that looks like markup, and a Rust panic
// (the page shows it in place, restarts the module and keeps working).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { afterCompile, compileSource, editorText, openPage, runLab, setEditorText, shot, shownError } from "./page-helpers.mjs";

let session;
let page;
let simplenet;

before(async () => {
  session = await openPage();
  page = session.page;
  simplenet = await editorText(page);
});

after(async () => {
  await session?.close();
});

/** Compiles `source` at `shapes` and resolves to `{ kind, text }` of the shown error. */
async function errorFor(source, shapes = "x=8,64") {
  await compileSource(page, source, shapes);
  const text = await shownError(page);
  assert.notEqual(text, null, "an error is shown");
  return { kind: await page.getByTestId("error-message").getAttribute("data-kind"), text };
}

test("a syntax error names its line and marks it in the source", async () => {
  const { kind, text } = await errorFor(simplenet.replace("def forward(self, x):", "def forward(self x):"));
  assert.equal(kind, "syntax");
  assert.match(text, /第 17 行/);
  assert.match(await page.locator(".error-snippet").textContent(), /17 \|     def forward\(self x\):\n\s+\^/);
  assert.equal(await page.locator("#source-view li.error-line").getAttribute("data-line"), "17");
  assert.equal(await page.getByTestId("stage-title").textContent(), "", "no stale stage");
  await shot(page, "20-error-syntax", page.locator(".workbench"));
});

test("an unsupported function is named as not in the subset", async () => {
  const source = "import torch\n\n\ndef f(x):\n    return torch.nonzero(x)\n";
  // Errors found while tracing forward come from the cache's compile, so their kind is
  // `compile`; the message names the construct and the line.
  const { text } = await errorFor(source, "x=8");
  assert.match(text, /Tailor 不支持 torch\.nonzero（it is not in Tailor's PyTorch subset）/);
  assert.match(text, /第 5 行/);
});

test("an endless loop is stopped by the step budget and the page keeps working", async () => {
  const source = "import torch\n\n\ndef f(x):\n    while x.shape[0] > 1:\n        pass\n    return x\n";
  const started = Date.now();
  const { text } = await errorFor(source, "x=8");
  const elapsed = Date.now() - started;
  assert.match(text, /200000/);
  assert.match(text, /第 5 行/);
  console.log(`# endless loop stopped after ${elapsed} ms (200000 lines)`);
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await shownError(page), null, "the next compile works");
});

test("the editor's file runs as a script, and a script's error names its line", async () => {
  const script = `${simplenet}
model = torch.compile(SimpleNet(), dynamic=True)
for n in [2, 3, 5]:
    print(tuple(model(torch.randn(n, 64)).shape))
undefined_name
`;
  await setEditorText(page, script);
  await page.locator("#editor-script").click();
  await page.waitForSelector("#editor-script-result .script-summary", { timeout: 60_000 });
  const output = await page.locator("#editor-script-result .script-output").textContent();
  assert.equal(output, "(2, 64)\n(3, 64)\n(5, 64)\n");
  assert.equal(await page.locator("#editor-script-result .script-summary").getAttribute("data-entries"), "1");
  const error = await page.locator("#editor-script-result .error-text").textContent();
  assert.match(error, /undefined_name/);
  const line = script.split("\n").indexOf("undefined_name") + 1;
  assert.match(error, new RegExp(`第 ${line} 行，第 1 列`));
  await setEditorText(page, simplenet);
});

test("an undefined name is reported at its use", async () => {
  const { text } = await errorFor(simplenet.replace("return self.layers(x)", "return self.layers(y)"));
  assert.match(text, /名字 'y' 没有定义/);
  assert.match(text, /第 18 行/);
});

test("a shape mismatch names the op and both shapes", async () => {
  const { text } = await errorFor(simplenet, "x=8,65");
  assert.match(text, /in_features is 64/);
  assert.match(text, /第 18 行/);
});

test("malformed and unknown input shapes are input errors", async () => {
  let error = await errorFor(simplenet, "x=8,a");
  assert.equal(error.kind, "input");
  assert.match(error.text, /'a' 不是尺寸/);
  error = await errorFor(simplenet, "y=8,64");
  assert.equal(error.kind, "input");
  assert.match(error.text, /没有名为 'y' 的输入/);
});

test("mark_dynamic: a size outside min/max, and a dim the model specialises", async () => {
  await compileSource(page, simplenet, "x=8,64");
  const row = page.locator('.mark-row[data-input="x"][data-dim="0"]');
  await afterCompile(page, () => row.locator(".mark-kind").selectOption("dynamic"));
  assert.equal(await shownError(page), null, "mark_dynamic(x, 0) alone compiles");
  await afterCompile(page, async () => {
    await row.locator(".mark-max").fill("4");
    await row.locator(".mark-max").press("Tab");
  });
  let text = await shownError(page);
  assert.match(text, /8 not in range \[0, 4\]/);
  await afterCompile(page, () => row.locator(".mark-kind").selectOption("default"));
  assert.equal(await shownError(page), null);

  const feature = page.locator('.mark-row[data-input="x"][data-dim="1"]');
  await afterCompile(page, () => feature.locator(".mark-kind").selectOption("dynamic"));
  text = await shownError(page);
  assert.match(text, /ConstraintViolationError/);
  assert.match(text, /specialized it to be a constant \(64\)/);
  await shot(page, "21-error-constraint", page.locator(".workbench"));
  await afterCompile(page, () => feature.locator(".mark-kind").selectOption("default"));
  assert.equal(await shownError(page), null);
});

test("the lab rejects a malformed call and records a call that fails to compile", async () => {
  await page.getByTestId("cache-sequence").fill("x=8,64 oops");
  await page.getByTestId("cache-run").click();
  await page.waitForFunction(() => /oops/.test(document.getElementById("lab-status").textContent));
  const actions = await runLab(page, "x=8,64 x=8,65 x=16,64");
  assert.deepEqual(actions, ["compile", "error", "compile"]);
  assert.match(await page.locator('[data-testid="cache-events"] > li[data-action="error"]').textContent(), /in_features is 64/);
});

test("text that looks like markup stays text", async () => {
  const xss = "<img src=x onerror=alert(1)>";
  // The shape grammar splits at "=", so the input name is a tag without one.
  const name = "<script>alert(1)</script>";
  const { text } = await errorFor(simplenet, `${name}=8,64`);
  assert.ok(text.includes(`没有名为 '${name}' 的输入`), "the input name is shown verbatim");
  const source = `import torch\n\n\ndef f(x):\n    s = "${xss}"\n    return x + s\n`;
  await errorFor(source, "x=8");
  await compileSource(page, source.replace("return x + s", "return x + 1"), "x=8");
  assert.equal(await shownError(page), null);
  assert.ok((await page.locator("#source-view").textContent()).includes(xss));
  for (const stage of [5, 6, 7]) await page.locator(".stage-pill").nth(stage).click();
  await page.waitForSelector('[data-testid="run-result"]:is([data-state="done"], [data-state="error"])', { timeout: 120_000 });
  await page.getByTestId("cache-sequence").fill(`x=8 ${name}=3`);
  await page.getByTestId("cache-run").click();
  await page.waitForFunction(() => /没有名为/.test(document.getElementById("lab-status").textContent));
  assert.equal(await page.locator("body img, body script").count(), 0, "no <img> or <script> was created");
  assert.deepEqual(session.dialogs, [], "no script ran");
});

test("a panic shows in place, the module restarts and the page keeps working", async () => {
  await compileSource(page, simplenet, "x=8,64");
  await afterCompile(page, () => page.evaluate(() => window.tailorPage.run((ctx) => ctx.model.debugPanic())));
  assert.equal(await page.getByTestId("error-message").getAttribute("data-kind"), "panic");
  assert.match(await page.getByTestId("error-message").textContent(), /panicked at .*debugPanic: a deliberate panic/s);
  await shot(page, "22-panic", page.locator(".workbench"));
  const actions = await runLab(page, "x=8,64 x=16,64 x=32,64");
  assert.deepEqual(actions, ["compile", "compile", "hit"]);
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await shownError(page), null);
});

test("a size past 2^53 is an error or a view, never a panic that restarts the page", async () => {
  // It once panicked converting the view (a JS number cannot hold 2^62) and the page then
  // recompiled the same input after every restart, for ever.
  await compileSource(page, simplenet, "x=4611686018427387904,64");
  const kind = await page.getByTestId("error-message").getAttribute("data-kind");
  assert.notEqual(kind, "panic", await shownError(page));
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await shownError(page), null);
});

test("a link whose model does not decode says so and keeps the link as it came", async () => {
  const other = await openPage({ hash: "#src=%%%not-base64%%%&shapes=x%3D8%2C64&mode=auto" });
  try {
    assert.equal(await other.page.getByTestId("error-message").getAttribute("data-kind"), "argument");
    assert.match(await other.page.getByTestId("error-message").textContent(), /base64url/);
    assert.match(other.page.url(), /src=%25%25%25not-base64%25%25%25|src=%%%not-base64%%%/, "the link is left as it came");
    assert.deepEqual(other.errors, []);
  } finally {
    await other.close();
  }
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});

test("a tensor's dtype is typed after its sizes: float ids are PyTorch's error, int64 ids compile and a new dtype recompiles", async () => {
  const source =
    "import torch\nimport torch.nn as nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.emb = nn.Embedding(16, 4)\n\n    def forward(self, idx):\n        return self.emb(idx) * (idx > 3).unsqueeze(-1)\n";
  const { text } = await errorFor(source, "idx=2,8");
  assert.match(text, /Expected tensor for argument #1 'indices'.*torch\.FloatTensor/s);
  assert.match(text, /第 11 行/);
  await compileSource(page, source, "idx=2,8:int64");
  assert.equal(await shownError(page), null, "int64 ids compile");
  const guards = await page.evaluate(() => {
    const compilation = window.tailorPage.model.trace("idx=2,8:int64");
    const sources = compilation.view.guards.map((guard) => guard.source);
    compilation.free();
    return sources;
  });
  assert.ok(guards.some((g) => g.startsWith("TENSOR_MATCH: check_tensor(L['idx'], Tensor, torch.int64")), guards.join("\n"));
  await compileSource(page, "import torch\n\n\ndef f(x):\n    return x * 2 + 1\n", "x=8:int64");
  const actions = await runLab(page, "x=8:int64 x=8:bool");
  assert.deepEqual(actions, ["compile", "compile"]);
  assert.match(await page.getByTestId("cache-events").textContent(), /tensor 'x' dtype mismatch\. expected Long, actual Bool/);
  await compileSource(page, simplenet, "x=8,64");
});
