"""Names of PyTorch's API that Tailor's subset lacks: the error a use of one raises, and
the module-level `__getattr__` that raises it. A leaf of the package: every module of
`torch` imports it, and it imports none of them."""


class UnsupportedAttribute(AttributeError):
    """A name of PyTorch's API that Tailor's subset lacks.

    An AttributeError, so `hasattr(F, "scaled_dot_product_attention")` is False as on an
    older PyTorch; the front end reports a use of it as an unsupported construct.
    """

    def __init__(self, path, note=None):
        super().__init__(f"{path} is not in Tailor's PyTorch subset" if note is None
                         else f"{path} is not supported: {note}")
        self.path = path
        # Why, where the name is not PyTorch's (`numpy.random`); None for PyTorch's names.
        self.note = note


def _missing_names(owner):
    """A module-level `__getattr__` for `owner` (PEP 562): a missing public name is an
    UnsupportedAttribute naming `owner.name`."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module '{owner}' has no attribute '{name}'")
        raise UnsupportedAttribute(f"{owner}.{name}")

    return __getattr__
