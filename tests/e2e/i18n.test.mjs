// End-to-end test of "one language at a time": in Chinese (the default) a compile's guard
// provenance, a syntax error, a shape error and the lab's status are Chinese; switching to
// English says them again in English, in place; and no string the page asked for was
// missing from i18n.js (its console error is collected as a page error).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { compileSource, editorText, openPage, selectMode, shot, shownError } from "./page-helpers.mjs";

const GUARDS_STAGE = 4;
/** Words of the English provenance texts that must not show in Chinese mode. */
const ENGLISH_PROVENANCE = /duck sizing|specialization|while tracing|on sizes|every static size|contiguous input/;
const ADD_XY = "import torch\n\n\ndef f(x, y):\n    return x + y\n";

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

/** Switches the page's language with its button. */
async function switchTo(lang) {
  await page.getByTestId("lang-toggle").click();
  await page.waitForFunction((lang) => document.documentElement.dataset.lang === lang, lang);
}

/** The "来源" / "from" texts of the guards on show. */
async function provenances() {
  return page.$$eval('[data-testid="guards-view"] .provenance', (spans) => spans.map((s) => s.textContent));
}

test("the guards' provenance is Chinese, and English after the switch", async () => {
  await selectMode(page, "true");
  await compileSource(page, ADD_XY, "x=8,4;y=8,4");
  await page.locator(".stage-pill").nth(GUARDS_STAGE).click();
  let texts = await provenances();
  assert.ok(texts.length > 0, "guards are shown");
  const english = texts.filter((text) => ENGLISH_PROVENANCE.test(text));
  assert.deepEqual(english, [], "no English provenance in Chinese mode");
  assert.ok(texts.some((text) => text.includes("鸭子定型")), texts.join("\n"));
  assert.ok(texts.some((text) => text.startsWith("TENSOR_MATCH：")), texts.join("\n"));
  const symbolic = await page.$$eval('[data-testid="guards-view"] .guard-meta code', (codes) => codes.map((c) => c.textContent));
  assert.ok(symbolic.includes("x 没有被标记为动态"), symbolic.join("\n"));
  assert.ok(symbolic.includes("x：2 维，尺寸 [*, *]"), symbolic.join("\n"));
  assert.deepEqual(symbolic.filter((text) => /is not marked|share memory|rank \d/.test(text)), []);
  await shot(page, "60-guards-zh", page.locator("#steps"));
  await switchTo("en");
  texts = await provenances();
  assert.ok(texts.some((text) => text.startsWith("duck sizing: L['y'].size()[0] had the same size as")), texts.join("\n"));
  assert.ok(texts.some((text) => text.startsWith("0/1 specialization")), texts.join("\n"));
  await switchTo("zh");
  assert.deepEqual((await provenances()).filter((text) => ENGLISH_PROVENANCE.test(text)), []);
  await selectMode(page, "auto");
});

test("a syntax error is Chinese, and English after the switch", async () => {
  await compileSource(page, simplenet.replace("def forward(self, x):", "def forward(self x):"), "x=8,64");
  let text = await shownError(page);
  assert.match(text, /语法错误（Python 解析器的原话）：/);
  assert.match(text, /第 17 行/);
  assert.doesNotMatch(text, /syntax error/);
  await switchTo("en");
  text = await shownError(page);
  assert.match(text, /Syntax error: syntax error: /);
  assert.match(text, /line 17/);
  await switchTo("zh");
  assert.match(await shownError(page), /语法错误（Python 解析器的原话）：/);
});

test("a shape error is Chinese, and English after the switch", async () => {
  await compileSource(page, simplenet, "x=8,65");
  let text = await shownError(page);
  assert.match(text, /形状错误|编译失败/);
  assert.match(text, /形状 \[8, 65\] 与 \[64, 64\] 不匹配|不匹配/);
  assert.doesNotMatch(text, /; shapes /);
  await shot(page, "61-shape-error-zh", page.locator(".workbench"));
  await switchTo("en");
  text = await shownError(page);
  assert.match(text, /; shapes \[8, 65\] and/);
  await switchTo("zh");
  await compileSource(page, simplenet, "x=8,64");
  assert.equal(await shownError(page), null);
});

test("the lab's status says a malformed call in the language on show", async () => {
  await page.getByTestId("cache-sequence").fill("x=8,64 x=8,a");
  await page.getByTestId("cache-run").click();
  await page.waitForFunction(() => /不是尺寸/.test(document.getElementById("lab-status").textContent));
  await switchTo("en");
  assert.match(await page.locator("#lab-status").textContent(), /'a' is not a size/);
  await switchTo("zh");
  assert.match(await page.locator("#lab-status").textContent(), /不是尺寸/);
});

/** The page's visible lines with Chinese characters in them, except the language button's
 * and its screen-reader hint's (bilingual on purpose: whoever cannot read the page finds it). */
async function chineseLines() {
  return page.evaluate(() => {
    const han = /[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]/;
    const own = ['[data-testid="lang-toggle"]', "#lang-hint"]
      .map((selector) => document.querySelector(selector)?.textContent.trim());
    return document.body.innerText
      .split("\n")
      .filter((line) => han.test(line) && !own.includes(line.trim()));
  });
}

test("in English no Chinese shows anywhere on the page, at every stage and after a lab run", { timeout: 120_000 }, async () => {
  await switchTo("en");
  try {
    await compileSource(page, simplenet, "x=8,64");
    const found = new Set();
    const pills = await page.locator(".stage-pill").count();
    for (let stage = 0; stage < pills; stage++) {
      await page.locator(".stage-pill").nth(stage).click();
      for (const line of await chineseLines()) found.add(`stage ${stage}: ${line}`);
    }
    await page.getByTestId("cache-sequence").fill("x=8,64 x=16,64 x=8,a");
    await page.getByTestId("cache-run").click();
    await page.waitForFunction(() => /'a' is not a size/.test(document.getElementById("lab-status").textContent));
    for (const line of await chineseLines()) found.add(`lab: ${line}`);
    assert.deepEqual([...found], []);
    await shot(page, "62-english-page-en");
  } finally {
    await switchTo("zh");
  }
});

test("every piece of prose in one language has its pair in the other", async () => {
  // index.html's prose and the scripts' bi() texts are <span lang> pairs that CSS shows one
  // of: a text without its pair would be missing in the other language.
  const { texts, unpaired } = await page.evaluate(() => {
    const other = { zh: "en", en: "zh" };
    const texts = [...document.querySelectorAll('body [lang="zh"], body [lang="en"]')]
      .filter((el) => el.dataset.testid !== "lang-toggle");
    return {
      texts: texts.length,
      unpaired: texts
        .filter((el) => ![...el.parentElement.children].some((sibling) => sibling.lang === other[el.lang]))
        .map((el) => `${el.lang}: ${el.textContent.trim().slice(0, 80)}`),
    };
  });
  assert.ok(texts > 200, `${texts} texts in one language`);
  assert.deepEqual(unpaired, []);
});

test("no string was missing from i18n.js and no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
});
