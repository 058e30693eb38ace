"""Records PyTorch's structured trace (TORCH_TRACE, the log tlparse reads) of each script in
tests/data/traces/ as tests/data/traces/NAME.log, which `tailor compare` reads beside its
own run of the same script (tests/it/compare.rs).

Run with PyTorch 2.15 (CPU is enough), from the repository root:

    /tmp/torch/bin/python scripts/pytorch/record_traces.py [NAME ...]

Each script runs in a fresh process, by its path relative to the root, so the trace names
the file as `tailor compare` is given it. The trace is kept whole, as PyTorch wrote it.
"""

import glob
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def record(script):
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, TORCH_TRACE=folder)
        subprocess.run([sys.executable, script], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        logs = glob.glob(os.path.join(folder, "*.log"))
        if len(logs) != 1:
            raise SystemExit(f"{script}: expected one trace log, found {logs}")
        with open(logs[0]) as log:
            text = log.read()
    with open(os.path.join(ROOT, script[:-3] + ".log"), "w") as out:
        out.write(text)
    print(f"{script[:-3]}.log: {len(text.splitlines())} lines")


def main():
    names = sys.argv[1:] or sorted(
        os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "tests/data/traces/*.py")))
    for name in names:
        record(f"tests/data/traces/{name}.py")


if __name__ == "__main__":
    main()
