// The workbench's input shapes as data: the text a learner types (`x=8,64;n=int(3)`), the dims
// the cache lab varies, and the per-dim marks as `compile` options. Pure (no DOM), so that
// tests/js/ runs it under node; www/app.js reads and writes the controls.

/**
 * `x=8,64;n=int(3)` → `[{ name: 'x', dims: [8, 64] }, { name: 'n', dims: [], value: 'int(3)' }]`:
 * a tensor's sizes (and its dtype after a colon, `idx=2,16:int64` → `dtype: 'int64'`), or a
 * Python int or bool (`int(N)`, `True`, `False`) kept as written, with no dims to mark;
 * malformed parts are skipped.
 */
export function parseShapes(text) {
  return text
    .split(";")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [name, rest = ""] = part.split("=");
      const value = rest.trim();
      if (/^(int\(\s*-?\d+\s*\)|True|False)$/.test(value)) return { name: name.trim(), dims: [], value };
      const [sizes, dtype] = value.split(":");
      const dims = sizes.split(",").map((d) => d.trim()).filter(Boolean).map(Number);
      return dtype === undefined ? { name: name.trim(), dims } : { name: name.trim(), dims, dtype: dtype.trim() };
    })
    .filter((input) => input.name && input.dims.every((d) => Number.isInteger(d) && d >= 0));
}

/** The dims the cache lab varies, `[[input, dim]]`: the preset's, else dim 0 of the first
 * tensor input of the shapes `text`. */
export function varyDims(preset, text) {
  if (preset) return preset.vary;
  const first = parseShapes(text).find((input) => input.value === undefined);
  return first ? [[first.name, 0]] : [];
}

/** The shapes `text` with every dim of `vary` (`[[input, dim]]`) set to `size`, written
 * back in the same form (`x=16,64;n=int(3)`); malformed parts are dropped. */
export function shapesWith(text, vary, size) {
  return parseShapes(text)
    .map((input) => {
      if (input.value !== undefined) return `${input.name}=${input.value}`;
      const dims = input.dims.map((d, dim) => (vary.some(([n, v]) => n === input.name && v === dim) ? size : d));
      return `${input.name}=${dims.join(",")}${input.dtype ? `:${input.dtype}` : ""}`;
    })
    .join(";");
}

/** Whether the shapes texts `a` and `b` are calls of one signature: the same inputs in the
 * same order, each a tensor of the same rank and dtype or a number of the same kind. */
export function sameSignature(a, b) {
  const kinds = (text) => parseShapes(text).map((input) =>
    input.value !== undefined
      ? `${input.name}=${input.value.startsWith("int") ? "int" : "bool"}`
      : `${input.name}:${input.dims.length}:${input.dtype ?? "float32"}`);
  const [left, right] = [kinds(a), kinds(b)];
  return left.length > 0 && left.length === right.length && left.every((kind, i) => kind === right[i]);
}

/** An entry's input as the compiler sees it: `x: [s0, 64]`, or `n = s1` for an int argument. */
export function inputText(input) {
  const dims = input.dims.map((d) => d.text);
  return input.python ? `${input.name} = ${dims[0]}` : `${input.name}: [${dims.join(", ")}]`;
}

/**
 * The mark controls' state (`Map('x:0' → { kind, min, max })`, min and max as typed, `""` for
 * none) as `compile`'s options: `markDynamic: [[input, dim, min, max]]` (null for no bound) and
 * `markStatic: [[input, dim]]`; dims left to the default are in neither.
 */
export function markOptions(marks) {
  const markDynamic = [];
  const markStatic = [];
  for (const [key, mark] of marks) {
    const at = key.lastIndexOf(":");
    const [input, dim] = [key.slice(0, at), Number(key.slice(at + 1))];
    if (mark.kind === "dynamic") {
      markDynamic.push([input, dim, mark.min === "" ? null : Number(mark.min), mark.max === "" ? null : Number(mark.max)]);
    } else if (mark.kind === "static") {
      markStatic.push([input, dim]);
    }
  }
  return { markDynamic, markStatic };
}
