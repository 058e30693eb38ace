// One live widget per concept section, each driven by the real compiler through the JS API:
// shape combinations vs compile counts (§2), the matmul constraint (§3), guard verdicts for a
// typed shape (§4), the settings as PyTorch code (§6), the conv output length with L_in = s0
// (§7), the AI scenarios (§9) and the material's Python demo on one shared cache (§10).

import { fill, h, m, yieldToBrowser } from "./dom.js";
import { formatMs } from "./format.js";
import { errorText, t } from "./i18n.js";
import { parseShapes } from "./shapes.js";

const $ = (id) => document.getElementById(id);

const MATMUL_SOURCE = `import torch


def matmul(a, b):
    return a @ b
`;

function convSource({ p, k, s, d }) {
  return `import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, kernel_size=${k}, stride=${s}, padding=${p}, dilation=${d})

    def forward(self, x):
        return self.conv(x)
`;
}

// The material's demo script, shown as the code the Python 演示 section runs.
const PYTHON_SCRIPT = `base = SimpleNet().to(device)
model_dynamic = torch.compile(base, dynamic=True)
model_static = torch.compile(base, dynamic=False)

sizes = [8, 16, 32, 16, 8, 64, 16, 8]
benchmark(model_dynamic, [8], runs=2)
benchmark(model_static, [8], runs=2)

t_dyn = benchmark(model_dynamic, sizes)   # runs=3 per size
t_sta = benchmark(model_static, sizes)

for bs in [3, 7, 11]:
    assert model_dynamic(torch.randn(bs, 64)).shape == (bs, 64)
    assert model_static(torch.randn(bs, 64)).shape == (bs, 64)`;

/** Calls `model` once per shape spec, yielding between calls; returns the call records, or
 * `null` when a panic restarted the module (the model is gone then). */
async function callEach(ctx, model, specs) {
  for (const spec of specs) {
    const ok = await ctx.guarded(async () => {
      try {
        await model.call(spec);
      } catch (error) {
        // A call that failed to compile is a record in the log, not a reason to stop.
        if (!error?.call) throw error;
      }
      return true;
    });
    if (!ok) return null;
    await yieldToBrowser();
  }
  return model.events();
}

// One call with `options`; its result, or null where the page stopped (a failed compile is
// a record in the log and gives an empty result).
async function callOne(ctx, model, spec, options = {}) {
  let result = null;
  const ok = await ctx.guarded(async () => {
    try {
      result = await model.call(spec, options);
    } catch (error) {
      if (!error?.call) throw error;
      result = {};
    }
    return true;
  });
  if (!ok) return null;
  await yieldToBrowser();
  return result;
}

function errorBox(ctx, error) {
  const e = ctx.asError(error);
  return h("p", { class: "error-text", role: "alert" }, `${t("kind." + e.kind)}: ${errorText(e)}`);
}

/** The widgets, following the page's `events`; the AI scenarios run in the cache `lab`. */
export function setupWidgets(ctx, events, lab) {
  setupGrid(ctx, events);
  setupMatmul(ctx, events);
  setupGuardCheck(ctx, events);
  setupConfigCode(ctx, events);
  setupConv(ctx, events);
  setupScenarios(lab);
  setupPythonDemo(ctx, events);
}

// §2: distinct (B, L) pairs and how many compilations each mode needs.
function setupGrid(ctx, events) {
  const choices = { b: [2, 4, 8, 16], l: [32, 64, 128, 256] };
  const picked = { b: new Set([4, 8, 16]), l: new Set([32, 64, 128]) };
  for (const axis of ["b", "l"]) {
    fill($(`grid-${axis}`), ...choices[axis].map((value) => {
      const box = h("input", { type: "checkbox", id: `grid-${axis}-${value}`, checked: picked[axis].has(value) });
      box.addEventListener("change", () => (box.checked ? picked[axis].add(value) : picked[axis].delete(value)));
      return h("label", { class: "chip-check", for: `grid-${axis}-${value}` }, box, ` ${value}`);
    }));
  }
  const button = $("grid-run");
  const out = $("grid-result");
  let last = null;
  const render = () => {
    if (!last) return;
    if (last.error) return fill(out, errorBox(ctx, last.error));
    fill(out, h("p", {}, t("grid.calls", last.n)), h("p", { class: "hint" }, t("grid.naive", last.n)),
      h("ul", {}, ...last.rows.map((r) => h("li", { dataset: { mode: r.mode } }, t("grid.row", r.name, r.compiles, r.eager)))));
  };
  button.disabled = false;
  button.addEventListener("click", async () => {
    const pairs = [...picked.b].sort((a, b) => a - b).flatMap((b) => [...picked.l].sort((a, b) => a - b).map((l) => `x=${b},${l},64`));
    if (pairs.length === 0) return fill(out, h("p", { class: "error-text" }, t("grid.need")));
    button.disabled = true;
    try {
      const rows = [];
      for (const [mode, name] of [["false", "False"], ["true", "True"], ["auto", "None"]]) {
        const model = ctx.tailor.compile(ctx.presets[0].source, { dynamic: mode });
        const calls = await callEach(ctx, model, pairs);
        model.free();
        if (!calls) return;
        rows.push({ mode, name, compiles: calls.filter((c) => c.action === "compile").length, eager: calls.filter((c) => c.action === "eager").length });
      }
      last = { n: pairs.length, rows };
    } catch (error) {
      last = { error };
    } finally {
      button.disabled = false;
    }
    render();
  });
  events.on("language", render);
}

// §3: a @ b with every dim marked dynamic, so the equality of the inner dims is derived.
function setupMatmul(ctx, events) {
  $("matmul-source").textContent = MATMUL_SOURCE;
  const shapes = $("matmul-shapes");
  const marked = $("matmul-marked");
  const button = $("matmul-run");
  const out = $("matmul-result");
  let last = null;
  const render = () => {
    if (!last) return;
    if (last.error) return fill(out, errorBox(ctx, last.error));
    const view = last.view;
    const node = view.nodes.find((n) => n.op === "matmul");
    const list = (shapeEvents) => h("ol", { class: "events-view" }, ...shapeEvents.map((e) =>
      h("li", { class: `event ${e.kind}` }, h("span", { class: "badge" }, t("events.kind." + e.kind)), h("code", {}, e.text))));
    const guards = h("ol", { class: "guards-view compact" });
    ctx.renderGuards(view.guards, guards);
    fill(out,
      h("p", {}, h("strong", {}, t("matmul.output", node ? node.shape.join(", ") : "?"))),
      h("p", {}, t("matmul.symbols")), list(view.events.filter((e) => e.node < view.inputs.length)),
      h("p", {}, t("matmul.events")), list(view.events.filter((e) => node && e.node === node.id)),
      h("p", {}, t("matmul.guards")), guards);
  };
  const derive = async () => {
    let model = null;
    let compilation = null;
    try {
      await ctx.guarded(async () => {
        const inputs = parseShapes(shapes.value);
        const markDynamic = marked.checked ? inputs.flatMap((i) => i.dims.map((_, dim) => [i.name, dim])) : [];
        model = ctx.tailor.compile(MATMUL_SOURCE, { dynamic: marked.checked ? "auto" : "true", markDynamic });
        compilation = model.trace(shapes.value);
        last = { view: compilation.view };
      });
    } catch (error) {
      last = { error };
    } finally {
      compilation?.free();
      model?.free();
    }
    render();
  };
  button.disabled = shapes.disabled = false;
  button.addEventListener("click", derive);
  shapes.addEventListener("keydown", (event) => {
    if (event.key === "Enter") derive();
  });
  events.on("language", render);
}

// §4: every guard of the step-through's entry checked against a typed shape.
function setupGuardCheck(ctx, events) {
  const shapes = $("guard-shapes");
  const button = $("guard-check");
  const out = $("guard-result");
  let last = null;
  const suggest = () => {
    const first = ctx.varyDims()[0];
    const input = parseShapes($("input-shapes").value).find((i) => i.name === first?.[0]);
    const current = input?.dims[first[1]] ?? 8;
    shapes.value = ctx.shapesWith(current * 2);
    last = null;
    fill(out);
  };
  const render = () => {
    if (!last) return;
    if (last.error) return fill(out, errorBox(ctx, last.error));
    const list = h("ol", { class: "guards-view" });
    ctx.renderGuards(last.guards, list, last.check.pass);
    fill(out,
      h("p", { class: last.check.outcome === "hit" ? "outcome hit" : "outcome miss", dataset: { outcome: last.check.outcome } },
        last.check.outcome === "hit" ? t("guardw.hit") : t("guardw.miss", last.check.reason)),
      list);
  };
  const check = () => {
    if (!ctx.compilation) {
      last = null;
      return fill(out, h("p", { class: "hint" }, t("guardw.none")));
    }
    try {
      last = { guards: ctx.view.guards, check: ctx.compilation.checkGuards(shapes.value.trim()) };
    } catch (error) {
      last = { error };
    }
    render();
  };
  button.disabled = shapes.disabled = false;
  button.addEventListener("click", check);
  shapes.addEventListener("keydown", (event) => {
    if (event.key === "Enter") check();
  });
  events.on("compiled", suggest);
  events.on("language", render);
}

// §6: the controls of the lab as the PyTorch calls they stand for.
function setupConfigCode(ctx, events) {
  const out = $("config-code");
  let entries = null;
  const render = () => {
    const options = ctx.currentOptions();
    const dynamic = { auto: "None", true: "True", false: "False" }[options.dynamic];
    const inputs = parseShapes($("input-shapes").value);
    const name = ctx.model?.entryName ?? "Model";
    const lines = [`model = ${name}()`, `compiled = torch.compile(model, dynamic=${dynamic})`];
    for (const input of inputs) {
      const value = input.value?.replace(/^int\((.*)\)$/, "$1");
      lines.push(`${input.name} = ${value ?? `torch.randn(${input.dims.join(", ")})`}`);
    }
    for (const [input, dim, min, max] of options.markDynamic) {
      const bounds = [min !== null ? `min=${min}` : null, max !== null ? `max=${max}` : null].filter(Boolean);
      lines.push(`torch._dynamo.mark_dynamic(${[input, dim, ...bounds].join(", ")})`);
    }
    for (const [input, dim] of options.markStatic) lines.push(`torch._dynamo.mark_static(${input}, ${dim})`);
    lines.push(`compiled(${inputs.map((i) => i.name).join(", ")})`);
    if (entries !== null) lines.push(t("config.entries", entries));
    out.textContent = lines.join("\n");
  };
  events.on("compiled", render);
  events.on("labRun", (model) => {
    entries = model.entries().length;
    render();
  });
  events.on("language", render);
  render();
}

// §7: the conv output length with L_in = s0, derived by the compiler.
function setupConv(ctx, events) {
  const field = (id) => $(id);
  const button = $("conv-run");
  const out = $("conv-result");
  let last = null;
  const render = () => {
    if (!last) return;
    if (last.error) return fill(out, errorBox(ctx, last.error));
    const { p, k, s, d, l, expr, actual, guards } = last;
    const mn = (v) => m("mn", {}, String(v));
    const formula = m("math", { display: "block", class: "formula filled", "aria-label": `L out equals ${expr}` },
      m("mrow", {},
        m("msub", {}, m("mi", {}, "L"), m("mtext", {}, "out")), m("mo", {}, "="),
        m("mrow", {}, m("mo", {}, "⌊"),
          m("mfrac", {},
            m("mrow", {}, m("msub", {}, m("mi", {}, "s"), mn(0)), m("mo", {}, "+"), mn(2 * p), m("mo", {}, "−"), mn(d * (k - 1) + 1)),
            mn(s)),
          m("mo", {}, "⌋")),
        m("mo", {}, "+"), mn(1)));
    const list = h("ol", { class: "guards-view compact" });
    ctx.renderGuards(guards, list);
    fill(out,
      h("p", {}, t("conv.formula")), formula,
      h("p", {}, t("conv.output"), " ", h("code", { class: "big" }, expr)),
      h("p", {}, t("conv.value", l, actual)),
      h("p", {}, t("conv.guards")), list);
  };
  const run = async () => {
    const values = Object.fromEntries(["p", "k", "s", "d", "l"].map((key) => [key, Number(field(`conv-${key}`).value)]));
    let model = null;
    let compilation = null;
    try {
      await ctx.guarded(async () => {
        model = ctx.tailor.compile(convSource(values), { dynamic: "auto", markDynamic: [["x", 2]] });
        compilation = model.trace(`x=1,4,${values.l}`);
        const view = compilation.view;
        const conv = view.nodes.find((n) => n.op === "conv1d");
        const result = await compilation.run();
        last = { ...values, expr: conv.shape[2], actual: result.outputs[0].shape[2], guards: view.guards };
      });
    } catch (error) {
      last = { error };
    } finally {
      compilation?.free();
      model?.free();
    }
    render();
  };
  button.disabled = false;
  button.addEventListener("click", run);
  events.on("language", render);
}

// §9: each scenario loads its preset and runs a material sequence in the lab.
function setupScenarios(lab) {
  for (const button of document.querySelectorAll("button.scenario")) {
    button.disabled = false;
    button.addEventListener("click", () => lab.runScenario(button.dataset.preset, button.dataset.sequence));
  }
}

// §10: the material's demo as written: two wrappers of one module share one cache.
function setupPythonDemo(ctx, events) {
  $("python-script").textContent = PYTHON_SCRIPT;
  setupScriptRun(ctx, events);
  const run = $("python-run");
  const more = $("python-more");
  const out = $("python-result");
  let dynamic = null;
  let fixed = null;
  let last = null;
  const sizes = [8, 16, 32, 16, 8, 64, 16, 8];
  const batches = (list, runs) => list.flatMap((b) => Array(runs).fill(`x=${b},64`));
  const phases = [
    ["warm_dyn", "dynamic", batches([8], 2)],
    ["warm_sta", "static", batches([8], 2)],
    ["t_dyn", "dynamic", batches(sizes, 3)],
    ["t_sta", "static", batches(sizes, 3)],
  ];
  const render = () => {
    if (!last) return;
    if (last.error) return fill(out, errorBox(ctx, last.error));
    const rows = last.phases.map((p) => h("tr", {},
      h("th", { scope: "row" }, h("code", {}, t(`python.phase.${p.id}`))),
      h("td", {}, String(p.calls)), h("td", {}, String(p.compiles)), h("td", {}, formatMs(p.ms))));
    const entries = last.entries.map((e) => h("li", { dataset: { wrapper: e.wrapper } },
      h("strong", {}, e.wrapper === 0 ? t("python.dynamic") : t("python.static")), " ",
      h("code", {}, e.inputs.map((i) => `${i.name}=[${i.dims.map((d) => d.text).join(", ")}]`).join("; "))));
    const tDyn = last.phases.find((p) => p.id === "t_dyn").ms;
    const tSta = last.phases.find((p) => p.id === "t_sta").ms;
    fill(out,
      h("div", { class: "table-scroll" }, h("table", { class: "compare" },
        h("thead", {}, h("tr", {}, ...["python.phase", "python.calls", "python.compiles", "python.time"].map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", {}, ...rows))),
      h("p", {}, t("python.ratio", (tSta / Math.max(tDyn, 1e-9)).toFixed(2))),
      h("p", { class: "python-entries", dataset: { count: last.entries.length } }, t("python.entries", last.entries.length)),
      h("ol", { class: "python-entry-list" }, ...entries),
      last.more
        ? h("div", { class: `outcome ${last.more.action}`, dataset: { action: last.more.action } },
          h("p", {}, t("python.more", last.more.action)),
          last.more.warning ? h("pre", { class: "warning-text" }, last.more.warning) : null)
        : null);
  };
  const summarise = () => {
    const calls = dynamic.events();
    let offset = 0;
    const result = [];
    for (const [id, , specs] of phases) {
      const slice = calls.slice(offset, offset + specs.length);
      offset += specs.length;
      result.push({ id, calls: slice.length, compiles: slice.filter((c) => c.action === "compile").length, ms: slice.reduce((sum, c) => sum + c.ms.guard + c.ms.compile + c.ms.run, 0) });
    }
    const rest = calls.slice(offset, offset + 6);
    result.push({ id: "asserts", calls: rest.length, compiles: rest.filter((c) => c.action === "compile").length, ms: rest.reduce((sum, c) => sum + c.ms.guard + c.ms.compile + c.ms.run, 0) });
    return result;
  };
  run.disabled = false;
  run.addEventListener("click", async () => {
    run.disabled = more.disabled = true;
    fixed?.free();
    dynamic?.free();
    try {
      await ctx.guarded(async () => {
        dynamic = ctx.tailor.compile(ctx.presets[0].source, { dynamic: "true" });
        fixed = dynamic.wrap({ dynamic: "false" });
        for (const [, which, specs] of phases) {
          if (!(await callEach(ctx, which === "dynamic" ? dynamic : fixed, specs))) return;
        }
        // One tensor per batch goes to both wrappers: what AOTAutograd stamped on it in
        // the dynamic call goes with it into the static one.
        for (const bs of [3, 7, 11]) {
          const x = `x=${bs},64`;
          const stamped = await callOne(ctx, dynamic, x);
          if (!stamped) return;
          if (!(await callOne(ctx, fixed, x, { propagated: stamped.stamps?.inputs ?? [] }))) return;
        }
        last = { phases: summarise(), entries: dynamic.entries(), more: null };
        more.disabled = false;
      });
    } catch (error) {
      last = { error };
    } finally {
      run.disabled = false;
    }
    render();
  });
  more.addEventListener("click", async () => {
    if (!fixed) return;
    await ctx.guarded(async () => {
      const result = await fixed.call("x=13,64");
      last.more = { action: result.action, warning: result.warning };
      last.entries = dynamic.entries();
    });
    render();
  });
  events.on("restart", () => {
    dynamic = fixed = null;
    more.disabled = true;
  });
  events.on("language", render);
}

// §10, the script itself: the material's demo runs verbatim in script mode (Python on the VM,
// each torch.compile wrapper a real one), with TORCH_LOGS=recompiles lines as PyTorch logs
// them. Its compiled calls run on the CPU backend: a Python call waits for its result.
function setupScriptRun(ctx, events) {
  const source = ctx.bindings.Tailor.materialDemo();
  $("script-source").textContent = source;
  runsAsScript(ctx, events, () => source, $("script-run"), $("script-result"), "demos/material_demo.py");
  $("script-run").disabled = false;
}

/** The editor's text as a whole script (`tailor script`): what it prints, its recompile
 * lines, and its error at line:col, marked in the editor too. */
export function setupEditorScript(ctx, events, editor, button, out) {
  runsAsScript(ctx, events, () => editor.value, button, out, "model.py", (error) => {
    if (error?.line) editor.markError(error.line, error.col ?? 1, errorText(error));
    else editor.clearError();
  });
}

/** Runs `source()` as a script on `button`'s click into `out`; `onError` gets the run's error
 * (`{ kind, message, line, col }`, or undefined when it ran to the end). */
function runsAsScript(ctx, events, source, button, out, path, onError = () => {}) {
  let last = null;
  const render = () => {
    if (!last) return;
    if (last.thrown) return fill(out, errorBox(ctx, last.thrown));
    const compiles = last.calls.filter((c) => c.event.action === "compile").length;
    fill(out,
      h("p", { class: "script-summary", dataset: { calls: last.calls.length, compiles, entries: last.entries.join(",") } },
        t("script.summary", last.calls.length, compiles, last.entries[0] ?? 0, formatMs(last.ms))),
      last.output.length
        ? h("pre", { class: "script-output" }, ...last.output.map((piece) =>
          h("span", { class: `stream-${piece.stream}` }, piece.text)))
        : null,
      last.error
        ? h("p", { class: "error-text", role: "alert" }, `${t("kind." + last.error.kind)}: ${errorText(last.error)}`)
        : null);
  };
  button.addEventListener("click", async () => {
    button.disabled = true;
    await yieldToBrowser();
    try {
      await ctx.guarded(async () => {
        const started = performance.now();
        const run = ctx.tailor.script(source(), { logs: "recompiles", path });
        last = { ...run, ms: performance.now() - started };
        onError(run.error);
      });
    } catch (error) {
      last = { thrown: error };
    } finally {
      button.disabled = false;
    }
    render();
  });
  events.on("language", render);
}
