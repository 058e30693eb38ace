"""`math` as model files use it: the float functions are native (`_math`, computed as
CPython's `math` computes them); the integer and sequence functions are here, with
CPython's semantics for ints."""

import _math
from _math import (acos, asin, atan, atan2, copysign, cos, cosh, e, exp, expm1, fabs,
                   fmod, hypot, inf, isfinite, isinf, isnan, log, log10, log1p, log2,
                   nan, pi, pow, sin, sinh, sqrt, tan, tanh, tau)


def _rounding(name, native):
    """`math.ceil`/`floor`/`trunc` as CPython's: a number that is not a float rounds by its
    own `__ceil__`/`__floor__`/`__trunc__` (an int is itself; a size divided by a number,
    `torch.SymInt / 2`, is a size again), a float natively."""

    def rounded(x):
        method = getattr(type(x), name, None)
        if method is not None and type(x) is not float:
            return method(x)
        return native(x)

    rounded.__name__ = native.__name__
    return rounded


ceil = _rounding("__ceil__", _math.ceil)
floor = _rounding("__floor__", _math.floor)
trunc = _rounding("__trunc__", _math.trunc)


def degrees(x):
    return x * (180.0 / pi)


def radians(x):
    return x * (pi / 180.0)


def gcd(*integers):
    result = 0
    for n in integers:
        a, b = abs(result), abs(n)
        while b:
            a, b = b, a % b
        result = a
    return result


def lcm(*integers):
    result = 1
    for n in integers:
        if n == 0:
            return 0
        result = abs(result * n) // gcd(result, n)
    return result


def prod(iterable, *, start=1):
    result = start
    for value in iterable:
        result = result * value
    return result


def fsum(iterable):
    # Neumaier's compensated sum: exact to the last bit for what tables sum.
    total, compensation = 0.0, 0.0
    for value in iterable:
        value = float(value)
        t = total + value
        if abs(total) >= abs(value):
            compensation += (total - t) + value
        else:
            compensation += (value - t) + total
        total = t
    return total + compensation


def factorial(n):
    if not isinstance(n, int) or n < 0:
        raise ValueError("factorial() not defined for negative values")
    return prod(range(2, n + 1))


def comb(n, k):
    if k < 0 or k > n:
        return 0
    k = min(k, n - k)
    result = 1
    for i in range(1, k + 1):
        result = result * (n - k + i) // i
    return result


def isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    if a == b:
        return True
    if isinf(a) or isinf(b):
        return False
    diff = abs(b - a)
    return diff <= abs(rel_tol * b) or diff <= abs(rel_tol * a) or diff <= abs_tol


def erf(x):
    # Abramowitz and Stegun 7.1.26 is 1.5e-7 off; a series and a continued fraction are
    # exact to the double: the series below 2.5, the complement's fraction above.
    x = float(x)
    if isnan(x):
        return x
    sign = -1.0 if x < 0 else 1.0
    x = abs(x)
    if x < 2.5:
        term, total, n = x, x, 0
        while abs(term) > 1e-17 * abs(total):
            n += 1
            term = term * -x * x / n
            total += term / (2 * n + 1)
        return sign * 2.0 / sqrt(pi) * total
    fraction = 0.0
    for n in range(60, 0, -1):
        fraction = n / 2.0 / (x + fraction)
    return sign * (1.0 - exp(-x * x) / sqrt(pi) / (x + fraction))


def erfc(x):
    return 1.0 - erf(x)
