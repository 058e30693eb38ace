// www/js/shapes.js: the input-shapes text, the dims the lab varies, and marks as options.

import { test } from "node:test";
import assert from "node:assert/strict";
import { inputText, markOptions, parseShapes, sameSignature, shapesWith, varyDims } from "../../www/js/shapes.js";

test("parseShapes reads tensors' sizes and dtypes, and Python ints and bools as written", () => {
  assert.deepEqual(parseShapes("x=8,64"), [{ name: "x", dims: [8, 64] }]);
  assert.deepEqual(parseShapes("x=8,64;n=int(3)"), [
    { name: "x", dims: [8, 64] },
    { name: "n", dims: [], value: "int(3)" },
  ]);
  assert.deepEqual(parseShapes("idx=2,16:int64"), [{ name: "idx", dims: [2, 16], dtype: "int64" }]);
  assert.deepEqual(parseShapes("flag=True; off = False; k=int( -4 )"), [
    { name: "flag", dims: [], value: "True" },
    { name: "off", dims: [], value: "False" },
    { name: "k", dims: [], value: "int( -4 )" },
  ]);
});

test("parseShapes ignores spaces and empty parts", () => {
  assert.deepEqual(parseShapes(" x = 8 , 64 ;; y=1 ; "), [
    { name: "x", dims: [8, 64] },
    { name: "y", dims: [1] },
  ]);
  assert.deepEqual(parseShapes(""), []);
  assert.deepEqual(parseShapes(";"), []);
});

test("parseShapes skips malformed parts and keeps the rest", () => {
  assert.deepEqual(parseShapes("a=8,-1;b=x,2;=3;c=2.5;d=4"), [{ name: "d", dims: [4] }]);
  // `int(…)` needs a whole number; anything else is read as sizes, and these are not.
  assert.deepEqual(parseShapes("n=int(3.5);m=true"), []);
});

test("varyDims takes the preset's dims, else dim 0 of the first tensor", () => {
  const preset = { vary: [["x", 0], ["y", 0]] };
  assert.deepEqual(varyDims(preset, "z=1"), [["x", 0], ["y", 0]]);
  assert.deepEqual(varyDims(null, "n=int(3);x=8,64;y=8"), [["x", 0]]);
  assert.deepEqual(varyDims(null, "n=int(3)"), []);
  assert.deepEqual(varyDims(null, ""), []);
});

test("shapesWith sets every varying dim and writes the rest back unchanged", () => {
  assert.equal(shapesWith("x=8,64;n=int(3);idx=8,16:int64", [["x", 0], ["idx", 0]], 32), "x=32,64;n=int(3);idx=32,16:int64");
  assert.equal(shapesWith("x=8,64", [["x", 1]], 5), "x=8,5");
  assert.equal(shapesWith("x=8,64", [], 5), "x=8,64");
  // The text comes back normalised: no spaces, malformed parts dropped.
  assert.equal(shapesWith(" x = 8, 64 ; bad=a ", [["x", 0]], 16), "x=16,64");
});

test("inputText writes a tensor's symbolic dims, and an int argument as an assignment", () => {
  assert.equal(inputText({ name: "x", dims: [{ text: "s0" }, { text: "64" }] }), "x: [s0, 64]");
  assert.equal(inputText({ name: "n", python: true, dims: [{ text: "s1" }] }), "n = s1");
  assert.equal(inputText({ name: "t", dims: [] }), "t: []");
});

test("markOptions turns the mark controls into compile's markDynamic and markStatic", () => {
  const marks = new Map([
    ["x:0", { kind: "dynamic", min: "2", max: "" }],
    ["x:1", { kind: "static", min: "", max: "" }],
    ["y:0", { kind: "default", min: "", max: "" }],
    ["y:1", { kind: "dynamic", min: "", max: "1024" }],
  ]);
  assert.deepEqual(markOptions(marks), {
    markDynamic: [["x", 0, 2, null], ["y", 1, null, 1024]],
    markStatic: [["x", 1]],
  });
  assert.deepEqual(markOptions(new Map()), { markDynamic: [], markStatic: [] });
});

test("sameSignature compares inputs, ranks, dtypes and number kinds, not sizes", () => {
  assert.equal(sameSignature("x=8,64", "x=16,64"), true);
  assert.equal(sameSignature("x=8,64", "x=2,1,12,12"), false);
  assert.equal(sameSignature("x=8,64", "y=8,64"), false);
  assert.equal(sameSignature("a=2,3;b=3,4", "b=3,4;a=2,3"), false);
  assert.equal(sameSignature("ids=2,16:int64", "ids=4,16:int64"), true);
  assert.equal(sameSignature("ids=2,16:int64", "ids=2,16"), false);
  assert.equal(sameSignature("x=3;n=int(2)", "x=5;n=int(9)"), true);
  assert.equal(sameSignature("x=3;n=int(2)", "x=3;n=True"), false);
  assert.equal(sameSignature("", ""), false);
});
