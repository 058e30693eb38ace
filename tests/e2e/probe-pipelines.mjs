// How the test Chromium builds compute pipelines: the facts that decide whether the page can
// run a product's naive tier while its large form builds (tiers, issue 11). Raw WebGPU, no
// Tailor: a shader with two `array<vec4<f32>, 256>` workgroup tiles (what makes a tiled
// product slow to build on SwiftShader) and a small one with 16-element tiles. Measures, each
// to the end of one dispatch:
// - `sync_cold_ms`: `createComputePipeline` of a new shader;
// - `async_cold_ms`: `createComputePipelineAsync` of another new shader;
// - `sync_after_async_ms`: `createComputePipeline` of the shader the async call just built
//   (fast only if the browser's pipeline cache hands back the async build, which is what
//   wgpu 30, whose web backend has no asynchronous creation, would need);
// - `async_four_ms`: four new shaders through `createComputePipelineAsync` at once (against
//   four times `async_cold_ms`: do builds overlap?);
// - `small_behind_async_ms`: a small new shader created and run while a large async build
//   is pending (does a call wait behind a background build?), and `small_alone_ms`.
// Prints one JSON object; `node tests/e2e/probe-pipelines.mjs`. Not a test (it asserts
// nothing), and not part of the test command.

import { launchChromium, serveStatic } from "./harness.mjs";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = await mkdtemp(join(tmpdir(), "tailor-probe-"));
await writeFile(join(root, "index.html"), "<!doctype html><title>probe</title>");
const server = await serveStatic(root);
const browser = await launchChromium();
try {
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  const report = await page.evaluate(async () => {
    const adapter = await navigator.gpu?.requestAdapter();
    if (!adapter) return { error: "no WebGPU adapter" };
    const device = await adapter.requestDevice();
    // `seed` makes each shader new to the browser; `n` sizes its workgroup tiles.
    const shader = (seed, n) => `
      var<workgroup> tile_a: array<vec4<f32>, ${n}>;
      var<workgroup> tile_b: array<vec4<f32>, ${n}>;
      @group(0) @binding(0) var<storage, read_write> out: array<f32>;
      @compute @workgroup_size(64)
      fn main(@builtin(local_invocation_index) i: u32) {
        tile_a[i % ${n}u] = vec4<f32>(f32(i) + ${seed}.0);
        tile_b[i % ${n}u] = tile_a[(i + 1u) % ${n}u];
        workgroupBarrier();
        var acc = vec4<f32>(0.0);
        for (var k = 0u; k < ${n}u; k++) { acc += tile_a[k] * tile_b[(k + i) % ${n}u]; }
        out[i] = acc.x + acc.y + acc.z + acc.w;
      }`;
    const out = device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE });
    const descriptor = (code) => ({
      layout: "auto",
      compute: { module: device.createShaderModule({ code }), entryPoint: "main" },
    });
    const dispatch = async (pipeline) => {
      const group = device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer: out } }],
      });
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(1);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    };
    const timed = async (work) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const large = 256;
    const small = 16;
    const report = {};
    report.sync_cold_ms = await timed(() => dispatch(device.createComputePipeline(descriptor(shader(1, large)))));
    let built = null;
    report.async_cold_ms = await timed(async () => {
      built = await device.createComputePipelineAsync(descriptor(shader(2, large)));
      await dispatch(built);
    });
    report.sync_after_async_ms = await timed(() => dispatch(device.createComputePipeline(descriptor(shader(2, large)))));
    report.async_four_ms = await timed(async () => {
      const pipelines = await Promise.all([3, 4, 5, 6].map((seed) => device.createComputePipelineAsync(descriptor(shader(seed, large)))));
      await Promise.all(pipelines.map(dispatch));
    });
    const pending = device.createComputePipelineAsync(descriptor(shader(7, large)));
    report.small_behind_async_ms = await timed(() => dispatch(device.createComputePipeline(descriptor(shader(8, small)))));
    await pending;
    report.small_alone_ms = await timed(() => dispatch(device.createComputePipeline(descriptor(shader(9, small)))));
    const info = adapter.info;
    report.adapter = [info.vendor, info.architecture, info.description].filter(Boolean).join(" / ");
    return report;
  });
  console.log(JSON.stringify(report, null, 1));
} finally {
  await browser.close();
  await server.close();
  await rm(root, { recursive: true, force: true });
}
