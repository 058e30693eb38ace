// What www/js/editor.js takes from CodeMirror 6: scripts/build-vendor.mjs bundles exactly
// these exports (and what they need) into www/js/vendor/codemirror.esm.js.

export { minimalSetup } from "codemirror";
export { Annotation, Compartment, EditorState, Prec, Transaction } from "@codemirror/state";
export { EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";
export { indentWithTab } from "@codemirror/commands";
export { bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
export { classHighlighter } from "@lezer/highlight";
export { python } from "@codemirror/lang-python";
export { lintGutter, setDiagnostics } from "@codemirror/lint";
