// The quiz: the material's four misconceptions (§11) and ten interview questions (§12), from
// the compiler's data (`Tailor.quizQuestions()`), checked by `Tailor.quizCheck` against the
// fact-checked key. After an answer: right or wrong, the key, the explanation, an open note
// where the key differs from the material's (with the sources), "show me" (the linked stage,
// lab or section, with the question's demo loaded into the workbench) and "run the demo"
// (`Tailor.demoRun`: the same calls through the real compiler). js/exercises.js adds the
// generated exercises, js/progress.js the scores and the mistakes to review.
//
// Text from the data comes as { zh, en } and is shown as a <span lang> pair, like the static
// prose, so the language switch needs no re-render. Enter submits a question from any of
// its options.

import { bi, enterSubmits, fill, h } from "./dom.js";
import { both, errorText } from "./i18n.js";
import { createProgress } from "./progress.js";
import { setupExercises } from "./exercises.js";

const $ = (id) => document.getElementById(id);

/** Q1 … Q10, or 误区 1 / Misconception 1. */
function label(question) {
  const n = question.id.slice(1);
  return question.section === "interview" ? { zh: `Q${n}`, en: `Q${n}` } : { zh: `误区 ${n}`, en: `Misconception ${n}` };
}

/** An option as the learner reads it: `B` for lettered options, the text for judgements. */
function optionText(question, id) {
  if (question.choice !== "judge") return { zh: id, en: id };
  return question.options.find((o) => o.id === id)?.text ?? { zh: id, en: id };
}

/**
 * Opens a place in the page named by a link id: `stage:…` (the step-through), `lab:cache`
 * (runs the lab), `lab:auto` (compares the three modes), `section:…` (scrolls there).
 * `scenario` (`{ source, mode, marks, calls, recompileLimit }`), when given, is loaded into
 * the workbench first, and its calls into the lab. `lastStep`: open the stage's last step
 * (the output's shape); `compare: false`: run the lab in the scenario's mode only. `lab` is
 * the cache lab (`setupLab`'s `{ run, compare }`).
 */
async function showLink(ctx, lab, id, scenario = null, { lastStep = false, compare = true } = {}) {
  const [kind, name] = id.split(":");
  if (scenario && kind !== "section") await ctx.loadScenario(scenario);
  if (kind === "stage") {
    ctx.goStage(name, { last: lastStep });
  } else if (kind === "lab") {
    $("lab").scrollIntoView({ block: "start" });
    focusHeading($("lab-heading"));
    if (name === "auto" && compare) await lab.compare();
    else await lab.run();
  } else {
    const section = $(name);
    section?.scrollIntoView({ block: "start" });
    focusHeading(section?.querySelector("h2"));
  }
}

/** Moves the keyboard focus to a heading, so Tab continues from the place just opened. */
function focusHeading(heading) {
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus({ preventScroll: true });
}

/** The quiz and the exercises, following the page's `events`; "show me" runs the cache `lab`. */
export function setupQuiz(ctx, events, lab) {
  const show = (id, scenario, options) => showLink(ctx, lab, id, scenario, options);
  const questions = ctx.bindings.Tailor.quizQuestions();
  const links = ctx.bindings.Tailor.quizLinks();
  const linkTitle = (id) => links.find((l) => l.id === id)?.title ?? { zh: id, en: id };
  const forms = new Map();

  const progress = createProgress({
    questions,
    label,
    optionText,
    onRetry: (id) => {
      const form = forms.get(id);
      form.scrollIntoView({ block: "center" });
      form.querySelector("input").focus({ preventScroll: true });
    },
    onReopen: (exercise) => exercises.open(exercise),
    onReset: () => {
      for (const form of forms.values()) {
        form.reset();
        showFeedback(form, null);
      }
      exercises.clear();
    },
  });

  /** The question's demo as a scenario for the workbench: its first run on a page preset. */
  function demoScenario(question) {
    for (const run of question.demo?.runs ?? []) {
      const preset = ctx.presets.find((p) => p.id === run.model);
      if (!preset) continue;
      const marks = (run.markDynamic ?? []).map((spec) => {
        const [input, dim] = spec.split(":");
        return { input, dim: Number(dim) };
      });
      return { source: preset.source, mode: run.mode, marks, calls: run.calls, recompileLimit: run.recompileLimit ?? null };
    }
    return null;
  }

  function renderQuestion(question) {
    const name = `quiz-${question.id}`;
    const type = question.choice === "multiple" ? "checkbox" : "radio";
    const tags = [both(`quiz.${question.choice}`)];
    if (question.difficulty) tags.push(both(`level.${question.difficulty}`));
    const options = question.options.map((option) =>
      h("label", { class: "quiz-option-row" },
        h("input", { type, name, value: option.id, "data-testid": "quiz-option", dataset: { option: option.id } }),
        question.choice === "judge" ? null : h("span", { class: "option-id" }, `${option.id}.`),
        h("span", { class: "option-text" }, ...bi(option.text))));
    const feedback = h("div", { class: "quiz-feedback", "data-testid": "quiz-feedback", role: "status", "aria-live": "polite", hidden: true });
    const form = h("form", { class: "quiz-question panel", "data-testid": "quiz-question", dataset: { qid: question.id, choice: question.choice }, novalidate: true },
      h("fieldset", {},
        h("legend", {},
          h("span", { class: "quiz-label" }, ...bi(label(question))), " ",
          ...tags.map((tag) => h("span", { class: "badge" }, ...bi(tag))),
          h("span", { class: "quiz-prompt" }, ...bi(question.prompt))),
        h("div", { class: "quiz-options" }, ...options)),
      h("div", { class: "button-row" },
        h("button", { type: "submit", "data-testid": "quiz-submit" }, ...bi(both("quiz.submit")))),
      feedback);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      submit(question, form);
    });
    enterSubmits(form);
    forms.set(question.id, form);
    return form;
  }

  async function submit(question, form) {
    const selected = [...form.querySelectorAll("input:checked")].map((input) => input.value);
    if (selected.length === 0) {
      showFeedback(form, h("p", { class: "error-text" }, ...bi(both("quiz.pick"))));
      return;
    }
    let answer;
    try {
      answer = await ctx.guarded(() => ctx.bindings.Tailor.quizCheck(question.id, selected));
    } catch (error) {
      showFeedback(form, h("p", { class: "error-text" }, errorText(error)));
      return;
    }
    if (!answer) return;
    progress.recordQuestion(question.id, answer.selected, answer.correct);
    showAnswer(question, form, answer);
  }

  function showFeedback(form, content) {
    const feedback = form.querySelector('[data-testid="quiz-feedback"]');
    delete form.dataset.state;
    delete feedback.dataset.correct;
    if (!content) {
      feedback.hidden = true;
      feedback.replaceChildren();
      return feedback;
    }
    fill(feedback, content);
    feedback.hidden = false;
    return feedback;
  }

  function showAnswer(question, form, answer) {
    const keyText = answer.key.map((id) => {
      const option = question.options.find((o) => o.id === id);
      return question.choice === "judge" ? bi(option.text) : [`${id}. `, ...bi(option.text)];
    });
    const yours = answer.selected.map((id) => optionText(question, id));
    const check = answer.factCheck;
    const parts = [
      h("p", { class: `verdict ${answer.correct ? "right" : "wrong"}` },
        answer.correct ? "✓ " : "✗ ", ...bi(both(answer.correct ? "quiz.right" : "quiz.wrong"))),
      h("p", {}, ...bi(both("quiz.yours")), ...yours.flatMap((text, i) => [i ? ", " : "", ...bi(text)])),
      h("p", { class: "quiz-key" }, ...bi(both("quiz.key")),
        ...keyText.flatMap((text, i) => [i ? h("br") : null, ...text])),
      h("p", { class: "explanation" }, ...bi(answer.explanation)),
    ];
    const sources = h("ul", { class: "sources" }, ...check.sources.map((source) =>
      h("li", {}, source.startsWith("https://") ? h("a", { href: source, rel: "noopener noreferrer", target: "_blank" }, source) : h("code", {}, source))));
    const materialKey = check.materialKey.map((id) => optionText(question, id));
    const materialText = { zh: materialKey.map((t) => t.zh).join("、"), en: materialKey.map((t) => t.en).join(", ") };
    if (check.verdict === "differs") {
      parts.push(h("div", { class: "fact-check quiz-differs", dataset: { verdict: "differs" } },
        h("p", {}, h("strong", {}, ...bi(both("quiz.differs"))), " ", ...bi(both("quiz.materialKey", materialText))),
        check.note ? h("p", {}, ...bi(check.note)) : null,
        h("p", { class: "sources-title" }, ...bi(both("quiz.sources"))), sources));
    } else {
      parts.push(h("details", { class: "quiz-nuance", dataset: { verdict: check.verdict } },
        h("summary", {}, ...bi(check.note ? both("quiz.nuanced") : both("quiz.sources"))),
        check.note ? h("p", {}, ...bi(check.note)) : null,
        check.note ? h("p", { class: "sources-title" }, ...bi(both("quiz.sources"))) : null,
        sources));
    }
    const demoOut = h("div", { class: "demo-output", "aria-live": "polite" });
    const actions = h("div", { class: "button-row" },
      h("button", { type: "button", class: "secondary quiz-show-me", dataset: { link: question.link },
        onclick: () => show(question.link, demoScenario(question)) },
      ...bi(both("quiz.showMe", linkTitle(question.link)))),
      question.demo ? h("button", { type: "button", class: "secondary quiz-run-demo", onclick: () => runDemo(question, demoOut) },
        ...bi(both("quiz.runDemo"))) : null);
    parts.push(actions, demoOut);
    const feedback = showFeedback(form, h("div", {}, ...parts));
    form.dataset.state = answer.correct ? "right" : "wrong";
    feedback.dataset.correct = String(answer.correct);
    // Counts the answers shown, so tests can wait for the next one.
    form.dataset.answers = String(Number(form.dataset.answers ?? 0) + 1);
  }

  async function runDemo(question, out) {
    fill(out, h("p", { class: "hint" }, ...bi(both("quiz.demoRunning"))));
    let outcomes;
    try {
      outcomes = await ctx.guarded(() => ctx.bindings.Tailor.demoRun(question.id));
    } catch (error) {
      fill(out, h("p", { class: "error-text" }, ...bi(both("quiz.demoFailed")), errorText(error)));
      return;
    }
    if (!outcomes) return;
    const modeName = (mode) => ({ auto: "None", true: "True", false: "False" })[mode] ?? mode;
    const runs = outcomes.map((outcome, i) => {
      const run = question.demo.runs[i];
      const marks = run.markDynamic?.length ? ` + mark_dynamic(${run.markDynamic.join(", ")})` : "";
      const calls = outcome.events.map((event, n) =>
        h("li", { class: `call act-${event.action}`, dataset: { action: event.action } },
          h("span", { class: "index" }, `#${n + 1}`), " ",
          h("code", {}, event.shapes.map(([name, dims]) => `${name}=${dims.join(",")}`).join(";")), " ",
          h("span", { class: `badge action act-${event.action}` }, ...bi(both(`action.${event.action}`))),
          event.entry !== null ? ` 0/${event.entry}` : "",
          event.reasons.length ? h("span", { class: "reason" }, " — ", h("code", {}, event.reasons[0])) : null));
      const entries = outcome.entries.map((entry) => h("li", {}, h("code", {}, `0/${entry.id}: ${entry.inputs}`)));
      return h("div", { class: "demo-run", dataset: { mode: outcome.mode, compiles: outcome.compiles } },
        h("p", { class: "demo-summary" }, ...bi(both("quiz.demoSummary", `${outcome.model}${marks}`, modeName(outcome.mode), outcome.events.length, outcome.compiles))),
        h("ol", { class: "demo-calls" }, ...calls),
        h("p", { class: "hint" }, ...bi(both("quiz.demoEntries"))),
        h("ul", { class: "demo-entries" }, ...entries));
    });
    fill(out, h("p", { class: "demo-caption" }, ...bi(question.demo.caption)), ...runs);
  }

  fill($("misconception-quiz"), ...questions.filter((q) => q.section === "misconception").map(renderQuestion));
  fill($("interview-quiz"), ...questions.filter((q) => q.section === "interview").map(renderQuestion));

  // Answers from an earlier visit come back with their feedback.
  for (const question of questions) {
    const record = progress.question(question.id);
    if (!record) continue;
    const form = forms.get(question.id);
    for (const input of form.querySelectorAll("input")) input.checked = record.selected.includes(input.value);
    let answer = null;
    try {
      answer = ctx.bindings.Tailor.quizCheck(question.id, record.selected);
    } catch {
      // A stored answer the data no longer accepts (ids changed): leave the question open.
    }
    if (answer) showAnswer(question, form, answer);
  }

  const exercises = setupExercises(ctx, events, { progress, showLink: show });
}
