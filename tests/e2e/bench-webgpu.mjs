// The WebGPU benchmark in the test Chromium: what a learner waits for on Compile (the first
// call, kernels built from a cold cache), a new batch size under a dynamic entry, the steady
// state, and a large MLP's throughput, all through the JS API (Float32Array in, call, output
// read back). Prints one JSON object; `node tests/e2e/bench-webgpu.mjs` after a trunk build.
// Not a test file (node --test picks up *.test.mjs only): benchmarks report, they never
// assert a time. Headless Chromium's WebGPU here is SwiftShader, a CPU emulation: compare
// ratios measured in one run, not absolute times.

import { DIST_DIR, launchChromium, serveStatic } from "./harness.mjs";

const ROUNDS = Number(process.env.TAILOR_BENCH_ROUNDS ?? 20);
// First calls at a new batch size, each by a model of its own: their median and mean are
// reported.
const NEW_SHAPE_SAMPLES = 15;

const server = await serveStatic(DIST_DIR);
const browser = await launchChromium();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  const report = await page.evaluate(async ([rounds, newShapeSamples]) => {
    const { default: init, Tailor } = await import("./tailor.js");
    await init();
    const tailor = await Tailor.create({ device: "gpu" });
    if (tailor.device !== "gpu") return { error: `no WebGPU: ${tailor.webgpu.reason}` };
    const simplenet = Tailor.presets().find((p) => p.id === "simplenet").source;
    const mlp = [
      "import torch.nn as nn",
      "class BigMLP(nn.Module):",
      "    def __init__(self):",
      "        super().__init__()",
      "        self.fc1 = nn.Linear(1024, 1024)",
      "        self.fc2 = nn.Linear(1024, 1024)",
      "    def forward(self, x):",
      "        return self.fc2(self.fc1(x).relu())",
      "",
    ].join("\n");
    const input = (batch, width) => ({
      x: { data: Float32Array.from({ length: batch * width }, (_, i) => Math.sin(i)), shape: [batch, width] },
    });
    const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
    const mean = (samples) => samples.reduce((sum, v) => sum + v, 0) / samples.length;
    const timed = async (model, args) => {
      const started = performance.now();
      const result = await model.call(args);
      return { ms: performance.now() - started, result };
    };
    // The median end-to-end time of `n` calls, and the median of their host part (the CPU
    // finding the call's buffers and bind groups, writing inputs, recording, submitting).
    const steadyWithHost = async (model, args, n) => {
      const samples = [];
      const host = [];
      for (let i = 0; i < n; i++) {
        const { ms, result } = await timed(model, args);
        samples.push(ms);
        host.push(result.ms.host);
      }
      return { ms: median(samples), host: median(host) };
    };
    const metrics = {};
    const products = {};
    for (const dynamic of ["false", "true", "auto"]) {
      await tailor.clearKernelCache();
      const before = (await tailor.gpuStats()).pipelinesCreated;
      const model = tailor.compile(simplenet, { dynamic });
      const first = await timed(model, input(8, 64));
      metrics[`first_call_ms.simplenet_b8.${dynamic}`] = first.ms;
      metrics[`first_call_build_ms.simplenet_b8.${dynamic}`] = first.result.ms.build;
      metrics[`first_call_pipelines.simplenet_b8.${dynamic}`] = (await tailor.gpuStats()).pipelinesCreated - before;
      products[`simplenet_b8.${dynamic}`] = first.result.products;
      const settled = await steadyWithHost(model, input(8, 64), rounds);
      metrics[`steady_ms.simplenet_b8.${dynamic}`] = settled.ms;
      metrics[`steady_host_ms.simplenet_b8.${dynamic}`] = settled.host;
      if (dynamic === "true") {
        // The first call at 16 rows after calls at 8, then three more at 16: this model's,
        // then those of fresh models of the same source (the kernel cache kept). New and
        // steady calls alternate so that both see the same moments of the machine: on
        // SwiftShader a b16 call ends close to the first read-back nudge (1 ms), so either
        // kind takes about 1.5 or 2.5 ms, in shares that drift through a run: the medians
        // jump between the two, the means show the shares.
        const held = (await tailor.gpuStats()).pipelinesCreated;
        const fresh = [];
        const again = [];
        for (let i = 0; i < newShapeSamples; i++) {
          const another = i === 0 ? model : tailor.compile(simplenet, { dynamic });
          for (let j = 0; i > 0 && j < 3; j++) await another.call(input(8, 64));
          fresh.push((await timed(another, input(16, 64))).ms);
          for (let j = 0; j < 3; j++) again.push((await timed(another, input(16, 64))).ms);
          if (i > 0) another.free();
        }
        metrics["new_shape_ms.simplenet_b16.true"] = median(fresh);
        metrics["new_shape_mean_ms.simplenet_b16.true"] = mean(fresh);
        metrics["new_shape_pipelines.simplenet_b16.true"] = (await tailor.gpuStats()).pipelinesCreated - held;
        metrics["steady_ms.simplenet_b16.true"] = median(again);
        metrics["steady_mean_ms.simplenet_b16.true"] = mean(again);
      }
      model.free();
    }
    await tailor.clearKernelCache();
    const model = tailor.compile(mlp, { dynamic: "false" });
    const args = input(256, 1024);
    const first = await timed(model, args);
    metrics["first_call_ms.bigmlp"] = first.ms;
    metrics["first_call_build_ms.bigmlp"] = first.result.ms.build;
    products.bigmlp = first.result.products;
    const { ms, host } = await steadyWithHost(model, args, Math.max(3, Math.floor(rounds / 4)));
    metrics["steady_ms.bigmlp"] = ms;
    metrics["steady_host_ms.bigmlp"] = host;
    metrics["gflops.bigmlp"] = (2 * 2 * 256 * 1024 * 1024) / (ms * 1e6);
    model.free();
    const info = tailor.webgpu;
    return { adapter: info.adapter, metrics, products };
  }, [ROUNDS, NEW_SHAPE_SAMPLES]);
  console.log(JSON.stringify(report, null, 1));
} finally {
  await browser.close();
  await server.close();
}
