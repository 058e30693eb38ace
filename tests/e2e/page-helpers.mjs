// Helpers shared by the page's end-to-end tests: open the built page in Chromium, wait for
// compilations and lab runs, save screenshots. Not a test file (node --test runs *.test.mjs).

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DIST_DIR, RESULTS_DIR, launchChromium, serveStatic } from "./harness.mjs";

export const LOAD_TIMEOUT_MS = 60_000;

/** The material's demo batches as a cache-lab sequence for SimpleNet. */
export const DEMO_SEQUENCE = [8, 16, 32, 16, 8, 64, 16, 8].map((b) => `x=${b},64`).join(" ");

/**
 * Serves dist/ and opens the page; resolves to `{ page, errors, dialogs, close }` once the
 * page has compiled its first model. `init` runs in the page before its own scripts. `errors` collects uncaught page errors
 * and i18n.js's console errors for a missing key, `dialogs` any
 * alert/confirm (there must be none: user text never becomes markup).
 */
export async function openPage({ viewport, hash = "", init = null } = {}) {
  assert.ok(existsSync(join(DIST_DIR, "index.html")), "dist/index.html missing: run trunk build --release");
  await mkdir(RESULTS_DIR, { recursive: true });
  const server = await serveStatic(DIST_DIR);
  const browser = await launchChromium();
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  if (viewport) await page.setViewportSize(viewport);
  if (init) await page.addInitScript(init);
  const errors = [];
  const dialogs = [];
  page.on("pageerror", (error) => errors.push(error.message));
  // A string the page asks i18n.js for and it lacks is an error too (i18n.js says so on the
  // console rather than show the raw key).
  page.on("console", (message) => {
    if (message.type() === "error" && message.text().startsWith("i18n: missing key")) errors.push(message.text());
  });
  page.on("dialog", async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  await page.goto(server.url + hash);
  await page.waitForSelector("body[data-ready=true]", { timeout: LOAD_TIMEOUT_MS });
  return {
    page,
    errors,
    dialogs,
    server,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

/** Runs `action` and waits until the page has finished one more compilation. */
export async function afterCompile(page, action) {
  const before = Number(await page.evaluate(() => document.body.dataset.compiles ?? 0));
  await action();
  await page.waitForFunction((n) => Number(document.body.dataset.compiles ?? 0) > n, before, { timeout: 30_000 });
}

/**
 * The model editor's text. The editor is CodeMirror (no `fill`/`inputValue`), so the tests read
 * and write it through the page's console handle, `window.tailorPage.editor`.
 */
export async function editorText(page) {
  return page.evaluate(() => window.tailorPage.editor.value);
}

/** Replaces the model editor's text the way a paste does: the page sees the user's edit. */
export async function setEditorText(page, text) {
  await page.evaluate((text) => {
    const { view } = window.tailorPage.editor;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, userEvent: "input.paste" });
  }, text);
}

/** Sets the editor's source and input shapes, then compiles. */
export async function compileSource(page, source, shapes) {
  await setEditorText(page, source);
  if (shapes !== undefined) await page.getByTestId("input-shapes").fill(shapes);
  await afterCompile(page, () => page.getByTestId("compile-button").click());
}

/** Selects a dynamic mode (which recompiles). */
export async function selectMode(page, mode) {
  if ((await page.getByTestId("mode-select").inputValue()) === mode) return;
  await afterCompile(page, () => page.getByTestId("mode-select").selectOption(mode));
}

/** Runs a cache-lab sequence and resolves to the `data-action` of each of its calls. */
export async function runLab(page, sequence) {
  await page.getByTestId("cache-sequence").fill(sequence);
  const n = sequence.trim().split(/\s+/).length;
  const before = Number(await page.evaluate(() => document.getElementById("lab").dataset.runs ?? 0));
  await page.getByTestId("cache-run").click();
  await page.waitForFunction((runs) => Number(document.getElementById("lab").dataset.runs ?? 0) > runs, before, {
    timeout: 60_000,
  });
  const actions = await page.$$eval('[data-testid="cache-events"] > li', (items) => items.map((li) => li.dataset.action));
  return actions.slice(-n);
}

export function count(actions, action) {
  return actions.filter((a) => a === action).length;
}

/** Saves a screenshot of `locator` (or the page) as test-results/NAME.png. */
export async function shot(page, name, locator = null) {
  const path = join(RESULTS_DIR, `${name}.png`);
  if (locator) await locator.screenshot({ path });
  else await page.screenshot({ path, fullPage: true });
}

/** The visible error box's text, or `null`. */
export async function shownError(page) {
  const box = page.getByTestId("error-message");
  return (await box.isVisible()) ? await box.textContent() : null;
}

/**
 * The edges of the drawn graph that pass through a box other than their own two ends:
 * `[]` when every edge is routed around the nodes it skips. Each edge is a polyline
 * (`path.edge` with `data-from`/`data-to`); each box a `g.node` with its rect.
 */
export async function edgesThroughBoxes(page) {
  return page.evaluate(() => {
    const svg = document.querySelector('[data-testid="graph-view"] svg');
    const boxes = [...svg.querySelectorAll("g.node")].map((g) => {
      const [, x, y] = /translate\(([-\d.e]+),\s*([-\d.e]+)\)/.exec(g.getAttribute("transform"));
      const rect = g.querySelector("rect");
      return { id: g.dataset.node, x: +x, y: +y, w: +rect.getAttribute("width"), h: +rect.getAttribute("height") };
    });
    // Whether segment p-q meets the box's interior (shrunk by a pixel: touching is not crossing).
    const crosses = ([px, py], [qx, qy], b) => {
      const [x0, y0, x1, y1] = [b.x + 1, b.y + 1, b.x + b.w - 1, b.y + b.h - 1];
      let [t0, t1] = [0, 1];
      const dx = qx - px;
      const dy = qy - py;
      for (const [p, q] of [[-dx, px - x0], [dx, x1 - px], [-dy, py - y0], [dy, y1 - py]]) {
        if (p === 0) {
          if (q < 0) return false;
        } else {
          const r = q / p;
          if (p < 0) t0 = Math.max(t0, r);
          else t1 = Math.min(t1, r);
          if (t0 > t1) return false;
        }
      }
      return true;
    };
    const bad = [];
    for (const path of svg.querySelectorAll("path.edge")) {
      const points = path.getAttribute("d").match(/-?[\d.]+(?:e-?\d+)?,-?[\d.]+(?:e-?\d+)?/g).map((p) => p.split(",").map(Number));
      for (let i = 0; i + 1 < points.length; i++) {
        for (const box of boxes) {
          if (box.id === path.dataset.from || box.id === path.dataset.to) continue;
          if (crosses(points[i], points[i + 1], box)) bad.push(`${path.dataset.from}->${path.dataset.to} through ${box.id}`);
        }
      }
    }
    return bad;
  });
}

/**
 * Every visible, enabled text of `root` in `page` whose contrast with the colour behind it is
 * under 4.5 (WCAG AA for body text): `[{ text, fg, bg, ratio }]`. The colour behind is the
 * nearest ancestor's opaque background; a graph node's or edge label's text, its rect.
 */
export function lowContrast(page, root) {
  return page.evaluate((root) => {
    const rgb = (colour) => colour.match(/[\d.]+/g).map(Number);
    const lum = (colour) => {
      const [r, g, b] = rgb(colour).map((v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const opaque = (colour) => colour !== "transparent" && (rgb(colour)[3] ?? 1) === 1;
    const behind = (element) => {
      for (let at = element; at; at = at.parentElement) {
        // An SVG element's `background` (a chart's legend swatch rule) paints nothing.
        if (at instanceof SVGElement) continue;
        const style = getComputedStyle(at);
        if (opaque(style.backgroundColor)) return style.backgroundColor;
      }
      return getComputedStyle(document.body).backgroundColor;
    };
    const low = [];
    for (const element of document.querySelector(root).querySelectorAll("*")) {
      const own = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
      if (!own || !element.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      if (element.closest(":disabled, .pending, .cm-disabled")) continue;
      const style = getComputedStyle(element);
      const svg = element instanceof SVGElement;
      const fg = svg ? style.fill : style.color;
      const bg = (svg && behindRect(element)) || behind(element);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < 4.5) low.push({ text: element.textContent.trim().slice(0, 40), fg, bg, ratio: ratio.toFixed(2) });
    }
    return low;
    // An SVG text's background: the rect drawn under it in a graph node or edge label.
    function behindRect(text) {
      const rect = text.closest("g.node, g.edge-label")?.querySelector("rect");
      return rect && opaque(getComputedStyle(rect).fill) ? getComputedStyle(rect).fill : null;
    }
  }, root);
}
