// The guard cache lab: runs a sequence of calls through the compiled model, from an empty
// cache (or keeping the last run's entries), one call per browser task so the page stays
// responsive; shows each call's action and reasons, the entries with their guards, the
// latency timeline and the recompile limit; and compares the three modes side by side
// (T_total = T_compile + Σ T_run + Σ T_recompile, measured), feeding sections 5 and 8.

import { fill, h, m, scrollWithin, yieldToBrowser } from "./dom.js";
import { formatMs } from "./format.js";
import { callError, errorText, t } from "./i18n.js";
import { renderTimeline } from "./chart.js";
import { inputText, parseShapes, sameSignature, shapesWith } from "./shapes.js";
import { callTotals, inductorCompileMs, percentile } from "./stats.js";

/** The material's sequences, as values of the varying dims. */
const SEQUENCES = {
  demo: [8, 16, 32, 16, 8, 64, 16, 8],
  nlp: [8, 16, 32, 64, 128, 256, 512, 77, 300],
  cv: [320, 416, 640, 320, 416],
  batch: [1, 2, 4, 8, 16, 32, 64],
  limit: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};


const $ = (id) => document.getElementById(id);

/** The lab, following the page's `events`; returns what other parts start in it: `run()`
 * (the sequence), `compare()` (the three modes) and `runScenario(presetId, sequenceId)`. */
export function setupLab(ctx, events) {
  const ui = {
    sequence: $("cache-sequence"),
    slider: $("cache-slider"),
    sliderValue: $("cache-slider-value"),
    add: $("cache-add"),
    run: $("cache-run"),
    keep: $("cache-keep"),
    compare: $("cache-compare"),
    status: $("lab-status"),
    limit: $("limit-meter"),
    events: $("cache-events"),
    entries: $("cache-entries"),
    chart: $("timeline-chart"),
    compareView: $("compare-view"),
    simulate: $("cache-simulate"),
    tradeoff: $("tradeoff-view"),
    deploy: $("deploy-view"),
  };
  let running = false;
  let lastModel = null;
  let comparison = null;

  const sequenceOf = (values) => values.map((value) => ctx.shapesWith(value)).join(" ");

  function applyPreset(preset) {
    ui.sequence.value = sequenceOf(preset.sequence);
    const [min, max, step] = preset.slider;
    Object.assign(ui.slider, { min, max, step });
    ui.slider.value = preset.sequence[0];
    ui.sliderValue.textContent = ui.slider.value;
  }
  events.on("preset", applyPreset);
  applyPreset(ctx.currentPreset() ?? ctx.presets[0]);

  for (const chip of document.querySelectorAll("[data-sequence]")) {
    if (chip.classList.contains("scenario")) continue;
    chip.addEventListener("click", () => {
      ui.sequence.value = sequenceOf(SEQUENCES[chip.dataset.sequence]);
      ui.sequence.focus();
    });
  }
  ui.slider.addEventListener("input", () => (ui.sliderValue.textContent = ui.slider.value));
  ui.add.addEventListener("click", () => {
    ui.sequence.value = `${ui.sequence.value.trim()} ${ctx.shapesWith(Number(ui.slider.value))}`.trim();
  });
  ui.sequence.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      run();
    }
  });
  ui.run.addEventListener("click", () => run());
  ui.simulate.addEventListener("change", () => render());
  ui.compare.addEventListener("click", () => compare());
  for (const control of [ui.sequence, ui.slider, ui.add, ui.run, ui.compare]) control.disabled = false;

  /** The tokens of the sequence, each checked by the model; `null` after showing an error. */
  function tokens(model) {
    const list = ui.sequence.value.trim().split(/\s+/).filter(Boolean);
    if (list.length === 0) {
      say(() => t("lab.empty"));
      return null;
    }
    for (const token of list) {
      try {
        model.checkShapes(token);
      } catch (error) {
        say(() => t("lab.badToken", token, errorText(error)), true);
        return null;
      }
    }
    return list;
  }

  /** Says `text()` in the status line, and again in the other language when it changes. */
  let said = null;
  function say(text, isError = false) {
    said = { text, isError };
    renderSaid();
  }

  function renderSaid() {
    if (!said) return;
    ui.status.textContent = said.text();
    ui.status.classList.toggle("error-text", said.isError);
  }

  /** Calls `model` with each token while `alive()` (false once the page replaced it). */
  async function callAll(model, list, alive, onCall) {
    for (const [i, token] of list.entries()) {
      if (!alive()) return false;
      const result = await ctx.guarded(async () => {
        try {
          return await model.call(token);
        } catch (error) {
          if (error?.call) return error.call;
          throw error;
        }
      });
      if (result === undefined) return false;
      onCall(i, list.length);
      await yieldToBrowser();
    }
    return true;
  }
  const comparing = new Set();

  async function run() {
    if (running) return;
    const model = ctx.model;
    if (!model) return say(() => t("lab.needModel"), true);
    const list = tokens(model);
    if (!list) return;
    running = true;
    ui.run.disabled = true;
    try {
      if (!ui.keep.checked) model.reset();
      lastModel = model;
      render();
      await callAll(model, list, () => model === ctx.model, (i, n) => {
        say(() => t("lab.running", i + 1, n));
        render();
      });
      const calls = model === ctx.model ? model.events() : [];
      const count = (action) => calls.filter((c) => c.action === action).length;
      say(() => t("lab.done", calls.length, count("compile"), count("hit"), count("eager"), count("error")));
      events.emit("labRun", model);
    } catch (error) {
      say(() => errorText(error), true);
    } finally {
      running = false;
      ui.run.disabled = false;
      // Counts finished runs on <section id="lab" data-runs>, so tests can wait for one.
      const section = document.getElementById("lab");
      section.dataset.runs = String(Number(section.dataset.runs ?? 0) + 1);
    }
  }

  function barLabel(call) {
    const [name, dim] = ctx.varyDims()[0] ?? [];
    const input = parseShapes(call.shapes).find((i) => i.name === name);
    return String(input?.dims[dim] ?? call.index + 1);
  }

  function render() {
    const model = ctx.model;
    if (!model || model !== lastModel) {
      fill(ui.events);
      fill(ui.entries, h("li", { class: "hint" }, t("lab.noEntries")));
      fill(ui.chart, renderTimeline([], barLabel));
      fill(ui.limit);
      return;
    }
    const calls = model.events();
    const entries = model.entries();
    fill(ui.events, ...calls.map(renderCall));
    fill(ui.entries, ...(entries.length ? entries.map(renderEntry) : [h("li", { class: "hint" }, t("lab.noEntries"))]));
    const device = ctx.tailor.device === "gpu" ? t("lab.runsOnGpu", ctx.tailor.webgpu.adapter + (ctx.tailor.webgpu.emulated ? t("gpu.emulatedTag") : "")) : t("lab.runsOnCpu");
    fill(ui.chart, renderTimeline(calls, barLabel, { simulate: ui.simulate.checked }), h("p", { class: "hint" }, device));
    const warning = calls.find((c) => c.warning)?.warning;
    const skipped = calls.find((c) => c.skipped)?.skipped;
    const limit = model.recompileLimit;
    fill(ui.limit,
      h("div", { class: "meter", role: "meter", "aria-valuemin": 0, "aria-valuemax": limit, "aria-valuenow": entries.length, "aria-label": t("lab.limit", entries.length, limit) },
        ...Array.from({ length: limit }, (_, i) => h("span", { class: i < entries.length ? "cell full" : "cell" }))),
      h("span", {}, t("lab.limit", entries.length, limit)),
      warning ? h("div", { class: "warning" }, h("p", {}, t("lab.limitHit")), h("pre", {}, warning)) : null,
      skipped ? h("div", { class: "warning", dataset: { testid: "lab-skipped" } }, h("p", {}, t("lab.skipped")), h("pre", {}, skipped)) : null);
    scrollWithin(ui.events, ui.events.lastElementChild);
  }
  /** Whether every token of the sequence is a call of the compiled call's signature (its
   * inputs, ranks and dtypes) that `model` takes (its marked ranges). */
  function sequenceFits(model) {
    const list = ui.sequence.value.trim().split(/\s+/).filter(Boolean);
    try {
      for (const token of list) model.checkShapes(token);
    } catch {
      return false;
    }
    return list.length > 0 && list.every((token) => sameSignature(token, ctx.currentShapes()));
  }

  /** A sequence for the learner's own model, from its compiled call: that call first, then
   * the material's batch sizes on the dims that vary (dim 0 of the first input). */
  function followModel() {
    const first = shapesWith(ctx.currentShapes(), [], 0);
    const rest = SEQUENCES.batch.map((value) => ctx.shapesWith(value)).filter((token) => token !== first);
    ui.sequence.value = [first, ...rest].join(" ");
    Object.assign(ui.slider, { min: 1, max: 64, step: 1 });
    ui.slider.value = SEQUENCES.batch[0];
    ui.sliderValue.textContent = ui.slider.value;
  }

  events.on("compiled", () => {
    lastModel = null;
    // A model that is not a preset, whose calls the sequence does not fit (a pasted file
    // after SimpleNet's `x=8,64`): the sequence follows the compiled call.
    if (!ctx.currentPreset() && ctx.model && !sequenceFits(ctx.model)) followModel();
    render();
  });
  events.on("restart", () => {
    lastModel = null;
    comparing.clear();
  });

  function renderCall(call) {
    // A call through graph breaks calls each resume function's frame too: every frame's
    // failing guards, as `frame/entry: reason`.
    const reasons = [
      ...call.reasons.map((r) => `0/${r.entry}: ${r.text}`),
      ...call.breaks.flatMap((b) => b.reasons.map((r) => `${b.frame}/${r.entry}: ${r.text}`)),
    ];
    return h("li", { class: `call act-${call.action}`, dataset: { action: call.action } },
      h("div", { class: "call-head" },
        h("span", { class: "index" }, `#${call.index + 1}`),
        h("code", {}, call.shapes),
        h("span", { class: `badge action act-${call.action}` }, t("action." + call.action)),
        call.entry !== null ? h("span", {}, t("lab.entry", call.entry) + t("lab.wrapper", call.wrapper)) : null,
        h("span", { class: "ms" }, formatMs(call.ms.guard + call.ms.compile + call.ms.run))),
      call.breaks.length ? renderFrames(call) : null,
      reasons.length
        ? h("details", { class: "reasons", open: call.action !== "hit" || call.breaks.some((b) => b.action !== "hit") },
          h("summary", {}, t("lab.reasons")), h("ul", {}, ...reasons.map((text) => h("li", {}, h("code", {}, text)))))
        : null,
      call.error ? h("p", { class: "error-text" }, callError(call)) : null,
      ...call.breaks.filter((b) => b.error).map((b) => h("p", { class: "error-text" }, `${b.function}: ${callError(b)}`)));
  }

  /** `0/1 compile → 1/1 compile → 2/1 hit`: each frame's entry and action, in call order. */
  function renderFrames(call) {
    const frame = (id, entry, action, title) =>
      h("span", { class: `frame act-${action}`, title, dataset: { frame: id, action } },
        h("code", {}, `${id}/${entry ?? "–"}`), " ", t("action." + action));
    const chain = [frame(0, call.entry, call.action, null)];
    for (const b of call.breaks) {
      chain.push(h("span", { class: "arrow", "aria-hidden": "true" }, " → "),
        frame(b.frame, b.entry, b.action, `${b.function} (${t("breaks.at", b.graphBreak.line, b.graphBreak.col)})`));
    }
    return h("p", { class: "call-frames", dataset: { testid: "call-frames" } }, h("span", { class: "hint" }, t("lab.frames")), " ", ...chain);
  }

  function renderEntry(entry) {
    const dims = entry.inputs.map(inputText).join("; ");
    const guards = h("ol", { class: "guards-view compact" });
    ctx.renderGuards(entry.guards, guards);
    return h("li", { class: "entry", dataset: { entry: entry.id } },
      h("div", { class: "entry-head" },
        h("strong", {}, t("lab.entry", entry.id)),
        h("code", {}, dims),
        h("span", { class: "badge" }, `dynamic=${entry.mode}${t("lab.wrapper", entry.wrapper)}`)),
      h("details", {}, h("summary", {}, t("lab.guards", entry.guards.length)), guards));
  }

  async function compare() {
    if (running || !ctx.model) return say(() => t("lab.needModel"), true);
    const list = tokens(ctx.model);
    if (!list) return;
    running = true;
    ui.compare.disabled = true;
    const source = ctx.editor.value;
    const results = [];
    try {
      for (const mode of ["false", "true", "auto"]) {
        say(() => t("lab.compareRunning", mode === "auto" ? "None" : mode === "true" ? "True" : "False"));
        // Every mode pays for its own pipelines: a mode run after another must not reuse them.
        await ctx.tailor.clearKernelCache();
        const before = await ctx.tailor.gpuStats();
        let model;
        try {
          model = ctx.tailor.compile(source, { ...ctx.currentOptions(), dynamic: mode });
        } catch (error) {
          return say(() => errorText(error), true);
        }
        comparing.add(model);
        const finished = await callAll(model, list, () => comparing.has(model), () => {});
        if (!finished) return;
        const after = await ctx.tailor.gpuStats();
        const pipelines = after && before ? after.pipelinesCreated - before.pipelinesCreated : 0;
        results.push({ ...summarise(mode, model.events()), pipelines });
        comparing.delete(model);
        model.free();
      }
      comparison = { tokens: list, results };
      say(() => t("lab.compareDone"));
      renderComparison();
    } finally {
      running = false;
      ui.compare.disabled = false;
    }
  }

  function summarise(mode, calls) {
    return {
      mode,
      calls,
      ...callTotals(calls),
      eager: calls.filter((c) => c.action === "eager").length,
      latencies: calls.map((c) => c.ms.guard + c.ms.compile + c.ms.run),
    };
  }

  const modeName = (mode) => (mode === "auto" ? "None" : mode === "true" ? "True" : "False");

  /** `T_total = T_compile + Σ_{i=1}^{N} T_run + Σ_{j=1}^{M} T_recompile` with N and M, then
   * the same with the measured numbers. */
  function totalFormula(result) {
    const num = (ms) => m("mn", {}, ms.toFixed(2));
    const term = (sub, sup) =>
      sup ? m("msubsup", {}, m("mi", {}, "T"), m("mtext", {}, sub), m("mrow", {}, m("mo", { stretchy: "false" }, "("), m("mi", {}, sup), m("mo", { stretchy: "false" }, ")")))
        : m("msub", {}, m("mi", {}, "T"), m("mtext", {}, sub));
    const sum = (index, count) =>
      m("munderover", {}, m("mo", {}, "∑"), m("mrow", {}, m("mi", {}, index), m("mo", {}, "="), m("mn", {}, "1")), m("mn", {}, String(count)));
    const recompiles = Math.max(0, result.compiles - 1);
    const symbolic = m("math", { display: "block", class: "formula filled" },
      m("mrow", {}, term("total"), m("mo", {}, "="), term("compile"), m("mo", {}, "+"), sum("i", result.calls.length), term("run", "i"),
        m("mo", {}, "+"), sum("j", recompiles), term("recompile", "j")));
    const numbers = m("math", { display: "block", class: "formula filled", "aria-label": `T total ${result.total.toFixed(2)} ms` },
      m("mrow", {}, term("total"), m("mo", {}, "="), num(result.first), m("mo", {}, "+"), num(result.run), m("mo", {}, "+"),
        num(result.recompile), m("mo", {}, "="), num(result.total), m("mtext", {}, "\u2009ms")));
    return [symbolic, numbers];
  }

  function renderComparison() {
    if (!comparison) return;
    const headers = ["compare.mode", "compare.compiles", "compare.eager", "compare.first", "compare.run", "compare.recompile", "compare.total"];
    const table = h("table", { class: "compare" },
      h("thead", {}, h("tr", {}, ...headers.map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...comparison.results.map((r) =>
        h("tr", { dataset: { mode: r.mode, pipelines: r.pipelines } },
          h("th", { scope: "row" }, `dynamic=${modeName(r.mode)}`),
          h("td", {}, String(r.compiles)), h("td", {}, String(r.eager)),
          h("td", {}, formatMs(r.first)), h("td", {}, formatMs(r.run)), h("td", {}, formatMs(r.recompile)),
          h("td", {}, formatMs(r.total))))));
    const projections = comparison.results.map((r) => {
      const seconds = inductorCompileMs(r.compiles) / 1000 + r.run / 1000;
      return h("li", {}, t("compare.inductor", modeName(r.mode), seconds.toFixed(1)));
    });
    fill(ui.compareView, h("h4", {}, `T_total (${comparison.tokens.length} ${t("chart.calls")})`),
      h("div", { class: "table-scroll" }, table), h("p", { class: "hint" }, t("compare.note")), h("ul", {}, ...projections));
    fill(ui.tradeoff, ...comparison.results.flatMap((r) => [h("h4", {}, `dynamic=${modeName(r.mode)}`), ...totalFormula(r)]),
      h("p", { class: "hint" }, t("compare.note")), h("ul", {}, ...projections.map((li) => li.cloneNode(true))));
    fill(ui.deploy, h("div", { class: "table-scroll" }, h("table", { class: "compare" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("compare.mode")), h("th", { scope: "col" }, t("deploy.p50")), h("th", { scope: "col" }, t("deploy.p99")), h("th", { scope: "col" }, t("deploy.max")))),
      h("tbody", {}, ...comparison.results.map((r) => h("tr", {},
        h("th", { scope: "row" }, `dynamic=${modeName(r.mode)}`),
        h("td", {}, formatMs(percentile(r.latencies, 50))),
        h("td", {}, formatMs(percentile(r.latencies, 99))),
        h("td", {}, formatMs(Math.max(...r.latencies)))))))));
  }

  // The quiz's "show me": a scenario's calls become the sequence; then run or compare.
  events.on("scenario", (calls) => {
    ui.sequence.value = calls.join(" ");
  });

  /** Loads a preset and a material sequence, then runs the lab (AI scenario buttons). */
  async function runScenario(presetId, sequenceId) {
    await ctx.usePreset(presetId);
    ui.sequence.value = sequenceOf(SEQUENCES[sequenceId]);
    document.getElementById("lab").scrollIntoView({ block: "start" });
    await run();
  }

  events.on("language", () => {
    render();
    renderComparison();
    renderSaid();
  });
  render();
  return { run, compare, runScenario };
}
