// The model editor: CodeMirror 6 (bundled into js/vendor/codemirror.esm.js by
// scripts/build-vendor.mjs during the page build) set up for the page: Python highlighting, line numbers, Tab
// and Shift+Tab indent (Escape then Tab moves the focus on, CodeMirror's way out for keyboard
// users), Ctrl/⌘+Enter compiles, and a compile error is marked at its line:col as a lint
// diagnostic (underline, gutter marker, message on hover), graph breaks as warnings.
//
// `value` reads and sets the text like a textarea's; setting it is the page's own change, so
// it neither calls `onEdit` nor joins the undo history.

import {
  Annotation, Compartment, EditorState, EditorView, Prec, Transaction, bracketMatching, classHighlighter,
  highlightActiveLine, highlightActiveLineGutter, indentOnInput, indentUnit, indentWithTab, keymap,
  lineNumbers, lintGutter, minimalSetup, python, setDiagnostics, syntaxHighlighting,
} from "./vendor/codemirror.esm.js";

/** Marks the transactions that set `value`, to tell them from the user's edits. */
const fromPage = Annotation.define();

/** Read-only, or editable, as one swappable extension. */
function lock(disabled) {
  return [
    EditorState.readOnly.of(disabled),
    EditorView.editable.of(!disabled),
    disabled ? EditorView.editorAttributes.of({ class: "cm-disabled" }) : [],
  ];
}

/** The word at `line`:`col` (1-based; else the character there) as `{ from, to }`, or
 * `null` past the text. */
function wordRange(state, line, col) {
  const doc = state.doc;
  if (line < 1 || line > doc.lines) return null;
  const text = doc.line(line);
  const at = Math.min(text.from + Math.max(0, col - 1), text.to);
  const word = state.wordAt(at);
  return word ? { from: word.from, to: word.to } : { from: at, to: Math.min(at + 1, text.to) };
}

/**
 * Creates a read-only editor in `parent` (set `disabled = false` to edit). `labelledBy` and
 * `describedBy` are element ids for its accessible name and hint; `onRun` runs on
 * Ctrl/⌘+Enter, `onEdit` after each change the user makes.
 */
export function createEditor(parent, { labelledBy, describedBy, onRun, onEdit }) {
  const locked = new Compartment();
  const run = () => {
    onRun();
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      extensions: [
        // Above minimalSetup's keymap, where Mod-Enter inserts a blank line.
        Prec.highest(keymap.of([{ key: "Mod-Enter", run }, { key: "Ctrl-Enter", run }])),
        minimalSetup,
        keymap.of([indentWithTab]),
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        python(),
        indentUnit.of("    "),
        indentOnInput(),
        bracketMatching(),
        // Token classes (`tok-keyword`, …), coloured by style.css.
        syntaxHighlighting(classHighlighter),
        lintGutter(),
        locked.of(lock(true)),
        EditorView.contentAttributes.of({ "aria-labelledby": labelledBy, "aria-describedby": describedBy }),
        // An edit makes the marked error stale: it goes with the edit.
        EditorState.transactionExtender.of((tr) =>
          tr.docChanged && !tr.annotation(fromPage) ? setDiagnostics(tr.startState, []) : null),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !update.transactions.some((tr) => tr.annotation(fromPage))) onEdit();
        }),
      ],
    }),
  });

  return {
    /** The CodeMirror view, for the console and the tests (`window.tailorPage.editor`). */
    view,
    get value() {
      return view.state.doc.toString();
    },
    set value(text) {
      if (text === view.state.doc.toString()) return;
      view.dispatch(setDiagnostics(view.state, []), {
        changes: { from: 0, to: view.state.doc.length, insert: text },
        annotations: [fromPage.of(true), Transaction.addToHistory.of(false)],
      });
    },
    set disabled(disabled) {
      view.dispatch({ effects: locked.reconfigure(lock(disabled)) });
    },
    /** Marks the word at `line`:`col` (1-based; else the character there) as the error, and
     * scrolls it into view. */
    markError(line, col, message) {
      const range = wordRange(view.state, line, col);
      if (!range) return;
      view.dispatch(setDiagnostics(view.state, [{ ...range, severity: "error", message }]), {
        effects: EditorView.scrollIntoView(range.from, { y: "nearest" }),
      });
    },
    /** Marks each graph break `{ line, col, message }` as a warning (no scrolling: the
     * step-through marks them while the reader looks at it). */
    markBreaks(breaks) {
      const diagnostics = breaks
        .map(({ line, col, message }) => ({ ...wordRange(view.state, line, col), severity: "warning", message }))
        .filter((diagnostic) => diagnostic.from !== undefined);
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    /** Puts the cursor on `line`:`col` and scrolls it into view. */
    reveal(line, col) {
      const range = wordRange(view.state, line, col);
      if (!range) return;
      view.dispatch({ selection: { anchor: range.from, head: range.to }, effects: EditorView.scrollIntoView(range.from, { y: "center" }) });
    },
    /** Removes the marked error or graph breaks. */
    clearError() {
      view.dispatch(setDiagnostics(view.state, []));
    },
  };
}
