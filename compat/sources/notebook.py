"""`%pip install` / `!pip install` / automagic `pip install` lines in the code cells of Jupyter
notebooks (read with the kernel's notebook model, as `fix` reads them; a line ending in `\\`
continues on the next)."""

from __future__ import annotations

import json
import re
import shlex

from compat.model import SourceRead
from compat.sources import pep508
from migrate.kernel import json_spans, notebooks
from migrate.kernel.files import SourceError

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


# IPython's automagic runs `pip install ...` without `%` in a notebook cell as well.
_AUTOMAGIC = re.compile(r"^\s*(?:pip3?|uv\s+pip)\s+install\s+(.*)$")


def read(src: SourceRead) -> None:
    try:
        json.loads(src.text)
    except json.JSONDecodeError as e:
        src.error(e.lineno, f"not valid notebook JSON: {e.msg}", col=e.colno)
        src.fatal = True
        return
    try:
        book = notebooks.loads(src.text)
    except SourceError:
        return  # JSON, but no nbformat-4 cells: nothing declared here
    for number, cell in book.code_cells():
        span = book.spans.get(number - 1)
        lines = notebooks.cell_source(cell).splitlines()
        for line, first in _install_lines(lines):
            m = _INSTALL.match(line) or _AUTOMAGIC.match(line)
            if m:
                _install(src, number, _file_line(src.text, span, first, len(lines)), m.group(1))


def _install_lines(lines: list[str]) -> list[tuple[str, int]]:
    """(logical line, index of its first physical line): a line ending in a backslash
    continues on the next, as IPython reads `%pip install a \\` + `    b`."""
    out = []
    i = 0
    while i < len(lines):
        first, text = i, lines[i]
        while text.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text.rstrip()[:-1] + " " + lines[i].strip()
        out.append((text, first))
        i += 1
    return out


def _file_line(text: str, span: json_spans.Span | None, index: int, count: int) -> int:
    """The line of the notebook file that holds source line `index` of a cell: its own element
    when the source is a list of lines, else the line where the source value starts."""
    if span is None:
        return 0
    at = span.items[index][0] if len(span.items) == count and index < count else span.start
    return text.count("\n", 0, at) + 1


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
