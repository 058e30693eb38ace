"""torch.distributed as a CPU PyTorch without a process group answers it: available, not
initialised (so a model's `if dist.is_initialized():` takes its single-process way), and
the calls that need a group raise PyTorch's error."""

from torch._missing import _missing_names


def is_available():
    return True


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


def _no_group(name):
    def needs_a_group(*args, **kwargs):
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")

    needs_a_group.__name__ = name
    return needs_a_group


for _name in ("get_rank", "get_world_size", "barrier", "all_reduce", "all_gather",
              "broadcast", "reduce", "gather", "scatter", "get_backend"):
    globals()[_name] = _no_group(_name)

__getattr__ = _missing_names("torch.distributed")
