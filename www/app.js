// Page logic: loads the compiler (wasm) and wires the editor, the compile button and the
// trace view to the exports of src/web/mod.rs.
//
// The wasm is loaded here, by a dynamic `import()` of wasm-bindgen's ES module (`./tailor.js`,
// built by scripts/build-wasm.sh; Trunk injects no loader, see Trunk.toml). Unlike Trunk's
// injected loader with `window.wasmBindings` and its `TrunkApplicationStarted` event, one
// try/catch here turns every failure (missing file, wrong MIME type, a panic in the start
// function) into a visible message on the page, with no global and no event to race.
//
// All text reaches the DOM through `textContent`, never `innerHTML`: the source and the
// compiler's messages are user data.

const editor = document.getElementById("model-editor");
const shapesInput = document.getElementById("input-shapes");
const modeSelect = document.getElementById("mode-select");
const form = document.getElementById("compile-form");
const compileButton = form.querySelector("button[type=submit]");
const statusLine = document.getElementById("status");
const errorBox = document.getElementById("error-message");
const traceView = document.getElementById("trace-view");

/** The wasm exports once loaded; `null` while loading or after a failed load. */
let compiler = null;

/** Shows `message` in the alert box and clears the stale trace. */
function showError(message) {
  traceView.textContent = "";
  errorBox.textContent = message;
  errorBox.hidden = false;
}

function showTrace(text) {
  errorBox.hidden = true;
  errorBox.textContent = "";
  traceView.textContent = text;
}

function enableControls() {
  for (const control of [editor, shapesInput, modeSelect, compileButton]) {
    control.disabled = false;
  }
}

/**
 * A user error (bad source, bad shapes) arrives as an `Error` thrown by `explainText`; a Rust
 * panic arrives as a `WebAssembly.RuntimeError` (its message, with file and line, is on the
 * console thanks to console_error_panic_hook) and may leave the module in a broken state.
 */
function describeFailure(error) {
  if (error instanceof WebAssembly.RuntimeError) {
    return (
      `编译器内部错误（Rust panic）：${error.message}\n` +
      "详细信息见浏览器控制台。请刷新页面后重试；如果能复现，请报告这个模型。\n" +
      "Internal compiler error (a bug in Tailor): see the console, then reload the page."
    );
  }
  return error instanceof Error ? error.message : String(error);
}

function compile() {
  if (compiler === null) {
    return;
  }
  // The mode select (dynamic=None/True/False) is not passed yet: `explainText` always
  // compiles under the default mode until the web API takes a mode.
  try {
    const trace = compiler.explainText(editor.value, shapesInput.value.trim());
    showTrace(trace);
    statusLine.textContent = "编译完成。";
  } catch (error) {
    showError(describeFailure(error));
    statusLine.textContent = "编译失败，见错误信息。";
  }
}

async function loadCompiler() {
  try {
    const bindings = await import("./tailor.js");
    await bindings.default();
    editor.value = bindings.simplenetSource();
    return bindings;
  } catch (error) {
    showError(
      `无法加载编译器（WebAssembly）：${describeFailure(error)}\n` +
        "Could not load the compiler. A current Chrome, Edge, Firefox or Safari is required.",
    );
    statusLine.textContent = "加载失败。";
    return null;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  compile();
});

editor.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    compile();
  }
});

compiler = await loadCompiler();
if (compiler !== null) {
  enableControls();
  statusLine.textContent = "编译器已就绪。";
  compile();
}
