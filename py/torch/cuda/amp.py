"""`torch.cuda.amp`: the older spelling of `torch.amp` for CUDA (deprecated in PyTorch)."""

from torch import amp as _amp


class autocast(_amp.autocast):
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype, enabled, cache_enabled)


GradScaler = _amp.GradScaler
