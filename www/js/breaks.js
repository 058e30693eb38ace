// The graph-breaks stage: the graphs of the compiling call in the order Python reached them
// (forward's, then each resume function's), each with its [frame/compile] id and action, and
// between two graphs the break that ended the first — line:col, the kind, PyTorch's reason
// text as PyTorch writes it, which way a branch went, the resume function it leads to — and
// what Python printed there. Input: `view.graphs` of a `Compilation.view`. Pure rendering:
// no wasm calls; a click on a graph asks the page to draw it, a click on a break's place asks
// the page to reveal that line.

import { h } from "./dom.js";
import { callError, t } from "./i18n.js";

/** Whether the compiling call went through graph breaks (the stage exists only then). */
export function hasBreaks(view) {
  return (view?.graphs?.length ?? 0) > 1;
}

/** `0/1`: a graph's id as PyTorch's logs write it (`[0/1]`), `–` for a frame that compiled
 * nothing. */
export function graphId(graph) {
  return `${graph.frame}/${graph.compileId ?? "–"}`;
}

/**
 * The stage into `container`: a list with one item per graph and one per break between two
 * graphs, then how Tailor runs it. `selected` is the index of the graph drawn below;
 * `onSelect(index)` draws another, `onReveal(graphBreak)` shows a break's line in the source.
 */
export function renderBreaks(graphs, container, { selected, onSelect, onReveal }) {
  const items = [];
  graphs.forEach((graph, index) => {
    items.push(graphCard(graph, index, index === selected, onSelect));
    if (graph.endsAt) items.push(breakCard(graph.endsAt, graphs[index + 1], onReveal));
  });
  const breaks = graphs.length - 1;
  container.replaceChildren(
    h("p", { class: "breaks-summary" }, t("breaks.summary", graphs.length, breaks)),
    h("ol", { class: "graph-chain" }, ...items),
    h("p", { class: "hint breaks-note" }, t("breaks.tailor")));
}

function graphCard(graph, index, selected, onSelect) {
  const role = graph.frame === 0 ? t("breaks.role.function") : t("breaks.role.resume");
  return h("li", {
    class: `graph-card act-${graph.action}${selected ? " selected" : ""}`,
    dataset: { frame: graph.frame, id: graphId(graph), action: graph.action },
  },
    h("div", { class: "graph-head" },
      h("button", {
        type: "button",
        class: "graph-pick",
        "aria-pressed": String(selected),
        "aria-label": t("breaks.pick", graphId(graph), graph.function),
        onclick: () => onSelect(index),
      }, h("span", { class: "graph-id" }, `[${graphId(graph)}]`), " ", h("code", {}, graph.function)),
      h("span", { class: "hint" }, role),
      h("span", { class: `badge action act-${graph.action}` }, t("action." + graph.action))),
    graph.reasons.length
      ? h("ul", { class: "graph-reasons" },
        ...graph.reasons.map((reason) => h("li", {}, h("code", {}, `${graph.frame}/${reason.entry}: ${reason.text}`))))
      : null,
    graph.error ? h("p", { class: "error-text" }, callError(graph)) : null,
    graph.endsAt ? null : h("p", { class: "hint" }, t("breaks.toReturn")),
    graph.text
      ? h("details", { class: "graph-text" }, h("summary", {}, t("breaks.text")), h("pre", { class: "trace" }, graph.text))
      : null,
    graph.guards.length
      ? h("details", { class: "graph-guards" }, h("summary", {}, t("lab.guards", graph.guards.length)),
        h("pre", { class: "trace" }, graph.guards.join("\n")))
      : null);
}

function breakCard(graphBreak, next, onReveal) {
  const where = t("breaks.at", graphBreak.line, graphBreak.col);
  return h("li", { class: `break-card ${graphBreak.kind}`, dataset: { line: graphBreak.line, col: graphBreak.col, kind: graphBreak.kind } },
    h("div", { class: "break-head" },
      h("span", { class: "break-mark", "aria-hidden": "true" }, "✂"),
      h("button", { type: "button", class: "break-where", title: t("breaks.reveal"), onclick: () => onReveal(graphBreak) }, where),
      h("span", { class: "badge" }, t("breaks.kind." + graphBreak.kind))),
    graphBreak.taken === null ? null : h("p", {}, t(graphBreak.taken ? "breaks.taken" : "breaks.notTaken")),
    h("p", { class: "break-reason-label" }, t("breaks.reason")),
    h("pre", { class: "break-reason" }, graphBreak.reason),
    next?.printed ? [h("p", { class: "break-reason-label" }, t("breaks.printed")), h("pre", { class: "printed" }, next.printed)] : null,
    h("p", {}, t("breaks.resume", graphBreak.resume)));
}
