// Tailor against in-browser peers, measured side by side in one run of the test Chromium:
// tfjs 4.22 on WebGPU and on wasm (SIMD, one thread), and hand-written naive WGSL (one
// thread per output, the floor any WebGPU code reaches). Each workload runs end to end:
// a Float32Array in, the call, the output read back. Prints one JSON object of metrics and
// their ratios to Tailor's. A benchmark, not a test (node --test picks up *.test.mjs
// only); it never asserts a time. Headless Chromium's WebGPU here is SwiftShader, a CPU
// emulation: compare the ratios, not the absolute times.
//
//   npm ci --prefix tests/e2e/peers     # the peers, pinned in tests/e2e/peers (once)
//   trunk build --release               # Tailor's page, into dist/
//   node tests/e2e/bench-peers.mjs      # TAILOR_BENCH_ROUNDS=N for more rounds

import { existsSync } from "node:fs";
import { join } from "node:path";
import { DIST_DIR, REPO_ROOT, launchChromium, serveStatic } from "./harness.mjs";

const ROUNDS = Number(process.env.TAILOR_BENCH_ROUNDS ?? 20);
const PEERS = join(REPO_ROOT, "tests/e2e/peers/node_modules/@tensorflow");
const SCRIPTS = [
  "tfjs-core/dist/tf-core.min.js",
  "tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js",
  "tfjs-backend-wasm/dist/tf-backend-wasm.min.js",
];

if (!existsSync(PEERS)) {
  console.error("the peers are not installed: npm ci --prefix tests/e2e/peers");
  process.exit(2);
}

const server = await serveStatic(DIST_DIR);
const browser = await launchChromium();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  // The peers' files are served under the page's origin (tfjs-wasm fetches its .wasm).
  await page.route(`${server.url}peers/**`, (route) => {
    const path = new URL(route.request().url()).pathname.slice("/peers/".length);
    const type = path.endsWith(".wasm") ? "application/wasm" : "text/javascript";
    return route.fulfill({ path: join(PEERS, path), contentType: type });
  });
  await page.goto(server.url);
  for (const script of SCRIPTS) await page.addScriptTag({ url: `${server.url}peers/${script}` });
  const report = await page.evaluate(measure, ROUNDS);
  console.log(JSON.stringify(report, null, 1));
} finally {
  await browser.close();
  await server.close();
}

/** Runs in the page: every workload on every runtime, then the ratios. */
async function measure(rounds) {
  const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
  const filled = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 0.1);
  // `first`: the first call from a cold start (compiling included); `steady`: the median
  // of later calls.
  const measureCalls = async (call, n) => {
    let started = performance.now();
    await call();
    const first = performance.now() - started;
    const samples = [];
    for (let i = 0; i < n; i++) {
      started = performance.now();
      await call();
      samples.push(performance.now() - started);
    }
    return { first, steady: median(samples) };
  };

  // A stack of linear layers (ReLU between them): SimpleNet is 64 -> 128 -> 64, bigmlp
  // 1024 -> 1024 -> 1024.
  const mlps = {
    simplenet_b8: { batch: 8, widths: [64, 128, 64] },
    bigmlp: { batch: 256, widths: [1024, 1024, 1024] },
  };
  const flops = ({ batch, widths }) =>
    widths.slice(1).reduce((sum, out, i) => sum + 2 * batch * widths[i] * out, 0);
  const mlpSource = (widths) =>
    [
      "import torch.nn as nn",
      "class Stack(nn.Module):",
      "    def __init__(self):",
      "        super().__init__()",
      ...widths.slice(1).map((out, i) => `        self.fc${i} = nn.Linear(${widths[i]}, ${out})`),
      "    def forward(self, x):",
      `        return ${widths
        .slice(1)
        .reduce((x, _, i) => (i === 0 ? `self.fc0(x)` : `self.fc${i}(${x}.relu())`), "x")}`,
      "",
    ].join("\n");
  const conv = { batch: 1, inC: 3, outC: 16, size: 64 };
  const convSource = [
    "import torch.nn as nn",
    "class Conv(nn.Module):",
    "    def __init__(self):",
    "        super().__init__()",
    `        self.conv = nn.Conv2d(${conv.inC}, ${conv.outC}, 3, padding=1)`,
    "    def forward(self, x):",
    "        return self.conv(x)",
    "",
  ].join("\n");

  const metrics = {};
  const record = (workload, runtime, { first, steady }) => {
    metrics[`first_ms.${workload}.${runtime}`] = first;
    metrics[`steady_ms.${workload}.${runtime}`] = steady;
  };

  // Tailor, through its JS API, on WebGPU (dynamic=True, the material's dynamic entry) and
  // on its CPU backend (wasm, simd128).
  const { default: init, Tailor } = await import("./tailor.js");
  await init();
  for (const device of ["gpu", "cpu"]) {
    let started = performance.now();
    const tailor = await Tailor.create({ device });
    if (tailor.device !== device) continue;
    const runtime = `tailor_${device}`;
    // What the page pays once, as tfjs pays setBackend and ready: opening the device, and
    // the first capture, which starts the Python interpreter and imports Tailor's torch.
    const warm = tailor.compile("import torch\n\ndef f(x):\n    return x + 1\n", { dynamic: "true" });
    await warm.call({ x: { data: filled(4), shape: [4] } });
    warm.free();
    metrics[`startup_ms.${runtime}`] = performance.now() - started;
    await tailor.clearKernelCache();
    for (const [workload, mlp] of Object.entries(mlps)) {
      const model = tailor.compile(mlpSource(mlp.widths), { dynamic: "true" });
      const x = { data: filled(mlp.batch * mlp.widths[0]), shape: [mlp.batch, mlp.widths[0]] };
      record(workload, runtime, await measureCalls(() => model.call({ x }), rounds));
      model.free();
    }
    const model = tailor.compile(convSource, { dynamic: "true" });
    const shape = [conv.batch, conv.inC, conv.size, conv.size];
    const x = { data: filled(shape.reduce((a, b) => a * b)), shape };
    record("conv3to16_64", runtime, await measureCalls(() => model.call({ x }), rounds));
    model.free();
  }

  // tfjs on WebGPU and on wasm: the same layers as tf ops, weights resident on the backend.
  for (const backend of ["webgpu", "wasm"]) {
    if (backend === "wasm") tf.wasm.setWasmPaths(new URL("peers/tfjs-backend-wasm/dist/", location.href).href);
    const started = performance.now();
    if (!(await tf.setBackend(backend).catch(() => false))) continue;
    await tf.ready();
    const runtime = `tfjs_${backend}`;
    metrics[`startup_ms.${runtime}`] = performance.now() - started;
    for (const [workload, { batch, widths }] of Object.entries(mlps)) {
      const layers = widths.slice(1).map((out, i) => ({
        w: tf.tensor2d(filled(widths[i] * out), [widths[i], out]),
        b: tf.tensor1d(filled(out)),
      }));
      const input = filled(batch * widths[0]);
      const call = async () => {
        const y = tf.tidy(() =>
          layers.reduce((x, { w, b }, i) => {
            const z = tf.add(tf.matMul(i === 0 ? x : tf.relu(x), w), b);
            return z;
          }, tf.tensor2d(input, [batch, widths[0]])),
        );
        await y.data();
        y.dispose();
      };
      record(workload, runtime, await measureCalls(call, rounds));
      layers.forEach(({ w, b }) => (w.dispose(), b.dispose()));
    }
    // tfjs convolves NHWC: the same work as Tailor's NCHW conv.
    const filter = tf.tensor4d(filled(9 * conv.inC * conv.outC), [3, 3, conv.inC, conv.outC]);
    const bias = tf.tensor1d(filled(conv.outC));
    const image = filled(conv.size * conv.size * conv.inC);
    const call = async () => {
      const y = tf.tidy(() =>
        tf.add(tf.conv2d(tf.tensor4d(image, [1, conv.size, conv.size, conv.inC]), filter, 1, "same"), bias),
      );
      await y.data();
      y.dispose();
    };
    record("conv3to16_64", runtime, await measureCalls(call, rounds));
    filter.dispose();
    bias.dispose();
  }

  // Hand-written naive WGSL: one thread per output, x @ W + b (then ReLU but for the last).
  if (navigator.gpu) {
    const adapter = await navigator.gpu.requestAdapter();
    const device = await adapter.requestDevice();
    const shader = (relu) => `
      @group(0) @binding(0) var<storage, read> x: array<f32>;
      @group(0) @binding(1) var<storage, read> w: array<f32>;
      @group(0) @binding(2) var<storage, read> b: array<f32>;
      @group(0) @binding(3) var<storage, read_write> y: array<f32>;
      @group(0) @binding(4) var<uniform> dims: vec4<u32>;
      @compute @workgroup_size(64)
      fn main(@builtin(global_invocation_id) id: vec3<u32>) {
        let m = dims.x; let k = dims.y; let n = dims.z;
        if (id.x >= m * n) { return; }
        let row = id.x / n; let col = id.x % n;
        var sum = b[col];
        for (var p = 0u; p < k; p++) { sum += x[row * k + p] * w[p * n + col]; }
        y[id.x] = ${relu ? "max(sum, 0.0)" : "sum"};
      }`;
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const buffer = (data, usage = storage) => {
      const made = device.createBuffer({ size: Math.max(16, data.byteLength), usage });
      device.queue.writeBuffer(made, 0, data);
      return made;
    };
    for (const [workload, { batch, widths }] of Object.entries(mlps)) {
      const layers = widths.slice(1).map((out, i) => ({
        k: widths[i],
        n: out,
        w: buffer(filled(widths[i] * out)),
        b: buffer(filled(out)),
        y: device.createBuffer({ size: batch * out * 4, usage: storage }),
        dims: buffer(new Uint32Array([batch, widths[i], out, 0]), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST),
      }));
      const x = device.createBuffer({ size: batch * widths[0] * 4, usage: storage });
      const last = layers[layers.length - 1];
      const read = device.createBuffer({ size: batch * last.n * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const input = filled(batch * widths[0]);
      let pipelines = null;
      const call = async () => {
        pipelines ??= [false, true].map((relu) =>
          device.createComputePipeline({ layout: "auto", compute: { module: device.createShaderModule({ code: shader(relu) }), entryPoint: "main" } }),
        );
        device.queue.writeBuffer(x, 0, input);
        const encoder = device.createCommandEncoder();
        layers.forEach((layer, i) => {
          const pipeline = pipelines[i < layers.length - 1 ? 1 : 0];
          const source = i === 0 ? x : layers[i - 1].y;
          const group = device.createBindGroup({
            layout: pipeline.getBindGroupLayout(0),
            entries: [source, layer.w, layer.b, layer.y, layer.dims].map((resource, binding) => ({ binding, resource: { buffer: resource } })),
          });
          const pass = encoder.beginComputePass();
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          pass.dispatchWorkgroups(Math.ceil((batch * layer.n) / 64));
          pass.end();
        });
        encoder.copyBufferToBuffer(last.y, 0, read, 0, batch * last.n * 4);
        device.queue.submit([encoder.finish()]);
        await read.mapAsync(GPUMapMode.READ);
        new Float32Array(read.getMappedRange().slice(0));
        read.unmap();
      };
      record(workload, "naive_wgsl", await measureCalls(call, rounds));
    }
  }

  for (const [workload, mlp] of Object.entries(mlps)) {
    for (const runtime of ["tailor_gpu", "tailor_cpu", "tfjs_webgpu", "tfjs_wasm", "naive_wgsl"]) {
      const ms = metrics[`steady_ms.${workload}.${runtime}`];
      if (ms !== undefined) metrics[`gflops.${workload}.${runtime}`] = flops(mlp) / (ms * 1e6);
    }
  }
  // Each peer's time over Tailor's on the same device class (GPU runtimes against Tailor on
  // WebGPU, tfjs-wasm against Tailor's CPU backend): above 1, Tailor is faster.
  const ratios = {};
  for (const [key, ms] of Object.entries(metrics)) {
    const [kind, workload, runtime] = key.split(".");
    if (!kind.endsWith("_ms") || !runtime || runtime.startsWith("tailor")) continue;
    const against = runtime === "tfjs_wasm" ? "tailor_cpu" : "tailor_gpu";
    const ours = metrics[`${kind}.${workload}.${against}`];
    if (ours) ratios[`${key}_over_${against}`] = ms / ours;
  }
  const info = (await navigator.gpu?.requestAdapter())?.info;
  const adapter = info ? [info.vendor, info.architecture, info.description].filter(Boolean).join(" / ") : null;
  return { adapter, metrics, ratios };
}
