// Taking text out of the page: a copy button for a code block (the WGSL of a kernel, the
// guards, a trace stage), and a download of a text file (the trace as `tailor explain
// --json` prints it).
//
// In: a function that gives the text (read at click time, so the button never copies a
// stale view), the element that shows it, and what it is (`{ zh, en }`, for the button's
// accessible name). Out: a `.copy-bar` with the button and a status line.
// Invariant: a click never throws. Where the clipboard API is missing (an insecure origin,
// an old browser) or refuses (no permission, the document not focused), the status says so
// and the text is selected, so Ctrl+C copies it by hand.

import { bi, fill, h } from "./dom.js";
import { both } from "./i18n.js";

/** How long "copied" stays next to the button. */
const CONFIRM_MS = 2000;

/** A copy button for `target`, whose text is `text()`; `what` names it (`{ zh, en }`). */
export function copyBar({ text, target, what, testId = null }) {
  const bar = h("div", { class: "copy-bar" });
  const status = h("span", { class: "copy-status", role: "status", "aria-live": "polite" });
  let timer = null;
  const say = (state, key) => {
    clearTimeout(timer);
    bar.dataset.state = state;
    fill(status, ...bi(both(key)));
    if (state === "copied") {
      timer = setTimeout(() => {
        delete bar.dataset.state;
        fill(status);
      }, CONFIRM_MS);
    }
  };
  const copy = async () => {
    if (typeof navigator.clipboard?.writeText !== "function") {
      selectContents(target);
      return say("failed", "copy.unavailable");
    }
    try {
      await navigator.clipboard.writeText(text());
      say("copied", "copy.done");
    } catch {
      selectContents(target);
      say("failed", "copy.refused");
    }
  };
  const button = h("button", { type: "button", class: "secondary copy-button", "data-testid": testId, onclick: copy },
    ...bi(both("copy.label")),
    ...bi({ zh: ` ${what.zh}`, en: ` ${what.en}` }, "span", { class: "visually-hidden" }));
  bar.append(status, button);
  return bar;
}

/** Selects the text of `element`, for a copy by hand. */
function selectContents(element) {
  const selection = window.getSelection();
  if (!element || !selection) return;
  const range = document.createRange();
  range.selectNodeContents(element);
  selection.removeAllRanges();
  selection.addRange(range);
}

/** How long a download's object URL lives: the browser reads the blob after `click()`
 * returns, and Firefox fails a download whose URL was revoked at once. */
const DOWNLOAD_URL_MS = 60_000;

/** Offers `text` as a file called `name` (of MIME type `type`) through an `<a download>`. */
export function download(text, name, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), DOWNLOAD_URL_MS);
}
