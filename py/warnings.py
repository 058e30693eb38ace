"""warnings as model files use it: a small stand-in for CPython's module.

CPython's `warnings` needs modules this VM does not freeze (`_py_warnings`, `linecache`,
threads). Model files warn while they build (`warnings.warn("... is deprecated")`, a
fallback in an `except ImportError:`) and filter warnings they do not want; here a warning
prints `Category: message` to stderr once per message and category, as CPython's default
filter shows it once per place, and `filterwarnings("ignore", ...)`/`simplefilter("ignore")`
silence it. `catch_warnings` keeps and restores the filters; with `record=True` it lists
the warnings instead of printing them.
"""

import sys

__all__ = ["warn", "warn_explicit", "showwarning", "formatwarning", "filterwarnings",
           "simplefilter", "resetwarnings", "catch_warnings"]

_ignored = []
_shown = set()
_record = None


class WarningMessage:
    def __init__(self, message, category, filename, lineno, file=None, line=None,
                 source=None):
        self.message = message
        self.category = category
        self.filename = filename
        self.lineno = lineno
        self.file = file
        self.line = line
        self.source = source


def formatwarning(message, category, filename, lineno, line=None):
    return f"{filename}:{lineno}: {category.__name__}: {message}\n"


def showwarning(message, category, filename, lineno, file=None, line=None):
    try:
        (file or sys.stderr).write(f"{category.__name__}: {message}\n")
    except Exception:
        pass


def _silenced(text, category):
    for pattern, wanted in _ignored:
        if issubclass(category, wanted) and text.startswith(pattern):
            return True
    return False


def warn(message, category=None, stacklevel=1, source=None, *, skip_file_prefixes=()):
    if isinstance(message, Warning):
        category = type(message)
    category = UserWarning if category is None else category
    text = str(message)
    if _silenced(text, category):
        return
    if _record is not None:
        _record.append(WarningMessage(message, category, "", 0))
        return
    if (text, category) in _shown:
        return
    _shown.add((text, category))
    showwarning(message, category, "", 0)


def warn_explicit(message, category, filename, lineno, module=None, registry=None,
                  module_globals=None, source=None):
    warn(message, category)


def filterwarnings(action, message="", category=Warning, module="", lineno=0, append=False):
    if action == "ignore":
        _ignored.append((message, category))


def simplefilter(action, category=Warning, lineno=0, append=False):
    if action == "ignore":
        _ignored.append(("", category))


def resetwarnings():
    _ignored.clear()


class catch_warnings:
    def __init__(self, *, record=False, module=None, action=None, category=Warning,
                 lineno=0, append=False):
        self._record = record
        self._action = action
        self._category = category

    def __enter__(self):
        global _record
        self._saved = (list(_ignored), _record)
        if self._action is not None:
            simplefilter(self._action, self._category)
        if self._record:
            _record = []
            return _record
        return None

    def __exit__(self, *exc):
        global _record
        _ignored[:], _record = self._saved
        return False
