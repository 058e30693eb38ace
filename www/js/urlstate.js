// The URL fragment, so that a link reopens the same page: the model (a preset's id, or the
// source as base64url), the settings, the step, and what a part of the page adds (the exercise
// on screen, `kind=…&seed=…&difficulty=…`). Pure (no DOM, no `location`), so that tests/js/
// runs it under node; www/app.js and www/js/exercises.js read and write `location.hash`.

/** UTF-8 `text` as unpadded base64url (URL-safe, no `=`). */
export function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The text `toBase64Url` encoded; throws on a string that is not base64. */
export function fromBase64Url(text) {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/** The marks that are not the default, `x:0:1:64 x:1:static` (min and max may be empty). */
function marksText(marks) {
  const specs = [];
  for (const [key, mark] of marks) {
    if (mark.kind === "dynamic") specs.push(`${key}:${mark.min}:${mark.max}`);
    if (mark.kind === "static") specs.push(`${key}:static`);
  }
  return specs.join(" ");
}

/** `marksText`'s inverse: `Map('x:0' → { kind, min, max })`. */
function parseMarks(text) {
  const marks = new Map();
  for (const spec of text.split(" ").filter(Boolean)) {
    const [input, dim, min = "", max = ""] = spec.split(":");
    marks.set(`${input}:${dim}`, min === "static" ? { kind: "static", min: "", max: "" } : { kind: "dynamic", min, max });
  }
  return marks;
}

/**
 * The fragment's text (without `#`) for the page's state: `presetId` (null for a source of the
 * learner's own, which then goes in as `src`), the input `shapes`, `mode`, `symbolNames` (left
 * out when `tailor`), the `marks` map, `recompileLimit` (null: PyTorch's), the `step`, and
 * `extra` `[key, value]` pairs.
 */
export function encodeFragment({ presetId, source, shapes, mode, symbolNames, marks, recompileLimit, step, extra = [] }) {
  const params = new URLSearchParams();
  if (presetId !== null) params.set("model", presetId);
  else params.set("src", toBase64Url(source));
  params.set("shapes", shapes);
  params.set("mode", mode);
  if (symbolNames !== "tailor") params.set("names", symbolNames);
  const marksSpec = marksText(marks);
  if (marksSpec) params.set("marks", marksSpec);
  if (recompileLimit !== null) params.set("limit", String(recompileLimit));
  params.set("step", String(step));
  for (const [key, value] of extra) params.set(key, value);
  return params.toString();
}

/**
 * `encodeFragment`'s inverse, for any fragment text (without `#`): what is absent or invalid
 * comes back as null (the page keeps its own). `source` is undefined when there is no `src`,
 * and null when `src` does not decode. `marks` is a map (empty for none); `step` a whole
 * number (0 for none).
 */
export function decodeFragment(fragment) {
  const params = new URLSearchParams(fragment);
  let source;
  if (params.has("src")) {
    try {
      source = fromBase64Url(params.get("src"));
    } catch {
      source = null;
    }
  }
  const mode = params.get("mode");
  const limit = Number(params.get("limit"));
  const step = Number(params.get("step") ?? 0);
  return {
    presetId: params.get("model"),
    source,
    shapes: params.get("shapes"),
    mode: ["auto", "true", "false"].includes(mode) ? mode : null,
    symbolNames: params.get("names") === "pytorch" ? "pytorch" : null,
    recompileLimit: Number.isInteger(limit) && limit > 0 ? limit : null,
    marks: parseMarks(params.get("marks") ?? ""),
    step: Number.isInteger(step) && step > 0 ? step : 0,
  };
}

/** The exercise a fragment names, `{ kind, seed, difficulty }` (difficulty `easy` when
 * absent), or null when its kind is not one of `kinds`, its seed is not a whole number, or
 * its difficulty not one of `levels`. */
export function exerciseFromFragment(fragment, kinds, levels) {
  const params = new URLSearchParams(fragment);
  const seed = Number(params.get("seed"));
  const kind = params.get("kind");
  const difficulty = params.get("difficulty") ?? "easy";
  if (!kinds.includes(kind) || !Number.isInteger(seed) || seed < 0 || !levels.includes(difficulty)) return null;
  return { kind, seed, difficulty };
}
