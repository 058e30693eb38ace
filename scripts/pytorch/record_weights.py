"""Weights, inputs and outputs of real PyTorch, for `tailor run --weights/--inputs/--outputs`.

Run with PyTorch 2.15 (CPU is enough) and the `safetensors` package, from the repository root:

    /tmp/torch/bin/pip install safetensors
    /tmp/torch/bin/python scripts/pytorch/record_weights.py

For each model below it seeds torch, constructs the file's entry with its default arguments
(as Tailor does), gives BatchNorm running statistics from a few training-mode batches, puts
the model in eval mode and writes three files to tests/data/weights/:

    NAME.weights.safetensors   safetensors.torch.save_file(model.state_dict(), ...)
    NAME.inputs.safetensors    forward's arguments by name (float32, or int64 token ids)
    NAME.outputs.safetensors   the returned pytree's leaves as out0, out1, ...

`tests/it/weights.rs` loads the first two into Tailor, runs the call, and expects the third
within its tolerance; it does not need PyTorch.
"""

import importlib.util
import pathlib

import torch
from safetensors.torch import save_file
from torch.utils._pytree import tree_leaves

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "weights"

# (name, model file, entry class, forward's arguments: name -> shape)
MODELS = [
    ("simplenet", "models/simplenet.py", "SimpleNet", {"x": (8, 64)}),
    # Strided convs with BatchNorm and SiLU, max pooling, a 1x1 head.
    ("yolo_stack", "models/yolo_stack.py", "TinyDetector", {"image": (2, 3, 32, 32)}),
    # Multi-head self-attention (softmax of scaled scores), LayerNorm and a GELU MLP.
    ("bert_block", "models/bert_block.py", "EncoderBlock", {"x": (2, 8, 64)}),
    # Token ids (int64 below the vocabulary size of 50) through embeddings; an int64 output.
    ("tagger", "models/tagger.py", "Tagger", {"ids": (2, 12, "int64", 50)}),
]


def load_class(path, entry):
    spec = importlib.util.spec_from_file_location(pathlib.Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, entry)


def settle_batch_norms(model, shapes):
    """Gives every BatchNorm running statistics that are not the defaults (0 and 1), and
    random affine parameters, so eval mode's normalisation is tested for real."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    with torch.no_grad():
        for norm in norms:
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
        model.train()
        for _ in range(3):
            model(*[torch.randn(shape) * 2 + 0.5 for shape in shapes.values()])


def _input(shape):
    """A float32 input of `shape`, or for `(*sizes, "int64", vocab)` token ids below vocab."""
    if "int64" in shape:
        *sizes, _, vocab = shape
        return torch.randint(0, vocab, sizes)
    return torch.randn(shape)


def record(name, path, entry, shapes):
    torch.manual_seed(0)
    model = load_class(path, entry)()
    settle_batch_norms(model, shapes)
    model.eval()
    inputs = {arg: _input(shape) for arg, shape in shapes.items()}
    with torch.no_grad():
        returned = model(**inputs)
    outputs = {f"out{i}": leaf.contiguous() for i, leaf in enumerate(tree_leaves(returned))}
    state = {key: value.contiguous() for key, value in model.state_dict().items()}
    save_file(state, OUT / f"{name}.weights.safetensors")
    save_file(inputs, OUT / f"{name}.inputs.safetensors")
    save_file(outputs, OUT / f"{name}.outputs.safetensors")
    sizes = {k: tuple(v.shape) for k, v in outputs.items()}
    print(f"{name}: {len(state)} state tensors, outputs {sizes}")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    for model in MODELS:
        record(*model)


if __name__ == "__main__":
    main()
