"""`%pip install` / `!pip install` / automagic `pip install` lines in the code cells of Jupyter
notebooks (read with the kernel's notebook model, as `fix` reads them; a line ending in `\\`
continues on the next)."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex

from compat.model import SourceRead, Where
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
                # The line's own JSON string, when the cell stores one string a line and the
                # install does not continue on the next: there a pin can be edited in place.
                own = (
                    span.items[first]
                    if span is not None and len(span.items) == len(lines) and line == lines[first]
                    else None
                )
                where = _file_line(src.text, span, first, len(lines))
                _install(src, number, where, m.group(1), text=line, start=m.start(1), item=own)


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


def _install(
    src: SourceRead,
    cell: int,
    line: int,
    args: str,
    *,
    text: str = "",
    start: int = 0,
    item: tuple[int, int] | None = None,
) -> None:
    """Declare each requirement of one install line. `text`: the whole source line, `args`
    starting at `start` in it; `item`: the span of its JSON string in the file, if it has one."""
    try:
        words = shlex.split(args, comments=True)
    except ValueError as e:
        src.error(line, f"cell {cell}: cannot split the install line: {e}")
        return
    skip = False
    pos = start
    for word in words:
        found = text.find(word, pos) if text else -1
        if found != -1:
            pos = found + len(word)
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _TAKES_VALUE
            continue
        if "{" in word or "$" in word:
            continue  # a notebook variable: unknown until run
        count = len(src.declared)
        pep508.declare(
            src,
            word,
            line,
            label=f"cell {cell}",
            message=f"pip would reject {word!r}",
            note=f"notebook cell {cell}: the install line is not one a fix can edit",
        )
        if len(src.declared) > count and item is not None and found != -1:
            _editable(src, item, found, word)


def _editable(src: SourceRead, item: tuple[int, int], at: int, word: str) -> None:
    """Give the requirement just declared the span of its specifier in the file's bytes, when
    the JSON string writes those characters as they are (no escapes inside the span)."""
    declared = src.declared[-1]
    if declared.url:
        return
    a, b = pep508.parse(word).span
    raw = src.text[item[0] : item[1]]
    start, end = _raw_index(raw, at + a), _raw_index(raw, at + b)
    if start is None or end is None or raw[start:end] != word[a:b]:
        return
    where = Where(item[0] + start, item[0] + end)
    src.declared[-1] = dataclasses.replace(declared, where=where, note="")


def _raw_index(raw: str, index: int) -> int | None:
    """Where character `index` of a JSON string's value is in its literal `raw` (quoted)."""
    i, decoded = 1, 0
    while i < len(raw) - 1:
        if decoded == index:
            return i
        if raw[i] == "\\":
            i += 6 if raw[i + 1] == "u" else 2
        else:
            i += 1
        decoded += 1
    return i if decoded == index else None
