// The cache lab's latency timeline: one stacked bar per call (guard check, compile, run),
// with a marker coloured by what the call did, so recompilations stand out as spikes. With
// `simulate`, compile bars take Inductor's measured costs instead of Tailor's own (clearly
// labelled) and the axis turns logarithmic so runs stay visible. A bar's height is its total
// time on the axis; its phases split that height in proportion to their share of the total, so
// on the log axis a 0.1 ms guard check next to a 17 s compile stays a sliver, as it is. Pure
// drawing.

import { h, s } from "./dom.js";
import { formatMs } from "./format.js";
import { t } from "./i18n.js";
import { callPhases, niceMax } from "./stats.js";

const HEIGHT = 220;
const PAD = { left: 60, right: 12, top: 16, bottom: 40 };

/** `calls` are the model's call records (`model.events()`); `label(call)` names a bar. */
export function renderTimeline(calls, label, { simulate = false } = {}) {
  if (calls.length === 0) return h("p", { class: "hint" }, t("chart.empty"));
  const parts = callPhases(calls, simulate);
  const total = (p) => p.guard + p.compile + p.run;
  const barW = Math.max(6, Math.min(28, 640 / calls.length));
  const width = PAD.left + PAD.right + calls.length * (barW + 4);
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const top = niceMax(Math.max(...parts.map(total)));
  // Linear for measured times; logarithmic (0.01 ms … top) when seconds meet microseconds.
  const floor = 0.01;
  const y = simulate
    ? (ms) => PAD.top + plotH * (1 - Math.log10(Math.max(ms, floor) / floor) / Math.log10(top / floor))
    : (ms) => PAD.top + plotH * (1 - ms / top);
  const ticks = simulate ? [floor, 1, 100, top].filter((v, i, all) => v <= top && all.indexOf(v) === i) : [0, top / 2, top];
  const svg = s("svg", { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, class: "timeline-svg" },
    s("title", {}, t(simulate ? "chart.titleSimulated" : "chart.title")));
  for (const value of ticks) {
    svg.append(
      s("line", { x1: PAD.left - 4, x2: width - PAD.right, y1: y(value), y2: y(value), class: "grid" }),
      s("text", { x: PAD.left - 8, y: y(value) + 4, "text-anchor": "end", class: "axis" }, formatMs(value)),
    );
  }
  calls.forEach((call, i) => {
    const x = PAD.left + i * (barW + 4);
    const part = parts[i];
    const bar = s("g", { class: `bar act-${call.action}`, dataset: { action: call.action } },
      s("title", {}, `#${i + 1} ${call.shapes}: ${t("action." + call.action)} — ${formatMs(total(part))}`));
    const bottom = y(simulate ? floor : 0);
    const height = Math.max(0, bottom - y(total(part)));
    let below = bottom;
    for (const name of ["guard", "compile", "run"]) {
      if (part[name] <= 0) continue;
      const share = height * (part[name] / total(part));
      bar.append(s("rect", { x, width: barW, y: below - share, height: Math.max(1, share), class: `part-${name}` }));
      below -= share;
    }
    if (calls.length <= 40) {
      bar.append(s("text", { x: x + barW / 2, y: HEIGHT - PAD.bottom + 14, "text-anchor": "middle", class: "axis" }, label(call)));
    }
    bar.append(s("rect", { x: x + 1, width: barW - 2, y: HEIGHT - PAD.bottom + 20, height: 5, class: `act-${call.action}` }));
    svg.append(bar);
  });
  svg.append(s("text", { x: width - PAD.right, y: HEIGHT - 4, "text-anchor": "end", class: "axis" }, t("chart.calls")));
  // Two keys: what the bar's colours measure (time spent) and what the marker says the call
  // did; "compile" is in both, so each group says which it is.
  const legend = h("ul", { class: "legend" },
    h("li", { class: "legend-group" }, t("chart.legend.timeGroup")),
    ...["compile", "run", "guard"].map((name) => h("li", { dataset: { part: name } }, h("span", { class: `swatch part-${name}` }), t(`chart.legend.${name}`))),
    h("li", { class: "legend-group" }, t("chart.legend.actionGroup")),
    ...["compile", "hit", "eager", "error"].map((action) => h("li", { dataset: { action } }, h("span", { class: `swatch marker act-${action}` }), t(`action.${action}`))));
  return h("div", { class: "timeline" },
    simulate ? h("p", { class: "hint" }, t("chart.simulatedNote")) : null,
    h("div", { class: "chart-scroll" }, svg), legend);
}
