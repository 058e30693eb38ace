// The learner's own model, kept in the browser as they type (localStorage, under
// "tailor-workspace"): a paste survives choosing a preset and then "Custom" again, a reload of
// the bare page, and a page that had to restart. A preset's text is nobody's own work and is
// never saved over it; a link's model (`src=…`) still wins over the saved one when the page
// opens (js/urlstate.js).
//
// Pure apart from the `storage` it is given (the page's localStorage; a Map-backed object in
// tests/js/), so that node runs it.

/** The localStorage key. */
export const WORKSPACE_KEY = "tailor-workspace";

/** The saved model, `{ source, shapes }`, or null when nothing usable is saved (absent,
 * written by something else, or storage that cannot be read). */
export function loadWorkspace(storage) {
  let saved;
  try {
    saved = JSON.parse(storage.getItem(WORKSPACE_KEY) ?? "null");
  } catch {
    return null;
  }
  if (typeof saved?.source !== "string" || saved.source.trim() === "") return null;
  return { source: saved.source, shapes: typeof saved.shapes === "string" ? saved.shapes : "" };
}

/** Saves `{ source, shapes }` unless the source is blank or one of `presetSources`; returns
 * whether it saved. A storage that refuses (full, or disabled in a private window) is not the
 * page's failure: the editor keeps the text, and this returns false. */
export function saveWorkspace(storage, { source, shapes }, presetSources) {
  if (source.trim() === "" || presetSources.includes(source)) return false;
  try {
    storage.setItem(WORKSPACE_KEY, JSON.stringify({ source, shapes }));
    return true;
  } catch {
    return false;
  }
}

/** Whether a page opened with `fragment` (decoded by js/urlstate.js) should show the saved
 * model: only when the link names neither a preset nor a source of its own. */
export function opensSavedWork(fragment) {
  return !fragment.presetId && fragment.source === undefined;
}

/** The key that holds, while a compile of the learner's own model runs, a hash of its source:
 * left behind when that compile froze or crashed the tab. */
export const PENDING_KEY = "tailor-workspace-pending";

/** FNV-1a of `text`, as 8 hex digits: enough to tell one saved source from another. */
function fingerprint(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** Notes that a compile of `source` starts (`null`: it ended). */
export function noteCompiling(storage, source) {
  try {
    if (source === null) storage.removeItem(PENDING_KEY);
    else storage.setItem(PENDING_KEY, fingerprint(source));
  } catch {
    // Without storage there is nothing to recover from either.
  }
}

/** Whether the last compile of `source` started and never ended: the tab froze or crashed in
 * it, so the page opens it without compiling it again. */
export function compileNeverEnded(storage, source) {
  try {
    return storage.getItem(PENDING_KEY) === fingerprint(source);
  } catch {
    return false;
  }
}
