// The reference panel "What Tailor captures": the modules, functions, methods and operators
// of Tailor's `torch` package, and the op table they reach (each op's arguments, spellings,
// shape rule, lowering and reference), as `Tailor.supported()` reads them from the package and
// the table themselves (nothing here is kept by hand). Input: the `<details>` element and a
// getter of the wasm `Tailor` class. The list is asked for once, the first time the panel
// opens (it costs a fresh interpreter's imports), and a filter box narrows every group and
// the op table at once.

import { bi, fill, h } from "./dom.js";
import { both, errorText } from "./i18n.js";

/** How each group is written in a model (`nn.Conv2d`, `F.relu`, `x.view`, `torch.cat`). */
const PREFIX = {
  "torch.nn": "nn.",
  "torch.nn.functional": "F.",
  torch: "torch.",
  Tensor: "x.",
  operators: "",
};

/** Groups in the order a model meets them. */
const ORDER = ["torch.nn", "torch.nn.functional", "torch", "Tensor", "operators"];

/** Wires the panel `details` (with a `.supported-body` inside) to `Tailor.supported()`;
 * `tailorClass()` gives the wasm `Tailor` class (a new one after a panic's restart). */
export function setupSupported(details, tailorClass) {
  const body = details.querySelector(".supported-body");
  let loaded = false;
  details.addEventListener("toggle", () => {
    if (!details.open || loaded) return;
    loaded = true;
    try {
      render(body, tailorClass().supported());
    } catch (error) {
      loaded = false;
      fill(body, h("p", { class: "error" }, errorText(error)));
    }
  });
}

function render(body, surface) {
  const filter = h("input", {
    type: "search",
    class: "supported-filter",
    "data-testid": "supported-filter",
    spellcheck: "false",
    autocomplete: "off",
    "aria-label": both("supported.filter").en,
    placeholder: "conv, softmax, view …",
  });
  const groups = ORDER.filter((group) => surface.groups[group]).map((group) => {
    const items = surface.groups[group].map((name) =>
      h("li", { "data-name": name.toLowerCase() }, h("code", {}, PREFIX[group] + name)));
    const count = h("span", { class: "supported-count" }, String(items.length));
    const list = h("ul", { class: "supported-list" }, ...items);
    return {
      items,
      count,
      element: h("section", { class: "supported-group", "data-group": group },
        h("h4", {}, ...bi(both(`supported.group.${group}`)), " ", count), list),
    };
  });
  groups.push(opTable(surface.ops));
  filter.addEventListener("input", () => {
    const needle = filter.value.trim().toLowerCase();
    for (const group of groups) {
      let shown = 0;
      for (const item of group.items) {
        const match = needle === "" || item.dataset.name.includes(needle);
        item.hidden = !match;
        shown += match ? 1 : 0;
      }
      group.count.textContent = needle === "" ? String(group.items.length) : `${shown}/${group.items.length}`;
      group.element.hidden = shown === 0;
    }
  });
  fill(body, h("p", { class: "hint" }, ...bi(both("supported.note"))), filter,
    ...groups.map((group) => group.element));
}

/** The op table as a group: a row per op (signature, spellings, lowering, shape rule,
 * reference), filtered by its name, spellings and example like the lists. */
function opTable(ops) {
  const items = ops.map((op) =>
    h("tr", { "data-name": [op.signature, ...op.aliases, op.example].join(" ").toLowerCase() },
      h("td", {}, h("code", {}, op.signature)),
      h("td", {}, ...op.aliases.map((alias) => h("code", { class: "supported-alias" }, alias))),
      h("td", {}, h("code", {}, op.example)),
      h("td", {}, ...bi(both(`supported.lowering.${op.lowering}`))),
      h("td", {}, h("code", {}, op.shape_rule)),
      h("td", {}, h("code", {}, op.reference))));
  const count = h("span", { class: "supported-count" }, String(items.length));
  const heads = ["op", "aliases", "example", "lowering", "shape", "reference"]
    .map((column) => h("th", { scope: "col" }, ...bi(both(`supported.ops.${column}`))));
  const table = h("table", { class: "supported-ops", "data-testid": "supported-ops" },
    h("thead", {}, h("tr", {}, ...heads)), h("tbody", {}, ...items));
  return {
    items,
    count,
    element: h("section", { class: "supported-group", "data-group": "ops" },
      h("h4", {}, ...bi(both("supported.group.ops")), " ", count),
      h("p", { class: "hint" }, ...bi(both("supported.ops.note"))),
      h("div", { class: "supported-ops-scroll" }, table)),
  };
}
