// Row reductions in the page by subgroup or through the workgroup tree: softmax(layer_norm(x))
// at 4096×1024 (`dynamic=False`), whole calls through the JS API, the two forms alternating
// call by call (`tailor.setSubgroups`) so a busy moment of the machine slows one sample of
// each. Prints one JSON object (medians, samples, both forms' error against the reference);
// `node tests/e2e/bench-rows.mjs` after a trunk build. Not a test file: it reports, never
// asserts a time. Headless Chromium's WebGPU here is SwiftShader, a CPU emulation: compare
// the two forms measured in one run, not absolute times. `tailor bench`'s
// `rows_ms.layernorm_softmax.*` is the native counterpart (kernels alone).

import { DIST_DIR, launchChromium, serveStatic } from "./harness.mjs";

const ROUNDS = Number(process.env.TAILOR_BENCH_ROUNDS ?? 8);

const SOURCE = `import torch.nn as nn
import torch.nn.functional as F

class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(1024)

    def forward(self, x):
        return F.softmax(self.norm(x), dim=-1)
`;

const server = await serveStatic(DIST_DIR);
const browser = await launchChromium();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  const report = await page.evaluate(async ({ source, rounds }) => {
    const { default: init, Tailor } = await import("./tailor.js");
    await init();
    const tailor = await Tailor.create({ device: "gpu" });
    const model = tailor.compile(source, { dynamic: "false" });
    const shapes = "x=4096,1024";
    const forms = { subgroups: true, workgroup: false };
    const out = { adapter: tailor.adapter, maxAbsErr: {}, samples: { subgroups: [], workgroup: [] } };
    if (!tailor.adapter?.subgroups) return { ...out, skipped: "the device has no subgroup operations" };
    // One checked call of each first: it builds the form's pipelines and checks its values.
    for (const [form, on] of Object.entries(forms)) {
      await tailor.setSubgroups(on);
      out.maxAbsErr[form] = (await model.call(shapes, { check: true })).maxAbsErr;
    }
    for (let round = 0; round < rounds; round++) {
      for (const [form, on] of Object.entries(forms)) {
        await tailor.setSubgroups(on);
        const started = performance.now();
        await model.call(shapes);
        out.samples[form].push(performance.now() - started);
      }
    }
    await tailor.setSubgroups(true);
    const median = (samples) => [...samples].sort((a, b) => a - b)[samples.length >> 1];
    out.medianMs = { subgroups: median(out.samples.subgroups), workgroup: median(out.samples.workgroup) };
    model.free();
    return out;
  }, { source: SOURCE, rounds: ROUNDS });
  console.log(JSON.stringify(report, null, 1));
} finally {
  await browser.close();
  await server.close();
}
