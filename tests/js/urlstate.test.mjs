// www/js/urlstate.js: share links (the model and settings in the URL fragment) and the
// exercise a fragment names.

import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeFragment, encodeFragment, exerciseFromFragment, fromBase64Url, toBase64Url } from "../../www/js/urlstate.js";

/** The page's state with nothing set beyond the defaults. */
const DEFAULTS = {
  presetId: null,
  source: "",
  shapes: "x=8,64",
  mode: "auto",
  symbolNames: "tailor",
  marks: new Map(),
  recompileLimit: null,
  step: 0,
};

test("toBase64Url is URL-safe, unpadded base64 of the UTF-8 bytes", () => {
  assert.equal(toBase64Url(""), "");
  assert.equal(toBase64Url("hi"), "aGk");
  assert.equal(toBase64Url("import torch\n"), "aW1wb3J0IHRvcmNoCg");
  // `/` and `+` in plain base64 (YWI/ and Pj4+).
  assert.equal(toBase64Url("ab?"), "YWI_");
  assert.equal(toBase64Url(">>>"), "Pj4-");
  assert.equal(toBase64Url("形状"), "5b2i54q2");
});

test("fromBase64Url gives back any text, and throws on what is not base64", () => {
  for (const text of ["", "def f(x):\n    return x * 2\n", "形状 🧵 ~?>", "a".repeat(1001)]) {
    assert.equal(fromBase64Url(toBase64Url(text)), text);
  }
  assert.throws(() => fromBase64Url("not base64!"));
});

test("a preset's link names it, and leaves the defaults out", () => {
  assert.equal(encodeFragment({ ...DEFAULTS, presetId: "simplenet", source: "ignored" }),
    "model=simplenet&shapes=x%3D8%2C64&mode=auto&step=0");
});

test("a link to the learner's own source carries it, with every setting that is not a default", () => {
  const marks = new Map([
    ["x:0", { kind: "dynamic", min: "2", max: "64" }],
    ["x:1", { kind: "static", min: "", max: "" }],
    ["n:0", { kind: "default", min: "", max: "" }],
  ]);
  const fragment = encodeFragment({
    ...DEFAULTS,
    source: "import torch\n",
    shapes: "x=8,64;n=int(3)",
    mode: "true",
    symbolNames: "pytorch",
    marks,
    recompileLimit: 4,
    step: 3,
    extra: [["kind", "output_shape"], ["seed", "7"]],
  });
  assert.equal(fragment,
    "src=aW1wb3J0IHRvcmNoCg&shapes=x%3D8%2C64%3Bn%3Dint%283%29&mode=true&names=pytorch" +
    "&marks=x%3A0%3A2%3A64+x%3A1%3Astatic&limit=4&step=3&kind=output_shape&seed=7");
  assert.deepEqual(decodeFragment(fragment), {
    presetId: null,
    source: "import torch\n",
    shapes: "x=8,64;n=int(3)",
    mode: "true",
    symbolNames: "pytorch",
    recompileLimit: 4,
    marks: new Map([
      ["x:0", { kind: "dynamic", min: "2", max: "64" }],
      ["x:1", { kind: "static", min: "", max: "" }],
    ]),
    step: 3,
  });
});

test("an empty fragment sets nothing", () => {
  assert.deepEqual(decodeFragment(""), {
    presetId: null,
    source: undefined,
    shapes: null,
    mode: null,
    symbolNames: null,
    recompileLimit: null,
    marks: new Map(),
    step: 0,
  });
});

test("decodeFragment drops invalid settings instead of applying them", () => {
  const state = decodeFragment("mode=maybe&names=tailor&limit=0&step=-2");
  assert.equal(state.mode, null);
  assert.equal(state.symbolNames, null);
  assert.equal(state.recompileLimit, null);
  assert.equal(state.step, 0);
  assert.equal(decodeFragment("limit=2.5").recompileLimit, null);
  assert.equal(decodeFragment("limit=many").recompileLimit, null);
  assert.equal(decodeFragment("step=abc").step, 0);
  assert.equal(decodeFragment("step=1.5").step, 0);
  assert.equal(decodeFragment("step=12").step, 12);
  for (const mode of ["auto", "true", "false"]) assert.equal(decodeFragment(`mode=${mode}`).mode, mode);
});

test("a source that does not decode reads as null, apart from no source at all", () => {
  assert.equal(decodeFragment("src=%25%25%25").source, null);
  assert.equal(decodeFragment("model=nope").source, undefined);
  assert.equal(decodeFragment("model=nope").presetId, "nope");
});

test("marks in a fragment: dynamic with optional bounds, or static", () => {
  assert.deepEqual(decodeFragment("marks=x:0:1:+y:1:static+z:2").marks, new Map([
    ["x:0", { kind: "dynamic", min: "1", max: "" }],
    ["y:1", { kind: "static", min: "", max: "" }],
    ["z:2", { kind: "dynamic", min: "", max: "" }],
  ]));
});

test("exerciseFromFragment reads a shared exercise, easy unless the link says otherwise", () => {
  const kinds = ["output_shape", "compile_count"];
  const levels = ["easy", "mid", "hard", "extreme"];
  assert.deepEqual(exerciseFromFragment("model=simplenet&kind=compile_count&seed=42&difficulty=hard", kinds, levels),
    { kind: "compile_count", seed: 42, difficulty: "hard" });
  assert.deepEqual(exerciseFromFragment("kind=output_shape&seed=0", kinds, levels),
    { kind: "output_shape", seed: 0, difficulty: "easy" });
  assert.equal(exerciseFromFragment("kind=write_guard&seed=1", kinds, levels), null);
  assert.equal(exerciseFromFragment("kind=output_shape&seed=-1", kinds, levels), null);
  assert.equal(exerciseFromFragment("kind=output_shape&seed=1.5", kinds, levels), null);
  assert.equal(exerciseFromFragment("kind=output_shape&seed=1&difficulty=insane", kinds, levels), null);
  assert.equal(exerciseFromFragment("", kinds, levels), null);
});
