// Draws a captured graph as SVG: a layered (longest-path) layout from top to bottom, one box
// per op with its parameters folded in, and each edge labelled with the symbolic shape that
// flows along it. Input: the `nodes` of a `Compilation.view`. Pure drawing: no wasm calls.

import { s } from "./dom.js";
import { t } from "./i18n.js";

const NODE_W = 168;
const NODE_H = 40;
const GAP_X = 28;
const GAP_Y = 64;
const CHAR_W = 6.6; // monospace 11px, for sizing label backgrounds

/** Which nodes are drawn as boxes: inputs, ops, constants and the output. */
function isDrawn(node) {
  return node.role !== "param";
}

/** Layers by longest path from the inputs; order in a layer by the mean of parents' slots. */
function layout(nodes) {
  const drawn = nodes.filter(isDrawn);
  const layer = new Map();
  for (const node of drawn) {
    const parents = node.inputs.map((id) => nodes[id]).filter(isDrawn);
    layer.set(node.id, parents.length === 0 ? 0 : 1 + Math.max(...parents.map((p) => layer.get(p.id))));
  }
  const layers = [];
  for (const node of drawn) (layers[layer.get(node.id)] ??= []).push(node);
  const slot = new Map();
  for (const row of layers) {
    if (!row) continue;
    const key = (node) => {
      const parents = node.inputs.filter((id) => slot.has(id));
      return parents.length === 0 ? node.id : parents.reduce((sum, id) => sum + slot.get(id), 0) / parents.length;
    };
    row.sort((a, b) => key(a) - key(b));
    row.forEach((node, i) => slot.set(node.id, i - (row.length - 1) / 2));
  }
  const widest = Math.max(...layers.filter(Boolean).map((row) => row.length));
  // Wide enough for the longest shape label too (labels are centred under their node).
  const longest = Math.max(...drawn.map((node) => node.shapeText.length * CHAR_W + 16));
  const width = Math.max(widest * NODE_W + (widest - 1) * GAP_X + 2 * GAP_X, longest);
  const position = new Map();
  layers.forEach((row, depth) => {
    row?.forEach((node) => {
      const x = width / 2 + slot.get(node.id) * (NODE_W + GAP_X) - NODE_W / 2;
      position.set(node.id, { x, y: GAP_Y / 2 + depth * (NODE_H + GAP_Y) });
    });
  });
  const height = layers.length * (NODE_H + GAP_Y);
  return { drawn, position, width, height };
}

/**
 * Renders the graph. `options.reached(node)` says whether shape propagation has reached a
 * node (its outgoing shapes are shown), `options.current` is the node being propagated,
 * `options.onSelect(node)` is called when a box is clicked or activated by keyboard.
 */
export function renderGraph(nodes, options = {}) {
  const reached = options.reached ?? (() => true);
  const { drawn, position, width, height } = layout(nodes);
  const edges = s("g", { class: "edges" });
  const labels = s("g", { class: "edge-labels" });
  const boxes = s("g", { class: "nodes" });
  for (const node of drawn) {
    const to = position.get(node.id);
    for (const id of node.inputs) {
      const source = nodes[id];
      if (!isDrawn(source)) continue;
      const from = position.get(id);
      const x1 = from.x + NODE_W / 2;
      const y1 = from.y + NODE_H;
      const x2 = to.x + NODE_W / 2;
      const y2 = to.y;
      const bend = Math.max(24, (y2 - y1) / 2);
      const known = reached(source);
      edges.append(
        s("path", {
          d: `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2 - 6}`,
          class: known ? "edge" : "edge pending",
          "marker-end": "url(#arrow)",
        }),
      );
    }
  }
  // One label per producer, just below it: every edge leaving a node carries the same shape.
  for (const node of drawn) {
    const consumers = drawn.filter((other) => other.inputs.includes(node.id));
    if (consumers.length === 0) continue;
    const known = reached(node);
    const text = known ? node.shapeText : "?";
    const from = position.get(node.id);
    const mx = from.x + NODE_W / 2;
    const my = from.y + NODE_H + GAP_Y * 0.36;
    const w = text.length * CHAR_W + 8;
    labels.append(
      s("g", { class: known ? "edge-label" : "edge-label pending" },
        s("rect", { x: mx - w / 2, y: my - 9, width: w, height: 17, rx: 3 }),
        s("text", { x: mx, y: my + 4, "text-anchor": "middle" }, text)),
    );
  }
  for (const node of drawn) {
    const params = node.inputs.filter((id) => nodes[id].role === "param").length;
    const state = node.id === options.current ? "current" : reached(node) ? "done" : "pending";
    const title = node.role === "output" ? "output" : `%${node.name}`;
    const subtitle =
      node.role === "op" ? `${node.op}${params ? "  " + t("node.params", params) : ""}` : node.role === "input" ? "input" : node.op;
    const box = s("g", {
      class: `node ${node.role} ${state}`,
      transform: `translate(${position.get(node.id).x},${position.get(node.id).y})`,
      tabindex: node.span ? 0 : -1,
      role: node.span ? "button" : "img",
      "aria-label": `${title} ${subtitle} ${node.shapeText}`,
      dataset: { node: node.id },
    },
      s("title", {}, node.text),
      s("rect", { width: NODE_W, height: NODE_H, rx: 6 }),
      s("text", { x: NODE_W / 2, y: 16, "text-anchor": "middle", class: "node-title" }, clip(title, 22)),
      s("text", { x: NODE_W / 2, y: 31, "text-anchor": "middle", class: "node-sub" }, clip(subtitle, 26)));
    if (node.span && options.onSelect) {
      box.addEventListener("click", () => options.onSelect(node));
      box.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          options.onSelect(node);
        }
      });
    }
    boxes.append(box);
  }
  const defs = s("defs", {},
    s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrow-head" })));
  return s("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    class: "graph-svg",
    role: "group",
    "aria-label": "graph",
  }, defs, edges, labels, boxes);
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}
