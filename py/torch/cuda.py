"""torch.cuda: capture runs on no device, so no GPU is ever available."""


def is_available():
    return False


def device_count():
    return 0
