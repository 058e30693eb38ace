"""What real torch.compile does with the corpus of published model files.

Run with PyTorch 2.15 (CPU is enough) from the repository root, after
`python3 scripts/corpus/fetch.py`; the files import einops and yaml, which the venv needs
too:

    /tmp/torch/bin/pip install einops==0.8.2 pyyaml
    /tmp/torch/bin/python scripts/pytorch/record_corpus.py [ID ...]

It writes tests/data/pytorch/corpus.txt. Arguments, when given, are entry ids: only those
are run, and their lines replace the old ones (the lines of entries the manifest no longer
has are dropped). For each entry of tests/corpus/manifest.json and each of its `dynamic`
modes, a Python process of its own builds the source as tests/it/corpus.rs does (the files
in order, the manifest's edits applied, the build lines appended), imports it as a module,
constructs `Entry()` (seeded, in eval mode), compiles it with a counting backend
(`torch._dynamo.testing.CompileCounter`, after `torch._dynamo.reset()`, as
pytorch-semantics.md and check_files.py do) and makes the calls under `torch.no_grad()`:
float inputs from `torch.randn`, int64 ones (token ids) from `torch.randint(0, 16)`.
The record has one line per entry and mode:

    ID dynamic=MODE: ACTIONS | graphs=N | outputs=SHAPES

ACTIONS is C (the call compiled at least one graph) or H (it compiled none) per call;
N the graphs the backend saw over all the calls (every graph of a graph break counts);
SHAPES, as JSON, per call the shapes of the tensors the call returned (pytree leaves, in
order). A mode where PyTorch itself fails is reported on stderr and exits non-zero: the
entry's build lines are wrong.
"""

import contextlib
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import warnings

import torch
import torch._dynamo as dynamo
from torch._dynamo.testing import CompileCounter
from torch.utils._pytree import tree_leaves

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
RECORD = ROOT / "tests" / "data" / "pytorch" / "corpus.txt"
MODES = {"true": True, "false": False, "none": None}
DTYPES = {"": torch.float32, "int64": torch.int64, "bool": torch.bool}


def source_of(entry):
    """The entry's files in order with its edits applied, then its build lines."""
    texts = []
    for path in entry["files"]:
        text = (CORPUS / "files" / entry["archive"] / path).read_text()
        for edit in entry.get("edits", []):
            if edit["file"] != path:
                continue
            count = text.count(edit["old"])
            if count != 1:
                raise SystemExit(f"{entry['id']}: edit {edit['old']!r} matches {count} times")
            text = text.replace(edit["old"], edit["new"])
        texts.append(text if text.endswith("\n") else text + "\n")
    return "\n".join(texts) + "\n\n" + "\n".join(entry["build"]) + "\n"


def parse_call(call):
    """`x=2,3,32,32;ids=2,16:int64;flag=True` -> {name: (shape, dtype) or a Python value}."""
    args = {}
    for part in call.split(";"):
        name, spec = part.split("=", 1)
        if spec in ("True", "False"):
            args[name.strip()] = spec == "True"
            continue
        if spec.startswith("int("):
            args[name.strip()] = int(spec[4:-1])
            continue
        dims, _, dtype = spec.partition(":")
        shape = tuple(int(d) for d in dims.split(",")) if dims else ()
        args[name.strip()] = (shape, DTYPES[dtype])
    return args


def inputs_of(call, seed):
    generator = torch.Generator().manual_seed(seed)
    values = {}
    for name, arg in parse_call(call).items():
        if not isinstance(arg, tuple):
            values[name] = arg
            continue
        shape, dtype = arg
        if dtype is torch.float32:
            values[name] = torch.randn(shape, generator=generator)
        elif dtype is torch.int64:
            values[name] = torch.randint(0, 16, shape, generator=generator)
        else:
            values[name] = torch.rand(shape, generator=generator) > 0.5
    return values


def load(entry, directory):
    path = pathlib.Path(directory) / f"corpus_{entry['id'].replace('-', '_')}.py"
    path.write_text(source_of(entry))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    # What a file prints or warns while it is built is not part of the record.
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


def record(entry, module, mode):
    dynamo.reset()
    torch.manual_seed(0)
    with contextlib.redirect_stdout(sys.stderr):
        model = module.Entry().eval()
    counter = CompileCounter()
    compiled = torch.compile(model, backend=counter, dynamic=MODES[mode])
    actions, outputs = [], []
    for i, call in enumerate(entry["calls"]):
        before = counter.frame_count
        with torch.no_grad(), contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = compiled(**inputs_of(call, i + 1))
        actions.append("C" if counter.frame_count > before else "H")
        outputs.append([list(t.shape) for t in tree_leaves(out) if isinstance(t, torch.Tensor)])
    shapes = json.dumps(outputs, separators=(",", ":"))
    return f"{' '.join(actions)} | graphs={counter.frame_count} | outputs={shapes}"


def record_one(entry_id, mode):
    """One entry under one mode, in this (fresh) process: its record line, on stdout."""
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    entry = next(e for e in manifest["entries"] if e["id"] == entry_id)
    with tempfile.TemporaryDirectory() as directory:
        sys.path.insert(0, directory)
        module = load(entry, directory)
        print(record(entry, module, mode))


def main():
    if sys.argv[1:2] == ["--one"]:
        record_one(sys.argv[2], sys.argv[3])
        return
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    wanted = set(sys.argv[1:])
    lines = {}
    if wanted and RECORD.exists():
        for line in RECORD.read_text().splitlines():
            lines[line.split(": ", 1)[0]] = line
    failed = False
    for entry in manifest["entries"]:
        if wanted and entry["id"] not in wanted:
            continue
        for mode in entry["dynamic"]:
            key = f"{entry['id']} dynamic={MODES[mode]}"
            # A process of its own per entry and mode, as a learner's run is: state that
            # outlives torch._dynamo.reset() (einops' shape caches, for one) would otherwise
            # carry from one entry into the next.
            run = subprocess.run([sys.executable, __file__, "--one", entry["id"], mode],
                                 capture_output=True, text=True)
            out = run.stdout.strip().splitlines()
            if run.returncode != 0 or not out:
                error = (run.stderr.strip().splitlines() or ["no output"])[-1]
                print(f"{key}: PyTorch failed: {error}", file=sys.stderr, flush=True)
                failed = True
                continue
            lines[key] = f"{key}: {out[-1]}"
            print(lines[key], file=sys.stderr, flush=True)
    order = [f"{e['id']} dynamic={MODES[m]}" for e in manifest["entries"] for m in e["dynamic"]]
    RECORD.write_text("".join(lines[key] + "\n" for key in order if key in lines))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
