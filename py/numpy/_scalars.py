"""numpy's dtypes and scalar types for Tailor's numpy: `np.float64(x)`, `np.int64(n)`,
`np.dtype('float32')`.

A scalar is a Python number of a subclass that remembers its dtype: `float64` and `float32`
subclass `float`, `int64` and `int32` subclass `int` (as `np.float64` does in numpy; its
other scalars do not, a difference nothing but `isinstance` sees). Arithmetic among scalars
and Python numbers keeps the scalar's type, as numpy's does; with a tensor it gives the
tensor's result (the scalar is a Python number to torch). A `float32` holds its value
rounded to float32 and prints its shortest float32 digits, as numpy's does.
"""

import math

# The kinds in promotion order: bool, integer, floating.
_KIND_ORDER = {"b": 0, "i": 1, "f": 2}


class dtype:
    """An array's element type: `dtype('float64')`; equal to its name and its scalar type
    (`a.dtype == np.float32`, `a.dtype == 'float32'`)."""

    _by_name = {}

    def __new__(cls, name):
        if isinstance(name, dtype):
            return name
        if not isinstance(name, str):
            # A scalar type (`np.float32`, `float`).
            name = getattr(name, "_dtype_name", None) or {float: "float64", int: "int64",
                                                           bool: "bool"}.get(name, name)
        name = {"float": "float64", "int": "int64", "double": "float64", "single": "float32",
                "f8": "float64", "f4": "float32", "i8": "int64", "i4": "int32"}.get(name, name)
        found = cls._by_name.get(name)
        if found is None:
            raise TypeError(f"data type {name!r} not understood (Tailor's numpy has float64, "
                            "float32, int64, int32 and bool)")
        return found

    @classmethod
    def _make(cls, name, kind, torch_name):
        made = object.__new__(cls)
        made.name, made.kind, made.torch_name = name, kind, torch_name
        cls._by_name[name] = made
        return made

    @property
    def type(self):
        return _SCALAR_TYPES[self.name]

    def __eq__(self, other):
        try:
            return dtype(other) is self
        except TypeError:
            return False

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"dtype('{self.name}')"

    def __str__(self):
        return self.name


FLOAT64 = dtype._make("float64", "f", "float64")
FLOAT32 = dtype._make("float32", "f", "float32")
INT64 = dtype._make("int64", "i", "int64")
INT32 = dtype._make("int32", "i", "int32")
BOOL = dtype._make("bool", "b", "bool")


def promote(a, b):
    """The dtype of an operation between arrays (or numpy scalars) of dtypes `a` and `b`."""
    if a is b:
        return a
    ka, kb = _KIND_ORDER[a.kind], _KIND_ORDER[b.kind]
    if ka != kb:
        wide = a if ka > kb else b
        # An integer with float32 needs float64 to hold it, as numpy promotes.
        return FLOAT64 if wide is FLOAT32 and min(ka, kb) == 1 else wide
    return FLOAT64 if a.kind == "f" else INT64


def of_python(value):
    """The dtype numpy gives a Python (or numpy) number."""
    if isinstance(value, generic):
        return value.dtype
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    return FLOAT64


def shortest_float32(value):
    """The shortest decimal that reads back as the same float32 as `value`."""
    if not math.isfinite(value):
        return repr(value)
    target = round_float32(value)
    for digits in range(1, 10):
        text = "%.*g" % (digits, target)
        if round_float32(float(text)) == target:
            return repr(float(text))
    return repr(target)


def round_float32(value):
    """`value` rounded to the nearest float32 (ties to even), as a Python float."""
    if value == 0 or not math.isfinite(value):
        return value
    exponent = math.floor(math.log2(abs(value)))
    # 24 significant bits; below float32's normal range the spacing stays 2**-149.
    step = 2.0 ** (max(exponent, -126) - 23)
    return round(value / step) * step


class generic:
    """The base of Tailor's numpy scalar types."""

    _dtype_name = None

    @property
    def dtype(self):
        return dtype(self._dtype_name)

    def item(self):
        return self._python()

    def astype(self, to):
        return dtype(to).type(self)


def _arithmetic(cls, python):
    """Operators of scalar type `cls` over `python` (float or int): a result among numbers is
    a numpy scalar of the promoted dtype; anything else (a tensor, an array) is answered by
    the other operand."""

    def wrap(result, other):
        if isinstance(other, generic):
            kind = promote(dtype(cls._dtype_name), other.dtype)
        elif isinstance(other, (int, float)):
            kind = dtype(cls._dtype_name)
            if isinstance(other, float) and not isinstance(other, int) and kind.kind != "f":
                kind = FLOAT64
        else:
            return NotImplemented
        if isinstance(result, float) and kind.kind != "f":
            kind = FLOAT64
        return kind.type(result)

    def binary(name):
        base = getattr(python, name)

        def method(self, other):
            if not isinstance(other, (int, float)):
                return NotImplemented
            result = base(python(self), other)
            if result is NotImplemented:
                return result
            return wrap(result, other)

        method.__name__ = name
        return method

    for name in ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
                 "__pow__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__",
                 "__rfloordiv__", "__rmod__", "__rpow__"):
        if hasattr(python, name):
            setattr(cls, name, binary(name))
    cls.__neg__ = lambda self: cls(-python(self))
    cls.__abs__ = lambda self: cls(abs(python(self)))
    cls.__pos__ = lambda self: self


class float64(generic, float):
    """numpy's double: a Python float."""

    _dtype_name = "float64"

    def _python(self):
        return float(self)

    def __repr__(self):
        return f"np.float64({float.__repr__(self)})"

    def __str__(self):
        return float.__repr__(self)


class float32(generic, float):
    """numpy's single: a Python float rounded to float32, printed with float32's digits."""

    _dtype_name = "float32"

    def __new__(cls, value=0.0):
        return float.__new__(cls, round_float32(float(value)))

    def _python(self):
        return float(self)

    def __repr__(self):
        return f"np.float32({shortest_float32(float(self))})"

    def __str__(self):
        return shortest_float32(float(self))


class int64(generic, int):
    """numpy's int64: a Python int."""

    _dtype_name = "int64"

    def __new__(cls, value=0):
        return int.__new__(cls, int(value))

    def _python(self):
        return int(self)

    def __repr__(self):
        return f"np.int64({int.__repr__(self)})"

    def __str__(self):
        return int.__repr__(self)


class int32(int64):
    """numpy's int32: a Python int (not wrapped at 2**31)."""

    _dtype_name = "int32"

    def __repr__(self):
        return f"np.int32({int.__repr__(self)})"


def bool_(value=False):
    """numpy's bool scalar: a Python bool here."""
    return bool(value)


bool_._dtype_name = "bool"

_arithmetic(float64, float)
_arithmetic(float32, float)
_arithmetic(int64, int)
_arithmetic(int32, int)

_SCALAR_TYPES = {"float64": float64, "float32": float32, "int64": int64, "int32": int32,
                 "bool": bool_}
