// Tailor against in-browser peers, measured side by side in one run of the test Chromium:
// tfjs 4.22 on WebGPU and on wasm (SIMD, one thread), onnxruntime-web 1.30 on its WebGPU
// execution provider and on wasm (SIMD, one thread), and hand-written naive WGSL (one
// thread per output, the floor any WebGPU code reaches). The workloads: SimpleNet
// (64 -> 128 -> 64) at batch 8, an MLP 1024 -> 1024 -> 1024 at batch 256, a 3 -> 16 3x3
// conv on 1x3x64x64. Each runs end to end: a Float32Array in, the call, the output read
// back. Per workload and runtime: `first_ms`, the first call from a cold start (kernels
// compiled in it); `steady_ms`, the median of the later calls; `session_ms`, what the
// runtime pays per model before that first call (Tailor's compile, onnxruntime's
// InferenceSession.create), and `first_with_session_ms`, the two together; GFLOP/s for the
// MLPs; `startup_ms` per runtime, what a page pays once before its first model. Prints one
// JSON object: those metrics, their ratios to Tailor's, and `checks`, onnxruntime's
// outputs against the naive WGSL's (the MLPs) and a direct convolution (the conv) for the
// same input and weights; a failed check sets the exit status to 1. A benchmark, not a
// test (node --test picks up *.test.mjs only): it never asserts a time. Headless
// Chromium's WebGPU here is SwiftShader, a CPU emulation: compare the ratios, not the
// absolute times.
//
//   npm ci --prefix tests/e2e/peers     # the peers, pinned in tests/e2e/peers (once)
//   /tmp/torch/bin/python scripts/pytorch/export_onnx_peers.py   # onnxruntime's models (once)
//   trunk build --release               # Tailor's page, into dist/
//   node tests/e2e/bench-peers.mjs      # TAILOR_BENCH_ROUNDS=N for more rounds

import { existsSync } from "node:fs";
import { join } from "node:path";
import { DIST_DIR, REPO_ROOT, launchChromium, serveStatic } from "./harness.mjs";

const ROUNDS = Number(process.env.TAILOR_BENCH_ROUNDS ?? 20);
const PEERS = join(REPO_ROOT, "tests/e2e/peers");
// tfjs' scripts define `tf`, onnxruntime's WebGPU bundle `ort`. That bundle runs the wasm
// EP too, from the same module; its WebGPU EP is onnxruntime's C++ one on the browser's
// WebGPU (the asyncify build), not the older JS one (JSEP) that ort.all.min.js carries.
const SCRIPTS = [
  "node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js",
  "node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js",
  "node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js",
  "node_modules/onnxruntime-web/dist/ort.webgpu.min.js",
];
// onnxruntime-web runs ONNX files, not tf ops: scripts/pytorch/export_onnx_peers.py writes
// them (ignored by git; the big MLP alone is 8 MB of weights).
const MODELS = ["simplenet_b8", "bigmlp", "conv3to16_64", "warm"];

if (!SCRIPTS.every((script) => existsSync(join(PEERS, script)))) {
  console.error("the peers are not installed: npm ci --prefix tests/e2e/peers");
  process.exit(2);
}
if (!MODELS.every((name) => existsSync(join(PEERS, "models", `${name}.onnx`)))) {
  console.error(
    "onnxruntime-web's models are missing from tests/e2e/peers/models: " +
      "/tmp/torch/bin/python scripts/pytorch/export_onnx_peers.py (needs the onnx package)",
  );
  process.exit(2);
}

const server = await serveStatic(DIST_DIR);
const browser = await launchChromium();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  // The peers' files are served under the page's origin: tfjs-wasm fetches its .wasm,
  // onnxruntime imports its .mjs glue and fetches its .wasm (instantiateStreaming wants
  // application/wasm, a module import a JavaScript type) and the page fetches the .onnx.
  await page.route(`${server.url}peers/**`, (route) => {
    const path = new URL(route.request().url()).pathname.slice("/peers/".length);
    const type = path.endsWith(".wasm")
      ? "application/wasm"
      : path.endsWith(".onnx")
        ? "application/octet-stream"
        : "text/javascript";
    return route.fulfill({ path: join(PEERS, path), contentType: type });
  });
  await page.goto(server.url);
  for (const script of SCRIPTS) await page.addScriptTag({ url: `${server.url}peers/${script}` });
  await page.addScriptTag({ path: join(REPO_ROOT, "tests/e2e/naive-wgsl.js") });
  const report = await page.evaluate(measure, ROUNDS);
  console.log(JSON.stringify(report, null, 1));
  const failed = Object.entries(report.checks).filter(([, check]) => !check.ok);
  for (const [key, { max_rel_err, against }] of failed)
    console.error(`${key}: output off ${against}'s by ${max_rel_err} (relative)`);
  if (failed.length > 0) process.exitCode = 1;
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
    const session = metrics[`session_ms.${workload}.${runtime}`];
    if (session !== undefined) metrics[`first_with_session_ms.${workload}.${runtime}`] = session + first;
  };
  // The last output of a runtime per workload, for the checks: workload -> runtime -> data.
  const outputs = {};
  const keep = (workload, runtime, data) => ((outputs[workload] ??= {})[runtime] = data);
  // Runtimes that could not run, with the error (a peer's failure must not hide the rest).
  const errors = {};

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
    // `compile` parses the source and builds the module; capture and kernels come with
    // the first call.
    const compiled = (workload, source) => {
      const started = performance.now();
      const model = tailor.compile(source, { dynamic: "true" });
      metrics[`session_ms.${workload}.${runtime}`] = performance.now() - started;
      return model;
    };
    for (const [workload, mlp] of Object.entries(mlps)) {
      const model = compiled(workload, mlpSource(mlp.widths));
      const x = { data: filled(mlp.batch * mlp.widths[0]), shape: [mlp.batch, mlp.widths[0]] };
      record(workload, runtime, await measureCalls(() => model.call({ x }), rounds));
      model.free();
    }
    const model = compiled("conv3to16_64", convSource);
    const shape = [conv.batch, conv.inC, conv.size, conv.size];
    const x = { data: filled(shape.reduce((a, b) => a * b)), shape };
    record("conv3to16_64", runtime, await measureCalls(() => model.call({ x }), rounds));
    model.free();
  }

  // tfjs on WebGPU and on wasm: the same layers as tf ops, weights resident on the backend.
  for (const backend of ["webgpu", "wasm"]) {
    if (backend === "wasm") {
      tf.wasm.setWasmPaths(new URL("peers/node_modules/@tensorflow/tfjs-backend-wasm/dist/", location.href).href);
    }
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

  // Hand-written naive WGSL (`naive-wgsl.js`): one thread per output, x @ W + b (then ReLU
  // but for the last).
  if (navigator.gpu) {
    const adapter = await navigator.gpu.requestAdapter();
    const device = await adapter.requestDevice();
    for (const [workload, mlp] of Object.entries(mlps)) {
      const naive = naiveWgslMlp(device, mlp, filled);
      const input = filled(mlp.batch * mlp.widths[0]);
      const call = () => naive.call(input);
      record(workload, "naive_wgsl", await measureCalls(call, rounds));
      keep(workload, "naive_wgsl", naive.output());
    }
  }

  // onnxruntime-web on its WebGPU execution provider and on wasm, running the ONNX files of
  // scripts/pytorch/export_onnx_peers.py: the same layers and weights as tfjs' and the
  // naive WGSL's, the weights initializers resident in the session (as tfjs' tensors are).
  // The .onnx bytes are fetched before any timing: a page's download is not the runtime's.
  const onnx = Object.fromEntries(
    await Promise.all(
      ["simplenet_b8", "bigmlp", "conv3to16_64", "warm"].map(async (name) => {
        const response = await fetch(`peers/models/${name}.onnx`);
        return [name, new Uint8Array(await response.arrayBuffer())];
      }),
    ),
  );
  const shapes = {
    ...Object.fromEntries(Object.entries(mlps).map(([workload, { batch, widths }]) => [workload, [batch, widths[0]]])),
    conv3to16_64: [conv.batch, conv.inC, conv.size, conv.size],
  };
  ort.env.wasm.wasmPaths = new URL("peers/node_modules/onnxruntime-web/dist/", location.href).href;
  // One thread, as tfjs-wasm and Tailor's CPU backend: the page is not cross-origin
  // isolated, so it has no SharedArrayBuffer for more anyway. The wasm module is shared by
  // both EPs and set up by the first session, so the WebGPU EP's startup_ms (first below)
  // includes loading it.
  ort.env.wasm.numThreads = 1;
  // Output `y` comes back to the CPU (the default preferredOutputLocation): read back, as
  // the other runtimes' outputs are.
  const run = async (session, input, dims) => {
    const { y } = await session.run({ x: new ort.Tensor("float32", input, dims) });
    const data = await y.getData();
    y.dispose();
    return data;
  };
  for (const ep of ["webgpu", "wasm"]) {
    const runtime = `ort_${ep}`;
    const options = { executionProviders: [ep] };
    try {
      // What the page pays once, as for Tailor: the runtime's setup (the wasm module, the
      // EP and its device), through a session of y = x + 1 and one call of it.
      let bytes = onnx.warm.slice();
      let started = performance.now();
      const warm = await ort.InferenceSession.create(bytes, options);
      await run(warm, filled(4), [4]);
      metrics[`startup_ms.${runtime}`] = performance.now() - started;
      await warm.release();
      for (const [workload, dims] of Object.entries(shapes)) {
        bytes = onnx[workload].slice();
        started = performance.now();
        const session = await ort.InferenceSession.create(bytes, options);
        metrics[`session_ms.${workload}.${runtime}`] = performance.now() - started;
        const input = filled(dims.reduce((a, b) => a * b));
        let y = null;
        record(workload, runtime, await measureCalls(async () => (y = await run(session, input, dims)), rounds));
        keep(workload, runtime, y);
        await session.release();
      }
    } catch (error) {
      errors[runtime] = String(error?.message ?? error);
    }
  }

  // onnxruntime's outputs against a reference for the same input and weights: the naive
  // WGSL's for the MLPs, a direct convolution in float64 for the conv (NCHW, the weights
  // filled [out, in, 3, 3] as export_onnx_peers.py fills them). The error is relative to
  // max(1, |reference|); 1e-3 leaves room for another summation order in float32.
  const convReference = () => {
    const { inC, outC, size } = conv;
    const [x, w, b] = [filled(inC * size * size), filled(outC * inC * 9), filled(outC)];
    const y = new Float64Array(outC * size * size);
    for (let o = 0; o < outC; o++)
      for (let r = 0; r < size; r++)
        for (let c = 0; c < size; c++) {
          let sum = b[o];
          for (let i = 0; i < inC; i++)
            for (let kr = 0; kr < 3; kr++)
              for (let kc = 0; kc < 3; kc++) {
                const [rr, cc] = [r + kr - 1, c + kc - 1];
                if (rr >= 0 && rr < size && cc >= 0 && cc < size)
                  sum += x[(i * size + rr) * size + cc] * w[((o * inC + i) * 3 + kr) * 3 + kc];
              }
          y[(o * size + r) * size + c] = sum;
        }
    return y;
  };
  const checks = {};
  for (const workload of Object.keys(shapes)) {
    const [reference, against] =
      workload === "conv3to16_64" ? [convReference(), "direct_conv"] : [outputs[workload]?.naive_wgsl, "naive_wgsl"];
    for (const runtime of ["ort_webgpu", "ort_wasm"]) {
      const y = outputs[workload]?.[runtime];
      if (!y || !reference) continue;
      let worst = y.length === reference.length ? 0 : Infinity;
      for (let i = 0; i < y.length && worst < Infinity; i++) {
        const err = Math.abs(y[i] - reference[i]) / Math.max(1, Math.abs(reference[i]));
        // A NaN fails the check too.
        if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
      }
      checks[`${workload}.${runtime}`] = { against, max_rel_err: worst, ok: worst <= 1e-3 };
    }
  }

  for (const [workload, mlp] of Object.entries(mlps)) {
    const runtimes = ["tailor_gpu", "tailor_cpu", "tfjs_webgpu", "tfjs_wasm", "ort_webgpu", "ort_wasm", "naive_wgsl"];
    for (const runtime of runtimes) {
      const ms = metrics[`steady_ms.${workload}.${runtime}`];
      if (ms !== undefined) metrics[`gflops.${workload}.${runtime}`] = flops(mlp) / (ms * 1e6);
    }
  }
  // Each peer's time over Tailor's on the same device class (GPU runtimes against Tailor on
  // WebGPU, the wasm ones against Tailor's CPU backend): above 1, Tailor is faster.
  const ratios = {};
  for (const [key, ms] of Object.entries(metrics)) {
    const [kind, workload, runtime] = key.split(".");
    if (!kind.endsWith("_ms") || !runtime || runtime.startsWith("tailor")) continue;
    const against = runtime.endsWith("_wasm") ? "tailor_cpu" : "tailor_gpu";
    const ours = metrics[`${kind}.${workload}.${against}`];
    if (ours) ratios[`${key}_over_${against}`] = ms / ours;
  }
  const info = (await navigator.gpu?.requestAdapter())?.info;
  const adapter = info ? [info.vendor, info.architecture, info.description].filter(Boolean).join(" / ") : null;
  const versions = { tfjs: tf.version_core, onnxruntime_web: ort.env.versions?.web };
  return { adapter, versions, metrics, ratios, checks, errors };
}
