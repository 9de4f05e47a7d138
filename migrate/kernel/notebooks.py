"""Jupyter notebooks as byte-faithful documents: read cells, put rewritten sources back.

Why not nbformat for reading and writing: `nbformat.reads` joins each cell's source list
into one string and `nbformat.writes` re-serialises with its own indent and key order, so an
untouched notebook would not come back byte for byte. The notebook format is plain JSON, and
Jupyter writes it with a fixed style (indent 1, sorted keys, non-ASCII kept, trailing newline).
We read it with `json`, detect that style, check that re-serialising the untouched document
reproduces the original bytes exactly, and only then write a changed one the same way. A
notebook whose bytes cannot be reproduced is reported, never rewritten. nbformat is used in
the tests to check that what we write is still a valid notebook.

Code cells may hold IPython syntax that is not Python (`%pip install ...` with backslash
continuations, `!cmd`, `x = !cmd`, `obj?`, `%%bash` cells). `to_python` swaps each such line for
a placeholder statement on its own line (same indentation, so the cell parses and line numbers
stay), and `from_python` swaps them back verbatim.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from migrate.kernel.files import SourceError

# Cell magics whose body is Python; any other `%%magic` cell (bash, html, ...) is not touched.
PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%memit", "%%debug")
# `%magic`, `!cmd`, `?obj`, `x = !cmd`, `x = %magic`, `obj?`, `obj??`.
_MAGIC_LINE = re.compile(r"^\s*(?:[%!?]|[\w.\[\]'\"]+\s*=\s*[!%]|[\w.]+\?\??\s*$)")
_PLACEHOLDER = "__trl_migrate_ipython_{}__"
_PLACEHOLDER_LINE = re.compile(r"^([ \t]*)__trl_migrate_ipython_(\d+)__[ \t]*$")


@dataclasses.dataclass
class Notebook:
    doc: dict[str, Any]
    style: dict[str, Any]  # json.dumps arguments that reproduce the original bytes
    trailing_newline: bool

    def dumps(self) -> str:
        text = json.dumps(self.doc, **self.style)
        return text + "\n" if self.trailing_newline else text

    def code_cells(self) -> list[tuple[int, dict[str, Any]]]:
        """(1-based position among all cells, cell) of every code cell."""
        cells = self.doc.get("cells") or []
        return [
            (i + 1, c)
            for i, c in enumerate(cells)
            if isinstance(c, dict) and c.get("cell_type") == "code"
        ]

    @property
    def is_python(self) -> bool:
        meta = self.doc.get("metadata") or {}
        language = (meta.get("kernelspec") or {}).get("language") or (
            meta.get("language_info") or {}
        ).get("name")
        return language in (None, "python", "python3")


def loads(text: str) -> Notebook:
    """Parse a notebook and learn how to write it back byte for byte, or raise SourceError."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(
            f"not a notebook: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}"
        ) from e
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise SourceError("not a notebook: no list of cells (nbformat 4 is supported)")
    if doc.get("nbformat", 4) < 4:
        raise SourceError(
            f"nbformat {doc.get('nbformat')} notebooks are not supported; open and save it in "
            "Jupyter first"
        )
    body = text[:-1] if text.endswith("\n") else text
    for style in _styles(text):
        if json.dumps(doc, **style) == body:
            return Notebook(doc, style, text.endswith("\n"))
    raise SourceError(
        "notebook JSON layout is not one trl-migrate can reproduce byte for byte; not rewritten "
        "(open and save it in Jupyter, then run again)"
    )


def _styles(text: str) -> list[dict[str, Any]]:
    match = re.search(r"\n( +|\t)\S", text)
    indent: int | str | None = None
    if match:
        indent = match.group(1) if match.group(1) == "\t" else len(match.group(1))
    out = []
    for sort_keys in (True, False):
        for ensure_ascii in (False, True):
            out.append(
                {
                    "indent": indent,
                    "sort_keys": sort_keys,
                    "ensure_ascii": ensure_ascii,
                    "separators": (",", ": ") if indent is not None else (", ", ": "),
                }
            )
    return out


def cell_source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def set_cell_source(cell: dict[str, Any], text: str) -> None:
    """Store `text` the way the cell stored its source: a list of lines or one string."""
    if isinstance(cell.get("source"), list):
        cell["source"] = text.splitlines(keepends=True)
    else:
        cell["source"] = text


def to_python(source: str) -> tuple[str, list[str]]:
    """(Python text with placeholders, the lines they stand for). Every line of a cell under a
    non-Python cell magic (`%%bash`, `%%html`, ...) becomes a placeholder."""
    lines = source.splitlines(keepends=True)
    foreign = (
        bool(lines) and lines[0].startswith("%%") and lines[0].split()[0] not in PYTHON_CELL_MAGICS
    )
    saved: list[str] = []
    out: list[str] = []
    continued = False
    indent = ""
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        is_magic = (
            foreign
            or continued
            or (i == 0 and body.startswith("%%"))
            or bool(_MAGIC_LINE.match(body))
        )
        if is_magic:
            if not continued:  # continuation lines keep the first line's indentation
                indent = re.match(r"[ \t]*", body).group(0)  # type: ignore[union-attr]
            ending = line[len(body) :]
            out.append(f"{indent}{_PLACEHOLDER.format(len(saved))}{ending}")
            saved.append(body)
            continued = body.endswith("\\")
        else:
            out.append(line)
    return "".join(out), saved


def from_python(text: str, saved: list[str]) -> str:
    """Put the saved IPython lines back where their placeholders are."""
    if not saved:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        match = _PLACEHOLDER_LINE.match(body)
        out.append(saved[int(match.group(2))] + line[len(body) :] if match else line)
    return "".join(out)


_BOUNDARY = "__trl_migrate_cell_{}__"
_BOUNDARY_LINE = re.compile(r"^__trl_migrate_cell_(\d+)__[ \t]*$")


@dataclasses.dataclass
class Joined:
    """The code cells of a notebook as one Python module, and the way back to cells."""

    text: str
    starts: list[int]  # 1-based line of `text` where each cell begins
    saved: list[list[str]]  # per cell, the IPython lines behind its placeholders
    newline_at_end: list[bool]

    def split(self, text: str) -> list[str]:
        segments: list[list[str]] = [[]]
        for line in text.splitlines(keepends=True):
            match = _BOUNDARY_LINE.match(line.rstrip("\r\n"))
            if match:
                if int(match.group(1)) != len(segments):
                    raise SourceError(
                        "internal error: notebook cell boundaries moved; not rewritten"
                    )
                segments.append([])
            else:
                segments[-1].append(line)
        if len(segments) != len(self.starts):
            raise SourceError("internal error: notebook cell boundaries lost; not rewritten")
        out = []
        for lines, saved, newline in zip(segments, self.saved, self.newline_at_end):
            source = from_python("".join(lines), saved)
            if not newline and source.endswith("\n"):
                source = source[:-2] if source.endswith("\r\n") else source[:-1]
            out.append(source)
        return out

    def cell_of(self, line: int) -> tuple[int, int]:
        """(0-based cell position, 1-based line within the cell) of a line of `text`."""
        k = max((i for i, start in enumerate(self.starts) if start <= line), default=0)
        return k, line - self.starts[k] + 1

    def locate(self, finding, numbers: list[int]):  # type: ignore[no-untyped-def]
        """The finding with its line made cell-relative and its cell number set."""
        if not finding.line or not numbers:
            return finding
        k, line = self.cell_of(finding.line)
        return dataclasses.replace(finding, line=line, cell=numbers[k])

    def locate_message(self, message: str, numbers: list[int]) -> str:
        match = re.match(r"syntax error at line (\d+)(.*)", message, re.S)
        if not match or not numbers:
            return message
        k, line = self.cell_of(int(match.group(1)))
        return f"syntax error in cell {numbers[k]} at line {line}{match.group(2)}"


def join_cells(sources: list[str]) -> Joined:
    parts: list[str] = []
    starts: list[int] = []
    saved_all: list[list[str]] = []
    line = 1
    for k, source in enumerate(sources):
        if k:
            parts.append(_BOUNDARY.format(k) + "\n")
            line += 1
        text, saved = to_python(source)
        body = text if text.endswith("\n") or not text else text + "\n"
        starts.append(line)
        parts.append(body)
        saved_all.append(saved)
        line += body.count("\n")
    return Joined("".join(parts), starts, saved_all, [s.endswith("\n") for s in sources])


@dataclasses.dataclass
class Runnable:
    """The code cells of a notebook as one script a smoke run can execute, and the way back."""

    text: str
    starts: list[int]  # 1-based line of `text` where each code cell begins
    numbers: list[int]  # each code cell's 1-based position in the notebook
    skipped: list[str]  # the IPython lines that became `pass`

    def locate(self, finding):  # type: ignore[no-untyped-def]
        """The finding with its script line made cell-relative and its cell number set."""
        if not finding.line or not self.starts:
            return finding
        k = max((i for i, start in enumerate(self.starts) if start <= finding.line), default=0)
        return dataclasses.replace(
            finding, line=finding.line - self.starts[k] + 1, cell=self.numbers[k]
        )


def runnable(text: str) -> Runnable:
    """Join a notebook's code cells into a script, every IPython line (`%pip ...`, `!cmd`, a
    `%%bash` cell's body) replaced by `pass` at its indentation so line numbers stay; raises
    SourceError for what is not a Python notebook."""
    book = loads(text)
    if not book.is_python:
        raise SourceError("not a Python notebook (kernel language)")
    parts: list[str] = []
    starts: list[int] = []
    numbers: list[int] = []
    skipped: list[str] = []
    line = 1
    for number, cell in book.code_cells():
        body, saved = to_python(cell_source(cell))
        lines = []
        for raw in body.splitlines():
            match = _PLACEHOLDER_LINE.match(raw)
            lines.append(f"{match.group(1)}pass" if match else raw)
        skipped.extend(saved)
        starts.append(line)
        numbers.append(number)
        parts.extend(lines)
        line += len(lines)
    return Runnable("\n".join(parts) + "\n", starts, numbers, skipped)
