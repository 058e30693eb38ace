"""torch._logging.set_logs: the programmatic TORCH_LOGS, in a script."""

import _tailor


def set_logs(*, recompiles=False, guards=False, dynamic=None, graph_breaks=False, **others):
    """Turns the named artifacts on and every other off, as PyTorch's set_logs does
    (`dynamic` takes a logging level: any level turns it on)."""
    _tailor.set_logs(bool(recompiles), bool(guards), dynamic is not None and dynamic is not False,
                     bool(graph_breaks))
