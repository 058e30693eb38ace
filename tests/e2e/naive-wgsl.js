// Hand-written naive WGSL for a stack of linear layers (x @ W + b, then ReLU but for the
// last): one thread per output, the floor any WebGPU code reaches. A classic script the
// benchmarks (`bench-peers.mjs`, `bench-steady.mjs`) add to their page. It defines
// `naiveWgslMlp(device, { batch, widths }, filled)`, which makes the layers' buffers (their
// weights from `filled(n)`) and returns `{ call(input, nudgeAfterMs), output() }`: `call`
// writes the input, runs every layer in one submit, reads the last layer's output back and
// resolves once it is copied out; `output` is that copy. Pipelines are made on the first
// call and bind groups on every call, as naive code does. With `nudgeAfterMs`, where the
// read-back is not mapped that long after the submit, an empty command list is submitted,
// as Tailor's page does by default (`Tailor.setNudges`), so that the benchmark can compare
// the two both ways.
globalThis.naiveWgslMlp = (device, { batch, widths }, filled) => {
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
  let pipelines = null;
  let y = null;
  const call = async (input, nudgeAfterMs = 0) => {
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
    const nudge = nudgeAfterMs > 0 ? setTimeout(() => device.queue.submit([]), nudgeAfterMs) : 0;
    await read.mapAsync(GPUMapMode.READ).finally(() => clearTimeout(nudge));
    y = new Float32Array(read.getMappedRange().slice(0));
    read.unmap();
  };
  return { call, output: () => y };
};
