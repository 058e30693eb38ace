"""os.path for Tailor: POSIX path strings (as CPython's `posixpath` joins and splits them);
every question about files answers that nothing exists (there is no file system)."""

sep = "/"


def join(first, *rest):
    out = first
    for part in rest:
        if part.startswith("/"):
            out = part
        elif not out or out.endswith("/"):
            out += part
        else:
            out += "/" + part
    return out


def split(p):
    i = p.rfind("/") + 1
    head, tail = p[:i], p[i:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def basename(p):
    return split(p)[1]


def dirname(p):
    return split(p)[0]


def splitext(p):
    base = basename(p)
    dot = base.rfind(".")
    if dot <= 0 or base[:dot] == "." * dot:
        return p, ""
    cut = len(p) - len(base) + dot
    return p[:cut], p[cut:]


def expanduser(p):
    return p


def expandvars(p):
    return p


def abspath(p):
    return p if p.startswith("/") else join("/", p)


def normpath(p):
    return p


def realpath(p):
    return abspath(p)


def isabs(p):
    return p.startswith("/")


def exists(p):
    return False


def isfile(p):
    return False


def isdir(p):
    return False


def islink(p):
    return False
