// www/js/state.js: the page's events reach their listeners in order, can be stopped, and a
// misspelt event is an error, not a silent no-op.

import { test } from "node:test";
import assert from "node:assert/strict";
import { EVENTS, PageEvents } from "../../www/js/state.js";

test("emit calls every listener of that event, in the order they subscribed, with its arguments", () => {
  const events = new PageEvents();
  const heard = [];
  events.on("preset", (preset) => heard.push(`lab ${preset.id}`));
  events.on("preset", (preset) => heard.push(`widgets ${preset.id}`));
  events.on("compiled", () => heard.push("compiled"));
  events.emit("preset", { id: "simplenet" });
  assert.deepEqual(heard, ["lab simplenet", "widgets simplenet"]);
  events.emit("compiled");
  events.emit("restart");
  assert.deepEqual(heard, ["lab simplenet", "widgets simplenet", "compiled"]);
});

test("the function on returns stops that listener only", () => {
  const events = new PageEvents();
  const heard = [];
  const stop = events.on("language", () => heard.push("a"));
  events.on("language", () => heard.push("b"));
  stop();
  stop();
  events.emit("language");
  assert.deepEqual(heard, ["b"]);
});

test("a listener added during an emit hears the next one", () => {
  const events = new PageEvents();
  const heard = [];
  events.on("compiled", () => {
    heard.push("first");
    events.on("compiled", () => heard.push("late"));
  });
  events.emit("compiled");
  assert.deepEqual(heard, ["first"]);
  events.emit("compiled");
  assert.deepEqual(heard, ["first", "first", "late"]);
});

test("an exception in a listener stops the emit and reaches its caller", () => {
  const events = new PageEvents();
  const heard = [];
  events.on("restart", () => {
    throw new Error("broken widget");
  });
  events.on("restart", () => heard.push("after"));
  assert.throws(() => events.emit("restart"), /broken widget/);
  assert.deepEqual(heard, []);
});

test("an event that is not in EVENTS is refused, on subscribe and on emit", () => {
  const events = new PageEvents();
  assert.throws(() => events.on("compile", () => {}), /no event "compile"/);
  assert.throws(() => events.emit("labrun"), /no event "labrun"/);
  assert.deepEqual(Object.keys(EVENTS), ["compiled", "restart", "preset", "scenario", "labRun", "language"]);
});
