"""Helpers shared by the TOML readers: parse with a TRL200 on error, and find an item's line."""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from compat.model import Declared, SourceRead, Where, line_of
from compat.sources import pep508

_AT_LINE = re.compile(r"\s*at line \d+ col \d+$")


def load(src: SourceRead) -> dict[str, Any] | None:
    """The document as plain values, or None with a TRL200 error at the line the parser names.

    tomlkit, not tomllib: tomllib is not in Python 3.10's standard library.
    """
    try:
        return tomlkit.parse(src.text).unwrap()
    except TOMLKitError as e:
        line, col = getattr(e, "line", 0) or 0, getattr(e, "col", 0) or 0
        message = _AT_LINE.sub("", str(e)).strip()
        src.error(line, f"not valid TOML: {message}", col=col)
        src.fatal = True
        return None


def section_offset(text: str, keys: tuple[str, ...], *, array: bool = False) -> int:
    """Offset just after the header `[a.b]` (or `[[a.b]]`), or 0 when there is none."""
    parts = r"\s*\.\s*".join(
        rf"""(?:{re.escape(k)}|"{re.escape(k)}"|'{re.escape(k)}')""" for k in keys
    )
    left, right = (r"\[\[", r"\]\]") if array else (r"\[", r"\]")
    m = re.search(rf"^[ \t]*{left}\s*{parts}\s*{right}", text, re.MULTILINE)
    return m.end() if m else 0


class Cursor:
    """Finds successive string items in the text, in document order, starting at a section."""

    def __init__(self, text: str, start: int = 0) -> None:
        self.text = text
        self.pos = start

    def string(self, value: str) -> int:
        """The line of the next `"value"` or `'value'`; 0 when it cannot be found."""
        hits = [
            i for i in (self.text.find(f"{q}{value}{q}", self.pos) for q in ('"', "'")) if i != -1
        ]
        if not hits:
            return 0
        hit = min(hits)
        self.pos = hit + len(value) + 2
        return line_of(self.text, hit)

    def key(self, key: str) -> int:
        """The line of the next `key =` assignment; 0 when it cannot be found."""
        pattern = rf"""^[ \t]*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')[ \t]*="""
        m = re.compile(pattern, re.MULTILINE | re.IGNORECASE).search(self.text, self.pos)
        if not m:
            return 0
        self.pos = m.end()
        return line_of(self.text, m.start())


def pep508_item(
    src: SourceRead, value: Any, key: tuple[str | int, ...], cursor: Cursor, *, label: str
) -> None:
    """One PEP 508 string of a TOML array: a Declared, or a TRL200 error at its line."""
    if not isinstance(value, str):
        return  # e.g. {include-group = "..."} in dependency-groups
    pep508.declare(src, value, cursor.string(value), label=label, key=key)


def python_item(
    src: SourceRead, value: Any, key: tuple[str | int, ...], line: int, dialect: str
) -> None:
    """A Python version requirement (`requires-python`, poetry's `python`, Pipfile's
    python_version)."""
    if not isinstance(value, str):
        return
    start = len(value) - len(value.lstrip())
    src.declared.append(
        Declared(
            name="python",
            display=f"python {value.strip()}",
            specifier=value.strip(),
            dialect=dialect,
            line=line,
            where=Where(start, start + len(value.strip()), key),
        )
    )
