// www/js/wgsl.js: the tokens the kernel stages colour, and the plain text between them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { wgslTokens } from "../../www/js/wgsl.js";

/** The tokens as `kind:text`, plain text as `·text`. */
const show = (source) => wgslTokens(source).map(({ kind, text }) => (kind ? `${kind}:${text}` : `·${text}`));

test("a binding line splits into attributes, numbers, keywords and types", () => {
  assert.deepEqual(show("@group(0) @binding(1) var<storage, read> in0: array<f32>;"), [
    "attr:@group", "·(", "number:0", "·) ", "attr:@binding", "·(", "number:1", "·) ",
    "keyword:var", "·<", "type:storage", "·, ", "type:read", "·> in0: ", "type:array", "·<", "type:f32", "·>;",
  ]);
});

test("calls, literals with suffixes and comments are told apart", () => {
  assert.deepEqual(show("let v = max(x, 0.0f) * 2u; // relu"), [
    "keyword:let", "· v = ", "call:max", "·(x, ", "number:0.0f", "·) * ", "number:2u", "·; ", "comment:// relu",
  ]);
  assert.deepEqual(show("fn main() {}"), ["keyword:fn", "· ", "call:main", "·() {}"]);
});

test("words that only contain a keyword stay plain, and the texts join back to the source", () => {
  assert.deepEqual(show("letter = format2;"), ["·letter = format2;"]);
  const source = "@compute @workgroup_size(64)\nfn k0(@builtin(global_invocation_id) id: vec3<u32>) {\n  out0[id.x] = in0[id.x] + 1e-3;\n}\n";
  assert.equal(wgslTokens(source).map((token) => token.text).join(""), source);
  assert.deepEqual(wgslTokens(""), []);
});
