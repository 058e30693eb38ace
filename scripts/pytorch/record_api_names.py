"""Writes py/torch/_api_names.py: the public names of the PyTorch modules Tailor stands in
for, as PyTorch 2.15 has them. A name PyTorch has and Tailor lacks is then a stand-in that
fails where it is *used* (called, instantiated, subclassed and instantiated), not where it is
named: a default argument `norm_layer=nn.BatchNorm3d` or a table of layers at module level
loads, and `hasattr(F, "grid_sample")` is True as in PyTorch. A name PyTorch lacks stays an
AttributeError.

Usage: /tmp/torch/bin/python scripts/pytorch/record_api_names.py > py/torch/_api_names.py
"""

import importlib
import textwrap

import torch

OWNERS = [
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations",
]


def public_names(owner):
    module = importlib.import_module(owner)
    return sorted(name for name in dir(module) if not name.startswith("_"))


print('"""The public names of the modules Tailor stands in for, as PyTorch %s has them.'
      % torch.__version__.split("+")[0])
print()
print("Written by scripts/pytorch/record_api_names.py; do not edit. torch._missing reads it.")
print('"""')
print()
print("NAMES = {")
for owner in OWNERS:
    text = " ".join(public_names(owner))
    lines = textwrap.wrap(text, 88, break_on_hyphens=False)
    print(f'    "{owner}": (')
    for line in lines:
        print(f'        "{line} "')
    print("    ),")
print("}")
