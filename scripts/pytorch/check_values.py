"""What real torch.compile does with Python int and bool arguments.

Run with PyTorch 2.15 (CPU is enough), from the repository root:

    /tmp/torch/bin/python scripts/pytorch/check_values.py > tests/data/pytorch/values.txt

Each scenario compiles one function of tests/data/models/python_values.py with a counting
backend (`torch._dynamo.reset()` before it) and calls it with the listed arguments, written
in Tailor's call grammar: `x=3` a tensor of that shape, `n=int(2)` an int, `b=True` a bool.
For each call it prints the action (C compiled, H hit, E run eagerly past the recompile
limit, X raised) and, for a recompile, the first
failing guard of every entry in lookup order (`0/0: n == 2`); after the calls, the guards of
the newest entry that Tailor models: the value guards (`EQUALS_MATCH L['n'] == 2`,
`TYPE_MATCH L['n'] int`, `TRUE_MATCH L['b'] == True`) and the shape guards of the
lambda (`LAMBDA L['n'] <= 3`). `tests/it/values.rs` expects the same from Tailor.
"""

import importlib.util
import logging
import pathlib
import re

import torch
import torch._dynamo as dynamo
from torch._dynamo.testing import CompileCounter

MODELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "models"


def ints(name, values, shape="x=3"):
    return [f"{shape};{name}=int({v})" for v in values]


# (function, dynamic modes, calls)
SCENARIOS = [
    ("scale", [None, True, False], ints("n", [2, 3, 4, 5])),
    ("scale", [False], ints("n", range(2, 12))),
    ("scale", [None, True], ints("n", [0, 1, 2, 3, 1, 0, -4])),
    ("scale", [None], ["x=3;n=int(2)", "x=4;n=int(3)", "x=5;n=int(7)"]),
    ("scale", [None], ["x=3;n=3", "x=3;n=int(2)", "x=3;n=int(5)"]),
    ("head", [None, True], ints("n", [2, 3, 5, 10, 1], shape="x=10")),
    ("branch", [None, True, False], ints("n", [2, 3, 4, 5, 6, 1])),
    ("flag", [None, True, False], ["x=3;b=True", "x=3;b=False", "x=3;b=True", "x=3;b=False"]),
    ("rows", [None, True], ["x=8;n=int(2)", "x=12;n=int(3)", "x=16;n=int(4)", "x=16;n=int(2)"]),
    ("grow", [None, True], ints("n", [2, 3, 4, 6], shape="x=5")),
    ("count", [None, True], ints("n", [2, 3, 4, 6], shape="x=5")),
    ("repeat", [None, True], ints("n", [2, 3, 2, 4])),
]


class Backend(CompileCounter):
    """Counts compilations, and runs of what it compiled (a hit runs one, eager none)."""

    def __init__(self):
        super().__init__()
        self.runs = 0

    def __call__(self, gm, example_inputs):
        compiled = super().__call__(gm, example_inputs)

        def run(*args):
            self.runs += 1
            return compiled(*args)

        return run


class Recorder(logging.Handler):
    """Keeps the recompile reasons and the guard lines Dynamo logs."""

    def __init__(self):
        super().__init__()
        self.reasons = []
        self.guards = []

    def emit(self, record):
        text = record.getMessage()
        if "triggered by the following guard failure" in text:
            self.reasons = [
                strip_comment(line.strip()[2:])
                for line in text.splitlines()
                if re.match(r"\s*- \d+/\d+: ", line)
            ]
        if "TREE_GUARD_MANAGER" in text:
            self.guards = [g for g in map(guard_line, text.splitlines()) if g]


def strip_comment(text):
    return re.split(r"\s+# ", text)[0].strip()


def guard_line(line):
    line = strip_comment(re.sub(r"^[\s|+-]*", "", line))
    if m := re.match(r"(EQUALS_MATCH|TRUE_MATCH|FALSE_MATCH): (.*)", line):
        return f"{m[1]} {m[2]}"
    if m := re.match(r"TYPE_MATCH: ___check_type_id\((L\['\w+'\]), \d+\), type=<class '(\w+)'>", line):
        return f"TYPE_MATCH {m[1]} {m[2]}"
    if m := re.match(r"LAMBDA_GUARD: (.*)", line):
        if "L[" in m[1]:
            return f"LAMBDA {m[1]}"
    return None


def argument(text):
    name, value = text.split("=")
    if value in ("True", "False"):
        return name, value == "True"
    if value.startswith("int("):
        return name, int(value[4:-1])
    return name, torch.randn(*map(int, value.split(",")))


def main():
    spec = importlib.util.spec_from_file_location("python_values", MODELS / "python_values.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recorder = Recorder()
    logging.getLogger("torch._dynamo").addHandler(recorder)
    torch._logging.set_logs(recompiles=True, guards=True)
    for function, modes, calls in SCENARIOS:
        for dynamic in modes:
            dynamo.reset()
            counter = Backend()
            compiled = torch.compile(getattr(module, function), backend=counter, dynamic=dynamic)
            print(f"== {function} dynamic={dynamic}")
            for call in calls:
                recorder.reasons = []
                compiles, runs = counter.frame_count, counter.runs
                try:
                    compiled(**dict(argument(a) for a in call.split(";")))
                    action = "C" if counter.frame_count > compiles else "H" if counter.runs > runs else "E"
                except Exception:
                    action = "X"
                reasons = " | ".join(recorder.reasons)
                print(f"{call}: {action}" + (f"  {reasons}" if reasons and action == "C" else ""))
            for guard in recorder.guards:
                print(f"  {guard}")


if __name__ == "__main__":
    main()
