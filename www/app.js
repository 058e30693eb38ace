// Page logic: loads the compiler (wasm) and drives the model editor and the step-through;
// js/lab.js drives the guard cache lab, js/widgets.js the widget of each concept section,
// js/quiz.js the quiz and the generated exercises, js/copy.js the code blocks' copy buttons
// and the trace's JSON export.
// Everything goes through the same JS API other pages use (docs/js-api.md):
// `Tailor.create`, `tailor.compile`, `model.trace`, `model.call`, …
//
// The wasm is loaded here, by a dynamic `import()` of wasm-bindgen's ES module (`./tailor.js`,
// built by scripts/build-wasm.sh; Trunk injects no loader, see Trunk.toml). A Rust panic
// surfaces as a `WebAssembly.RuntimeError` and may leave that instance broken, so `guarded`
// shows it in place and imports a fresh instance (a new module URL) before carrying on.
//
// All text reaches the DOM through text nodes, never `innerHTML`: the source and the
// compiler's messages are user data.

import { setupBench } from "./js/bench.js";
import { graphId, hasBreaks, renderBreaks } from "./js/breaks.js";
import { copyBar, download } from "./js/copy.js";
import { bi, fill, h, scrollWithin } from "./js/dom.js";
import { createEditor } from "./js/editor.js";
import { formatMs } from "./js/format.js";
import { both, errorText, language, message, setLanguage, t } from "./js/i18n.js";
import { renderGraph } from "./js/graph.js";
import { colourGroups, ensureRun, kernelLines, renderFusion, renderRun, renderWgsl } from "./js/kernels.js";
import { setupLab } from "./js/lab.js";
import { setupSupported } from "./js/supported.js";
import { setupEditorScript, setupWidgets } from "./js/widgets.js";
import { setupTraceCompare } from "./js/tracecompare.js";
import { setupQuiz } from "./js/quiz.js";
import { inputText, markOptions, parseShapes, shapesWith, varyDims } from "./js/shapes.js";
import { PageEvents } from "./js/state.js";
import { decodeFragment, encodeFragment } from "./js/urlstate.js";
import { compileNeverEnded, loadWorkspace, noteCompiling, opensSavedWork, saveWorkspace } from "./js/workspace.js";

const $ = (id) => document.getElementById(id);

const ui = {
  form: $("compile-form"),
  preset: $("preset-select"),
  editor: createEditor($("model-editor"), {
    labelledBy: "model-editor-label",
    describedBy: "editor-hint",
    onRun: () => compile(),
    onEdit: () => {
      syncPresetSelect();
      rememberOwnWork();
    },
  }),
  shapes: $("input-shapes"),
  mode: $("mode-select"),
  symbolNames: $("symbol-names"),
  weights: $("weights-file"),
  weightsStatus: $("weights-status"),
  weightsClear: $("weights-clear"),
  marks: $("marks-table"),
  compile: document.querySelector('[data-testid="compile-button"]'),
  share: $("share-button"),
  script: $("editor-script"),
  status: $("status"),
  error: $("error-message"),
  prev: $("step-prev"),
  next: $("step-next"),
  title: $("stage-title"),
  stageList: $("stage-list"),
  explain: $("stage-explain"),
  source: $("source-view"),
  symbols: $("symbols-view"),
  graphFigure: $("graph-figure"),
  graph: $("graph-view"),
  graphCaption: $("graph-caption"),
  breaks: $("breaks-view"),
  events: $("events-view"),
  guards: $("guards-view"),
  guardsCopy: $("guards-copy"),
  kernels: $("kernels-view"),
  run: $("run-result"),
  traceDetails: $("trace-details"),
  trace: $("trace-view"),
  traceCopy: $("trace-copy"),
  traceExport: $("trace-export"),
  traceExportStatus: $("trace-export-status"),
  banner: $("webgpu-status"),
  lang: $("lang-toggle"),
};

/** What the page's parts announce and follow (js/state.js): compiles, restarts, the
 * language, … Each part's setup gets it as a parameter. */
const events = new PageEvents();

/** The page's state and the workbench's functions, read by the parts in js/. Declared here in
 * full: no part adds a member (a part's own functions are its setup's return value). */
const ctx = {
  /** The model editor (js/editor.js): `value`, `markError`, … */
  editor: ui.editor,
  bindings: null,
  tailor: null,
  presets: [],
  model: null,
  compilation: null,
  view: null,
  runResult: null,
  /** The compilation whose run stage is running now (js/kernels.js). */
  runPending: null,
  /** The compilation's schedule view, read once per compile (js/kernels.js). */
  schedule: null,
  /** The WGSL stage's chosen mode; null: the entry's own. */
  wgslMode: null,
  /** The graph the graph-breaks stage draws (an index into `view.graphs`). */
  breakGraph: 0,
  steps: [],
  step: 0,
  instance: 0,
  /** Whether the compile after a restart is running: a panic then stops instead (`guarded`). */
  recompiling: false,
  /** What the editor showed in place of a link's `src` that did not decode (else null). */
  badLinkSource: null,
  /** What the status line says (`setStatus`), to say again in the other language. */
  status: null,
  /** The error on show (`showError`), to show again in the other language. */
  shownError: null,
  /** `torch._dynamo.config.recompile_limit` when a quiz scenario set one (else PyTorch's 8). */
  recompileLimit: null,
  /** The weights file chosen in the workbench, `{ name, bytes }` (read in the page), or null. */
  weights: null,
  /** More URL fragment parameters (the exercise on screen), kept by `writeFragment`. */
  fragmentExtra: null,
  guarded,
  asError,
  currentOptions,
  currentPreset,
  /** The dims that vary in the cache lab: the preset's, else dim 0 of the first input. */
  varyDims: () => varyDims(currentPreset(), ui.shapes.value),
  /** The input-shapes text as typed. */
  currentShapes: () => ui.shapes.value,
  /** The input-shapes text with every varying dim set to `value`. */
  shapesWith: (value, template = ui.shapes.value) => shapesWith(template, ctx.varyDims(), value),
  writeFragment,
  goStage,
  renderGuards,
  usePreset,
  loadScenario,
};

// ---------------------------------------------------------------------------------------
// Loading and panic recovery

async function loadCompiler() {
  const url = ctx.instance === 0 ? "./tailor.js" : `./tailor.js?instance=${ctx.instance}`;
  const bindings = await import(url);
  await bindings.default();
  ctx.bindings = bindings;
  ctx.tailor = await bindings.Tailor.create({ device: "auto" });
  ctx.presets = bindings.Tailor.presets();
}

/** A Rust panic, or the JS engine's own limit met inside the module (a stack overflow is a
 * `RangeError`): either may leave the instance broken. */
function isPanic(error) {
  return error instanceof WebAssembly.RuntimeError || error instanceof RangeError;
}

/**
 * Runs `work`; a Rust panic is shown in place, the module is re-initialised and the model is
 * compiled again from the editor, and `undefined` is returned. Other errors are rethrown.
 * The compile after a restart is tried once: when it panics too (the same input panics
 * again), the page stops there with the error shown, rather than restarting for ever.
 */
async function guarded(work) {
  try {
    return await work();
  } catch (error) {
    if (!isPanic(error)) throw error;
    let detail = error.message;
    try {
      detail = ctx.bindings.Tailor.lastPanic() ?? detail;
    } catch {
      // The broken instance could not even say why; the console has the message.
    }
    ctx.model = null;
    ctx.compilation = null;
    ctx.instance += 1;
    showError({ kind: "panic", message: detail, intro: "error.panic" });
    await loadCompiler();
    events.emit("restart");
    if (ctx.recompiling) {
      setStatus("status.restartedStopped");
      return undefined;
    }
    ctx.recompiling = true;
    try {
      await compile({ keepError: true });
    } finally {
      ctx.recompiling = false;
    }
    if (ctx.status?.key !== "status.restartedStopped") setStatus("status.restarted");
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// Errors

/** Shows a compiler error with its source line and a caret under the column (again, in the
 * other language, when the language changes). The page's own errors put the text of their
 * `intro` key before the message. */
function showError(error) {
  ctx.shownError = error;
  const kind = error.kind ?? "call";
  const text = (error.intro ? `${t(error.intro)}\n` : "") + errorText(error, { place: false });
  const parts = [h("strong", {}, `${t("kind." + kind)}: `), text];
  if (error.line) {
    const lines = ui.editor.value.split("\n");
    const text = lines[error.line - 1] ?? "";
    const gutter = `${error.line} | `;
    parts.push(
      h("span", { class: "error-where" }, ` (${t("error.where", error.line, error.col ?? 1)})`),
      h("pre", { class: "error-snippet" },
        `${gutter}${text}\n${" ".repeat(gutter.length + Math.max(0, (error.col ?? 1) - 1))}^`),
    );
  }
  fill(ui.error, ...parts);
  if (error.line) ui.editor.markError(error.line, error.col ?? 1, text);
  else ui.editor.clearError();
  ui.error.dataset.kind = kind;
  ui.error.hidden = false;
  renderSource(new Set(), error.line ?? null);
}

function clearError() {
  ctx.shownError = null;
  ui.editor.clearError();
  ui.error.hidden = true;
  ui.error.replaceChildren();
  delete ui.error.dataset.kind;
}

/** An exception from the API as `{ kind, message, messageId, messageArgs, line, col }`. */
function asError(error) {
  if (error && typeof error === "object" && "message" in error) {
    const { message, messageId, messageArgs, line, col } = error;
    return { kind: error.kind ?? "call", message, messageId, messageArgs, line, col };
  }
  return { kind: "call", message: String(error) };
}

// ---------------------------------------------------------------------------------------
// Settings: shapes text, marks, options, URL fragment

/** Rebuilds the per-dim mark controls, keeping the choices of dims that still exist. */
function renderMarks(saved = currentMarks()) {
  const inputs = parseShapes(ui.shapes.value);
  if (inputs.length === 0) {
    fill(ui.marks, h("p", { class: "hint" }, t("marks.none")));
    return;
  }
  const rows = [];
  for (const input of inputs) {
    input.dims.forEach((size, dim) => {
      const key = `${input.name}:${dim}`;
      const mark = saved.get(key) ?? { kind: "default", min: "", max: "" };
      const id = `mark-${input.name}-${dim}`.replace(/[^A-Za-z0-9_-]/g, "_");
      const select = h("select", { id, dataset: { input: input.name, dim }, class: "mark-kind" },
        h("option", { value: "default" }, t("marks.default")),
        h("option", { value: "dynamic" }, t("marks.dynamic")),
        h("option", { value: "static" }, t("marks.static")));
      select.value = mark.kind;
      const min = h("input", { type: "number", min: 0, class: "mark-min", value: mark.min, "aria-label": `${key} ${t("marks.min")}`, placeholder: t("marks.min") });
      const max = h("input", { type: "number", min: 0, class: "mark-max", value: mark.max, "aria-label": `${key} ${t("marks.max")}`, placeholder: t("marks.max") });
      const sync = () => {
        min.disabled = max.disabled = select.value !== "dynamic";
      };
      sync();
      select.addEventListener("change", () => {
        sync();
        compile();
      });
      for (const field of [min, max]) field.addEventListener("change", () => compile());
      rows.push(h("div", { class: "mark-row", dataset: { input: input.name, dim } },
        h("label", { for: id }, t("marks.dim", input.name, dim, size)), select, min, max));
    });
  }
  fill(ui.marks, ...rows);
}

/** The mark controls' state: `Map('x:0' → { kind, min, max })`. */
function currentMarks() {
  const marks = new Map();
  for (const row of ui.marks.querySelectorAll(".mark-row")) {
    marks.set(`${row.dataset.input}:${row.dataset.dim}`, {
      kind: row.querySelector(".mark-kind").value,
      min: row.querySelector(".mark-min").value,
      max: row.querySelector(".mark-max").value,
    });
  }
  return marks;
}

/** `compile` options from the controls. */
function currentOptions() {
  const { markDynamic, markStatic } = markOptions(currentMarks());
  const options = { dynamic: ui.mode.value, markDynamic, markStatic, symbolNames: ui.symbolNames.value };
  if (ctx.recompileLimit !== null) options.recompileLimit = ctx.recompileLimit;
  return options;
}

/** The preset whose source is in the editor, if any. */
function currentPreset() {
  return ctx.presets.find((p) => p.source === ui.editor.value) ?? null;
}

/** Model and settings in the URL fragment, so a link reopens the same compilation. While the
 * editor still holds what the page showed in place of a link's `src` that did not decode, the
 * link is left as it came: its text is not lost, and can be mended by hand. */
function writeFragment() {
  if (ctx.badLinkSource !== null && ui.editor.value === ctx.badLinkSource) return;
  const fragment = encodeFragment({
    presetId: currentPreset()?.id ?? null,
    source: ui.editor.value,
    shapes: ui.shapes.value,
    mode: ui.mode.value,
    symbolNames: ui.symbolNames.value,
    marks: currentMarks(),
    recompileLimit: ctx.recompileLimit,
    step: ctx.step,
    extra: ctx.fragmentExtra ?? [],
  });
  history.replaceState(null, "", `#${fragment}`);
}

/** Applies a fragment written by `writeFragment`; returns the step to open. */
function readFragment() {
  const state = decodeFragment(location.hash.slice(1));
  const preset = ctx.presets.find((p) => p.id === state.presetId);
  if (preset) {
    ui.editor.value = preset.source;
    ui.shapes.value = preset.shapes;
  } else if (state.source !== undefined) {
    ui.editor.value = state.source ?? ctx.presets[0].source;
    if (state.source === null) ctx.badLinkSource = ui.editor.value;
  }
  if (state.shapes !== null) ui.shapes.value = state.shapes;
  if (state.mode !== null) ui.mode.value = state.mode;
  if (state.symbolNames !== null) ui.symbolNames.value = state.symbolNames;
  ctx.recompileLimit = state.recompileLimit;
  renderMarks(state.marks);
  syncPresetSelect();
  return state.step;
}

function syncPresetSelect() {
  ui.preset.value = currentPreset()?.id ?? "custom";
}

/** The pending save of the learner's own model (`rememberOwnWork`). */
let ownWorkTimer = null;

/** Saves the editor's model and shapes as the learner's own (js/workspace.js; a preset's text
 * is not saved) a moment after the last edit, or at once with `now`. */
function rememberOwnWork({ now = false } = {}) {
  clearTimeout(ownWorkTimer);
  const save = () => saveWorkspace(localStorage, { source: ui.editor.value, shapes: ui.shapes.value },
    ctx.presets.map((preset) => preset.source));
  if (now) save();
  else ownWorkTimer = setTimeout(save, 300);
}

/** "Custom" in the preset list: brings the learner's own model back into the editor and
 * compiles it. With nothing saved, or the editor already holding it, nothing changes. */
async function useOwnWork() {
  const saved = loadWorkspace(localStorage);
  if (!saved || saved.source === ui.editor.value) {
    syncPresetSelect();
    return;
  }
  ui.editor.value = saved.source;
  if (saved.shapes) ui.shapes.value = saved.shapes;
  ctx.recompileLimit = null;
  renderMarks(new Map());
  syncPresetSelect();
  await compile();
  writeFragment();
}

// ---------------------------------------------------------------------------------------
// Compile

/** Compiles the editor's model into `ctx.model` and traces it for the step-through. */
async function compile({ step = 0, keepError = false } = {}) {
  if (!ctx.tailor) return;
  if (!keepError) clearError();
  setStatus("status.compiling");
  // Left behind only if this compile freezes or crashes the tab: the next visit then opens
  // the saved model without compiling it (`main`).
  noteCompiling(localStorage, ui.editor.value);
  const started = performance.now();
  ctx.model?.free();
  ctx.compilation?.free();
  ctx.model = ctx.compilation = ctx.view = ctx.runResult = ctx.schedule = null;
  ctx.breakGraph = 0;
  try {
    await guarded(async () => {
      ctx.model = ctx.tailor.compile(ui.editor.value, currentOptions());
      if (ctx.weights) ctx.model.loadWeights(ctx.weights.bytes);
      ctx.compilation = ctx.model.trace(ui.shapes.value.trim());
      ctx.view = ctx.compilation.view;
    });
  } catch (error) {
    ctx.compilation?.free();
    ctx.compilation = null;
    showError(asError(error));
    setStatus("status.failed");
    ctx.steps = [];
    renderStep();
    markCompiled();
    noteCompiling(localStorage, null);
    return;
  }
  noteCompiling(localStorage, null);
  if (!ctx.view) return;
  setStatus("status.compiled", formatMs(performance.now() - started));
  ctx.steps = buildSteps(ctx.view);
  ctx.step = Math.min(step, ctx.steps.length - 1);
  renderStep();
  events.emit("compiled");
  markCompiled();
}

/** Reads the chosen weights file in the page (nothing is uploaded) and compiles with it. */
async function useWeights(file) {
  ctx.weights = file ? { name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) } : null;
  if (!file) ui.weights.value = "";
  const loaded = ui.weightsStatus.parentElement;
  loaded.hidden = !ctx.weights;
  ui.weightsStatus.textContent = ctx.weights ? t("weights.loaded", ctx.weights.name, ctx.weights.bytes.length) : "";
  await compile({ step: ctx.step });
}

/** Counts finished compiles on <body data-compiles>, so tests can wait for the next one. */
function markCompiled() {
  document.body.dataset.compiles = String(Number(document.body.dataset.compiles ?? 0) + 1);
  warmUpWhenIdle();
}

/**
 * Makes the interpreter the next compile loads in while the page is idle: its imports
 * (torch, dataclasses, typing, …) are most of a first capture's time. Counted on
 * <body data-warm> in ms, so tests and the timing report can wait for it.
 */
function warmUpWhenIdle() {
  const idle = window.requestIdleCallback ?? ((work) => setTimeout(work, 200));
  idle(() => {
    try {
      const ms = ctx.tailor?.warmUp();
      if (ms) document.body.dataset.warm = ms.toFixed(1);
    } catch {
      // The next compile makes its own interpreter.
    }
  });
}

// ---------------------------------------------------------------------------------------
// Step-through

// "breaks" is a step only where the compiling call went through graph breaks.
const STAGES = ["program", "symbols", "graph", "breaks", "shapes", "guards", "fusion", "wgsl", "run"];

function buildSteps(view) {
  const steps = [{ stage: "program" }, { stage: "symbols" }, { stage: "graph" }];
  if (hasBreaks(view)) steps.push({ stage: "breaks" });
  const ops = view.nodes.filter((node) => node.role === "op");
  ops.forEach((node, i) => steps.push({ stage: "shapes", node: node.id, index: i + 1, count: ops.length }));
  steps.push({ stage: "guards" }, { stage: "fusion" }, { stage: "wgsl" }, { stage: "run" });
  return steps;
}

function go(step) {
  if (ctx.steps.length === 0) return;
  ctx.step = Math.max(0, Math.min(ctx.steps.length - 1, step));
  renderStep();
  writeFragment();
}

/** Opens the first (or last) step of `stage`, scrolls the step-through into view and moves the
 * focus to the step's title ("show me" in the quiz). */
function goStage(stage, { last = false } = {}) {
  const indexes = ctx.steps.flatMap((s, i) => (s.stage === stage ? [i] : []));
  if (indexes.length) go(last ? indexes.at(-1) : indexes[0]);
  $("steps").scrollIntoView({ block: "start" });
  ui.title.focus({ preventScroll: true });
}

/** Source lines, with `marked` lines highlighted and `errorLine` flagged. */
function renderSource(marked = new Set(), errorLine = null) {
  const lines = ui.editor.value.split("\n");
  fill(ui.source, ...lines.map((text, i) => {
    const line = i + 1;
    const classes = [marked.has(line) ? "marked" : "", errorLine === line ? "error-line" : ""].join(" ").trim();
    return h("li", { class: classes || null, dataset: { line } }, h("code", {}, text || " "));
  }));
  scrollWithin(ui.source, ui.source.querySelector(".marked, .error-line"));
}

function stageText(id) {
  return ctx.view?.stages.find((stage) => stage.id === id)?.text ?? "";
}

function renderStep() {
  const step = ctx.steps[ctx.step];
  const has = Boolean(step);
  ui.prev.disabled = !has || ctx.step === 0;
  ui.next.disabled = !has || ctx.step === ctx.steps.length - 1;
  for (const el of [ui.symbols, ui.graphFigure, ui.graphCaption, ui.breaks, ui.events, ui.guards, ui.guardsCopy, ui.kernels, ui.run]) el.hidden = true;
  ui.traceExport.disabled = !ctx.compilation;
  if (!has) {
    ui.title.textContent = "";
    ui.explain.textContent = "";
    ui.stageList.replaceChildren();
    ui.trace.textContent = "";
    ui.traceDetails.hidden = true;
    if (ui.error.hidden) renderSource();
    return;
  }
  const view = ctx.view;
  const node = step.node !== undefined ? view.nodes[step.node] : null;
  ui.title.textContent =
    `${t("stage.counter", ctx.step + 1, ctx.steps.length)} · ${t("stage." + step.stage)}` +
    (node ? ` — %${node.name} (${step.index}/${step.count})` : "");
  ui.title.dataset.stage = step.stage;
  ui.explain.textContent = node ? t("explain.shapes", node.name, step.index, step.count) : t("explain." + step.stage);
  renderStageList(step.stage);
  const marked = new Set();
  const text = { program: "program", symbols: "symbols", graph: "graph", shapes: "shapes", guards: "guards", fusion: "kernels", wgsl: "kernels" }[step.stage];
  ui.traceDetails.hidden = !text;
  ui.trace.textContent = text ? stageText(text) : "";
  switch (step.stage) {
    case "program":
      ui.symbols.hidden = false;
      fill(ui.symbols, h("p", {}, t("symbols.entry", view.entryName, view.mode, view.shapes)), h("pre", { class: "trace" }, stageText("program")));
      break;
    case "symbols":
      ui.symbols.hidden = false;
      fill(ui.symbols, renderSymbols(view));
      break;
    case "graph":
      ui.graphFigure.hidden = false;
      for (const n of view.nodes) if (n.span) marked.add(n.span.line);
      drawGraph(() => true, null);
      break;
    case "breaks":
      renderBreakStage(marked);
      break;
    case "shapes": {
      ui.graphFigure.hidden = false;
      ui.events.hidden = false;
      drawGraph((n) => n.role !== "op" && n.role !== "output" ? true : n.id <= step.node, step.node);
      if (node.span) marked.add(node.span.line);
      renderEvents(view, step.node);
      break;
    }
    case "guards":
      ui.guards.hidden = false;
      ui.guardsCopy.hidden = false;
      // One guard a line, in the source form PyTorch prints (the lines to paste into a check).
      fill(ui.guardsCopy, copyBar({
        text: () => view.guards.map((guard) => guard.source).join("\n"),
        target: ui.guards,
        what: both("copy.what.guards"),
        testId: "copy-guards",
      }));
      renderGuards(view.guards, ui.guards);
      for (const guard of view.guards) if (guard.span) marked.add(guard.span.line);
      break;
    case "fusion":
      ui.graphFigure.hidden = false;
      ui.kernels.hidden = false;
      drawGraph(() => true, null);
      colourGroups(ctx, ui.graph);
      renderFusion(ctx, ui.kernels);
      for (const line of kernelLines(ctx)) marked.add(line);
      break;
    case "wgsl":
      ui.kernels.hidden = false;
      renderWgsl(ctx, ui.kernels);
      break;
    case "run": {
      ui.run.hidden = false;
      const rerun = () => {
        if (ctx.steps[ctx.step]?.stage === "run") renderRun(ctx, ui.run, rerun);
      };
      ensureRun(ctx, rerun);
      renderRun(ctx, ui.run, rerun);
      break;
    }
  }
  // The graph breaks are marked in the editor while their stage is open; an error shown
  // keeps its own mark.
  if (step.stage !== "breaks" && ui.error.hidden) ui.editor.clearError();
  renderSource(marked);
}

/** The graph-breaks stage: the chain of graphs and breaks, the chosen graph drawn below it,
 * every break marked in the editor and the source. */
function renderBreakStage(marked) {
  const graphs = ctx.view.graphs;
  const breaks = graphs.flatMap((graph) => (graph.endsAt ? [graph.endsAt] : []));
  const chosen = graphs[ctx.breakGraph] ?? graphs[0];
  ui.breaks.hidden = false;
  ui.graphFigure.hidden = false;
  ui.graphCaption.hidden = false;
  renderBreaks(graphs, ui.breaks, {
    selected: ctx.breakGraph,
    onSelect: (index) => {
      ctx.breakGraph = index;
      renderStep();
    },
    onReveal: (graphBreak) => {
      ui.editor.reveal(graphBreak.line, graphBreak.col);
      renderSource(new Set([graphBreak.line]));
    },
  });
  ui.editor.markBreaks(breaks.map((b) => ({ line: b.line, col: b.col, message: b.reason })));
  for (const b of breaks) marked.add(b.line);
  ui.graphCaption.textContent = t("breaks.drawn", graphId(chosen), chosen.function);
  if (chosen.nodes.length) drawGraph(() => true, null, chosen.nodes);
  else fill(ui.graph, h("p", { class: "hint" }, t("breaks.noGraph")));
}

function renderStageList(active) {
  // The graph-breaks stage is listed only where it exists, so the others keep their places.
  const stages = STAGES.filter((stage) => stage !== "breaks" || ctx.steps.some((s) => s.stage === stage));
  fill(ui.stageList, ...stages.map((stage) => {
    const index = ctx.steps.findIndex((s) => s.stage === stage);
    const button = h("button", {
      type: "button",
      class: "stage-pill",
      "aria-current": stage === active ? "step" : null,
      disabled: index < 0,
      onclick: () => go(index),
    }, t("stage." + stage));
    return h("li", {}, button);
  }));
}

function drawGraph(reached, current, nodes = ctx.view.nodes) {
  const svg = renderGraph(nodes, {
    reached,
    current,
    onSelect: (node) => {
      renderSource(new Set([node.span.line]));
      for (const box of ui.graph.querySelectorAll(".node.selected")) box.classList.remove("selected");
      ui.graph.querySelector(`[data-node="${node.id}"]`)?.classList.add("selected");
    },
  });
  fill(ui.graph, svg);
  scrollWithin(ui.graph, ui.graph.querySelector(".node.current"));
}

function renderSymbols(view) {
  const inputEvents = view.events.filter((e) => e.node < view.inputs.length);
  const rows = inputEvents.map((event) =>
    h("li", { class: `event ${event.kind}` }, h("span", { class: "badge" }, t("events.kind." + event.kind)), h("code", {}, event.text)));
  const dims = view.inputs.map((input) =>
    h("li", {}, h("code", {}, inputText(input)),
      ...input.dims.filter((d) => d.value === null).map((d) => h("span", { class: "range" }, ` ${d.text} ∈ [${d.min ?? "-∞"}, ${d.max ?? "∞"}]`))));
  return h("div", {}, h("ol", { class: "events-view" }, ...rows), h("ul", { class: "dims" }, ...dims));
}

function renderEvents(view, upTo) {
  const items = [];
  for (const node of view.nodes) {
    if (node.role !== "op" || node.id > upTo) continue;
    const shapeEvents = view.events.filter((e) => e.node === node.id);
    const current = node.id === upTo;
    items.push(h("li", { class: current ? "node-events current" : "node-events" },
      h("div", { class: "node-head" }, h("code", {}, `%${node.name} : ${node.shapeText}`),
        node.span ? h("span", { class: "where" }, t("guards.line", node.span.line)) : null),
      shapeEvents.length === 0 && current ? h("p", { class: "hint" }, t("events.none")) : null,
      h("ol", {}, ...shapeEvents.map((e) => h("li", { class: `event ${e.kind}` }, h("span", { class: "badge" }, t("events.kind." + e.kind)), h("code", {}, e.text))))));
  }
  fill(ui.events, ...items);
  scrollWithin(ui.events, ui.events.querySelector(".current"));
}

/** One list item per guard: the source form, symbol form, kind and provenance. */
function renderGuards(guards, list, verdicts = null) {
  fill(list, ...guards.map((guard, i) => {
    const verdict = verdicts ? verdicts[i] : null;
    const item = h("li", { class: `guard ${guard.kind}${verdict === null ? "" : verdict ? " pass" : " fail"}`, dataset: { kind: guard.kind } },
      h("div", { class: "guard-head" },
        verdict === null ? null : h("span", { class: "verdict" }, verdict ? `✓ ${t("guardw.pass")}` : `✗ ${t("guardw.fail")}`),
        h("span", { class: "badge" }, t("guards.kind." + guard.kind)),
        h("code", { class: "guard-source" }, guard.source)),
      h("div", { class: "guard-meta" },
        h("span", {}, `${t("guards.symbolic")}: `), h("code", {}, guard.symbolicMessage ? message(guard.symbolicMessage) : guard.symbolic)),
      h("div", { class: "guard-meta" },
        h("span", { class: "guard-from" }, `${t("guards.from")}: `),
        h("span", { class: "provenance" }, message(guard.provenanceMessage)),
        guard.span ? h("span", { class: "where" }, ` (${t("guards.line", guard.span.line)})`) : null));
    if (guard.span && list === ui.guards) {
      item.tabIndex = 0;
      const show = () => renderSource(new Set([guard.span.line]));
      item.addEventListener("mouseenter", show);
      item.addEventListener("focus", show);
    }
    return item;
  }));
}

/** The file the trace export downloads. */
const TRACE_FILE = "tailor-trace.json";

/** Downloads the compilation's whole trace, as `tailor explain --json` prints it. */
async function exportTrace() {
  const compilation = ctx.compilation;
  if (!compilation) return;
  try {
    const json = await guarded(async () => compilation.traceJson());
    if (json === undefined) return;
    download(json, TRACE_FILE, "application/json");
    fill(ui.traceExportStatus, ...bi(both("export.done", TRACE_FILE)));
  } catch (error) {
    fill(ui.traceExportStatus, h("span", { class: "error-text" }, errorText(error)));
  }
}

// ---------------------------------------------------------------------------------------
// Language, banner, wiring

function renderBanner() {
  const webgpu = ctx.tailor?.webgpu;
  if (!webgpu) return;
  const state = webgpu.used ? "gpu" : webgpu.available ? "cpu-fallback" : "no-webgpu";
  ui.banner.dataset.state = state;
  ui.banner.dataset.emulated = String(Boolean(webgpu.emulated));
  const text = {
    gpu: () => t("webgpu.used", webgpu.adapter) + (webgpu.emulated ? " " + t("webgpu.emulated") : ""),
    "cpu-fallback": () => t("webgpu.unused", webgpu.adapter, webgpu.reason),
    "no-webgpu": () => t("webgpu.missing", webgpu.reason),
  }[state]();
  fill(ui.banner, text);
}

/** Says `key` (with `args`) in the status line, and again in the other language when the
 * language changes. */
function setStatus(key, ...args) {
  ctx.status = { key, args };
  renderStatus();
}

function renderStatus() {
  if (!ctx.status) return;
  const { key, args } = ctx.status;
  ui.status.textContent = key === "status.copyHere" ? `${t(key)} ${args[0]}` : t(key, ...args);
}

/** Where the page remembers the language chosen. */
const LANGUAGE_KEY = "tailor-lang";

/** The remembered language, Chinese by default. */
function rememberedLanguage() {
  try {
    return localStorage.getItem(LANGUAGE_KEY) === "en" ? "en" : "zh";
  } catch {
    return "zh";
  }
}

function applyLanguage(lang) {
  setLanguage(lang);
  const root = document.documentElement;
  root.dataset.lang = language();
  root.lang = language() === "en" ? "en" : "zh-CN";
  document.title = t("page.title");
  try {
    localStorage.setItem(LANGUAGE_KEY, language());
  } catch {
    // Storage can be disabled (private mode); the switch still works for this visit.
  }
  renderStatus();
  ui.lang.textContent = t("toggle.label");
  ui.lang.setAttribute("lang", language() === "zh" ? "en" : "zh");
  renderBanner();
  renderMarks();
  renderStep();
  if (ctx.shownError && !ui.error.hidden) showError(ctx.shownError);
  const custom = ui.preset.querySelector('option[value="custom"]');
  if (custom) custom.textContent = t("preset.custom");
  events.emit("language");
}

function setupPresets() {
  fill(ui.preset,
    ...ctx.presets.map((preset) => h("option", { value: preset.id }, `${preset.id} (${preset.file})`)),
    h("option", { value: "custom" }, t("preset.custom")));
  ui.preset.addEventListener("change", () =>
    (ui.preset.value === "custom" ? useOwnWork() : usePreset(ui.preset.value)));
}

/** Loads a preset into the editor and compiles it (also used by the scenario buttons). */
async function usePreset(id) {
  const preset = ctx.presets.find((p) => p.id === id);
  if (!preset) return;
  ui.preset.value = id;
  ui.editor.value = preset.source;
  ui.shapes.value = preset.shapes;
  ctx.recompileLimit = null;
  renderMarks(new Map());
  events.emit("preset", preset);
  await compile();
}

/** Loads a quiz scenario (`{ source, mode, marks: [{ input, dim, min?, max? }], calls,
 * recompileLimit }`) into the editor, its first call as the input shapes and all its calls
 * into the lab, then compiles. */
async function loadScenario({ source, mode, marks = [], calls, recompileLimit = null }) {
  ui.editor.value = source;
  ui.shapes.value = calls[0];
  ui.mode.value = mode;
  // PyTorch's default limit needs no setting (and no `limit=` in the URL).
  ctx.recompileLimit = recompileLimit === null || recompileLimit === 8 ? null : recompileLimit;
  renderMarks(new Map(marks.map((mark) =>
    [`${mark.input}:${mark.dim}`, { kind: "dynamic", min: mark.min ?? "", max: mark.max ?? "" }])));
  syncPresetSelect();
  events.emit("scenario", calls);
  await compile();
  writeFragment();
}

function wire() {
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    compile();
  });
  ui.shapes.addEventListener("input", () => {
    renderMarks();
    rememberOwnWork();
  });
  // A save still waiting for its moment happens before the tab goes.
  window.addEventListener("pagehide", () => rememberOwnWork({ now: true }));
  ui.shapes.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      compile();
    }
  });
  // A new mode keeps the current step, so the same stage can be compared across modes.
  ui.mode.addEventListener("change", () => compile({ step: ctx.step }));
  ui.symbolNames.addEventListener("change", () => compile({ step: ctx.step }));
  ui.weights.addEventListener("change", () => useWeights(ui.weights.files?.[0] ?? null));
  ui.weightsClear.addEventListener("click", () => useWeights(null));
  ui.prev.addEventListener("click", () => go(ctx.step - 1));
  ui.next.addEventListener("click", () => go(ctx.step + 1));
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target?.tagName;
    if (["INPUT", "SELECT"].includes(tag) || event.target?.isContentEditable) return;
    if (event.key === "ArrowRight") go(ctx.step + 1);
    else if (event.key === "ArrowLeft") go(ctx.step - 1);
  });
  ui.share.addEventListener("click", async () => {
    writeFragment();
    try {
      await navigator.clipboard.writeText(location.href);
      setStatus("status.copied");
    } catch {
      setStatus("status.copyHere", location.href);
    }
  });
  ui.lang.addEventListener("click", () => applyLanguage(language() === "zh" ? "en" : "zh"));
  fill(ui.traceCopy, copyBar({
    text: () => ui.trace.textContent,
    target: ui.trace,
    what: both("copy.what.trace"),
    testId: "copy-trace",
  }));
  ui.traceExport.addEventListener("click", exportTrace);
  ui.source.addEventListener("click", (event) => {
    const line = Number(event.target.closest("li")?.dataset.line);
    if (!line || !ctx.view) return;
    const node = ctx.view.nodes.find((n) => n.span?.line === line);
    for (const box of ui.graph.querySelectorAll(".node.selected")) box.classList.remove("selected");
    for (const n of ctx.view.nodes.filter((n) => n.span?.line === line)) {
      ui.graph.querySelector(`[data-node="${n.id}"]`)?.classList.add("selected");
    }
    if (node) renderSource(new Set([line]));
  });
}

async function main() {
  applyLanguage(rememberedLanguage());
  setStatus("status.loading");
  try {
    await loadCompiler();
  } catch (error) {
    showError({ kind: "panic", message: String(error?.message ?? error), intro: "error.load" });
    setStatus("status.loadFailed");
    return;
  }
  renderBanner();
  setupPresets();
  ui.editor.value = ctx.presets[0].source;
  ui.shapes.value = ctx.presets[0].shapes;
  // A bare link opens the learner's own model where one is saved (js/workspace.js).
  const saved = opensSavedWork(decodeFragment(location.hash.slice(1))) ? loadWorkspace(localStorage) : null;
  if (saved) {
    ui.editor.value = saved.source;
    if (saved.shapes) ui.shapes.value = saved.shapes;
  }
  const step = readFragment();
  wire();
  const lab = setupLab(ctx, events);
  setupWidgets(ctx, events, lab);
  setupBench(ctx, events);
  setupQuiz(ctx, events, lab);
  setupSupported($("supported-panel"), () => ctx.bindings.Tailor);
  setupEditorScript(ctx, events, ui.editor, ui.script, $("editor-script-result"));
  setupTraceCompare(ctx, events, ui.editor, $("trace-file"), $("trace-drop"), $("trace-result"));
  $("trace-file").disabled = false;
  for (const control of [ui.preset, ui.editor, ui.shapes, ui.mode, ui.symbolNames, ui.weights, ui.compile, ui.share, ui.script]) control.disabled = false;
  if (saved && compileNeverEnded(localStorage, saved.source)) {
    // Its last compile froze or crashed the tab: shown, not compiled again until asked.
    setStatus("status.savedNotCompiled");
    markCompiled();
  } else {
    await compile({ step });
  }
  if (ctx.badLinkSource !== null) {
    showError({ kind: "argument", message: t("error.badLinkSource") });
  }
  // A handle for learners in the console, and for tests of the recovery path.
  window.tailorPage = {
    get tailor() {
      return ctx.tailor;
    },
    get model() {
      return ctx.model;
    },
    get bindings() {
      return ctx.bindings;
    },
    /** The model editor: `value`, and CodeMirror's `view`. */
    editor: ui.editor,
    run: (work) => guarded(() => work(ctx)),
  };
  // Time to interactive: navigation start to the first compilation shown.
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "true";
}

main();
