// www/js/format.js: durations and byte counts as the page writes them, at each unit's edges.

import { test } from "node:test";
import assert from "node:assert/strict";
import { formatBytes, formatMs } from "../../www/js/format.js";

test("formatMs picks µs, ms or s by size, with fewer decimals as the number grows", () => {
  assert.equal(formatMs(0), "0 µs");
  assert.equal(formatMs(0.0456), "46 µs");
  assert.equal(formatMs(0.09), "90 µs");
  assert.equal(formatMs(0.1), "0.10 ms");
  assert.equal(formatMs(1.234), "1.23 ms");
  assert.equal(formatMs(10), "10.0 ms");
  assert.equal(formatMs(999.94), "999.9 ms");
  assert.equal(formatMs(1000), "1.00 s");
  assert.equal(formatMs(17_000), "17.00 s");
});

test("formatMs writes a dash for a time that is not a finite number", () => {
  for (const value of [NaN, Infinity, -Infinity, undefined, null, "5"]) {
    assert.equal(formatMs(value), "—", String(value));
  }
});

test("formatBytes switches to KiB and MiB at 1024 and 1024²", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(640), "640 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(1024), "1.0 KiB");
  assert.equal(formatBytes(12 * 1024), "12.0 KiB");
  assert.equal(formatBytes(1024 * 1024 - 1), "1024.0 KiB");
  assert.equal(formatBytes(1024 * 1024), "1.00 MiB");
  assert.equal(formatBytes(1.5 * 1024 * 1024), "1.50 MiB");
});

test("formatBytes writes a dash for a size that is not a finite number", () => {
  for (const value of [NaN, Infinity, undefined, null]) {
    assert.equal(formatBytes(value), "—", String(value));
  }
});
