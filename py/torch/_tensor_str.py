"""How a script's tensor prints: PyTorch's `torch/_tensor_str.py` rules at its default print
options (precision 4, linewidth 80, summarised above 1000 elements with 3 edge items).

float32, int64, bool and complex64 print without a dtype suffix (the defaults for floats,
ints, bools and complex numbers), int32 with `dtype=torch.int32`; ints as whole numbers and
bools as True/False; a complex number as its real and imaginary parts, each part in the
form its own formatter picks (`1.+0.j`, `0.5403+0.8415j`). Written after PyTorch's `_Formatter`,
`_vector_str`, `_tensor_str_with_formatter` and `get_summarized_data`.
"""

import math

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


def _nest(flat, shape, summarise):
    """The values nested by `shape`; when `summarise`, every dim longer than 2 * EDGEITEMS
    keeps EDGEITEMS at each end and `None` marks the elided middle."""
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    rows = list(range(shape[0]))
    if summarise and shape[0] > 2 * EDGEITEMS:
        rows = rows[:EDGEITEMS] + [None] + rows[-EDGEITEMS:]
    return [None if r is None else _nest(flat[r * step:(r + 1) * step], shape[1:], summarise)
            for r in rows]


def _leaves(nested):
    if isinstance(nested, list):
        for item in nested:
            yield from _leaves(item)
    elif nested is not None:
        yield nested


class _Formatter:
    def __init__(self, values, dtype="float32"):
        self.dtype = dtype
        # A float tensor's form and width come from its nonzero finite values only: zeros,
        # infinities and NaNs are printed in that width (`0.` beside `-inf`).
        shown = [v for v in values if math.isfinite(v) and v != 0]
        nonzero = [abs(v) for v in shown]
        # `is_integer`, not `v == math.ceil(v)`: RustPython's `math.ceil` overflows past
        # 2^63 (3.4e38, finfo.max, is a whole number).
        self.int_mode = all(float(v).is_integer() for v in nonzero)
        self.sci_mode = False
        if nonzero:
            largest, smallest = max(nonzero), min(nonzero)
            self.sci_mode = largest / smallest > 1000 or largest > 1e8
            if not self.int_mode:
                self.sci_mode = self.sci_mode or smallest < 1e-4
        if dtype in ("int64", "int32", "bool"):
            shown = values
        self.width = max((len(self._plain(v)) for v in shown), default=1)

    def _plain(self, value):
        if self.dtype in ("int64", "int32"):
            return str(int(value))
        if self.dtype == "bool":
            return "True" if value else "False"
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        if self.sci_mode:
            return f"{value:.{PRECISION}e}"
        if self.int_mode:
            return f"{value:.0f}."
        return f"{value:.{PRECISION}f}"

    def format(self, value):
        text = self._plain(value)
        return " " * (self.width - len(text)) + text


class _PairFormatter:
    """Complex values, (real, imaginary) pairs: each part by its own formatter, PyTorch's
    `_val_formatter` with two formatters."""

    def __init__(self, pairs):
        self.real = _Formatter([re for re, _ in pairs])
        self.imag = _Formatter([im for _, im in pairs])
        self.width = self.real.width + self.imag.width + 1

    def format(self, pair):
        real = self.real.format(pair[0])
        imag = (self.imag.format(pair[1]) + "j").lstrip()
        return real + (imag if imag[0] in "+-" else "+" + imag)


def _vector(items, indent, formatter):
    element = formatter.width + 2
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / element)))
    texts = [" ..." if v is None else formatter.format(v) for v in items]
    lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(nested, dims, indent, formatter):
    if dims == 1:
        return _vector(nested, indent, formatter)
    parts = ["..." if item is None else _nested(item, dims - 1, indent + 1, formatter)
             for item in nested]
    separator = "," + "\n" * (dims - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def tensor_str(values, shape, dtype="float32"):
    """`tensor(...)` for a tensor of `shape` and `dtype` (its name) whose row-major values
    are `values` ((real, imaginary) pairs for complex64)."""
    prefix = "tensor("
    suffix = ", dtype=torch.int32)" if dtype == "int32" else ")"
    nested = _nest(values, list(shape), len(values) > THRESHOLD)
    leaves = list(_leaves(nested))
    formatter = _PairFormatter(leaves) if dtype == "complex64" else _Formatter(leaves, dtype)
    if not shape:
        return prefix + formatter.format(values[0]) + suffix
    if 0 in shape:
        empty = "[], size=(" + ", ".join(map(str, shape)) + ")" if len(shape) > 1 else "[]"
        return prefix + empty + suffix
    return prefix + _nested(nested, len(shape), len(prefix), formatter) + suffix
