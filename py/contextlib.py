"""contextlib as model files use it: a small stand-in for CPython's module.

CPython's `contextlib` imports `os` (for `chdir`), which this VM does not have, so a file
importing it would load a stand-in `os` it never named. Model files use
`@contextmanager` (in a `with`, or as a decorator), `nullcontext`, `suppress` and
`closing`; these are written here with CPython's semantics: the generator runs to its
`yield` on entry, resumes on a clean exit, has the exception thrown in at its `yield`
otherwise, and swallows it only where the generator does.
"""

from functools import wraps

__all__ = ["contextmanager", "nullcontext", "suppress", "closing", "ContextDecorator",
           "AbstractContextManager"]


class AbstractContextManager:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class ContextDecorator:
    """A context manager that also decorates a function: each call runs inside a fresh
    instance of it."""

    def _recreate_cm(self):
        return self

    def __call__(self, func):
        @wraps(func)
        def inner(*args, **kwds):
            with self._recreate_cm():
                return func(*args, **kwds)

        return inner


class _GeneratorContextManager(ContextDecorator, AbstractContextManager):
    """What `@contextmanager` functions return: a context over one run of the generator."""

    def __init__(self, func, args, kwds):
        self.gen = func(*args, **kwds)
        self.func, self.args, self.kwds = func, args, kwds
        self.__doc__ = getattr(func, "__doc__", None)

    def _recreate_cm(self):
        return self.__class__(self.func, self.args, self.kwds)

    def __enter__(self):
        try:
            return next(self.gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, typ, value, traceback):
        if typ is None:
            try:
                next(self.gen)
            except StopIteration:
                return False
            try:
                raise RuntimeError("generator didn't stop")
            finally:
                self.gen.close()
        if value is None:
            value = typ()
        try:
            self.gen.throw(value)
        except StopIteration as exc:
            # The generator caught the exception and returned: suppressed, unless what
            # stopped it is the exception itself.
            return exc is not value
        except RuntimeError as exc:
            # A StopIteration thrown in comes back out as the RuntimeError wrapping it.
            if exc is value or (isinstance(value, StopIteration) and exc.__cause__ is value):
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            return False
        try:
            raise RuntimeError("generator didn't stop after throw()")
        finally:
            self.gen.close()


def contextmanager(func):
    """`@contextmanager def f(...): ...; yield value; ...`: `with f(...) as value:`."""

    @wraps(func)
    def helper(*args, **kwds):
        return _GeneratorContextManager(func, args, kwds)

    return helper


class nullcontext(AbstractContextManager):
    """A context that does nothing: `with nullcontext(value) as v:` gives `value`."""

    def __init__(self, enter_result=None):
        self.enter_result = enter_result

    def __enter__(self):
        return self.enter_result

    def __exit__(self, *excinfo):
        return None


class suppress(AbstractContextManager):
    """Swallows the listed exceptions raised in its block."""

    def __init__(self, *exceptions):
        self._exceptions = exceptions

    def __enter__(self):
        return None

    def __exit__(self, exctype, excinst, exctb):
        return exctype is not None and issubclass(exctype, self._exceptions)


class closing(AbstractContextManager):
    """Calls `thing.close()` when its block ends."""

    def __init__(self, thing):
        self.thing = thing

    def __enter__(self):
        return self.thing

    def __exit__(self, *exc_info):
        self.thing.close()
