// WGSL source split into the tokens the kernel stages colour (comments, attributes, keywords,
// types, numbers, calls) and the plain text between them. Pure (no DOM), so that tests/js/
// runs it under node; www/js/kernels.js turns the tokens into spans and text nodes.

// WGSL tokens worth a colour; everything else stays plain text.
const TOKEN = new RegExp(
  [
    String.raw`(?<comment>\/\/[^\n]*)`,
    String.raw`(?<attr>@[A-Za-z_]+)`,
    String.raw`(?<keyword>\b(?:fn|let|var|const|override|struct|if|else|for|while|loop|return|break|continue|switch|case|default|select)\b)`,
    String.raw`(?<type>\b(?:f32|i32|u32|bool|vec[234](?:[fiu])?|array|atomic|storage|uniform|workgroup|read_write|read)\b)`,
    String.raw`(?<number>\b\d+(?:\.\d+)?(?:e[+-]?\d+)?[iuf]?\b)`,
    String.raw`(?<call>\b[A-Za-z_][A-Za-z0-9_]*(?=\())`,
  ].join("|"),
  "g",
);

/** `source` as `[{ kind, text }]` in order, `kind` null for plain text; the texts joined
 * give `source` back. */
export function wgslTokens(source) {
  const tokens = [];
  let last = 0;
  for (const match of source.matchAll(TOKEN)) {
    if (match.index > last) tokens.push({ kind: null, text: source.slice(last, match.index) });
    const kind = Object.entries(match.groups).find(([, text]) => text !== undefined)[0];
    tokens.push({ kind, text: match[0] });
    last = match.index + match[0].length;
  }
  if (last < source.length) tokens.push({ kind: null, text: source.slice(last) });
  return tokens;
}
