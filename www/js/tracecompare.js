// The learner's own PyTorch trace beside Tailor's run of the editor's script (`tailor
// compare`): the log `TORCH_TRACE=DIR python model.py` wrote, picked or dropped (a dropped
// folder gives its newest .log), read in the page and never uploaded; Tailor runs the editor's text as a script and each [frame/compile]
// is set beside PyTorch's. `comparisonRows` and `pickTraceFile` are pure (tests/js).

import { fill, h } from "./dom.js";
import { errorText, t } from "./i18n.js";

/** The items of one compile, in the order the report lists them, with their i18n keys. */
const ITEMS = [
  ["inputs", "trace.item.inputs"],
  ["reasons", "trace.item.reasons"],
  ["guards", "trace.item.guards"],
  ["symbols", "trace.item.symbols"],
  ["graph_break", "trace.item.graphBreak"],
  ["outputs", "trace.item.outputs"],
];

/** The log to read among `files` (a picker's or a drop's list, each `{ name, lastModified }`):
 * the newest `.log`, as `tailor compare` takes a folder's newest; else the only file given;
 * else null. */
export function pickTraceFile(files) {
  const list = [...files];
  const logs = list.filter((file) => file.name.endsWith(".log"));
  if (logs.length) return logs.reduce((a, b) => (b.lastModified > a.lastModified ? b : a));
  return list.length === 1 ? list[0] : null;
}

/** One row per compile of a comparison (`compareTrace`'s): its id and function, which side
 * compiled it (`state`: both, differ, pytorchOnly, tailorOnly), what Tailor did instead
 * where only PyTorch compiled (`instead`: `{ action: "hit", entry: "0/1" }`), and for each item that differs,
 * PyTorch's and Tailor's own entries. */
export function comparisonRows(comparison) {
  return comparison.compiles.map((compile) => {
    const differences = ITEMS
      .map(([field, key]) => ({ key, ...compile[field] }))
      .filter((item) => item.only_pytorch.length || item.only_tailor.length)
      .map(({ key, only_pytorch: pytorch, only_tailor: tailor }) => ({ key, pytorch, tailor }));
    const state = compile.pytorch && compile.tailor
      ? (differences.length ? "differ" : "both")
      : (compile.pytorch ? "pytorchOnly" : "tailorOnly");
    return { id: compile.id, function: compile.function, state, instead: compile.tailor_instead ?? null, differences };
  });
}

/** Whether PyTorch compiled and Tailor's run of the editor's text compiled nothing: the
 * editor holds the model, not the script that ran under TORCH_TRACE. */
export function compiledNothing(comparison) {
  return comparison.compiles.length > 0 && comparison.compiles.every((compile) => !compile.tailor);
}

/** Totals for the summary line: compiles agreeing in full, and guards on both sides. */
export function comparisonTotals(comparison) {
  const rows = comparisonRows(comparison);
  let guardsBoth = 0;
  let guardsAll = 0;
  for (const compile of comparison.compiles) {
    const g = compile.guards;
    guardsBoth += g.both.length;
    guardsAll += g.both.length + g.only_pytorch.length + g.only_tailor.length;
  }
  return {
    agreeing: rows.filter((row) => row.state === "both").length,
    compiles: rows.length,
    guardsBoth,
    guardsAll,
  };
}

/** The files directly inside a dropped folder's entry. */
async function filesOf(folder) {
  const reader = folder.createReader();
  const entries = [];
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) break;
    entries.push(...batch);
  }
  return Promise.all(entries.filter((entry) => entry.isFile)
    .map((entry) => new Promise((resolve, reject) => entry.file(resolve, reject))));
}

/** Wires the trace picker `input` and the drop target `zone` to compare with the editor's
 * text, rendering into `out`. */
export function setupTraceCompare(ctx, events, editor, input, zone, out) {
  let last = null;
  const render = () => {
    if (!last) return;
    if (last.thrown) {
      return fill(out, h("p", { class: "error-text", role: "alert" }, `${last.name}: ${errorText(last.thrown)}`));
    }
    const { comparison, error } = last.result;
    const totals = comparisonTotals(comparison);
    const rows = comparisonRows(comparison);
    const notCompared = Object.entries(comparison.not_compared).map(([kind, n]) => `${kind} ${n}`).join(", ");
    fill(out,
      h("p", { class: "trace-summary", dataset: { agreeing: totals.agreeing, compiles: totals.compiles } },
        t("trace.summary", last.name, comparison.pytorch_version ?? "?", totals.agreeing, totals.compiles,
          totals.guardsBoth, totals.guardsAll)),
      h("table", { class: "trace-table" },
        h("thead", {}, h("tr", {},
          h("th", {}, t("trace.column.compile")), h("th", {}, t("trace.column.function")),
          h("th", {}, t("trace.column.result")))),
        h("tbody", {}, ...rows.map((row) => [
          h("tr", { class: `trace-${row.state}`, dataset: { compile: row.id, state: row.state } },
            h("td", {}, `[${row.id}]`), h("td", {}, h("code", {}, row.function)),
            h("td", {}, t(`trace.state.${row.state}`),
              row.instead
                ? h("div", { class: "trace-instead" }, t(`trace.instead.${row.instead.action}`, row.instead.entry))
                : null)),
          ...row.differences.map((item) => h("tr", { class: "trace-difference" },
            h("td", {}), h("td", {}, t(item.key)),
            h("td", {},
              ...item.pytorch.map((text) => h("div", { class: "only-pytorch" }, t("trace.onlyPytorch"), h("code", {}, text))),
              ...item.tailor.map((text) => h("div", { class: "only-tailor" }, t("trace.onlyTailor"), h("code", {}, text)))))),
        ]))),
      compiledNothing(comparison) ? h("p", { class: "hint trace-no-compiles" }, t("trace.compiledNothing")) : null,
      notCompared ? h("p", { class: "hint" }, t("trace.notCompared", notCompared)) : null,
      error ? h("p", { class: "error-text", role: "alert" }, `${t("kind." + error.kind)}: ${errorText(error)}`) : null);
  };
  const compare = async (files) => {
    const file = pickTraceFile(files);
    if (!file) return;
    const text = await file.text();
    try {
      await ctx.guarded(async () => {
        last = { name: file.name, result: ctx.tailor.compareTrace(editor.value, text, { path: "model.py" }) };
      });
    } catch (error) {
      last = { name: file.name, thrown: error };
    }
    render();
  };
  input.addEventListener("change", () => compare(input.files));
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", async (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    // A dropped folder (TORCH_TRACE's) is read for its files; a file is itself.
    const entries = [...event.dataTransfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
    const folders = entries.filter((entry) => entry.isDirectory);
    const files = folders.length ? (await Promise.all(folders.map(filesOf))).flat() : event.dataTransfer.files;
    compare(files);
  });
  events.on("language", render);
}
