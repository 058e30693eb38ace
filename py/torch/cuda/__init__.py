"""torch.cuda: capture runs on no device, so no GPU is ever available; `torch.cuda.amp` is
the older spelling of `torch.amp`."""


def is_available():
    return False


def device_count():
    return 0

from torch.cuda import amp  # noqa: E402  (torch.cuda.amp.autocast without importing it)
