// Builds the page's third-party modules into www/js/vendor/ (ignored by git) from the npm
// packages that package.json pins exactly and scripts/install-tools.sh installs; nothing is
// downloaded here. Trunk runs it as the `pre_build` hook (Trunk.toml), before it copies www/js/
// into dist/.
//
// Out: codemirror.esm.js, CodeMirror 6 as one minified ES module that esbuild bundles from
// scripts/codemirror/entry.mjs, with codemirror.LICENSE.txt (the licences of the packages in
// it); dagre.esm.js, @dagrejs/dagre's own ES module build (graphlib included), with
// dagre.LICENSE.txt. Each module's first line names the versions and the licence.
//
// Invariant: the same node_modules give the same bytes, and a file whose bytes did not change
// is not written again, so `trunk serve` does not see a change.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { licenceText } from "./codemirror/licenses.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MODULES_DIR = join(ROOT, "node_modules");
const OUT_DIR = join(ROOT, "www/js/vendor");
const CODEMIRROR_ENTRY = join(ROOT, "scripts/codemirror/entry.mjs");
const SCRIPT = "scripts/build-vendor.mjs";

/** `name`'s package.json in node_modules; a missing package says how to install it. */
function installed(name) {
  const file = join(MODULES_DIR, name, "package.json");
  if (!existsSync(file)) {
    throw new Error(`build-vendor: ${name} is not in node_modules; run bash scripts/install-tools.sh`);
  }
  return JSON.parse(readFileSync(file, "utf8"));
}

/** Writes `text` to `name` in www/js/vendor/ unless the file holds it already. */
function writeIfChanged(name, text) {
  const file = join(OUT_DIR, name);
  if (existsSync(file) && readFileSync(file, "utf8") === text) return false;
  writeFileSync(file, text);
  return true;
}

async function buildCodemirror() {
  // The packages entry.mjs imports, as the banner names them (their dependencies come along).
  const entry = readFileSync(CODEMIRROR_ENTRY, "utf8");
  const names = [...new Set([...entry.matchAll(/from "([^"]+)"/g)].map((match) => match[1]))].sort();
  const versions = names.map((name) => `${name} ${installed(name).version}`).join(", ");
  installed("esbuild");
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [relative(ROOT, CODEMIRROR_ENTRY)],
    outfile: join(OUT_DIR, "codemirror.esm.js"),
    bundle: true,
    format: "esm",
    minify: true,
    target: "es2020",
    legalComments: "none",
    logLevel: "warning",
    banner: {
      js: `/*! CodeMirror 6 for Tailor's page: ${versions} (MIT; licences in codemirror.LICENSE.txt); bundled by esbuild ${esbuild.version} in ${SCRIPT} */`,
    },
    metafile: true,
    write: false,
  });
  const [bundle] = result.outputFiles;
  return [
    ["codemirror.esm.js", bundle.text],
    ["codemirror.LICENSE.txt", licenceText(result.metafile, MODULES_DIR)],
  ];
}

function buildDagre() {
  const { version } = installed("@dagrejs/dagre");
  const dist = join(MODULES_DIR, "@dagrejs/dagre/dist");
  const legalNote = "/*! For license information please see dagre.esm.js.LEGAL.txt */";
  const source = readFileSync(join(dist, "dagre.esm.js"), "utf8");
  // The build's pointer to its legal file becomes our banner; a release without it would
  // ship without one, so it stops the build instead.
  if (!source.includes(legalNote)) throw new Error(`build-vendor: dagre ${version}'s dagre.esm.js lacks "${legalNote}"`);
  const text = source
    .split("\n")
    // The source map is not shipped.
    .filter((line) => !line.startsWith("//# sourceMappingURL"))
    .join("\n")
    .replace(legalNote, `/*! @dagrejs/dagre ${version} (MIT): license in dagre.LICENSE.txt; copied from node_modules by ${SCRIPT} */`);
  return [
    ["dagre.esm.js", text],
    ["dagre.LICENSE.txt", readFileSync(join(dist, "dagre.esm.js.LEGAL.txt"), "utf8")],
  ];
}

mkdirSync(OUT_DIR, { recursive: true });
const files = [...(await buildCodemirror()), ...buildDagre()];
const written = files.filter(([name, text]) => writeIfChanged(name, text)).map(([name]) => name);
console.log(`build-vendor: www/js/vendor/ ${written.length ? `written: ${written.join(", ")}` : "up to date"}`);
