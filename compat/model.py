"""Values the source readers produce and the check consumes: one declared requirement, one
source."""

from __future__ import annotations

import dataclasses
import re

from packaging.markers import Marker

from migrate.kernel.findings import Finding, Severity

LOCK_FORMATS = ("uv.lock", "poetry.lock", "pylock")


@dataclasses.dataclass(frozen=True)
class Where:
    """Where a specifier's text sits, so a fix can replace exactly that text.

    `key` is None for text formats: (start, end) are offsets into the decoded file text. For
    TOML, `key` is the path of the string item inside the document and (start, end) are offsets
    into that string's value. start == end marks an insertion point (an unpinned requirement).
    """

    start: int
    end: int
    key: tuple[str | int, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Declared:
    name: str  # canonical name, or "python" for a Python version requirement
    display: str  # the requirement as written, for tables and messages
    specifier: str  # the version text as written in its dialect ("" when unpinned)
    dialect: str  # "pep440" | "poetry" | "conda" | "prefix"
    line: int
    col: int = 0
    extras: frozenset[str] = frozenset()
    marker: Marker | None = None
    url: str = ""  # a VCS / URL / path requirement
    url_version: str = ""  # a version read from the URL's tag (git+...@v1.13.0)
    locked: str = ""  # "" for a declaration; the regenerate command for a lock or hash pin
    where: Where | None = None  # None: cannot be fixed in place
    note: str = ""  # why it cannot be fixed in place, when where is None


@dataclasses.dataclass(frozen=True)
class Include:
    """A `-r` or `-c` line of a requirements file."""

    line: int
    option: str  # "-r" or "-c"
    target: str  # absolute path


@dataclasses.dataclass
class SourceRead:
    """One declared-requirements source as read: its requirements, errors, and text for fixing."""

    path: str  # absolute
    display: str  # relative to the checked folder
    fmt: str  # "requirements" | "pyproject" | "setup.cfg" | "setup.py" | "Pipfile" | "conda" | ...
    declared: list[Declared] = dataclasses.field(default_factory=list)
    errors: list[Finding] = dataclasses.field(default_factory=list)
    includes: list[Include] = dataclasses.field(default_factory=list)
    data: bytes = b""
    text: str = ""
    encoding: str = "utf-8"
    fatal: bool = False  # nothing could be read from it

    def error(self, line: int, message: str, *, col: int = 0) -> None:
        self.errors.append(Finding("TRL200", Severity.ERROR, self.display, line, col, message))

    @property
    def is_lock(self) -> bool:
        return self.fmt in LOCK_FORMATS


_EOL = re.compile(r"\r\n|\r|\n")


def lines_with_offsets(text: str) -> list[tuple[int, int, str]]:
    """(1-based line number, offset of the line's first character, line text without its EOL)."""
    out = []
    pos = 0
    number = 1
    for m in _EOL.finditer(text):
        out.append((number, pos, text[pos : m.start()]))
        pos = m.end()
        number += 1
    if pos < len(text):
        out.append((number, pos, text[pos:]))
    return out


def line_of(text: str, offset: int) -> int:
    return len(_EOL.findall(text[:offset])) + 1


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, encoding) of a UTF-8 text file, a BOM kept by the codec; raises UnicodeDecodeError."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data.decode("utf-8-sig"), "utf-8-sig"
    return data.decode("utf-8"), "utf-8"
