// Draws a captured graph as SVG, top to bottom, laid out by dagre (a layered layout with
// long-edge routing: an edge that skips layers, a residual add's skip connection, is routed
// around the boxes in between, never through them). One box per op with its parameters folded
// in; each edge is labelled with the symbolic shape that flows along it. Input: the `nodes`
// of a `Compilation.view`. Pure drawing: no wasm calls.

import dagre from "./vendor/dagre.esm.js";
import { s } from "./dom.js";
import { t } from "./i18n.js";

const NODE_W = 168;
const NODE_H = 40;
const GAP_X = 28;
const GAP_Y = 48;
const CHAR_W = 6.6; // monospace 11px, for sizing label backgrounds
const LABEL_H = 17;

/** Which nodes are drawn as boxes: inputs, ops, constants and the output. */
function isDrawn(node) {
  return node.role !== "param";
}

/**
 * Positions of the drawn nodes (top-left corners), each edge's route (a polyline from the
 * producer's box to the consumer's) and its label's centre, and the drawing's size.
 */
function layout(nodes, labelOf) {
  const drawn = nodes.filter(isDrawn);
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: "TB", nodesep: GAP_X, ranksep: GAP_Y, edgesep: 12, marginx: GAP_X, marginy: GAP_X });
  for (const node of drawn) graph.setNode(String(node.id), { width: NODE_W, height: NODE_H });
  const edges = [];
  for (const node of drawn) {
    node.inputs.forEach((id, slot) => {
      if (!isDrawn(nodes[id])) return;
      const text = labelOf(nodes[id]);
      const name = `${id}-${node.id}-${slot}`;
      graph.setEdge(String(id), String(node.id), { width: text.length * CHAR_W + 8, height: LABEL_H, labelpos: "c" }, name);
      edges.push({ from: id, to: node.id, name, text });
    });
  }
  dagre.layout(graph);
  const position = new Map();
  for (const node of drawn) {
    const { x, y } = graph.node(String(node.id));
    position.set(node.id, { x: x - NODE_W / 2, y: y - NODE_H / 2 });
  }
  for (const edge of edges) {
    const routed = graph.edge({ v: String(edge.from), w: String(edge.to), name: edge.name });
    edge.points = routed.points;
    edge.label = { x: routed.x, y: routed.y };
  }
  const { width, height } = graph.graph();
  return { drawn, position, edges, width, height };
}

/**
 * Renders the graph. `options.reached(node)` says whether shape propagation has reached a
 * node (its outgoing shapes are shown), `options.current` is the node being propagated,
 * `options.onSelect(node)` is called when a box is clicked or activated by keyboard.
 */
export function renderGraph(nodes, options = {}) {
  const reached = options.reached ?? (() => true);
  const labelOf = (node) => (reached(node) ? node.shapeText : "?");
  const { drawn, position, edges: routes, width, height } = layout(nodes, labelOf);
  const edges = s("g", { class: "edges" });
  const labels = s("g", { class: "edge-labels" });
  const boxes = s("g", { class: "nodes" });
  for (const route of routes) {
    const known = reached(nodes[route.from]);
    const [first, ...rest] = route.points;
    edges.append(
      s("path", {
        d: `M${first.x},${first.y} ${rest.map((p) => `L${p.x},${p.y}`).join(" ")}`,
        class: known ? "edge" : "edge pending",
        "marker-end": "url(#arrow)",
        dataset: { from: route.from, to: route.to },
      }),
    );
    const w = route.text.length * CHAR_W + 8;
    labels.append(
      s("g", { class: known ? "edge-label" : "edge-label pending" },
        s("rect", { x: route.label.x - w / 2, y: route.label.y - 9, width: w, height: LABEL_H, rx: 3 }),
        s("text", { x: route.label.x, y: route.label.y + 4, "text-anchor": "middle" }, route.text)),
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
