// Reports whether the test Chromium exposes WebGPU (navigator.gpu and an adapter). Only
// informative: it always exits 0, because the page must also work without WebGPU.
// Not a test file (node --test picks up *.test.mjs only); scripts/test.sh runs it directly.

import { DIST_DIR, launchChromium, serveStatic } from "./harness.mjs";

// WebGPU exists only in secure contexts; http://127.0.0.1 counts as one, about:blank does not.
const server = await serveStatic(DIST_DIR);
let browser;
try {
  browser = await launchChromium();
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await page.goto(server.url);
  const report = await page.evaluate(async () => {
    if (!("gpu" in navigator)) return "navigator.gpu absent";
    const adapter = await navigator.gpu.requestAdapter();
    if (adapter === null) return "navigator.gpu present, but requestAdapter() returned null";
    const { vendor, architecture, device, description, isFallbackAdapter } = adapter.info ?? {};
    const name = [vendor, architecture, device, description].filter(Boolean).join(" / ");
    const kind = isFallbackAdapter ? " (fallback adapter: software, e.g. SwiftShader)" : "";
    return `navigator.gpu present, adapter: ${name || "(no adapter info)"}${kind}`;
  });
  console.log(`webgpu-probe: ${report}`);
} catch (error) {
  console.log(`webgpu-probe: could not probe WebGPU: ${error.message}`);
} finally {
  await browser?.close();
  await server.close();
}
