// End-to-end test of the workbench's weights file: a `.safetensors` state_dict that PyTorch
// wrote (tests/data/weights/, by scripts/pytorch/record_weights.py) is read in the page,
// loaded by name at every compile, and the model's outputs on the recorded inputs are
// PyTorch's; a file of another model is an error that lists the keys, and dropping the
// file compiles with Tailor's own initialisation again.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./harness.mjs";
import { afterCompile, openPage, shot, shownError } from "./page-helpers.mjs";

const WEIGHTS_DIR = join(REPO_ROOT, "tests", "data", "weights");

let session;
let page;

before(async () => {
  session = await openPage();
  page = session.page;
});

after(async () => {
  await session?.close();
});

/** The float32 tensors of a safetensors file: `{ name: { shape, data: number[] } }`. */
async function readSafetensors(file) {
  const bytes = await readFile(join(WEIGHTS_DIR, file));
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString("utf8"));
  const start = 8 + headerLength;
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    assert.equal(info.dtype, "F32", name);
    const [from, to] = info.data_offsets;
    const data = [];
    for (let at = start + from; at < start + to; at += 4) data.push(bytes.readFloatLE(at));
    tensors[name] = { shape: info.shape, data };
  }
  return tensors;
}

async function chooseWeights(file) {
  await afterCompile(page, () => page.getByTestId("weights-file").setInputFiles(join(WEIGHTS_DIR, file)));
}

test("PyTorch's weights load in the page and give PyTorch's outputs", async () => {
  await chooseWeights("simplenet.weights.safetensors");
  assert.equal(await shownError(page), null, "the weights fit SimpleNet");
  assert.match(await page.getByTestId("weights-status").textContent(), /simplenet\.weights\.safetensors/);
  const { x } = await readSafetensors("simplenet.inputs.safetensors");
  const { out0 } = await readSafetensors("simplenet.outputs.safetensors");
  const outputs = await page.evaluate(async (x) => {
    const result = await window.tailorPage.model.call({ x: { shape: x.shape, data: new Float32Array(x.data) } });
    return result.outputs.map((output) => ({ shape: output.shape, data: Array.from(output.data) }));
  }, x);
  assert.deepEqual(outputs[0].shape, out0.shape);
  // The tolerance of tests/it/weights.rs: |tailor - torch| <= 1e-4 * max(1, |torch|).
  const worst = Math.max(...outputs[0].data.map((v, i) => Math.abs(v - out0.data[i]) / Math.max(1, Math.abs(out0.data[i]))));
  console.log(`# SimpleNet in the page vs PyTorch: max relative error ${worst.toExponential(2)}`);
  assert.ok(worst <= 1e-4, `max relative error ${worst}`);
  await shot(page, "70-weights-loaded", page.locator(".weights-field"));
});

test("weights of another model list the missing and unexpected keys", async () => {
  await chooseWeights("yolo_stack.weights.safetensors");
  const text = await shownError(page);
  assert.equal(await page.getByTestId("error-message").getAttribute("data-kind"), "weights");
  assert.match(text, /missing key\(s\) in state_dict: "layers\.0\.weight"/);
  assert.match(text, /unexpected key\(s\) in state_dict: .*"stem\.0\.weight"/);
});

test("dropping the weights compiles with Tailor's initialisation again", async () => {
  await afterCompile(page, () => page.getByTestId("weights-clear").click());
  assert.equal(await shownError(page), null);
  assert.equal(await page.getByTestId("weights-status").isVisible(), false);
});
