// www/js/stats.js: sample summaries, the axis bound, and T_total's terms over call records.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  INDUCTOR_FIRST_MS, INDUCTOR_RECOMPILE_MS, callPhases, callTotals, inductorCompileMs, median, niceMax, percentile,
  trimmedMean,
} from "../../www/js/stats.js";

/** A call record as `model.events()` gives it. */
const call = (action, guard, compile, run) => ({ action, ms: { guard, compile, run } });

test("median sorts numerically and takes the upper middle of an even count", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 3);
  assert.equal(median([5]), 5);
  // A string sort would put 100 before 9.
  assert.equal(median([10, 9, 100]), 10);
  assert.equal(median([]), undefined);
});

test("median and trimmedMean leave their input in place", () => {
  const samples = [3, 1, 2, 5, 4];
  median(samples);
  trimmedMean(samples);
  assert.deepEqual(samples, [3, 1, 2, 5, 4]);
});

test("trimmedMean drops the fastest and slowest fifth before averaging", () => {
  assert.equal(trimmedMean([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 5.5);
  assert.equal(trimmedMean([1000, 2, 3, 4, 1]), 3);
  // Under five samples nothing is dropped.
  assert.equal(trimmedMean([7, 9]), 8);
  assert.ok(Number.isNaN(trimmedMean([])));
});

test("percentile is the nearest rank", () => {
  const values = [35, 20, 50, 15, 40];
  assert.equal(percentile(values, 0), 15);
  assert.equal(percentile(values, 30), 20);
  assert.equal(percentile(values, 40), 20);
  assert.equal(percentile(values, 50), 35);
  assert.equal(percentile(values, 100), 50);
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(percentile(hundred, 50), 50);
  assert.equal(percentile(hundred, 99), 99);
  assert.equal(percentile([7], 99), 7);
});

test("niceMax rounds up to 1, 2 or 5 times a power of ten", () => {
  assert.equal(niceMax(1), 1);
  assert.equal(niceMax(1.5), 2);
  assert.equal(niceMax(3), 5);
  assert.equal(niceMax(7), 10);
  assert.equal(niceMax(10), 10);
  assert.equal(niceMax(11), 20);
  assert.equal(niceMax(250), 500);
  assert.equal(niceMax(17_000), 20_000);
  assert.equal(niceMax(0.03), 0.05);
  assert.equal(niceMax(0), 1);
  assert.equal(niceMax(-5), 1);
});

test("callTotals splits compile time into the first compile and the recompiles", () => {
  const calls = [
    call("compile", 0, 10, 2),
    call("hit", 0.5, 0, 1),
    call("compile", 0.5, 4, 2),
    call("compile", 1, 6, 2),
  ];
  assert.deepEqual(callTotals(calls), { compiles: 3, first: 10, recompile: 10, run: 9, total: 29 });
});

test("callTotals of calls that never compile is their guard checks and runs", () => {
  assert.deepEqual(callTotals([call("hit", 0.5, 0, 1), call("eager", 0, 0, 4)]),
    { compiles: 0, first: 0, recompile: 0, run: 5.5, total: 5.5 });
  assert.deepEqual(callTotals([]), { compiles: 0, first: 0, recompile: 0, run: 0, total: 0 });
});

test("inductorCompileMs charges the first compile, then a recompile each", () => {
  assert.equal(inductorCompileMs(0), 0);
  assert.equal(inductorCompileMs(1), INDUCTOR_FIRST_MS);
  assert.equal(inductorCompileMs(3), INDUCTOR_FIRST_MS + 2 * INDUCTOR_RECOMPILE_MS);
  assert.equal(inductorCompileMs(3), 20_500);
});

test("callPhases keeps measured phases, or gives compiles Inductor's costs when simulating", () => {
  const calls = [call("compile", 0.1, 3, 1), call("hit", 0.2, 0, 1), call("compile", 0.3, 2, 1)];
  assert.deepEqual(callPhases(calls, false), [
    { guard: 0.1, compile: 3, run: 1 },
    { guard: 0.2, compile: 0, run: 1 },
    { guard: 0.3, compile: 2, run: 1 },
  ]);
  assert.deepEqual(callPhases(calls, true), [
    { guard: 0.1, compile: 17_000, run: 1 },
    { guard: 0.2, compile: 0, run: 1 },
    { guard: 0.3, compile: 1_750, run: 1 },
  ]);
});
