// The step-through's kernel stages, from the compilation's own data (`Compilation.schedule`,
// `.wgsl(mode)`, `.run(options)`): the fusion groups and memory plan, the WGSL of each kernel
// (syntax highlighted, with a copy button; a switch re-emits it static / override / dynamic),
// and a run of the entry's kernels on WebGPU (or the CPU backend) checked against the CPU
// reference. Highlighting builds spans from text nodes: the WGSL carries user identifiers.

import { copyBar } from "./copy.js";
import { fill, h } from "./dom.js";
import { formatMs } from "./format.js";
import { both, errorText, t } from "./i18n.js";
import { wgslTokens } from "./wgsl.js";

export const MODES = ["static", "override", "dynamic", "immediate"];

/** WGSL source as a `<code>` of coloured spans and plain text nodes. */
function highlightWgsl(source) {
  return h("code", { class: "wgsl" },
    ...wgslTokens(source).map(({ kind, text }) => (kind ? h("span", { class: `tok-${kind}` }, text) : text)));
}

/** The schedule, or `{ error }` when the entry could not be lowered. */
function schedule(ctx) {
  if (!ctx.compilation) return null;
  if (!ctx.schedule) {
    try {
      ctx.schedule = ctx.compilation.schedule;
    } catch (error) {
      ctx.schedule = { error: ctx.asError(error) };
    }
  }
  return ctx.schedule;
}

const failed = (error) => h("p", { class: "error" }, `${t("kind." + error.kind)}: ${errorText(error)}`);

/** The fusion stage: one card per kernel, then the memory plan and lowering's notes. */
export function renderFusion(ctx, container) {
  const plan = schedule(ctx);
  if (!plan) return fill(container);
  if (plan.error) return fill(container, failed(plan.error));
  const cards = plan.kernels.map((kernel) =>
    h("li", { class: `kernel-card group-${kernel.id % 6}`, dataset: { kernel: kernel.id } },
      h("div", { class: "kernel-head" },
        h("span", { class: `swatch group-${kernel.id % 6}`, "aria-hidden": "true" }),
        h("code", { class: "kernel-name" }, kernel.name),
        h("span", { class: "badge" }, t(`fusion.kind.${kernel.kind}`))),
      h("p", {}, t("fusion.fuses"), " ", ...kernel.nodeNames.flatMap((name, i) => [i ? " + " : "", h("code", {}, `%${name}`)])),
      kernel.kind === "gemm"
        ? h("p", { class: "hint fusion-form", dataset: { strategy: kernel.form ?? "cpu" } },
          kernel.form ? t("fusion.form", kernel.form) : t("fusion.cpuForm"))
        : null,
      h("p", { class: "hint" }, t("fusion.io", kernel.reads.join(", "), kernel.writes)),
      h("pre", { class: "trace kernel-body" }, kernel.text)));
  const rows = plan.buffers.map((buffer) =>
    h("tr", { dataset: { role: buffer.role } },
      h("th", { scope: "row" }, h("code", {}, buffer.name)),
      h("td", {}, t(`fusion.role.${buffer.role}`)),
      h("td", {}, h("code", {}, buffer.lenElems)),
      h("td", {}, ...buffer.tenants.flatMap((tenant, i) => [
        i ? h("br") : null,
        h("code", {}, `%${tenant.node}`), ` k${tenant.from} → ${tenant.until === null ? t("fusion.caller") : `k${tenant.until}`}`,
      ]))));
  fill(container,
    h("p", {}, t("fusion.summary", plan.kernels.length, plan.entryMode)),
    h("ol", { class: "kernel-cards" }, ...cards),
    h("h4", {}, t("fusion.plan")),
    h("div", { class: "table-scroll" }, h("table", { class: "compare memory-plan" },
      h("thead", {}, h("tr", {}, ...["fusion.buffer", "fusion.holds", "fusion.elements", "fusion.tenants"].map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...rows))),
    plan.notes.length ? h("h4", {}, t("fusion.notes")) : null,
    plan.notes.length ? h("ul", { class: "notes" }, ...plan.notes.map((note) => h("li", {}, h("code", {}, note)))) : null);
}

/** Colours each graph node by the kernel that computes it (the fusion groups). */
export function colourGroups(ctx, graph) {
  const plan = schedule(ctx);
  if (!plan || plan.error) return;
  for (const kernel of plan.kernels) {
    for (const node of kernel.nodes) {
      const box = graph.querySelector(`[data-node="${node}"]`);
      if (!box) continue;
      box.classList.add("grouped", `group-${kernel.id % 6}`);
      box.dataset.kernel = kernel.name;
    }
  }
}

/** Source lines of the nodes that kernels compute. */
export function kernelLines(ctx) {
  const plan = schedule(ctx);
  const lines = new Set();
  if (!plan || plan.error) return lines;
  for (const kernel of plan.kernels) {
    for (const id of kernel.nodes) {
      const span = ctx.view.nodes[id]?.span;
      if (span) lines.add(span.line);
    }
  }
  return lines;
}

/** The WGSL stage: a mode switch, then each kernel's source in that mode. */
export function renderWgsl(ctx, container) {
  const plan = schedule(ctx);
  if (!plan) return fill(container);
  if (plan.error) return fill(container, failed(plan.error));
  const mode = MODES.includes(ctx.wgslMode) ? ctx.wgslMode : plan.entryMode;
  let kernels;
  try {
    kernels = ctx.compilation.wgsl(mode);
  } catch (error) {
    return fill(container, failed(ctx.asError(error)));
  }
  container.dataset.mode = mode;
  const name = `emit-mode-${ctx.instance}`;
  const switcher = h("fieldset", { class: "emit-modes", "aria-describedby": "emit-mode-help" },
    h("legend", {}, t("wgsl.legend")),
    ...MODES.map((value) =>
      h("label", { class: "inline" },
        h("input", {
          type: "radio", name, value, checked: value === mode, "data-testid": `wgsl-mode-${value}`,
          onchange: () => {
            ctx.wgslMode = value;
            renderWgsl(ctx, container);
            container.querySelector(`input[value="${value}"]`)?.focus();
          },
        }),
        ` ${t("kernels.mode." + value)}`,
        value === plan.entryMode ? h("span", { class: "badge" }, t("wgsl.entryMode")) : null)));
  const sections = kernels.map((wgsl) => {
    const source = h("pre", { class: "trace wgsl-source", tabindex: 0 }, highlightWgsl(wgsl.source));
    return h("section", { class: "wgsl-kernel", dataset: { kernel: wgsl.kernel } },
      h("div", { class: "code-head" },
        h("h5", {}, h("code", {}, wgsl.kernel)),
        copyBar({ text: () => wgsl.source, target: source, what: both("copy.what.wgsl", wgsl.kernel), testId: "copy-wgsl" })),
      h("p", { class: "hint" },
        t("wgsl.bindings"), " ",
        ...wgsl.bindings.flatMap((b, i) => [i ? ", " : "", h("code", {}, `@binding(${b.binding}) ${b.name}`), ` (${b.access})`]),
        wgsl.symbols.length ? h("br") : null,
        wgsl.symbols.length ? t(`wgsl.symbols.${mode}`, wgsl.symbols.join(", ")) : null),
      source);
  });
  const noSymbols = plan.kernels.every((kernel) => kernel.symbols.length === 0);
  fill(container,
    switcher,
    h("p", { id: "emit-mode-help", class: "hint" }, t(`wgsl.about.${mode}`)),
    noSymbols ? h("p", { class: "note" }, t("wgsl.staticEntry")) : null,
    ...sections);
}

/** Starts the run stage's run once per compilation; `onDone` re-renders. */
export function ensureRun(ctx, onDone) {
  const compilation = ctx.compilation;
  if (!compilation || ctx.runResult || ctx.runPending === compilation) return;
  ctx.runPending = compilation;
  runOnce(ctx, compilation).then(onDone);
}

async function runOnce(ctx, compilation) {
  let result;
  try {
    result = await compilation.run({ check: true, timing: true });
  } catch (error) {
    result = { error: ctx.asError(error) };
  }
  if (ctx.compilation !== compilation) return;
  ctx.runPending = null;
  ctx.runResult = result;
}

/** Runs the compilation's kernels again (the steady state: pipelines already exist). */
function runAgain(ctx, onDone) {
  if (!ctx.compilation || ctx.runPending) return;
  ctx.runResult = null;
  ensureRun(ctx, onDone);
  onDone();
}

/** The relative tolerance the page accepts (the GPU tests' `GPU_TOLERANCE`). */
const TOLERANCE = 2e-3;

/** The run stage: where it ran, outputs vs reference, max abs error, times. */
export function renderRun(ctx, container, onDone) {
  const result = ctx.runResult;
  const webgpu = ctx.tailor?.webgpu;
  const gpu = ctx.tailor?.device === "gpu";
  const where = gpu
    ? h("p", { class: "run-device gpu" }, t("run.onGpu", (webgpu?.adapter ?? ctx.tailor.adapter?.name ?? "WebGPU") + (webgpu?.emulated ? t("gpu.emulatedTag") : "")))
    : h("p", { class: "run-device cpu note" }, t("run.onCpu", webgpu?.reason ?? ""));
  container.dataset.device = ctx.tailor?.device ?? "cpu";
  if (!result) {
    container.dataset.state = "running";
    return fill(container, where, h("p", { class: "hint" }, t(gpu ? "run.runningGpu" : "run.runningCpu")));
  }
  if (result.error) {
    container.dataset.state = "error";
    return fill(container, where, h("p", { class: "error" }, t("run.failed") + errorText(result.error)));
  }
  container.dataset.state = "done";
  let largest = 1;
  for (const output of result.outputs) for (const value of output.data) largest = Math.max(largest, Math.abs(value));
  const bound = TOLERANCE * largest;
  const ok = result.maxAbsErr !== null && result.maxAbsErr <= bound;
  container.dataset.check = ok ? "pass" : "fail";
  const outputs = result.outputs.map((output, i) => {
    const first = Array.from(output.data.slice(0, 6), (v) => v.toFixed(4)).join(", ");
    const reference = result.referenceShapes?.[i] ?? [];
    return h("tr", {},
      h("th", { scope: "row" }, String(i)),
      h("td", {}, h("code", {}, `[${output.shape.join(", ")}]`)),
      h("td", {}, h("code", {}, `[${reference.join(", ")}]`)),
      h("td", { class: "hint" }, `${first}${output.data.length > 6 ? ", …" : ""}`));
  });
  // On the GPU each product kernel runs as `tiled`, `blocked` or `naive`, chosen per call.
  const forms = new Map((result.products ?? []).map((p) => [p.kernel, p.strategy]));
  // With tiers, a product ran naive while the browser built its large form.
  const building = new Map((result.products ?? []).filter((p) => p.building).map((p) => [p.kernel, p.building]));
  const tier = (kernel) => building.has(kernel)
    ? [h("span", { class: "tier-building", dataset: { building: building.get(kernel) } }, t("run.building", building.get(kernel)))]
    : [];
  const form = (kernel) => forms.has(kernel)
    ? [" ", h("span", { class: "product-form", dataset: { strategy: forms.get(kernel) } }, `(${forms.get(kernel)})`)]
    : [];
  const kernelTimes = result.kernelMs?.length
    ? h("details", { class: "kernel-times" },
      h("summary", {}, t("run.kernelTimes", t(`run.timing.${result.timing}`))),
      h("ul", {}, ...result.kernelMs.map((k) => h("li", {}, h("code", {}, k.kernel), ...form(k.kernel), ` ${formatMs(k.ms)}`))))
    : null;
  const products = forms.size
    ? h("p", { class: "run-products", dataset: { testid: "run-products" } }, t("run.products"), " ",
      ...[...forms].flatMap(([kernel, strategy], i) => [i ? ", " : "", h("code", {}, kernel), " ",
        h("span", { class: "product-form", dataset: { strategy } }, strategy), ...tier(kernel)]))
    : null;
  fill(container,
    where,
    h("div", { class: "table-scroll" }, h("table", { class: "compare outputs" },
      h("thead", {}, h("tr", {}, ...["run.output", "run.shape", "run.referenceShape", "run.first"].map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...outputs))),
    h("p", { class: `check ${ok ? "pass" : "fail"}` },
      h("strong", {}, ok ? "✓ " : "✗ "),
      t("run.maxAbsErr"), " ", h("code", { class: "max-abs-err" }, result.maxAbsErr === null ? "∞" : result.maxAbsErr.toExponential(2)),
      ` ${t("run.tolerance", bound.toExponential(1))}`),
    h("p", {}, gpu
      ? t("run.times", formatMs(result.ms.run), formatMs(result.ms.build), formatMs(result.ms.reference))
      : t("run.timesCpu", formatMs(result.ms.run), formatMs(result.ms.reference))),
    products,
    kernelTimes,
    h("button", { type: "button", class: "secondary", onclick: () => runAgain(ctx, onDone) }, t("run.again")));
}
