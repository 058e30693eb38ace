// The cache lab's latency timeline: one stacked bar per call (guard check, compile, run),
// coloured by what the call did, so recompilations stand out as spikes. Pure drawing.

import { formatMs, h, s } from "./dom.js";
import { t } from "./i18n.js";

const HEIGHT = 220;
const PAD = { left: 56, right: 12, top: 16, bottom: 40 };

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten. */
function niceMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((f) => f * power).find((v) => v >= value);
}

/** `calls` are the model's call records (`model.events()`); `label(call)` names a bar. */
export function renderTimeline(calls, label) {
  if (calls.length === 0) return h("p", { class: "hint" }, t("chart.empty"));
  const barW = Math.max(6, Math.min(28, 640 / calls.length));
  const width = PAD.left + PAD.right + calls.length * (barW + 4);
  const total = (call) => call.ms.guard + call.ms.compile + call.ms.run;
  const top = niceMax(Math.max(...calls.map(total)));
  const y = (ms) => PAD.top + (HEIGHT - PAD.top - PAD.bottom) * (1 - ms / top);
  const svg = s("svg", { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, class: "timeline-svg" },
    s("title", {}, t("chart.title")));
  for (const fraction of [0, 0.5, 1]) {
    const value = top * fraction;
    svg.append(
      s("line", { x1: PAD.left - 4, x2: width - PAD.right, y1: y(value), y2: y(value), class: "grid" }),
      s("text", { x: PAD.left - 8, y: y(value) + 4, "text-anchor": "end", class: "axis" }, formatMs(value)),
    );
  }
  calls.forEach((call, i) => {
    const x = PAD.left + i * (barW + 4);
    let base = 0;
    const bar = s("g", { class: `bar ${call.action}`, dataset: { action: call.action } },
      s("title", {}, `#${i + 1} ${call.shapes}: ${t("action." + call.action)} — ${formatMs(total(call))}`));
    for (const part of ["guard", "compile", "run"]) {
      const value = call.ms[part];
      if (value <= 0) continue;
      bar.append(s("rect", { x, width: barW, y: y(base + value), height: Math.max(1, y(base) - y(base + value)), class: part }));
      base += value;
    }
    if (base === 0) bar.append(s("rect", { x, width: barW, y: y(0) - 1, height: 1, class: "run" }));
    if (calls.length <= 40) {
      bar.append(s("text", { x: x + barW / 2, y: HEIGHT - PAD.bottom + 14, "text-anchor": "middle", class: "axis" }, label(call)));
    }
    bar.append(s("rect", { x: x + 1, width: barW - 2, y: HEIGHT - PAD.bottom + 20, height: 5, class: `marker ${call.action}` }));
    svg.append(bar);
  });
  svg.append(s("text", { x: width - PAD.right, y: HEIGHT - 4, "text-anchor": "end", class: "axis" }, t("chart.calls")));
  const legend = h("ul", { class: "legend" },
    ...["compile", "run", "guard"].map((part) => h("li", {}, h("span", { class: `swatch ${part}` }), t(`chart.legend.${part}`))),
    ...["compile", "hit", "eager", "error"].map((action) => h("li", {}, h("span", { class: `swatch marker ${action}` }), t(`action.${action}`))));
  return h("div", { class: "timeline" }, h("div", { class: "chart-scroll" }, svg), legend);
}
