// www/js/workspace.js: the learner's own model is saved and read back, a preset's text never
// replaces it, and storage that refuses or holds something else is not an error.

import { test } from "node:test";
import assert from "node:assert/strict";
import { WORKSPACE_KEY, compileNeverEnded, loadWorkspace, noteCompiling, opensSavedWork, saveWorkspace } from "../../www/js/workspace.js";

/** localStorage's interface over a Map; `refuse` makes every write throw, as a full or
 * disabled storage does. */
function memoryStorage({ refuse = false } = {}) {
  const items = new Map();
  return {
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => {
      if (refuse) throw new DOMException("quota exceeded", "QuotaExceededError");
      items.set(key, String(value));
    },
    items,
  };
}

const PRESETS = ["class SimpleNet(nn.Module): ...", "class Tiny(nn.Module): ..."];

test("the learner's own model is saved with its shapes and read back", () => {
  const storage = memoryStorage();
  assert.equal(loadWorkspace(storage), null);
  const own = { source: "import torch\nclass Mine(torch.nn.Module): ...", shapes: "x=2,3" };
  assert.equal(saveWorkspace(storage, own, PRESETS), true);
  assert.deepEqual(loadWorkspace(storage), own);
});

test("a preset's text or a blank editor never replaces the saved model", () => {
  const storage = memoryStorage();
  const own = { source: "mine", shapes: "x=1" };
  saveWorkspace(storage, own, PRESETS);
  assert.equal(saveWorkspace(storage, { source: PRESETS[1], shapes: "x=8,64" }, PRESETS), false);
  assert.equal(saveWorkspace(storage, { source: "  \n", shapes: "" }, PRESETS), false);
  assert.deepEqual(loadWorkspace(storage), own);
});

test("storage that refuses a write, or holds something else under the key, is not an error", () => {
  assert.equal(saveWorkspace(memoryStorage({ refuse: true }), { source: "mine", shapes: "" }, PRESETS), false);
  for (const junk of ["{not json", "42", '{"source": 7}', '{"source": "   "}']) {
    const storage = memoryStorage();
    storage.items.set(WORKSPACE_KEY, junk);
    assert.equal(loadWorkspace(storage), null, junk);
  }
  const storage = memoryStorage();
  storage.items.set(WORKSPACE_KEY, '{"source": "mine"}');
  assert.deepEqual(loadWorkspace(storage), { source: "mine", shapes: "" });
});

test("the saved model opens only where the link names no preset and no source", () => {
  assert.equal(opensSavedWork({ presetId: null, source: undefined }), true);
  assert.equal(opensSavedWork({ presetId: "simplenet", source: undefined }), false);
  assert.equal(opensSavedWork({ presetId: null, source: "print(1)" }), false);
  assert.equal(opensSavedWork({ presetId: null, source: null }), false, "a src that did not decode is the link's");
});

test("a compile that never ended is remembered for that source only, until one ends", () => {
  const storage = memoryStorage();
  storage.removeItem = (key) => storage.items.delete(key);
  assert.equal(compileNeverEnded(storage, "mine"), false);
  noteCompiling(storage, "mine");
  assert.equal(compileNeverEnded(storage, "mine"), true);
  assert.equal(compileNeverEnded(storage, "mine "), false);
  noteCompiling(storage, null);
  assert.equal(compileNeverEnded(storage, "mine"), false);
  noteCompiling(memoryStorage({ refuse: true }), "mine");
});
