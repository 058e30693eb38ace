"""The symbols real torch.compile creates for a script, as TORCH_LOGS=dynamic names them.

Run with PyTorch 2.15 (CPU is enough), from the repository root:

    /tmp/torch/bin/python scripts/pytorch/check_symbols.py \
        tests/data/scripts/symbol_names.py > tests/data/pytorch/symbol_names.txt

The script runs verbatim, every torch.compile call with backend="eager" (which symbols a
compilation creates is Dynamo's decision, made before any backend runs). It prints one line
per `create_symbol` event, `[frame/compile] create_symbol NAME = HINT for SOURCE`, without
logging's header or the source location, then what the script printed. `tests/it/script.rs`
expects `tailor script --logs dynamic --symbol-names pytorch` to create the same symbols
under the same names.
"""

import os
import re
import subprocess
import sys

CREATE = re.compile(r"(\[\d+/\d+\]) (create_symbol \w+ = -?\d+ for \S+)")
RUNNER = """
import functools, runpy, sys, torch
torch.compile = functools.partial(torch.compile, backend="eager")
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def main():
    env = dict(os.environ, TORCH_LOGS="dynamic")
    run = subprocess.run([sys.executable, "-c", RUNNER, sys.argv[1]], env=env,
                         capture_output=True, text=True, check=True)
    for line in run.stderr.splitlines():
        found = CREATE.search(line)
        if found:
            print(" ".join(found.groups()))
    print("---- stdout")
    print(run.stdout, end="")


if __name__ == "__main__":
    main()
