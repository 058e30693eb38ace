"""What real torch.compile does with the published model files of tests/data/models/.

Run with PyTorch 2.15 (CPU is enough), from the repository root:

    python3 -m venv /tmp/torch && /tmp/torch/bin/pip install torch==2.15.0 numpy
    /tmp/torch/bin/python scripts/pytorch/check_files.py > tests/data/pytorch/files.txt

For each file, each `dynamic` mode and a sequence of input shapes, it prints whether each
call compiled (C) or hit the cache (H), counted by a counting backend with
`torch._dynamo.reset()` between scenarios, as pytorch-semantics.md describes.
`tests/it/files.rs` expects the same actions from Tailor. Driver-only imports the venv
lacks (torchvision) are stubbed, as Tailor stubs them.
"""

import contextlib
import importlib.util
import inspect
import pathlib
import sys
import types

import torch
import torch._dynamo as dynamo
from torch._dynamo.testing import CompileCounter

MODELS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "models"

# (file, entry, input shapes, token ids below this vocabulary size or None for randn)
SCENARIOS = [
    ("mnist.py", "Net", [(2, 1, 28, 28), (3, 1, 28, 28), (5, 1, 28, 28)], None),
    ("resnet18_torchvision.py", "ResNet18", [(1, 3, 64, 64), (2, 3, 64, 64)], None),
    ("nanogpt.py", "NanoGPT", [(2, 16), (2, 24), (3, 24)], 256),
    ("mobilenetv2.py", "MobileNetV2Cifar", [(2, 3, 32, 32), (3, 3, 32, 32), (5, 3, 32, 32)], None),
    ("shufflenetv2.py", "ShuffleNetV2Cifar", [(2, 3, 32, 32), (3, 3, 32, 32), (5, 3, 32, 32)], None),
    ("densenet.py", "DenseNetCifar", [(2, 3, 32, 32), (3, 3, 32, 32), (5, 3, 32, 32)], None),
    ("vgg.py", "VGG11", [(2, 3, 32, 32), (3, 3, 32, 32), (5, 3, 32, 32)], None),
    ("efficientnet.py", "EfficientNetB0Cifar", [(2, 3, 32, 32), (3, 3, 32, 32), (5, 3, 32, 32)], None),
    # VAE.reparameterize draws torch.randn_like in forward, also in eval mode.
    ("vae.py", "VAE", [(2, 1, 28, 28), (3, 1, 28, 28), (5, 1, 28, 28)], None),
    ("super_resolution.py", "SuperResolution", [(2, 1, 32, 32), (3, 1, 32, 32), (5, 1, 32, 32)], None),
    ("fast_neural_style.py", "TransformerNet", [(2, 3, 32, 32), (3, 3, 32, 32), (5, 3, 32, 32)], None),
    ("mingpt.py", "MinGPT", [(2, 16), (2, 24), (3, 24)], 256),
    # At 40×40 Up pads the upsampled map by one row and column, a symbolic amount under
    # dynamic=True (0 at 48 and 64): the pad asks nothing of it, so 40 hits. Every size is
    # above 35, where PyTorch's CPU convolution picks another backend (fake_impls.py guards
    # `64*(x.size()[2] // 2)**2 <= 20480` from _select_conv_backend), a choice of its CPU
    # kernels that Tailor does not copy.
    ("unet.py", "UNetRGB", [(2, 3, 48, 48), (3, 3, 48, 48), (2, 3, 64, 64), (2, 3, 40, 40)], None),
    ("unet.py", "UNetBilinear", [(2, 3, 48, 48), (3, 3, 48, 48), (2, 3, 64, 64), (2, 3, 40, 40)], None),
    # Nearest resizes to the finer map's size: 36 makes them 5 -> 9 and 9 -> 18.
    ("fpn.py", "FPN", [(2, 3, 32, 32), (3, 3, 32, 32), (2, 3, 36, 36), (2, 3, 40, 40)], None),
]


def stub_absent_modules():
    for name in ["torchvision", "torchvision.datasets", "torchvision.transforms", "torchvision.utils"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["torchvision"].datasets = sys.modules["torchvision.datasets"]
    sys.modules["torchvision"].transforms = sys.modules["torchvision.transforms"]
    sys.modules["torchvision"].utils = sys.modules["torchvision.utils"]
    # vae.py's `from torchvision.utils import save_image` (its driver saves image grids).
    sys.modules["torchvision.utils"].save_image = None


def load(file):
    spec = importlib.util.spec_from_file_location(file.removesuffix(".py"), MODELS / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    stub_absent_modules()
    torch.manual_seed(0)
    for file, entry, shapes, vocab in SCENARIOS:
        for dynamic in [True, False, None]:
            dynamo.reset()
            # What the model prints while it is built (nanoGPT's parameter count) is not
            # part of the record.
            with contextlib.redirect_stdout(sys.stderr):
                model = getattr(load(file), entry)().eval()
            name = next(iter(inspect.signature(model.forward).parameters))
            counter = CompileCounter()
            compiled = torch.compile(model, backend=counter, dynamic=dynamic)
            actions = []
            for shape in shapes:
                before = counter.frame_count
                x = torch.randn(*shape) if vocab is None else torch.randint(0, vocab, shape)
                with torch.no_grad():
                    compiled(x)
                actions.append("C" if counter.frame_count > before else "H")
            # Tailor's call grammar: token ids are int64 (`idx=2,16:int64`).
            suffix = "" if vocab is None else ":int64"
            calls = " ".join(f"{name}=" + ",".join(map(str, shape)) + suffix for shape in shapes)
            print(f"{file} {entry} dynamic={dynamic} {calls}: {' '.join(actions)}")


if __name__ == "__main__":
    main()
