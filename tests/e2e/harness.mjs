// Shared by the end-to-end tests and the WebGPU probe: serves dist/ on 127.0.0.1 and
// launches the system Chromium through playwright-core (which never downloads a browser).

import { createServer } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const REPO_ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
export const DIST_DIR = join(REPO_ROOT, "dist");
export const RESULTS_DIR = join(REPO_ROOT, "test-results");
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

// Known-good flags for headless WebGPU on lavapipe (Mesa's CPU Vulkan) in this container.
// Playwright adds its own automation flags, a fresh temporary --user-data-dir is passed
// below, and the browser must not phone home (the machine has no general network access).
export const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--enable-features=Vulkan",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

// `.wasm` must be `application/wasm`, or WebAssembly.instantiateStreaming refuses it.
const MIME_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/**
 * Serves `root` on 127.0.0.1 at a port the OS picks; resolves to `{ url, close }`. With
 * `isolated`, the page is cross-origin isolated (COOP and COEP), which gives it 5 µs timers
 * instead of 100 µs ones (the benchmarks that time parts of a call).
 */
export async function serveStatic(root, { isolated = false } = {}) {
  const isolation = isolated
    ? { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" }
    : {};
  const server = createServer(async (request, response) => {
    try {
      const pathname = decodeURIComponent(new URL(request.url, "http://localhost").pathname);
      const relative = pathname.endsWith("/") ? `${pathname}index.html` : pathname;
      const file = normalize(join(root, relative));
      if (!file.startsWith(root + sep)) {
        response.writeHead(403).end();
        return;
      }
      const body = await readFile(file);
      const type = MIME_TYPES[extname(file)] ?? "application/octet-stream";
      response.writeHead(200, { "content-type": type, "cache-control": "no-store", ...isolation });
      response.end(body);
    } catch {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
    }
  });
  await new Promise((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolveClose) => server.close(resolveClose)),
  };
}

/**
 * Launches Chromium with a fresh profile in a temporary directory; resolves to
 * `{ context, close }`. `close` shuts the browser and removes the profile.
 */
export async function launchChromium() {
  const userDataDir = await mkdtemp(join(tmpdir(), "tailor-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
