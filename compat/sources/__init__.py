"""Find declared-requirement sources under a path (with the file walk `fix` uses) and read
each with its format's reader."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable

from compat.model import SourceRead, decode_text
from migrate.kernel.discovery import walk
from migrate.kernel.files import SourceError, decode_python, read_bytes

# pip takes a requirements file of any name (`-r req.txt`): beside requirements*.txt, the names
# people give theirs: req.txt, reqs.txt, requirement.txt, the misspelt requirments.txt, and
# prefixed ones (new_requirements.txt, dev-requirements.txt). The word must stand alone
# between separators, so frequency.txt or prerequisites.txt are not read.
_REQUIREMENTS_TXT = re.compile(
    r"(?:[\w.-]*[-_.])?(?:reqs?|requirements?|requirments?)(?:[-_.][\w.-]*)?\.txt"
)


def format_of(path: str) -> str | None:
    """The reader a file name calls for, or None when it is not a requirements source."""
    name = os.path.basename(path)
    lower = name.lower()
    parent = os.path.basename(os.path.dirname(path)).lower()
    if lower in ("pyproject.toml",):
        return "pyproject"
    if lower == "setup.cfg":
        return "setup.cfg"
    if lower == "setup.py":
        return "setup.py"
    if name == "Pipfile":
        return "Pipfile"
    if lower in ("uv.lock", "poetry.lock"):
        return lower
    if lower == "pylock.toml" or fnmatch.fnmatch(lower, "pylock.*.toml"):
        return "pylock"
    if fnmatch.fnmatch(lower, "environment*.yml") or fnmatch.fnmatch(lower, "environment*.yaml"):
        return "conda"
    if lower.endswith(".ipynb"):
        return "notebook"
    if _REQUIREMENTS_TXT.fullmatch(lower) or fnmatch.fnmatch(lower, "constraints*.txt"):
        return "requirements"
    if lower.endswith(".in") and lower != "manifest.in":
        return "requirements"
    if parent == "requirements" and lower.endswith(".txt"):
        return "requirements"
    return None


def discover(root: str) -> list[str]:
    """Every requirements source under `root` (or `root` itself when it is a file), sorted."""
    if os.path.isfile(root):
        return [os.path.abspath(root)]
    # The walk of `fix` (.gitignore, .git/info/exclude, the default excludes), so `upgrade`
    # checks the pins of the same tree whose code it rewrites.
    found = walk(root, match=lambda path: format_of(path) is not None)
    return sorted(os.path.abspath(path) for path in found)


def _readers() -> dict[str, Callable[[SourceRead], None]]:
    from compat.sources import (
        conda,
        locks,
        notebook,
        pipfile,
        pyproject,
        requirements,
        setupcfg,
        setuppy,
    )

    return {
        "requirements": requirements.read,
        "pyproject": pyproject.read,
        "setup.cfg": setupcfg.read,
        "setup.py": setuppy.read,
        "Pipfile": pipfile.read,
        "conda": conda.read,
        "uv.lock": locks.read,
        "poetry.lock": locks.read,
        "pylock": locks.read,
        "notebook": notebook.read,
    }


def read_source(path: str, display: str, fmt: str | None = None) -> SourceRead:
    """Read one source; any problem is a TRL200 error on the result, never an exception."""
    fmt = fmt or format_of(path) or "requirements"
    src = SourceRead(path=path, display=display, fmt=fmt)
    try:
        src.data = read_bytes(path)
        if fmt == "setup.py":
            decoded = decode_python(src.data)
            src.text, src.encoding = decoded.text, decoded.encoding
        else:
            src.text, src.encoding = decode_text(src.data)
    except SourceError as e:
        src.error(0, str(e))
        src.fatal = True
        return src
    except UnicodeDecodeError as e:
        line = src.data[: e.start].count(b"\n") + 1
        src.error(line, f"cannot decode as UTF-8 (byte 0x{src.data[e.start]:02x})")
        src.fatal = True
        return src
    if fmt == "notebook" and not src.text.strip():
        return src  # an empty file named .ipynb (fix skips it too): nothing is declared there
    _readers()[fmt](src)
    return src
