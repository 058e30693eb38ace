// The trace comparison's pure parts (www/js/tracecompare.js): which dropped file is read,
// and the rows and totals a comparison (`compareTrace`'s, as `tailor compare --json` gives
// it) renders as.
import assert from "node:assert/strict";
import { test } from "node:test";
import { comparisonRows, comparisonTotals, compiledNothing, pickTraceFile } from "../../www/js/tracecompare.js";

const empty = () => ({ both: [], only_pytorch: [], only_tailor: [] });
const compile = (id, pytorch, tailor, guards = empty()) => ({
  id, function: "forward", pytorch, tailor, tailor_instead: pytorch && !tailor ? { action: "hit", entry: "0/1" } : null,
  inputs: empty(), reasons: empty(), guards, symbols: empty(), graph_break: empty(), outputs: empty(),
});

test("the newest .log of a drop is read, as tailor compare reads a folder's", () => {
  const files = [
    { name: "a.log", lastModified: 5 },
    { name: "notes.txt", lastModified: 9 },
    { name: "b.log", lastModified: 7 },
  ];
  assert.equal(pickTraceFile(files).name, "b.log");
  assert.equal(pickTraceFile([{ name: "trace.txt", lastModified: 1 }]).name, "trace.txt");
  assert.equal(pickTraceFile([{ name: "x.txt" }, { name: "y.txt" }]), null);
  assert.equal(pickTraceFile([]), null);
});

test("each compile is a row, with what differs listed side by side", () => {
  const guards = { both: ["2 <= L['x'].size()[0]"], only_pytorch: ["2 <= L['x'].size()[0] <= 15"], only_tailor: [] };
  const comparison = {
    pytorch_version: "2.15.0",
    compiles: [compile("0/0", true, true, { ...empty(), both: ["TENSOR_MATCH L['x'] float32 size=[2] stride=[1]"] }),
      compile("0/1", true, true, guards), compile("0/2", true, false)],
    not_compared: {},
    skipped_records: {},
  };
  const rows = comparisonRows(comparison);
  assert.deepEqual(rows.map((r) => [r.id, r.state]), [["0/0", "both"], ["0/1", "differ"], ["0/2", "pytorchOnly"]]);
  assert.deepEqual(rows[2].instead, { action: "hit", entry: "0/1" });
  assert.deepEqual(rows[1].differences, [{ key: "trace.item.guards", pytorch: ["2 <= L['x'].size()[0] <= 15"], tailor: [] }]);
  assert.deepEqual(comparisonTotals(comparison), { agreeing: 1, compiles: 3, guardsBoth: 2, guardsAll: 3 });
});

test("a run that compiled nothing is told apart (the editor holds the model, not the script)", () => {
  const of = (...compiles) => ({ compiles, not_compared: {}, skipped_records: {} });
  assert.equal(compiledNothing(of(compile("0/0", true, false))), true);
  assert.equal(compiledNothing(of(compile("0/0", true, true), compile("0/1", true, false))), false);
  assert.equal(compiledNothing(of()), false);
});
