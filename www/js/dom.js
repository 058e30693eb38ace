// Small DOM builders. Every string becomes a text node (never innerHTML): model source,
// input names and compiler messages are user data.

const SVG_NS = "http://www.w3.org/2000/svg";
const MATHML_NS = "http://www.w3.org/1998/Math/MathML";

function build(element, attrs, children) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") element.setAttribute("class", value);
    else if (key === "text") element.textContent = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An HTML element: `h("li", { class: "x", dataset: { action: "hit" } }, "text", child)`. */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A MathML element. */
export function m(tag, attrs, ...children) {
  return build(document.createElementNS(MATHML_NS, tag), attrs, children);
}

/**
 * `{ zh, en }` as a `<span lang="zh">` / `<span lang="en">` pair: CSS shows the page's
 * language, so the language switch needs no re-render.
 */
export function bi(text, tag = "span", attrs = {}) {
  return [h(tag, { ...attrs, lang: "zh" }, text.zh), h(tag, { ...attrs, lang: "en" }, text.en)];
}

/** Replaces the children of `element`. */
export function fill(element, ...children) {
  element.replaceChildren();
  return build(element, {}, children);
}

/** Submits `form` when Enter is pressed on one of its radios or checkboxes (text inputs do
 * that natively). */
export function enterSubmits(form) {
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.target?.tagName !== "INPUT") return;
    if (!["radio", "checkbox"].includes(event.target.type)) return;
    event.preventDefault();
    form.requestSubmit();
  });
}

/** Lets the browser paint and handle input before the next chunk of work. */
export function yieldToBrowser() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Scrolls `container` (only) so that `element` is in view; the page itself never jumps. */
export function scrollWithin(container, element) {
  if (!container || !element) return;
  const top = element.getBoundingClientRect().top - container.getBoundingClientRect().top + container.scrollTop;
  const height = element.getBoundingClientRect().height;
  if (top < container.scrollTop || top + height > container.scrollTop + container.clientHeight) {
    container.scrollTop = Math.max(0, top - container.clientHeight / 3);
  }
}
