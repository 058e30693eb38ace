"""os for Tailor: what model files reach for while they are defined, not a file system.

In: path strings, environment lookups. Out: strings, `False` for any question about files,
the default for any environment variable. Invariant: nothing here touches a disk or the
host: a model file runs in a page, where there is none, and the CLI runs it the same way.
Model files name paths in default arguments of download helpers
(`root=os.path.join("~", ".torch", "models")`, pytorchcv) and read flags from the
environment; an actual read or write (`makedirs`, `remove`) raises `OSError` naming it.
"""

from os import path

sep = "/"
curdir = "."
pardir = ".."
linesep = "\n"
name = "posix"
environ = {}


def getenv(key, default=None):
    return environ.get(key, default)


def getcwd():
    return "/"


def fspath(value):
    return value


def cpu_count():
    return 1


def _no_file_system(what):
    def refuse(*args, **kwargs):
        raise OSError(f"os.{what}: Tailor runs model files without a file system")

    refuse.__name__ = what
    return refuse


for _what in ("makedirs", "mkdir", "remove", "unlink", "rename", "listdir", "scandir",
              "walk", "stat", "chdir", "rmdir", "system"):
    globals()[_what] = _no_file_system(_what)
