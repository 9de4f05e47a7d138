"""setup.cfg: install_requires, extras_require and python_requires of setuptools' declarative
config."""

from __future__ import annotations

import re

from compat.model import Declared, SourceRead, Where, lines_with_offsets
from compat.sources import pep508

_SECTION = re.compile(r"^\[\s*([^\]]+?)\s*\]\s*$")
_KEY = re.compile(r"^([A-Za-z0-9_.-][^=:]*?)\s*[=:]\s*(.*)$")
_WANTED = {("options", "install_requires"), ("options", "python_requires")}


def read(src: SourceRead) -> None:
    section = ""
    key = ""
    for number, start, line in lines_with_offsets(src.text):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        m = _SECTION.match(line)
        if m:
            section, key = m.group(1).strip().lower(), ""
            continue
        if line[:1] in (" ", "\t") and key:
            _value(src, section, key, number, start + len(line) - len(line.lstrip()), stripped)
            continue
        m = _KEY.match(line)
        if not m:
            key = ""
            if section in ("options", "options.extras_require"):
                src.error(number, f"cannot read this line of [{section}]: {stripped!r}")
            continue
        key = m.group(1).strip().lower()
        if m.group(2).strip():
            _value(src, section, key, number, start + m.start(2), m.group(2).rstrip())


def _value(src: SourceRead, section: str, key: str, number: int, offset: int, text: str) -> None:
    if section == "options.extras_require" or (section, key) == ("options", "install_requires"):
        for piece_offset, piece in _split(text):
            _requirement(src, number, offset + piece_offset, piece, key)
    elif (section, key) == ("options", "python_requires"):
        spec = text.strip()
        src.declared.append(
            Declared(
                "python",
                f"python {spec}",
                spec,
                "pep440",
                number,
                where=Where(offset, offset + len(spec)),
            )
        )


def _split(text: str) -> list[tuple[int, str]]:
    """Requirements are one per line; a one-line value `a, b` lists several, as setuptools reads it.

    A comma between two version clauses (`a>=1,<2`) or a line with a marker is kept whole.
    """
    if ";" in text or "," not in text or re.search(r"[<>=!~]=?\s*[\d.*]+\s*,\s*[<>=!~]", text):
        return [(0, text)]
    out, pos = [], 0
    for piece in text.split(","):
        if piece.strip():
            out.append((pos + len(piece) - len(piece.lstrip()), piece.strip()))
        pos += len(piece) + 1
    return out


def _requirement(src: SourceRead, number: int, offset: int, text: str, key: str) -> None:
    text = re.sub(r"\s+#.*$", "", text)
    pep508.declare(src, text, number, label=key, offset=offset)
