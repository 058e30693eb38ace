import { DIST_DIR, launchChromium, serveStatic } from "./harness.mjs";
const server = await serveStatic(DIST_DIR);
const browser = await launchChromium();
const page = browser.context.pages()[0] ?? (await browser.context.newPage());
await page.goto(server.url);
const out = await page.evaluate(async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const M = 256, N = 1024, K = 1024;
  const head = `
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
const M = ${M}i; const N = ${N}i; const K = ${K}i; const K4 = ${K / 4}i;
`;
  const variants = {
    naive: `${head}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let gid = i32(wid.x + wid.y * nwg.x) * 64i + i32(lid);
  if (gid >= M * N) { return; }
  let row = gid / N; let col = gid % N;
  var s = vec4<f32>();
  for (var k = 0i; k < K4; k++) { s += a[row * K4 + k] * w[col * K4 + k]; }
  o[gid] = s.x + s.y + s.z + s.w;
}`,
    reg4x4: `${head}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let gid = i32(wid.x + wid.y * nwg.x) * 64i + i32(lid);
  let bn = N / 4i;
  if (gid >= (M / 4i) * bn) { return; }
  let r0 = (gid / bn) * 4i; let c0 = (gid % bn) * 4i;
  var acc: array<vec4<f32>, 4>;
  for (var k = 0i; k < K4; k++) {
    let b0 = w[(c0 + 0i) * K4 + k]; let b1 = w[(c0 + 1i) * K4 + k]; let b2 = w[(c0 + 2i) * K4 + k]; let b3 = w[(c0 + 3i) * K4 + k];
    for (var i = 0i; i < 4i; i++) {
      let x = a[(r0 + i) * K4 + k];
      acc[i] += vec4<f32>(dot(x, b0), dot(x, b1), dot(x, b2), dot(x, b3));
    }
  }
  for (var i = 0i; i < 4i; i++) { for (var j = 0i; j < 4i; j++) { o[(r0 + i) * N + c0 + j] = acc[i][j]; } }
}`,
    reg4x4_unrolled: `${head}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let gid = i32(wid.x + wid.y * nwg.x) * 64i + i32(lid);
  let bn = N / 4i;
  if (gid >= (M / 4i) * bn) { return; }
  let r0 = (gid / bn) * 4i; let c0 = (gid % bn) * 4i;
  var acc0 = vec4<f32>(); var acc1 = vec4<f32>(); var acc2 = vec4<f32>(); var acc3 = vec4<f32>();
  for (var k = 0i; k < K4; k++) {
    let b0 = w[(c0 + 0i) * K4 + k]; let b1 = w[(c0 + 1i) * K4 + k]; let b2 = w[(c0 + 2i) * K4 + k]; let b3 = w[(c0 + 3i) * K4 + k];
    let x0 = a[(r0 + 0i) * K4 + k]; let x1 = a[(r0 + 1i) * K4 + k]; let x2 = a[(r0 + 2i) * K4 + k]; let x3 = a[(r0 + 3i) * K4 + k];
    acc0 += vec4<f32>(dot(x0, b0), dot(x0, b1), dot(x0, b2), dot(x0, b3));
    acc1 += vec4<f32>(dot(x1, b0), dot(x1, b1), dot(x1, b2), dot(x1, b3));
    acc2 += vec4<f32>(dot(x2, b0), dot(x2, b1), dot(x2, b2), dot(x2, b3));
    acc3 += vec4<f32>(dot(x3, b0), dot(x3, b1), dot(x3, b2), dot(x3, b3));
  }
  let base = r0 * N + c0;
  o[base] = acc0.x; o[base + 1] = acc0.y; o[base + 2] = acc0.z; o[base + 3] = acc0.w;
  o[base + N] = acc1.x; o[base + N + 1] = acc1.y; o[base + N + 2] = acc1.z; o[base + N + 3] = acc1.w;
  o[base + 2 * N] = acc2.x; o[base + 2 * N + 1] = acc2.y; o[base + 2 * N + 2] = acc2.z; o[base + 2 * N + 3] = acc2.w;
  o[base + 3 * N] = acc3.x; o[base + 3 * N + 1] = acc3.y; o[base + 3 * N + 2] = acc3.z; o[base + 3 * N + 3] = acc3.w;
}`,
  };
  const shead = `
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
const M = ${M}i; const N = ${N}i; const K = ${K}i;
`;
  variants.scalar4x4 = `${shead}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let gid = i32(wid.x + wid.y * nwg.x) * 64i + i32(lid);
  let bn = (N + 3i) / 4i;
  if (gid >= ((M + 3i) / 4i) * bn) { return; }
  let r0 = (gid / bn) * 4i; let c0 = (gid % bn) * 4i;
  var acc0 = vec4<f32>(); var acc1 = vec4<f32>(); var acc2 = vec4<f32>(); var acc3 = vec4<f32>();
  for (var kk = 0i; kk < K; kk++) {
    let b = vec4<f32>(w[(c0 + 0i) * K + kk], w[(c0 + 1i) * K + kk], w[(c0 + 2i) * K + kk], w[(c0 + 3i) * K + kk]);
    acc0 += a[(r0 + 0i) * K + kk] * b;
    acc1 += a[(r0 + 1i) * K + kk] * b;
    acc2 += a[(r0 + 2i) * K + kk] * b;
    acc3 += a[(r0 + 3i) * K + kk] * b;
  }
  let base = r0 * N + c0;
  o[base] = acc0.x; o[base + 1] = acc0.y; o[base + 2] = acc0.z; o[base + 3] = acc0.w;
  o[base + N] = acc1.x; o[base + N + 1] = acc1.y; o[base + N + 2] = acc1.z; o[base + N + 3] = acc1.w;
  o[base + 2 * N] = acc2.x; o[base + 2 * N + 1] = acc2.y; o[base + 2 * N + 2] = acc2.z; o[base + 2 * N + 3] = acc2.w;
  o[base + 3 * N] = acc3.x; o[base + 3 * N + 1] = acc3.y; o[base + 3 * N + 2] = acc3.z; o[base + 3 * N + 3] = acc3.w;
}`;
  variants.scalar4x4_guarded = variants.scalar4x4.replace("let b = vec4<f32>(w[(c0 + 0i) * K + kk], w[(c0 + 1i) * K + kk], w[(c0 + 2i) * K + kk], w[(c0 + 3i) * K + kk]);",
    "var b = vec4<f32>(); for (var j = 0i; j < 4i; j++) { if (c0 + j < N) { b[j] = w[(c0 + j) * K + kk]; } }")
    .replace(/acc(\d) \+= a\[\(r0 \+ (\d)i\) \* K \+ kk\] \* b;/g, "if (r0 + $2i < M) { acc$1 += a[(r0 + $2i) * K + kk] * b; }");
  variants.scalar8x4 = `${shead}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let gid = i32(wid.x + wid.y * nwg.x) * 64i + i32(lid);
  let bn = N / 4i;
  if (gid >= (M / 8i) * bn) { return; }
  let r0 = (gid / bn) * 8i; let c0 = (gid % bn) * 4i;
  var acc: array<vec4<f32>, 8>;
  for (var kk = 0i; kk < K; kk++) {
    let b = vec4<f32>(w[(c0 + 0i) * K + kk], w[(c0 + 1i) * K + kk], w[(c0 + 2i) * K + kk], w[(c0 + 3i) * K + kk]);
    acc[0] += a[(r0 + 0i) * K + kk] * b; acc[1] += a[(r0 + 1i) * K + kk] * b; acc[2] += a[(r0 + 2i) * K + kk] * b; acc[3] += a[(r0 + 3i) * K + kk] * b;
    acc[4] += a[(r0 + 4i) * K + kk] * b; acc[5] += a[(r0 + 5i) * K + kk] * b; acc[6] += a[(r0 + 6i) * K + kk] * b; acc[7] += a[(r0 + 7i) * K + kk] * b;
  }
  for (var i = 0i; i < 8i; i++) { for (var j = 0i; j < 4i; j++) { o[(r0 + i) * N + c0 + j] = acc[i][j]; } }
}`;
  const groups = { scalar4x4: (M * N) / 16 / 64, scalar4x4_guarded: (M * N) / 16 / 64, scalar8x4: (M * N) / 32 / 64, naive: (M * N) / 64, reg4x4: (M * N) / 16 / 64, reg4x4_unrolled: (M * N) / 16 / 64 };
  const buf = (usage, size) => device.createBuffer({ size, usage });
  const A = buf(GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, M * K * 4);
  const W = buf(GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, N * K * 4);
  const O = buf(GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC, M * N * 4);
  const R = buf(GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, M * N * 4);
  device.queue.writeBuffer(A, 0, Float32Array.from({ length: M * K }, (_, i) => Math.sin(i)));
  device.queue.writeBuffer(W, 0, Float32Array.from({ length: N * K }, (_, i) => Math.cos(i)));
  const res = {};
  let check = null;
  for (const [name, code] of Object.entries(variants)) {
    const t0 = performance.now();
    device.pushErrorScope("validation");
    const p = device.createComputePipeline({ layout: "auto", compute: { module: device.createShaderModule({ code }), entryPoint: "main" } });
    const err = await device.popErrorScope();
    if (err) { res[name] = "ERR " + err.message; continue; }
    const build = performance.now() - t0;
    const bg = device.createBindGroup({ layout: p.getBindGroupLayout(0), entries: [A, W, O].map((buffer, i) => ({ binding: i, resource: { buffer } })) });
    const times = [];
    for (let r = 0; r < 4; r++) {
      const t = performance.now();
      const enc = device.createCommandEncoder(); const pass = enc.beginComputePass(); pass.setPipeline(p); pass.setBindGroup(0, bg);
      const g = groups[name]; const x = Math.min(g, 65535); pass.dispatchWorkgroups(x, Math.ceil(g / x)); pass.end();
      enc.copyBufferToBuffer(O, 0, R, 0, M * N * 4); device.queue.submit([enc.finish()]);
      await R.mapAsync(GPUMapMode.READ); const v = new Float32Array(R.getMappedRange().slice(0, 16)); R.unmap();
      times.push(performance.now() - t);
      if (r === 0) { if (!check) check = Array.from(v); else res[name + "_diff"] = Math.max(...Array.from(v).map((y, i) => Math.abs(y - check[i]))); }
    }
    times.sort((a, b) => a - b);
    res[name] = { build: +build.toFixed(1), run: +times[1].toFixed(1), gflops: +(2 * M * N * K / (times[1] * 1e6)).toFixed(2) };
  }
  return res;
});
console.log(JSON.stringify(out));
await browser.close(); await server.close();
