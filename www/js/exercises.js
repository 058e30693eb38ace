// Generated exercises (§12): the five kinds the compiler sets (`Tailor.exerciseGenerate`) and
// grades by running itself on the regenerated exercise (`Tailor.exerciseGrade`), never by a
// stored key. A kind, a seed and a difficulty determine an exercise, so they go into the URL
// fragment next to the model settings (`kind=…&seed=…&difficulty=…`) and a link replays it.
// Output shape and compile count take a typed answer; the other kinds are answered with
// radios and checkboxes whose values make up the same answer text the grader reads.

import { bi, enterSubmits, fill, h } from "./dom.js";
import { both, errorText, t } from "./i18n.js";
import { exerciseFromFragment } from "./urlstate.js";

const $ = (id) => document.getElementById(id);
const LEVELS = ["easy", "mid", "hard", "extreme"];
const TYPED = new Set(["output_shape", "compile_count"]);

function randomSeed() {
  return Math.floor(Math.random() * 1_000_000);
}

/** The exercises panel, following the page's `events`: `progress` keeps the graded attempts,
 * `showLink(id, scenario, options)` opens the place an exercise's "show me" names (quiz.js). */
export function setupExercises(ctx, events, { progress, showLink }) {
  const kinds = ctx.bindings.Tailor.exerciseKinds();
  const ui = {
    panel: $("exercises"),
    kinds: $("exercise-kinds"),
    difficulty: $("exercise-difficulty"),
    next: $("exercise-new"),
    share: $("exercise-share"),
    status: $("exercise-status"),
    view: $("exercise-view"),
  };
  let current = null;

  fill(ui.kinds, ...kinds.map((kind, i) =>
    h("label", { class: "chip-check" },
      h("input", { type: "radio", name: "exercise-kind", value: kind, checked: i === 0 }), " ",
      ...bi(both(`exercise.kind.${kind}`)))));
  const renderLevels = () => {
    const value = ui.difficulty.value || "easy";
    fill(ui.difficulty, ...LEVELS.map((level) => h("option", { value: level }, t(`level.${level}`))));
    ui.difficulty.value = value;
  };
  renderLevels();
  events.on("language", renderLevels);

  const selectedKind = () => ui.kinds.querySelector("input:checked")?.value ?? kinds[0];

  /** Generates and shows an exercise, and puts it into the URL fragment. */
  async function open({ kind, seed, difficulty }, { write = true } = {}) {
    for (const input of ui.kinds.querySelectorAll("input")) input.checked = input.value === kind;
    ui.difficulty.value = difficulty;
    fill(ui.status, ...bi(both("exercise.loading")));
    let exercise;
    try {
      exercise = await ctx.guarded(() => ctx.bindings.Tailor.exerciseGenerate(kind, seed, difficulty));
    } catch (error) {
      fill(ui.status, h("span", { class: "error-text" }, ...bi(both("exercise.failed")), errorText(error)));
      return;
    }
    if (!exercise) return;
    current = exercise;
    ui.status.replaceChildren();
    ctx.fragmentExtra = new URLSearchParams(exercise.share);
    if (write) ctx.writeFragment();
    render(exercise);
    // Tests wait for this: the exercise on screen.
    ui.panel.dataset.shown = exercise.share;
  }

  function render(exercise) {
    const form = h("form", { class: "exercise-answer-form", novalidate: true },
      ...answerControls(exercise),
      // How to type the answer; the choice controls need no such help.
      TYPED.has(exercise.kind) ? h("p", { class: "hint", id: "exercise-answer-hint" }, ...bi(exercise.answerFormat)) : null,
      h("div", { class: "button-row" },
        h("button", { type: "submit", "data-testid": "exercise-submit" }, ...bi(both("exercise.submit")))));
    const feedback = h("div", { class: "exercise-feedback", "data-testid": "exercise-feedback", role: "status", "aria-live": "polite", hidden: true });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      grade(exercise, form, feedback);
    });
    enterSubmits(form);
    const name = both("exercise.id", both(`exercise.kind.${exercise.kind}`), exercise.seed, both(`level.${exercise.difficulty}`));
    fill(ui.view, h("article", { class: "exercise", dataset: { kind: exercise.kind, seed: exercise.seed, difficulty: exercise.difficulty } },
      h("p", { class: "exercise-id" }, ...bi(name)),
      h("p", { class: "exercise-prompt" }, ...bi(exercise.prompt)),
      h("div", { class: "exercise-code" },
        h("div", {}, h("h4", {}, ...bi(both("exercise.model"))), h("pre", { class: "code", tabindex: 0 }, exercise.source)),
        h("div", {}, h("h4", {}, ...bi(both("exercise.code"))), h("pre", { class: "code", tabindex: 0 }, exercise.code))),
      exercise.input ? h("p", {}, ...bi(both("exercise.input")), h("code", { class: "big" }, exercise.input)) : null,
      exercise.entries.length ? renderEntries(exercise) : null,
      form,
      feedback));
  }

  /** The entries of a guard-prediction exercise, each guard numbered as the answer uses it. */
  function renderEntries(exercise) {
    return h("div", { class: "exercise-entries" },
      h("h4", {}, ...bi(both("exercise.entries"))),
      h("ol", {}, ...exercise.entries.map((entry) =>
        h("li", {}, h("strong", {}, ...bi(both("exercise.entry", entry.id, entry.inputs))),
          h("ol", { class: "guard-lines" }, ...entry.guards.map((guard) => h("li", {}, h("code", {}, guard))))))));
  }

  function choice(type, name, value, ...label) {
    return h("label", { class: "quiz-option-row" }, h("input", { type, name, value }), ...label);
  }

  function answerControls(exercise) {
    if (TYPED.has(exercise.kind)) {
      return [h("label", { for: "exercise-answer-input" }, ...bi(both("exercise.answer"))),
        h("input", { type: "text", id: "exercise-answer-input", "data-testid": "exercise-answer", "aria-describedby": "exercise-answer-hint", autocomplete: "off", spellcheck: "false", autocapitalize: "off" })];
    }
    const group = (legend, ...items) => h("fieldset", { class: "exercise-choices" }, h("legend", {}, ...bi(legend)), ...items);
    if (exercise.kind === "guard_prediction") {
      const first = exercise.entries[0];
      const guards = group(both("exercise.failing", `0/${first.id}`),
        ...exercise.choices.map((c) => choice("radio", "exercise-guard", c.id, h("span", { class: "option-id" }, `${c.id}.`), h("code", {}, c.text))));
      const outcome = group(both("exercise.outcome"),
        ...["hit", "recompile", "eager"].map((o) => choice("radio", "exercise-outcome", o, ...bi(both(`exercise.outcome.${o}`)))));
      const sync = () => {
        guards.disabled = outcome.querySelector("input:checked")?.value === "hit";
      };
      outcome.addEventListener("change", sync);
      return [h("div", { "data-testid": "exercise-answer", class: "exercise-answer", role: "group" }, outcome, guards)];
    }
    if (exercise.kind === "write_guard") {
      return [h("div", { "data-testid": "exercise-answer", class: "exercise-answer", role: "group" },
        group(both("exercise.installed"), ...exercise.choices.map((c) =>
          choice("checkbox", "exercise-line", c.id, h("span", { class: "option-id" }, `${c.id}.`), h("code", {}, c.text)))))];
    }
    // spot_recompile: calls 2 to N.
    return [h("div", { "data-testid": "exercise-answer", class: "exercise-answer", role: "group" },
      group(both("exercise.recompiles"), ...exercise.replay.calls.slice(1).map((call, i) =>
        choice("checkbox", "exercise-call", String(i + 2), ...bi(both("exercise.call", i + 2, call))))))];
  }

  /** The answer text the grader reads, from the controls. */
  function answerText(exercise, form) {
    if (TYPED.has(exercise.kind)) return form.querySelector("input[type=text]").value;
    const checked = (name) => [...form.querySelectorAll(`input[name=${name}]:checked`)].map((i) => i.value);
    if (exercise.kind === "guard_prediction") {
      const [outcome = ""] = checked("exercise-outcome");
      const [guard = ""] = checked("exercise-guard");
      return outcome === "hit" ? outcome : `${outcome} ${guard}`.trim();
    }
    if (exercise.kind === "write_guard") return checked("exercise-line").join(", ");
    const calls = checked("exercise-call");
    return calls.length ? calls.join(", ") : "none";
  }

  async function grade(exercise, form, feedback) {
    const answer = answerText(exercise, form);
    let result;
    try {
      result = await ctx.guarded(() => ctx.bindings.Tailor.exerciseGrade(exercise.kind, exercise.seed, exercise.difficulty, answer));
    } catch (error) {
      fill(feedback, h("p", { class: "error-text" }, errorText(error)));
      feedback.hidden = false;
      return;
    }
    if (!result) return;
    if (!result.malformed) progress.recordExercise(exercise, answer, result);
    const verdict = result.correct ? "right" : result.malformed ? "malformed" : "wrong";
    const scenario = {
      source: exercise.source,
      mode: exercise.replay.mode,
      marks: exercise.replay.markDynamic,
      calls: exercise.replay.calls,
      recompileLimit: exercise.replay.recompileLimit,
    };
    fill(feedback,
      h("p", { class: `verdict ${verdict}` }, result.correct ? "✓ " : "✗ ", ...bi(both(`exercise.${verdict}`))),
      h("p", { class: "exercise-feedback-text" }, ...bi(result.feedback)),
      result.correct || result.malformed ? null
        : h("p", { class: "expected", dataset: { expected: result.expected } }, ...bi(both("exercise.expected")), h("code", {}, result.expected)),
      h("div", { class: "button-row" },
        h("button", { type: "button", class: "secondary exercise-show-me", dataset: { link: exercise.showMe },
          onclick: () => showLink(exercise.showMe, scenario, { lastStep: exercise.kind === "output_shape", compare: false }) },
        ...bi(both("exercise.showMe")))));
    feedback.dataset.correct = String(result.correct);
    feedback.dataset.malformed = String(result.malformed);
    feedback.hidden = false;
    // Counts the grades shown, so tests can wait for the next one.
    ui.panel.dataset.grades = String(Number(ui.panel.dataset.grades ?? 0) + 1);
  }

  ui.next.addEventListener("click", () => open({ kind: selectedKind(), seed: randomSeed(), difficulty: ui.difficulty.value }));
  ui.kinds.addEventListener("change", () => open({ kind: selectedKind(), seed: current?.seed ?? randomSeed(), difficulty: ui.difficulty.value }));
  ui.difficulty.addEventListener("change", () => open({ kind: selectedKind(), seed: current?.seed ?? randomSeed(), difficulty: ui.difficulty.value }));
  ui.share.addEventListener("click", async () => {
    ctx.writeFragment();
    try {
      await navigator.clipboard.writeText(location.href);
      fill(ui.status, ...bi(both("exercise.copied")));
    } catch {
      fill(ui.status, ...bi(both("exercise.copyHere")), " ", h("code", {}, location.href));
    }
  });
  for (const control of [ui.difficulty, ui.next, ui.share]) control.disabled = false;

  /** Opens the exercise a link names (on load, or a link followed within the page). */
  async function openShared(shared) {
    await open(shared, { write: false });
    ui.panel.scrollIntoView({ block: "start" });
  }
  const shared = exerciseFromFragment(location.hash.slice(1), kinds, LEVELS);
  if (shared) openShared(shared);
  else open({ kind: kinds[0], seed: randomSeed(), difficulty: "easy" }, { write: false });
  window.addEventListener("hashchange", () => {
    const next = exerciseFromFragment(location.hash.slice(1), kinds, LEVELS);
    const same = next && current && next.kind === current.kind && next.seed === current.seed && next.difficulty === current.difficulty;
    if (next && !same) openShared(next);
  });

  return {
    open: (exercise) => {
      ui.panel.scrollIntoView({ block: "start" });
      return open(exercise);
    },
    clear: () => {
      const feedback = ui.view.querySelector('[data-testid="exercise-feedback"]');
      if (!feedback) return;
      feedback.hidden = true;
      feedback.replaceChildren();
      ui.view.querySelector("form")?.reset();
    },
  };
}
