"""`torch.amp`: mixed precision as model files name it. Tailor computes in float32 and runs
on no CUDA device, where PyTorch's `autocast('cuda')` disables itself; so an autocast for
CUDA, or one disabled, changes nothing, as a context or as a decorator. Autocast on the CPU
computes products in bfloat16, which Tailor does not have."""

import _tailor


class autocast:
    """`with autocast('cuda'):` and `@autocast('cuda', enabled=False)`."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if enabled and device_type == "cpu":
            _tailor.unsupported("autocast on the CPU",
                                "it computes products in bfloat16; Tailor computes in float32")
        self.device_type = device_type
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, function):
        return function


class GradScaler:
    """Training's loss scaling: nothing to scale without float16 gradients."""

    def __init__(self, *args, **kwargs):
        pass

    def scale(self, outputs):
        return outputs

    def is_enabled(self):
        return False


def is_autocast_available(device_type):
    return device_type == "cpu"
