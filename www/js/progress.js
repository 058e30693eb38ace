// Quiz progress: each question's last answer and each exercise's last graded attempt, kept in
// localStorage under "tailor-quiz" so the next visit picks up where this one stopped. Renders
// the score per section (interview questions, misconceptions, exercises), the mistakes to
// review (each with a way back to it) and the reset button, confirmed inline (no dialog).

import { bi, fill, h } from "./dom.js";
import { both } from "./i18n.js";

const STORAGE_KEY = "tailor-quiz";
/** Exercises remembered; the oldest go first. */
const MAX_EXERCISES = 100;

const $ = (id) => document.getElementById(id);

function empty() {
  return { questions: {}, exercises: [] };
}

function load() {
  try {
    const data = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null");
    if (data && typeof data.questions === "object" && Array.isArray(data.exercises)) return data;
  } catch {
    // Unreadable or disabled storage: start afresh.
  }
  return empty();
}

const sameExercise = (a, b) => a.kind === b.kind && a.seed === b.seed && a.difficulty === b.difficulty;

/**
 * The progress store and its panel. `questions`: the quiz's questions (for labels and
 * totals); `label(question)`: `{ zh, en }` such as Q1; `onRetry(id)` and `onReopen(exercise)`
 * bring a mistake back; `onReset()` clears what the page shows.
 */
export function createProgress({ questions, label, optionText, onRetry, onReopen, onReset }) {
  let state = load();
  const ui = {
    scores: [...document.querySelectorAll('[data-testid="quiz-score"]')],
    review: $("quiz-review"),
    reset: $("quiz-reset"),
    confirm: $("quiz-reset-confirm"),
    yes: $("quiz-reset-yes"),
    cancel: $("quiz-reset-cancel"),
    status: $("quiz-progress-status"),
  };

  function save() {
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
    } catch {
      // Storage can be disabled (private mode); the progress still counts for this visit.
    }
    render();
  }

  function render() {
    for (const score of ui.scores) {
      const section = score.dataset.section;
      let right;
      let answered;
      let text;
      if (section === "exercises") {
        answered = state.exercises.length;
        right = state.exercises.filter((e) => e.correct).length;
        text = both("progress.attempts", right, answered);
      } else {
        const ids = questions.filter((q) => q.section === section).map((q) => q.id);
        const records = ids.map((id) => state.questions[id]).filter(Boolean);
        answered = records.length;
        right = records.filter((r) => r.correct).length;
        text = both("progress.questions", right, answered, ids.length);
        score.dataset.total = String(ids.length);
      }
      score.dataset.right = String(right);
      score.dataset.answered = String(answered);
      fill(score, h("strong", {}, ...bi(both(`progress.${section}`))), " ", ...bi(text));
    }
    const items = [];
    for (const question of questions) {
      const record = state.questions[question.id];
      if (!record || record.correct) continue;
      const yours = record.selected.map((id) => optionText(question, id));
      const key = question.key.map((id) => optionText(question, id));
      items.push(h("li", { dataset: { question: question.id } },
        ...bi(both("progress.question", label(question), joined(yours), joined(key))), " ",
        h("button", { type: "button", class: "chip", onclick: () => onRetry(question.id) }, ...bi(both("progress.retry")))));
    }
    for (const exercise of state.exercises) {
      if (exercise.correct) continue;
      const name = both("exercise.id", both(`exercise.kind.${exercise.kind}`), exercise.seed, both(`level.${exercise.difficulty}`));
      items.push(h("li", { dataset: { kind: exercise.kind, seed: exercise.seed } },
        ...bi(both("progress.exercise", name, exercise.answer || both("progress.empty"), exercise.expected)), " ",
        h("button", { type: "button", class: "chip", onclick: () => onReopen(exercise) }, ...bi(both("progress.reopen")))));
    }
    fill(ui.review, ...(items.length ? items : [h("li", { class: "hint" }, ...bi(both("progress.none")))]));
  }

  /** Joins `{ zh, en }` texts with commas. */
  function joined(texts) {
    return { zh: texts.map((t) => t.zh).join("、"), en: texts.map((t) => t.en).join(", ") };
  }

  function askReset(open) {
    ui.confirm.hidden = !open;
    ui.reset.hidden = open;
    (open ? ui.cancel : ui.reset).focus();
  }
  ui.reset.addEventListener("click", () => askReset(true));
  ui.cancel.addEventListener("click", () => askReset(false));
  ui.yes.addEventListener("click", () => {
    state = empty();
    save();
    onReset();
    askReset(false);
    fill(ui.status, ...bi(both("progress.cleared")));
  });
  ui.reset.disabled = false;
  render();

  return {
    /** The last answer to question `id`: `{ selected, correct }`, or `null`. */
    question: (id) => state.questions[id] ?? null,
    recordQuestion(id, selected, correct) {
      state.questions[id] = { selected, correct };
      save();
    },
    /** The last graded attempt at an exercise, or `null`. */
    exercise: (which) => state.exercises.find((e) => sameExercise(e, which)) ?? null,
    recordExercise(which, answer, grade) {
      state.exercises = state.exercises.filter((e) => !sameExercise(e, which));
      state.exercises.push({
        kind: which.kind,
        seed: which.seed,
        difficulty: which.difficulty,
        answer,
        correct: grade.correct,
        expected: grade.expected,
      });
      state.exercises = state.exercises.slice(-MAX_EXERCISES);
      save();
    },
  };
}
