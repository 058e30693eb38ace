// The licence of every package esbuild put into the CodeMirror bundle (from its metafile), in
// name order, so the built file's licence text is complete and reproducible. Used by
// scripts/build-vendor.mjs.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** codemirror.LICENSE.txt's text for esbuild's `metafile`, reading licences from `modulesDir`. */
export function licenceText(metafile, modulesDir) {
  // Only the inputs that put bytes into the bundle: tree-shaken packages are not shipped.
  const [output] = Object.values(metafile.outputs);
  const inputs = Object.entries(output.inputs).filter(([, input]) => input.bytesInOutput > 0).map(([path]) => path);
  const names = [...new Set(inputs.flatMap((input) => {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    return match ? [match[1]] : [];
  }))].sort();

  const sections = names.map((name) => {
    const dir = join(modulesDir, name);
    const { version, license } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const file = readdirSync(dir).find((entry) => /^licen[cs]e/i.test(entry));
    if (!file) throw new Error(`${name} has no licence file`);
    return `${name} ${version} (${license})\n\n${readFileSync(join(dir, file), "utf8").trim()}\n`;
  });
  return `Licences of the packages bundled into codemirror.esm.js (scripts/build-vendor.mjs)\n\n${sections.join("\n---\n\n")}`;
}
