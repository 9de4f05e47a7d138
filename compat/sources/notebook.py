"""`%pip install` / `!pip install` lines in the code cells of Jupyter notebooks (read-only)."""

from __future__ import annotations

import json
import re
import shlex

from compat.model import SourceRead
from compat.sources import pep508

_INSTALL = re.compile(r"^\s*[%!]\s*(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\s+(.*)$")
_TAKES_VALUE = {
    "-r",
    "-c",
    "-i",
    "-f",
    "-e",
    "--index-url",
    "--extra-index-url",
    "--find-links",
    "--requirement",
    "--constraint",
    "--target",
    "-t",
    "--prefix",
    "--editable",
}


def read(src: SourceRead) -> None:
    try:
        doc = json.loads(src.text)
    except json.JSONDecodeError as e:
        src.error(e.lineno, f"not valid notebook JSON: {e.msg}", col=e.colno)
        src.fatal = True
        return
    cells = doc.get("cells", []) if isinstance(doc, dict) else []
    pos = 0
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        lines = (
            "".join(source).splitlines() if isinstance(source, list) else str(source).splitlines()
        )
        for line in lines:
            m = _INSTALL.match(line)
            if not m:
                continue
            file_line, pos = _file_line(src.text, line, pos)
            _install(src, index + 1, file_line, m.group(1))


def _file_line(text: str, line: str, pos: int) -> tuple[int, int]:
    """The line of the JSON file holding this source line (the JSON-escaped text), in order."""
    needle = json.dumps(line)[1:-1]
    hit = text.find(needle, pos)
    if hit == -1:
        return 0, pos
    return text.count("\n", 0, hit) + 1, hit + len(needle)


def _install(src: SourceRead, cell: int, line: int, args: str) -> None:
    try:
        words = shlex.split(args, comments=True)
    except ValueError as e:
        src.error(line, f"cell {cell}: cannot split the install line: {e}")
        return
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _TAKES_VALUE
            continue
        if "{" in word or "$" in word:
            continue  # a notebook variable: unknown until run
        pep508.declare(
            src,
            word,
            line,
            label=f"cell {cell}",
            message=f"pip would reject {word!r}",
            note=f"notebook cell {cell}: edit the install line by hand",
        )
