"""What real torch.compile logs for a script run with TORCH_LOGS=recompiles.

Run with PyTorch 2.15 (CPU is enough), from the repository root:

    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        demos/material_demo.py > tests/data/pytorch/material_demo.eager.txt
    /tmp/torch/bin/python scripts/pytorch/check_script.py inductor \
        demos/material_demo.py > tests/data/pytorch/material_demo.inductor.txt

A third argument names other TORCH_LOGS artifacts (graph breaks):

    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/graph_breaks.py recompiles,graph_breaks \
        > tests/data/pytorch/graph_breaks.eager.txt
    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/rnn.py recompiles,graph_breaks > tests/data/pytorch/rnn.eager.txt

    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/nested_breaks.py recompiles,graph_breaks \
        > tests/data/pytorch/nested_breaks.eager.txt

    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/pool_lengths.py > tests/data/pytorch/pool_lengths.eager.txt
    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/backends.py > tests/data/pytorch/backends.eager.txt
    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/size_branches.py > tests/data/pytorch/size_branches.eager.txt
    /tmp/torch/bin/python scripts/pytorch/check_script.py eager \
        tests/data/scripts/attention_node.py recompiles,guards \
        > tests/data/pytorch/attention_node.eager.txt

(backends.py's explicit `backend=` arguments win over the one this script adds.)

(nested_breaks.py's record shows a break inside a helper and inside a submodule's forward:
the compiled frame's graph ends at the call, the called function is a frame of its own
with the next compile id, its break logged again as a duplicate, and the outer frame
resumes in torch_dynamo_resume_in_forward_at_<line of the call>.)

(rnn.py's record is where PyTorch's reason for breaking at an nn.LSTM under the default
`allow_rnn=False` is kept: "Dynamo does not support RNN, GRU, or LSTM", naming the module
`L['self']._modules['lstm']`.)

A script whose output is all that matters (how tensors print) is recorded by running it:

    /tmp/torch/bin/python tests/data/scripts/marked_ranges.py > tests/data/pytorch/marked_ranges.txt

    /tmp/torch/bin/python tests/data/scripts/propagated.py > tests/data/pytorch/propagated.txt

(propagated.py prints `_dynamo_propagated_dynamic_indices`, the dims AOTAutograd stamps
dynamic on a returned tensor and on an argument saved for backward; the material's demo
reuses one `x` for both wrappers in its last loop, so under inductor the static wrapper's
compile at batch 3 makes the batch a symbol and the demo compiles 6 times, not 8.)

    /tmp/torch/bin/python tests/data/scripts/printing.py > tests/data/pytorch/printing.txt
    /tmp/torch/bin/python tests/data/scripts/activations.py > tests/data/pytorch/activations.txt
    /tmp/torch/bin/python tests/data/scripts/rnn.py > tests/data/pytorch/rnn.txt
    /tmp/torch/bin/python tests/data/scripts/nested_breaks.py > tests/data/pytorch/nested_breaks.txt

The script runs verbatim, except that every torch.compile call gets `backend=BACKEND`
(the material's demo uses the default, inductor). It prints the `[__recompiles]` log lines
(and the WARNINGs) without logging's header, with the script's directory removed from
paths and object ids written `0x…`, then what the script printed. `tests/it/script.rs`
expects Tailor's `tailor script --logs recompiles` to give the inductor record for the demo as
written and the eager record for the demo with `backend="eager"` (the records differ because
of what AOTAutograd stamps on tensors, not because of Inductor's kernels).
"""

import os
import re
import subprocess
import sys

HEADER = re.compile(r"^[VIWE]\d{4} [\d:.]+ \d+ [^\]]+\] ")
IDS = re.compile(r"id=0x[0-9a-f]+")
RUNNER = """
import functools, runpy, sys, torch
torch.compile = functools.partial(torch.compile, backend=sys.argv[1])
runpy.run_path(sys.argv[2], run_name="__main__")
"""


def main():
    backend, path = sys.argv[1], sys.argv[2]
    logs = sys.argv[3] if len(sys.argv) > 3 else "recompiles"
    env = dict(os.environ, TORCH_LOGS=logs)
    run = subprocess.run([sys.executable, "-c", RUNNER, backend, path], env=env,
                         capture_output=True, text=True, check=True)
    directory = os.path.dirname(os.path.abspath(path)) + os.sep
    for line in run.stderr.splitlines():
        print(IDS.sub("id=0x…", HEADER.sub("", line)).replace(directory, ""))
    print("---- stdout")
    for line in run.stdout.splitlines():
        # Timings differ from run to run: the lines are kept, their numbers are not.
        print(re.sub(r"\d+\.\d+", "N", line))


if __name__ == "__main__":
    main()
