// www/js/i18n.js: both languages have the same keys, lookups fill in arguments, and a missing
// key or message falls back to something readable.

import { afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { TEXT, both, callError, errorText, language, message, setLanguage, t } from "../../www/js/i18n.js";

afterEach(() => setLanguage("zh"));

test("the two tables have the same keys, each a text in both or a function of as many arguments", () => {
  assert.deepEqual(Object.keys(TEXT).sort(), ["en", "zh"]);
  assert.deepEqual(Object.keys(TEXT.en).sort(), Object.keys(TEXT.zh).sort());
  for (const [key, zh] of Object.entries(TEXT.zh)) {
    const en = TEXT.en[key];
    assert.equal(typeof en, typeof zh, key);
    if (typeof zh === "function") assert.equal(en.length, zh.length, key);
    else assert.equal(typeof zh, "string", key);
  }
});

test("t answers in Chinese by default and in English after the switch", () => {
  assert.equal(language(), "zh");
  assert.equal(t("toggle.label"), "English");
  assert.equal(t("status.compiled", "3.0 ms"), "编译完成（3.0 ms）。用“下一步”或 → 键逐步查看。");
  setLanguage("en");
  assert.equal(language(), "en");
  assert.equal(t("toggle.label"), "中文");
  assert.equal(t("status.compiled", "3.0 ms"), "Compiled (3.0 ms). Step through with Next or the → key.");
  assert.equal(t("page.title"), "Tailor — a lab for torch.compile's dynamic shapes");
});

test("any language but English is Chinese", () => {
  setLanguage("en");
  setLanguage("fr");
  assert.equal(language(), "zh");
  assert.equal(t("toggle.label"), "English");
});

test("English counts take the singular for one", () => {
  setLanguage("en");
  assert.equal(t("lab.done", 1, 1, 0, 0, 1), "1 call: 1 compile, 0 hits, 0 eager, 1 error.");
  assert.equal(t("lab.done", 3, 2, 1, 0, 0), "3 calls: 2 compiles, 1 hit, 0 eager, 0 errors.");
});

test("a missing key shows as the key and its arguments, and says so on the console", (context) => {
  const logged = context.mock.method(console, "error", () => {});
  assert.equal(t("no.such.key", 1, "x"), "no.such.key 1 x");
  assert.deepEqual(logged.mock.calls.map((c) => c.arguments), [["i18n: missing key no.such.key (zh)"]]);
  assert.deepEqual(both("no.such.key"), { zh: "no.such.key", en: "no.such.key" });
  assert.equal(logged.mock.callCount(), 3);
});

test("both gives each language, and picks each language from { zh, en } arguments", () => {
  assert.deepEqual(both("toggle.label"), { zh: "English", en: "中文" });
  assert.deepEqual(both("copy.what.wgsl", "k0"), { zh: "k0 的 WGSL", en: "the WGSL of k0" });
  assert.deepEqual(both("copy.what.wgsl", { zh: "内核", en: "the kernel" }), { zh: "内核 的 WGSL", en: "the WGSL of the kernel" });
});

test("message fills a compiler message's text with its arguments", () => {
  const m = { id: "guardsFailed", args: ["x=8,4", "L['x'].size()[0] == 8"] };
  assert.equal(message(m), "x=8,4 不满足这个条目的守卫（L['x'].size()[0] == 8）；真正调用模型时会编译另一个条目");
  setLanguage("en");
  assert.equal(message(m), "x=8,4 fails this entry's guards (L['x'].size()[0] == 8); a model call would compile another entry");
});

test("errorText places a message by line and column unless told not to, and falls back to the English text", () => {
  setLanguage("en");
  const error = { messageId: "writeOutputs", messageArgs: ["disk full"], message: "English", line: 3, col: 5 };
  assert.equal(errorText(error), "cannot write the outputs file: disk full (line 3, col 5)");
  assert.equal(errorText(error, { place: false }), "cannot write the outputs file: disk full");
  assert.equal(errorText({ ...error, col: undefined }), "cannot write the outputs file: disk full (line 3, col 1)");
  assert.equal(errorText({ ...error, line: undefined }), "cannot write the outputs file: disk full");
  assert.equal(errorText({ message: "plain English" }), "plain English");
  assert.equal(errorText("thrown string"), "thrown string");
  assert.equal(errorText(null), "null");
});

test("callError translates a call's message with its place, else keeps its English error", () => {
  const failed = { error: "English error", errorMessage: { id: "writeOutputs", args: ["no space"] } };
  assert.equal(callError(failed), "无法写出输出文件：no space");
  assert.equal(callError({ ...failed, span: { line: 2, col: 7 } }), "无法写出输出文件：no space（第 2 行，第 7 列）");
  setLanguage("en");
  assert.equal(callError({ ...failed, errorSpan: { line: 4, col: 1 } }), "cannot write the outputs file: no space (line 4, col 1)");
  assert.equal(callError({ error: "English error" }), "English error");
});
