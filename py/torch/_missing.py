"""Names of PyTorch's API that Tailor's subset lacks: the error a use of one raises, and
the module-level `__getattr__` that raises it. A leaf of the package: every module of
`torch` imports it, and it imports only the list of PyTorch's names (`_api_names`)."""


class UnsupportedAttribute(AttributeError):
    """A name of PyTorch's API that Tailor's subset lacks.

    An AttributeError, as PyTorch raises for a name it lacks; the front end reports a use of
    it as an unsupported construct.
    """

    def __init__(self, path, note=None):
        super().__init__(f"{path} is not in Tailor's PyTorch subset" if note is None
                         else f"{path} is not supported: {note}")
        self.path = path
        # Why, where the name is not PyTorch's (`numpy.random`); None for PyTorch's names.
        self.note = note


class _StandInMeta(type):
    """The type of a stand-in: calling it (or a subclass of it) raises the
    UnsupportedAttribute that naming it does not, and its attributes are stand-ins too
    (`torch.fft.rfft`, `nn.Transformer.generate_square_subsequent_mask`)."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{cls._tailor_path}.{name}")

    def __call__(cls, *args, **kwargs):
        raise UnsupportedAttribute(cls._tailor_path)


def _stand_in(path):
    """A stand-in for a name PyTorch has and Tailor's subset lacks."""
    return _StandInMeta(path.rsplit(".", 1)[-1], (), {"_tailor_path": path})


_pytorch_names = {}


def _has_in_pytorch(owner, name):
    if owner not in _pytorch_names:
        from torch._api_names import NAMES
        _pytorch_names[owner] = frozenset(NAMES.get(owner, "").split())
    return name in _pytorch_names[owner]


def _missing_names(owner):
    """A module-level `__getattr__` for `owner` (PEP 562). A public name PyTorch has there
    and Tailor lacks is a stand-in that raises an UnsupportedAttribute naming `owner.name`
    where it is used, so a file that only names it (a default argument, a table of layers,
    a subclass it never instantiates, `hasattr`) loads as under PyTorch; any other name is
    an UnsupportedAttribute at once (an AttributeError, as PyTorch's)."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module '{owner}' has no attribute '{name}'")
        if _has_in_pytorch(owner, name):
            return _stand_in(f"{owner}.{name}")
        raise UnsupportedAttribute(f"{owner}.{name}")

    return __getattr__
