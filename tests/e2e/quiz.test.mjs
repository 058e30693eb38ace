// End-to-end tests of the quiz (§11 misconceptions, §12 interview questions and exercises):
// every material question answered wrong and then right (verdict, key, the material's own key
// where it differs, the score and the mistakes list), a demo and "show me", every exercise kind
// over several seeds answered with the compiler's own solution (`Tailor.exerciseSolve`) and
// with a wrong one, an exercise shared by URL, keyboard-only answering, the language switch,
// and the progress kept in localStorage (reload, reset). Screenshots go to test-results/.
//
// Run: `node --test tests/e2e/` (scripts/test.sh builds dist/ first).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { editorText, openPage, shot } from "./page-helpers.mjs";

const KINDS = ["output_shape", "guard_prediction", "compile_count", "write_guard", "spot_recompile"];
const LEVELS = ["easy", "mid", "hard", "extreme"];
/** Exercises per kind, one per difficulty. */
const SEEDS_PER_KIND = LEVELS.length;

let session;
let page;
let questions;

before(async () => {
  session = await openPage();
  page = session.page;
  questions = await page.evaluate(() => window.tailorPage.bindings.Tailor.quizQuestions());
  await page.waitForSelector("#exercises[data-shown]");
});

after(async () => {
  await session?.close();
});

const questionForm = (qid) => page.locator(`[data-testid="quiz-question"][data-qid="${qid}"]`);

/** Selects exactly `ids` in question `qid`, submits, and waits for the feedback. */
async function answer(qid, ids) {
  const form = questionForm(qid);
  const before = Number((await form.getAttribute("data-answers")) ?? 0);
  for (const input of await form.getByTestId("quiz-option").all()) {
    const want = ids.includes(await input.getAttribute("data-option"));
    // A radio is unchecked by checking another one of its group.
    if (want || (await input.getAttribute("type")) === "checkbox") await input.setChecked(want);
  }
  await form.getByTestId("quiz-submit").click();
  await page.waitForFunction(([q, n]) => Number(document.querySelector(`[data-testid="quiz-question"][data-qid="${q}"]`).dataset.answers ?? 0) > n, [qid, before]);
  return form.getByTestId("quiz-feedback");
}

/** A selection that is not the key: another single option, or the key with one option toggled. */
function wrongSelection(question) {
  const ids = question.options.map((o) => o.id);
  if (question.choice !== "multiple") return [ids.find((id) => !question.key.includes(id))];
  const toggled = ids[ids.length - 1];
  const selection = question.key.includes(toggled) ? question.key.filter((id) => id !== toggled) : [...question.key, toggled];
  return selection.length ? selection : [ids.find((id) => !question.key.includes(id))];
}

async function score(section) {
  const item = page.locator(`[data-testid="quiz-score"][data-section="${section}"]`);
  return {
    right: Number(await item.getAttribute("data-right")),
    answered: Number(await item.getAttribute("data-answered")),
    text: await item.innerText(),
  };
}

test("every question of the material is on the page with all its options", async () => {
  assert.equal(questions.length, 14);
  const ids = await page.getByTestId("quiz-question").evaluateAll((forms) => forms.map((f) => f.dataset.qid));
  assert.deepEqual(ids.slice(0, 4), ["m1", "m2", "m3", "m4"], "the misconceptions come first, in §11");
  assert.deepEqual(ids.slice(4), questions.filter((q) => q.section === "interview").map((q) => q.id));
  assert.equal(await page.locator('#misconceptions [data-testid="quiz-question"]').count(), 4);
  assert.equal(await page.locator('#interview [data-testid="quiz-question"]').count(), 10);
  for (const question of questions) {
    const form = questionForm(question.id);
    const options = form.getByTestId("quiz-option");
    assert.deepEqual(await options.evaluateAll((inputs) => inputs.map((i) => i.dataset.option)), question.options.map((o) => o.id), question.id);
    const type = question.choice === "multiple" ? "checkbox" : "radio";
    assert.deepEqual(new Set(await options.evaluateAll((inputs) => inputs.map((i) => i.type))), new Set([type]), question.id);
    const text = await form.innerText();
    assert.ok(text.includes(question.prompt.zh), `${question.id}: prompt`);
    for (const option of question.options) assert.ok(text.includes(option.text.zh), `${question.id}: option ${option.id}`);
    assert.ok(await form.getByTestId("quiz-feedback").isHidden(), `${question.id}: no feedback before answering`);
  }
  const judge = questionForm("m1");
  assert.match(await judge.innerText(), /正确[\s\S]*错误[\s\S]*部分正确/);
});

test("submitting without a choice asks for one and counts nothing", async () => {
  const form = questionForm("q2");
  await form.getByTestId("quiz-submit").click();
  await page.waitForFunction(() => !document.querySelector('[data-qid="q2"] [data-testid="quiz-feedback"]').hidden);
  assert.match(await form.getByTestId("quiz-feedback").innerText(), /先选一个选项/);
  assert.equal((await score("interview")).answered, 0);
});

test("every material question answered wrong, then right: verdict, key, fact check, score", async () => {
  let answered = { interview: 0, misconception: 0 };
  for (const question of questions) {
    const section = question.section;
    const before = await score(section);

    const wrong = wrongSelection(question);
    let feedback = await answer(question.id, wrong);
    assert.equal(await feedback.getAttribute("data-correct"), "false", `${question.id} ${wrong}`);
    const text = await feedback.innerText();
    assert.match(text, /答错了/, question.id);
    assert.ok(text.includes(question.explanation.zh), `${question.id}: explanation`);
    for (const id of question.key) {
      const option = question.options.find((o) => o.id === id);
      assert.ok(text.includes(option.text.zh), `${question.id}: key option ${id} shown`);
    }
    const differs = feedback.locator(".quiz-differs");
    if (question.factCheck.verdict === "differs") {
      assert.ok(await differs.isVisible(), `${question.id}: an open note on the material's key`);
      const note = await differs.innerText();
      assert.match(note, /这里与教材不同/);
      assert.ok(note.includes(question.factCheck.note.zh), `${question.id}: the note`);
      for (const source of question.factCheck.sources) assert.ok(note.includes(source), `${question.id}: source ${source}`);
      const materialKey = question.factCheck.materialKey
        .map((id) => (question.choice === "judge" ? question.options.find((o) => o.id === id).text.zh : id))
        .join("、");
      assert.ok(note.includes(`教材给出的答案是 ${materialKey}`), `${question.id}: the material's key`);
    } else {
      assert.equal(await differs.count(), 0, `${question.id}: no differs note`);
    }
    answered[section] += 1;
    let now = await score(section);
    assert.deepEqual([now.right, now.answered], [before.right, answered[section]], `${question.id}: wrong counted`);
    assert.equal(await page.locator(`#quiz-review li[data-question="${question.id}"]`).count(), 1, `${question.id} in the review list`);

    feedback = await answer(question.id, question.key);
    assert.equal(await feedback.getAttribute("data-correct"), "true", question.id);
    assert.match(await feedback.innerText(), /答对了/);
    now = await score(section);
    assert.deepEqual([now.right, now.answered], [before.right + 1, answered[section]], `${question.id}: right counted once`);
    assert.equal(await page.locator(`#quiz-review li[data-question="${question.id}"]`).count(), 0, `${question.id} left the review list`);
    assert.equal(await questionForm(question.id).getAttribute("data-state"), "right");
  }
  assert.deepEqual(await score("interview").then((s) => [s.right, s.answered]), [10, 10]);
  assert.deepEqual(await score("misconception").then((s) => [s.right, s.answered]), [4, 4]);
  assert.match((await score("interview")).text, /答对 10 题，已答 10\/10 题/);
  await shot(page, "30-quiz-q1-right", questionForm("q1"));
  await answer("q1", ["B"]);
  await shot(page, "31-quiz-q1-wrong-differs", questionForm("q1"));
  await shot(page, "32-quiz-m2-wrong", await answer("m2", ["false"]).then(() => questionForm("m2")));
  assert.deepEqual(await score("interview").then((s) => [s.right, s.answered]), [9, 10]);
});

test("the demo runs the question's calls through the compiler", async () => {
  const form = questionForm("q1");
  await form.locator(".quiz-run-demo").click();
  await form.locator(".demo-run").first().waitFor();
  const expected = await page.evaluate(() => window.tailorPage.bindings.Tailor.demoRun("q1"));
  const runs = form.locator(".demo-run");
  assert.equal(await runs.count(), expected.length);
  const shown = await runs.evaluateAll((items) => items.map((i) => [i.dataset.mode, Number(i.dataset.compiles)]));
  assert.deepEqual(shown, expected.map((run) => [run.mode, run.compiles]));
  assert.deepEqual(shown, [["auto", 2], ["true", 1], ["false", 3]], "the material's batches 8, 16, 32 under each mode");
  const actions = await runs.first().locator(".demo-calls li").evaluateAll((items) => items.map((i) => i.dataset.action));
  assert.deepEqual(actions, expected[0].events.map((e) => e.action));
  await shot(page, "33-quiz-q1-demo", form);
});

test("show me opens the linked stage, lab or section", async () => {
  // stage:guards, with the question's demo model loaded into the workbench.
  await questionForm("q4").locator(".quiz-show-me").click();
  await page.waitForFunction(() => document.querySelector('[data-testid="stage-title"]').dataset.stage === "guards");
  assert.match(await editorText(page), /class SimpleNet/);
  assert.equal(await page.evaluate(() => document.activeElement?.id), "stage-title");

  // lab:cache runs the demo's calls in the lab.
  const runs = Number((await page.locator("#lab").getAttribute("data-runs")) ?? 0);
  await questionForm("q5").locator(".quiz-show-me").click();
  await page.waitForFunction((n) => Number(document.getElementById("lab").dataset.runs ?? 0) > n, runs);
  const q5 = questions.find((q) => q.id === "q5");
  assert.equal(await page.getByTestId("cache-sequence").inputValue(), q5.demo.runs[0].calls.join(" "));
  assert.equal(await page.locator('[data-testid="cache-events"] > li').count(), q5.demo.runs[0].calls.length);

  // section:problem scrolls there and moves the focus to its heading.
  await questionForm("q2").locator(".quiz-show-me").click();
  assert.equal(await page.evaluate(() => document.activeElement?.id), "problem-heading");
});

/** Puts `text` (in the exercise's answer format) into the answer controls. */
async function enterAnswer(kind, text) {
  const box = page.getByTestId("exercise-answer");
  if (kind === "output_shape" || kind === "compile_count") return box.fill(text);
  const words = text.split(/[\s,]+/).filter(Boolean);
  const set = async (name, values) => {
    for (const input of await box.locator(`input[name="${name}"]`).all()) {
      const want = values.includes(await input.getAttribute("value"));
      if (want || (await input.getAttribute("type")) === "checkbox") await input.setChecked(want);
    }
  };
  if (kind === "guard_prediction") {
    await set("exercise-outcome", [words[0]]);
    if (words[1]) await set("exercise-guard", [words[1]]);
  } else if (kind === "write_guard") {
    await set("exercise-line", words);
  } else {
    await set("exercise-call", words[0] === "none" ? [] : words);
  }
}

/** `a, Min(b, c), d` → `['a', 'Min(b, c)', 'd']`. */
function topLevelParts(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  [...text].forEach((c, i) => {
    if (c === "(") depth += 1;
    else if (c === ")") depth -= 1;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  });
  parts.push(text.slice(start).trim());
  return parts;
}

/** A wrong answer in the same format. */
function wrongAnswer(kind, solution, exercise) {
  switch (kind) {
    case "output_shape": {
      const dims = topLevelParts(solution.slice(1, -1));
      dims[dims.length - 1] = `(${dims.at(-1)}) + 1`;
      return `[${dims.join(", ")}]`;
    }
    case "compile_count": {
      const [count, dims] = solution.split(";");
      return `${Number(count) + 1};${dims}`;
    }
    case "guard_prediction":
      return solution === "hit" ? "recompile 1" : "hit";
    case "write_guard": {
      const ids = new Set(solution.split(/,\s*/));
      const first = exercise.choices[0].id;
      if (ids.has(first)) ids.delete(first);
      else ids.add(first);
      return ids.size ? [...ids].join(", ") : exercise.choices[1].id;
    }
    default: {
      const calls = new Set(solution === "none" ? [] : solution.split(/,\s*/));
      if (calls.has("2")) calls.delete("2");
      else calls.add("2");
      return calls.size ? [...calls].join(", ") : "none";
    }
  }
}

/** Submits the exercise on screen and resolves to its feedback's state. */
async function grade() {
  const before = Number((await page.locator("#exercises").getAttribute("data-grades")) ?? 0);
  await page.getByTestId("exercise-submit").click();
  await page.waitForFunction((n) => Number(document.getElementById("exercises").dataset.grades ?? 0) > n, before);
  const feedback = page.getByTestId("exercise-feedback");
  return {
    feedback,
    correct: await feedback.getAttribute("data-correct"),
    malformed: await feedback.getAttribute("data-malformed"),
    expected: (await feedback.locator(".expected").count()) ? await feedback.locator(".expected").getAttribute("data-expected") : null,
    text: await feedback.innerText(),
  };
}

/** The exercise on screen, from the page's own `share` parameters. */
async function shownExercise() {
  const share = await page.locator("#exercises").getAttribute("data-shown");
  const params = new URLSearchParams(share);
  return { kind: params.get("kind"), seed: Number(params.get("seed")), difficulty: params.get("difficulty") };
}

/** Opens a given exercise the way a followed link does (a new URL fragment). */
async function openExercise(kind, seed, difficulty) {
  const share = `kind=${kind}&seed=${seed}&difficulty=${difficulty}`;
  await page.evaluate((hash) => (location.hash = hash), share);
  await page.waitForFunction((s) => document.getElementById("exercises").dataset.shown === s, share);
  return { kind, seed, difficulty };
}

/** Picks the kind and the difficulty, then a new seed; resolves to the exercise shown. */
async function newExercise(kind, difficulty) {
  await page.locator(`#exercise-kinds input[value="${kind}"]`).check();
  await page.locator("#exercise-difficulty").selectOption(difficulty);
  await page.waitForFunction(([k, d]) => {
    const shown = new URLSearchParams(document.getElementById("exercises").dataset.shown);
    return shown.get("kind") === k && shown.get("difficulty") === d;
  }, [kind, difficulty]);
  const before = await page.locator("#exercises").getAttribute("data-shown");
  await page.getByTestId("exercise-new").click();
  await page.waitForFunction((b) => document.getElementById("exercises").dataset.shown !== b, before);
  return shownExercise();
}

test("every exercise kind, several seeds: the compiler's answer is right, another is wrong", async () => {
  assert.deepEqual(await page.evaluate(() => window.tailorPage.bindings.Tailor.exerciseKinds()), KINDS);
  let tried = 0;
  for (const kind of KINDS) {
    for (let i = 0; i < SEEDS_PER_KIND; i++) {
      // The first seed comes from the "new exercise" button, the others are fixed (so a failure
      // replays): every difficulty once.
      const { seed, difficulty } = i === 0 ? await newExercise(kind, LEVELS[0]) : await openExercise(kind, 100 + i, LEVELS[i]);
      const context = `${kind} seed ${seed} ${difficulty}`;
      if (i === 0) assert.match(page.url(), new RegExp(`kind=${kind}&seed=${seed}&difficulty=${difficulty}`), context);
      const [exercise, solution] = await page.evaluate(([k, s, d]) => {
        const { Tailor } = window.tailorPage.bindings;
        return [Tailor.exerciseGenerate(k, s, d), Tailor.exerciseSolve(k, s, d)];
      }, [kind, seed, difficulty]);
      assert.ok((await page.locator(".exercise-prompt").innerText()).includes(exercise.prompt.zh), context);
      const answerBox = page.getByTestId("exercise-answer");
      const tag = await answerBox.evaluate((el) => el.tagName);
      assert.equal(tag, kind === "output_shape" || kind === "compile_count" ? "INPUT" : "DIV", context);

      const wrong = wrongAnswer(kind, solution, exercise);
      await enterAnswer(kind, wrong);
      let result = await grade();
      assert.deepEqual([result.correct, result.malformed], ["false", "false"], `${context}: '${wrong}' (solution '${solution}'): ${result.text}`);
      assert.equal(result.expected, solution, context);

      await enterAnswer(kind, solution);
      result = await grade();
      assert.deepEqual([result.correct, result.malformed], ["true", "false"], `${context}: '${solution}': ${result.text}`);
      assert.match(result.text, /答对了（编译器判定）/);
      tried += 1;
      if (i === 0) await shot(page, `34-exercise-${kind}`, page.locator("#exercises"));
    }
  }
  const exercises = await score("exercises");
  assert.deepEqual([exercises.right, exercises.answered], [tried, tried]);
});

test("a malformed answer gets help and is not counted", async () => {
  await newExercise("output_shape", "easy");
  const before = await score("exercises");
  await enterAnswer("output_shape", "[s0, ((");
  const result = await grade();
  assert.deepEqual([result.correct, result.malformed], ["false", "true"]);
  assert.match(result.text, /无法判分[\s\S]*无法读懂这个答案/);
  assert.equal(result.expected, null, "no answer given away");
  assert.deepEqual(await score("exercises"), before);
});

test("a wrong exercise goes to the review list and opens again from there", async () => {
  const { kind, seed, difficulty } = await newExercise("spot_recompile", "mid");
  const [solution, exercise] = await page.evaluate(([k, s, d]) => {
    const { Tailor } = window.tailorPage.bindings;
    return [Tailor.exerciseSolve(k, s, d), Tailor.exerciseGenerate(k, s, d)];
  }, [kind, seed, difficulty]);
  await enterAnswer(kind, wrongAnswer(kind, solution, exercise));
  assert.equal((await grade()).correct, "false");
  const item = page.locator(`#quiz-review li[data-kind="${kind}"][data-seed="${seed}"]`);
  assert.equal(await item.count(), 1);
  await shot(page, "35-progress", page.locator("#quiz-progress"));
  await newExercise("output_shape", "easy");
  await item.getByRole("button").click();
  await page.waitForFunction((share) => document.getElementById("exercises").dataset.shown === share, `kind=${kind}&seed=${seed}&difficulty=${difficulty}`);
  assert.equal(await page.locator("#exercise-difficulty").inputValue(), difficulty);
});

test("an exercise's show me loads its model and calls into the compiler", async () => {
  const { kind, seed, difficulty } = await newExercise("write_guard", "easy");
  const solution = await page.evaluate(([k, s, d]) => window.tailorPage.bindings.Tailor.exerciseSolve(k, s, d), [kind, seed, difficulty]);
  const exercise = await page.evaluate(([k, s, d]) => window.tailorPage.bindings.Tailor.exerciseGenerate(k, s, d), [kind, seed, difficulty]);
  await enterAnswer(kind, solution);
  await grade();
  await page.locator(".exercise-show-me").click();
  await page.waitForFunction(() => document.querySelector('[data-testid="stage-title"]').dataset.stage === "guards");
  assert.equal(await editorText(page), exercise.source);
  assert.equal(await page.getByTestId("input-shapes").inputValue(), exercise.replay.calls[0]);
  assert.equal(await page.getByTestId("mode-select").inputValue(), exercise.replay.mode);
  const guards = await page.getByTestId("guards-view").innerText();
  for (const id of solution.split(/,\s*/)) {
    const line = exercise.choices.find((c) => c.id === id).text;
    assert.ok(guards.includes(line.replace(/^TENSOR_MATCH: /, "")), `guard ${line} shown in the step-through`);
  }
});

test("show me replays an exercise's calls in the lab, and the lab agrees with the compiler's answer", async () => {
  // The extreme ones set a recompile limit below 8 (guard prediction's also marks a dim).
  const cases = [
    ["guard_prediction", 2, "extreme"], ["guard_prediction", 5, "easy"],
    ["compile_count", 2, "extreme"], ["compile_count", 9, "mid"],
    ["spot_recompile", 1, "extreme"], ["spot_recompile", 4, "hard"],
  ];
  for (const [kind, seed, difficulty] of cases) {
    await openExercise(kind, seed, difficulty);
    const context = `${kind} seed ${seed} ${difficulty}`;
    const [exercise, solution] = await page.evaluate(([k, s, d]) => {
      const { Tailor } = window.tailorPage.bindings;
      return [Tailor.exerciseGenerate(k, s, d), Tailor.exerciseSolve(k, s, d)];
    }, [kind, seed, difficulty]);
    await enterAnswer(kind, solution);
    await grade();
    const runs = Number((await page.locator("#lab").getAttribute("data-runs")) ?? 0);
    await page.locator(".exercise-show-me").click();
    await page.waitForFunction((n) => Number(document.getElementById("lab").dataset.runs ?? 0) > n, runs);
    const actions = await page.locator('[data-testid="cache-events"] > li').evaluateAll((items) => items.map((i) => i.dataset.action));
    assert.equal(actions.length, exercise.replay.calls.length, context);
    if (kind === "guard_prediction") {
      const outcome = solution.split(" ")[0];
      assert.equal(actions.at(-1), outcome === "recompile" ? "compile" : outcome, context);
    } else if (kind === "compile_count") {
      assert.equal(actions.filter((a) => a === "compile").length, Number(solution.split(";")[0]), context);
    } else {
      const recompiles = actions.flatMap((a, i) => (i > 0 && a === "compile" ? [String(i + 1)] : []));
      assert.equal(recompiles.length ? recompiles.join(", ") : "none", solution, context);
    }
    const limit = await page.evaluate(() => window.tailorPage.model.recompileLimit);
    assert.equal(limit, exercise.replay.recompileLimit, `${context}: the recompile limit`);
    if (difficulty === "extreme") assert.ok(limit < 8, `${context}: a limit below 8 is replayed`);
  }
  await shot(page, "39-exercise-show-me-lab", page.locator("#lab"));
});

test("an exercise link replays the same exercise, with the model settings kept", async () => {
  const shown = await newExercise("guard_prediction", "hard");
  const url = page.url();
  assert.match(url, /mode=/, "the model settings stay in the fragment");
  const prompt = await page.locator(".exercise-prompt").innerText();
  const other = await openPage({ hash: url.slice(url.indexOf("#")) });
  try {
    await other.page.waitForSelector("#exercises[data-shown]");
    const share = await other.page.locator("#exercises").getAttribute("data-shown");
    assert.equal(share, `kind=${shown.kind}&seed=${shown.seed}&difficulty=${shown.difficulty}`);
    assert.equal(await other.page.locator(".exercise-prompt").innerText(), prompt);
    assert.ok(await other.page.locator('#exercise-kinds input[value="guard_prediction"]').isChecked());
    assert.deepEqual(other.errors, []);
  } finally {
    await other.close();
  }
});

test("keyboard only: options, Enter to submit, visible focus", async () => {
  const first = questionForm("q3").getByTestId("quiz-option").first();
  await first.focus();
  await page.keyboard.press("ArrowDown");
  assert.ok(await questionForm("q3").locator('[data-option="B"]').isChecked(), "arrow keys move through the options");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none", "the focused option shows a focus ring");
  const before = Number((await questionForm("q3").getAttribute("data-answers")) ?? 0);
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => Number(document.querySelector('[data-qid="q3"]').dataset.answers ?? 0) > n, before);
  assert.equal(await questionForm("q3").getByTestId("quiz-feedback").getAttribute("data-correct"), "true");

  // A multiple-choice question: Space ticks, Tab moves, Enter submits.
  const q4 = questionForm("q4");
  for (const input of await q4.getByTestId("quiz-option").all()) await input.setChecked(false);
  await q4.getByTestId("quiz-option").first().focus();
  await page.keyboard.press("Space");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Space");
  const answers = Number((await q4.getAttribute("data-answers")) ?? 0);
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => Number(document.querySelector('[data-qid="q4"]').dataset.answers ?? 0) > n, answers);
  assert.equal(await q4.getByTestId("quiz-feedback").getAttribute("data-correct"), "false", "A and B without C");

  // The exercise: Tab from "new exercise" reaches the answer; Enter grades.
  await newExercise("compile_count", "easy");
  const { kind, seed, difficulty } = await shownExercise();
  const solution = await page.evaluate(([k, s, d]) => window.tailorPage.bindings.Tailor.exerciseSolve(k, s, d), [kind, seed, difficulty]);
  await page.getByTestId("exercise-answer").focus();
  await page.keyboard.type(solution);
  const grades = Number((await page.locator("#exercises").getAttribute("data-grades")) ?? 0);
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => Number(document.getElementById("exercises").dataset.grades ?? 0) > n, grades);
  assert.equal(await page.getByTestId("exercise-feedback").getAttribute("data-correct"), "true");

  // Every control of the quiz can take the focus.
  const unfocusable = await page.evaluate(() =>
    [...document.querySelectorAll("#misconceptions input, #misconceptions button, #interview input, #interview button, #interview select")]
      .filter((el) => !el.hidden && el.offsetParent !== null && (el.tabIndex < 0 || el.disabled))
      .map((el) => el.id || el.className || el.tagName));
  assert.deepEqual(unfocusable, []);
});

test("the language switch turns the quiz and the exercises English", async () => {
  await page.getByTestId("lang-toggle").click();
  try {
    const q1 = questionForm("q1");
    const text = await q1.innerText();
    assert.match(text, /What is the default value of torch\.compile's dynamic parameter\?/);
    assert.match(text, /Single choice/);
    assert.ok(!text.includes("默认"), "no Chinese left in the question");
    assert.match(await q1.getByTestId("quiz-feedback").innerText(), /The material's answer is B\./);
    assert.match(await questionForm("m1").innerText(), /Partly true/);
    assert.match(await page.locator(".exercise-prompt").innerText(), /[A-Za-z]{4,}/);
    assert.ok(!/[\u4e00-\u9fff]/.test(await page.locator("#exercises").innerText()), "no Chinese left in the exercise panel");
    assert.match((await score("interview")).text, /Interview questions/);
    assert.equal(await page.locator("#exercise-difficulty option:checked").innerText(), "easy");
    await shot(page, "36-quiz-english", questionForm("q1"));
    await shot(page, "36-exercise-english", page.locator("#exercises"));
    await shot(page, "36-progress-english", page.locator("#quiz-progress"));
  } finally {
    await page.getByTestId("lang-toggle").click();
  }
  assert.match(await questionForm("q1").innerText(), /默认的 dynamic 参数值/);
});

test("progress survives a reload, and reset clears it", async () => {
  const before = { interview: await score("interview"), misconception: await score("misconception"), exercises: await score("exercises") };
  assert.ok(before.exercises.answered > 0);
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await page.waitForSelector("#exercises[data-shown]");
  for (const section of ["interview", "misconception", "exercises"]) {
    const now = await score(section);
    assert.deepEqual([now.right, now.answered], [before[section].right, before[section].answered], section);
  }
  assert.ok(await questionForm("q1").locator('[data-option="B"]').isChecked(), "the last answer is selected again");
  assert.equal(await questionForm("q1").getByTestId("quiz-feedback").getAttribute("data-correct"), "false");
  assert.ok((await page.locator("#quiz-review li[data-question]").count()) > 0);

  await page.getByTestId("quiz-reset").click();
  assert.ok(await page.getByTestId("quiz-reset-confirm").isVisible(), "reset asks first");
  await page.getByTestId("quiz-reset-confirm").click();
  for (const section of ["interview", "misconception", "exercises"]) {
    const now = await score(section);
    assert.deepEqual([now.right, now.answered], [0, 0], section);
  }
  assert.ok(await questionForm("q1").getByTestId("quiz-feedback").isHidden());
  assert.ok(!(await questionForm("q1").locator('[data-option="B"]').isChecked()));
  assert.match(await page.locator("#quiz-review").innerText(), /还没有错题/);
  assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("tailor-quiz")).exercises.length), 0);
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  assert.equal((await score("interview")).answered, 0, "the reset is kept");
});

test("the quiz fits a 375 px wide screen", async () => {
  await answer("q1", ["B"]);
  await page.setViewportSize({ width: 375, height: 812 });
  try {
    await newExercise("guard_prediction", "extreme");
    await questionForm("q1").scrollIntoViewIfNeeded();
    await shot(page, "37-quiz-narrow-375px", questionForm("q1"));
    await shot(page, "38-exercise-narrow-375px", page.locator("#exercises"));
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= 375, `page is ${scrollWidth} px wide at a 375 px viewport`);
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("no uncaught errors happened", () => {
  assert.deepEqual(session.errors, []);
  assert.deepEqual(session.dialogs, []);
});
