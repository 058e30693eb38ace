// End-to-end tests of the model editor (js/editor.js, CodeMirror): Python highlighting, line
// numbers, its accessible name, Tab and Shift+Tab indent (Escape then Tab leaves), Ctrl+Enter
// compiles, a compile or script error is marked in the editor at its line:col (scrolled into
// view, gone after an edit), and it is read-only while the compiler loads; the reference
// panel beside it lists what Tailor captures; the learner's own model is kept in the browser
// (js/workspace.js). Screenshots of the editor in both languages, wide and narrow.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { afterCompile, compileSource, editorText, openPage, setEditorText, shot, shownError } from "./page-helpers.mjs";

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

/** Puts the cursor at the start of `line` (1-based) and focuses the editor. */
async function cursorAtLine(line) {
  await page.evaluate((line) => {
    const { view } = window.tailorPage.editor;
    view.dispatch({ selection: { anchor: view.state.doc.line(line).from } });
    view.focus();
  }, line);
}

/** The marked error range in the editor: its text and where it starts, `{ text, line, col }`
 * (1-based), and whether it is inside the editor's visible area; `null` when none is marked. */
function markedError() {
  return page.evaluate(() => {
    const root = document.querySelector('[data-testid="model-editor"]');
    const range = root.querySelector(".cm-lintRange-error");
    if (!range) return null;
    const { view } = window.tailorPage.editor;
    const from = view.posAtDOM(range);
    const line = view.state.doc.lineAt(from);
    const box = range.getBoundingClientRect();
    const scroller = root.querySelector(".cm-scroller").getBoundingClientRect();
    return {
      text: range.textContent,
      line: line.number,
      col: from - line.from + 1,
      visible: box.top >= scroller.top && box.bottom <= scroller.bottom,
      gutterMarks: root.querySelectorAll(".cm-gutter-lint .cm-lint-marker-error").length,
    };
  });
}

/** The `line`, `col` the error box names ("第 5 行，第 16 列"). */
async function shownWhere() {
  const [, line, col] = /(\d+)\D+(\d+)/.exec(await page.locator(".error-where").textContent());
  return { line: Number(line), col: Number(col) };
}

test("the editor is CodeMirror with Python highlighting, line numbers and a label", async () => {
  const editor = page.getByTestId("model-editor");
  assert.equal(await editor.locator(".cm-editor").count(), 1);
  const keywords = await editor.locator(".cm-content .tok-keyword").allTextContents();
  for (const keyword of ["import", "class", "def", "return"]) assert.ok(keywords.includes(keyword), `${keyword} is a keyword token`);
  const colours = await page.evaluate(() => {
    const content = document.querySelector('[data-testid="model-editor"] .cm-content');
    return [getComputedStyle(content).color, getComputedStyle(content.querySelector(".tok-keyword")).color];
  });
  assert.notEqual(colours[1], colours[0], "keywords have their own colour");
  const numbers = await editor.locator(".cm-lineNumbers .cm-gutterElement:visible").allTextContents();
  assert.deepEqual(numbers.slice(0, 5), ["1", "2", "3", "4", "5"]);
  const content = editor.locator(".cm-content");
  assert.equal(await content.getAttribute("aria-labelledby"), "model-editor-label");
  assert.equal(await content.getAttribute("contenteditable"), "true", "editable once loaded");
  assert.match(await page.locator("#model-editor-label").textContent(), /PyTorch 源代码/);
  await page.setViewportSize({ width: 1400, height: 900 });
  await shot(page, "40-editor-zh-1400px", page.locator(".editor-panel"));
  await page.getByTestId("lang-toggle").click();
  await shot(page, "41-editor-en-1400px", page.locator(".editor-panel"));
  await page.setViewportSize({ width: 375, height: 812 });
  await shot(page, "42-editor-en-375px", page.locator(".editor-panel"));
  await page.getByTestId("lang-toggle").click();
  await shot(page, "43-editor-zh-375px", page.locator(".editor-panel"));
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("Tab and Shift+Tab indent by four spaces; Escape then Tab leaves the editor", async () => {
  await setEditorText(page, "def f(x):\nreturn x\n");
  await cursorAtLine(2);
  await page.keyboard.press("Tab");
  assert.equal(await editorText(page), "def f(x):\n    return x\n");
  await page.keyboard.press("Shift+Tab");
  assert.equal(await editorText(page), "def f(x):\nreturn x\n");
  await page.keyboard.press("Escape");
  await page.keyboard.press("Tab");
  assert.equal(await editorText(page), "def f(x):\nreturn x\n", "the Tab after Escape moved the focus");
  assert.equal(await page.evaluate(() => Boolean(document.activeElement.closest(".cm-editor"))), false);
  await setEditorText(page, simplenet);
});

test("Ctrl+Enter compiles the editor's model", async () => {
  // An error only the edited source has shows that the compile read the editor.
  const source = simplenet.replace("return self.layers(x)", "return self.layers(z)");
  await setEditorText(page, source);
  assert.equal(await page.getByTestId("preset-select").inputValue(), "custom", "the edit is the user's");
  await cursorAtLine(3);
  await afterCompile(page, () => page.keyboard.press("Control+Enter"));
  assert.equal(await editorText(page), source, "no line was inserted");
  assert.match(await shownError(page), /名字 'z' 没有定义/);
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await page.getByTestId("preset-select").inputValue(), "simplenet");
});

test("a compile error is marked in the editor at its line:col, until the next edit", async () => {
  await compileSource(page, "import torch\n\n\ndef f(x):\n    return x + y\n", "x=8");
  assert.match(await shownError(page), /名字 'y' 没有定义/);
  const where = await shownWhere();
  const mark = await markedError();
  assert.deepEqual({ line: mark.line, col: mark.col }, where);
  assert.equal(mark.text, "y");
  assert.equal(mark.gutterMarks, 1, "a marker in the gutter");
  await shot(page, "44-editor-error-mark", page.locator(".editor-panel"));
  await page.locator('[data-testid="model-editor"] .cm-content').press("End");
  await page.keyboard.type("1");
  assert.equal(await markedError(), null, "an edit removes the mark");
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await markedError(), null);
});

test("an error far down the file is scrolled into view, and a good compile clears it", async () => {
  const padding = Array.from({ length: 60 }, (_, i) => `# line ${i + 1}`).join("\n");
  const source = `import torch\n\n${padding}\n\n\ndef g(x):\n    return torch.nonzero(x)\n`;
  await compileSource(page, source, "x=8");
  await page.waitForSelector('[data-testid="model-editor"] .cm-lintRange-error');
  const mark = await markedError();
  assert.equal(mark.line, source.split("\n").indexOf("    return torch.nonzero(x)") + 1);
  assert.equal(mark.line, (await shownWhere()).line);
  assert.ok(mark.visible, "the marked line is scrolled into the editor's view");
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await markedError(), null);
});

test("a script's error is marked in the editor too", async () => {
  const script = `${simplenet}\nprint(undefined_name)\n`;
  await setEditorText(page, script);
  await page.locator("#editor-script").click();
  await page.waitForSelector("#editor-script-result .error-text", { timeout: 60_000 });
  await page.waitForSelector('[data-testid="model-editor"] .cm-lintRange-error');
  const mark = await markedError();
  assert.equal(mark.line, script.split("\n").indexOf("print(undefined_name)") + 1);
  assert.equal(mark.text, "undefined_name");
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await markedError(), null);
});

test("the editor is read-only until the compiler has loaded", async () => {
  // Before the page's scripts: note the editor's state when it first appears.
  const other = await openPage({
    init: () => {
      new MutationObserver((_, observer) => {
        const content = document.querySelector('[data-testid="model-editor"] .cm-content');
        if (!content) return;
        window.firstEditable = content.getAttribute("contenteditable");
        observer.disconnect();
      }).observe(document, { childList: true, subtree: true });
    },
  });
  try {
    assert.equal(await other.page.evaluate(() => window.firstEditable), "false");
    assert.equal(await other.page.locator('[data-testid="model-editor"] .cm-content').getAttribute("contenteditable"), "true");
    assert.deepEqual(other.errors, []);
  } finally {
    await other.close();
  }
});

test("the reference panel lists what the package captures, and a misspelt name's error suggests the supported one", async () => {
  const panel = page.getByTestId("supported-panel");
  await panel.locator("summary").click();
  await panel.locator(".supported-group").first().waitFor();
  const listed = await panel.locator(".supported-list li").allTextContents();
  for (const name of ["nn.Conv2d", "nn.MultiheadAttention", "nn.LSTM", "nn.Transformer", "F.scaled_dot_product_attention", "torch.where", "x.masked_fill", "x @ y"]) {
    assert.ok(listed.includes(name), `${name} is listed`);
  }
  assert.ok(!listed.includes("nn.ConvTranspose3d"), "what the package lacks is not listed");
  await panel.getByTestId("supported-filter").fill("softmax");
  const shown = await panel.locator(".supported-list li:not([hidden])").allTextContents();
  assert.ok(shown.length >= 3 && shown.every((name) => name.toLowerCase().includes("softmax")), shown.join(", "));
  // The op table under the lists: the softmax rows stay, each with its lowering.
  const rows = panel.getByTestId("supported-ops").locator("tbody tr:not([hidden])");
  const ops = await rows.locator("td:first-child").allTextContents();
  assert.deepEqual(ops, ["softmax(Tensor input, int[]? dim)", "log_softmax(Tensor input, int[]? dim)"]);
  assert.match(await rows.first().textContent(), /row reduction[\s\S]*graph::softmax_row/);
  await panel.getByTestId("supported-filter").fill("torch.relu");
  assert.deepEqual(await rows.locator("td:first-child").allTextContents(), ["relu(Tensor input)"]);
  await panel.getByTestId("supported-filter").fill("softmax");
  await shot(page, "46-supported-panel", panel);
  await shot(page, "46-supported-op-table", panel.getByTestId("supported-ops"));
  await compileSource(page, "import torch\n\n\ndef f(x):\n    return x.sigmod()\n", "x=8");
  assert.match(await shownError(page), /Tensor\.sigmod[\s\S]*did you mean x\.sigmoid\?/);
  await panel.locator("summary").click();
  await compileSource(page, simplenet, "x=8,64");
});

test("the learner's own model is kept: a preset then Custom brings it back, and so does a bare link", async () => {
  const own = `${simplenet}\n# my own copy\n`;
  await setEditorText(page, own);
  await page.getByTestId("input-shapes").fill("x=4,64");
  await page.waitForFunction((own) => JSON.parse(localStorage.getItem("tailor-workspace") ?? "null")?.source === own, own);
  const select = page.getByTestId("preset-select");
  assert.equal(await select.inputValue(), "custom");
  const other = await select.locator("option").nth(1).getAttribute("value");
  await afterCompile(page, () => select.selectOption(other));
  assert.notEqual(await editorText(page), own);
  await afterCompile(page, () => select.selectOption("custom"));
  assert.equal(await editorText(page), own, "Custom brings the paste back");
  assert.equal(await page.getByTestId("input-shapes").inputValue(), "x=4,64");

  const bare = page.url().split("#")[0];
  await page.goto(bare);
  await page.waitForSelector("body[data-ready=true]");
  assert.equal(await editorText(page), own, "a bare link opens the saved model");
  assert.match(await page.locator("#status").textContent(), /编译完成/);

  // A compile of it that never ended (the tab froze): the next visit shows it uncompiled.
  await page.evaluate(async (own) => {
    const { noteCompiling } = await import("./js/workspace.js");
    noteCompiling(localStorage, own);
  }, own);
  await page.goto(bare);
  await page.waitForSelector("body[data-ready=true]");
  assert.equal(await editorText(page), own);
  assert.match(await page.locator("#status").textContent(), /没有自动编译/);
  await afterCompile(page, () => page.getByTestId("compile-button").click());
  assert.match(await page.locator("#status").textContent(), /编译完成/);

  await afterCompile(page, () => select.selectOption("simplenet"));
  assert.equal(await editorText(page), simplenet);
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
