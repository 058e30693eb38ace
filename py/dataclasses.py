"""dataclasses as model configs use them: a small stand-in for CPython's module.

CPython's `dataclasses` imports `inspect`, which needs native modules this VM does not
have; configs (`@dataclass class GPTConfig: n_layer: int = 12`) only need the generated
`__init__`, `__repr__` and `__eq__`, `field(default=..., default_factory=...)`, `fields`,
`asdict` and `replace`, which are written here in plain Python.
"""

__all__ = ["dataclass", "field", "Field", "fields", "asdict", "replace", "is_dataclass",
           "MISSING", "FrozenInstanceError"]


class _Missing:
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


class FrozenInstanceError(AttributeError):
    pass


class Field:
    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "compare")

    def __init__(self, default, default_factory, init, repr, compare):
        self.name = None
        self.type = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare

    def __repr__(self):
        return f"Field(name={self.name!r}, default={self.default!r})"


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, compare=True,
          hash=None, metadata=None, kw_only=False):
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, compare)


# Where a class keeps its own annotations: eagerly, or (PEP 649) as a function, which
# RustPython stores as `__annotate__` or `__annotate_func__` depending on how the class
# body was compiled.
_ANNOTATION_KEYS = ("__annotations__", "__annotate__", "__annotate_func__")


def _own_annotations(cls):
    if any(key in cls.__dict__ for key in _ANNOTATION_KEYS):
        return dict(cls.__annotations__)
    return {}


def _collect_fields(cls):
    collected = {}
    for base in reversed(cls.__mro__[1:]):
        collected.update(getattr(base, "__dataclass_fields__", {}))
    for name, annotation in _own_annotations(cls).items():
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else Field(value, MISSING, True, True, True)
        spec.name = name
        spec.type = annotation
        if isinstance(value, Field):
            if spec.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        collected[name] = spec
    return collected


def _make_init(specs):
    def __init__(self, *args, **kwargs):
        names = [spec.name for spec in specs]
        if len(args) > len(names):
            raise TypeError(f"__init__() takes {len(names) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"__init__() got an unexpected keyword argument '{name}'")
            if name in values:
                raise TypeError(f"__init__() got multiple values for argument '{name}'")
            values[name] = value
        for spec in specs:
            if spec.name in values:
                value = values[spec.name]
            elif spec.default is not MISSING:
                value = spec.default
            elif spec.default_factory is not MISSING:
                value = spec.default_factory()
            else:
                raise TypeError(f"__init__() missing required argument: '{spec.name}'")
            object.__setattr__(self, spec.name, value)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    return __init__


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field '{name}'")


def _process(cls, init, repr, eq, frozen):
    specs = _collect_fields(cls)
    cls.__dataclass_fields__ = specs
    in_init = [spec for spec in specs.values() if spec.init]
    if init:
        cls.__init__ = _make_init(in_init)
    if repr:
        def __repr__(self):
            shown = ", ".join(f"{spec.name}={getattr(self, spec.name)!r}"
                              for spec in specs.values() if spec.repr)
            return f"{type(self).__qualname__}({shown})"
        cls.__repr__ = __repr__
    if eq:
        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, s.name) == getattr(other, s.name)
                       for s in specs.values() if s.compare)
        cls.__eq__ = __eq__
        if not frozen:
            cls.__hash__ = None
    if frozen:
        cls.__setattr__ = _frozen_setattr
    cls.__match_args__ = tuple(spec.name for spec in in_init)
    return cls


def dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False, unsafe_hash=False,
              frozen=False, match_args=True, kw_only=False, slots=False):
    def wrap(cls):
        return _process(cls, init, repr, eq, frozen)

    return wrap if cls is None else wrap(cls)


def is_dataclass(obj):
    return hasattr(obj if isinstance(obj, type) else type(obj), "__dataclass_fields__")


def fields(obj):
    return tuple(getattr(obj, "__dataclass_fields__").values())


def asdict(obj):
    return {spec.name: getattr(obj, spec.name) for spec in fields(obj)}


def replace(obj, /, **changes):
    values = {spec.name: getattr(obj, spec.name) for spec in fields(obj) if spec.init}
    values.update(changes)
    return type(obj)(**values)
