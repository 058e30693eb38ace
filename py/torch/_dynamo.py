"""torch._dynamo: the marks are given in Tailor's controls, not in the model."""

import _tailor


def _marks_elsewhere(name):
    _tailor.unsupported(
        "torch._dynamo." + name,
        "give marks in the controls or with --mark-dynamic/--mark-static",
    )


def mark_dynamic(tensor, index, min=None, max=None):
    _marks_elsewhere("mark_dynamic")


def maybe_mark_dynamic(tensor, index):
    _marks_elsewhere("maybe_mark_dynamic")


def mark_static(tensor, index=None):
    _marks_elsewhere("mark_static")
