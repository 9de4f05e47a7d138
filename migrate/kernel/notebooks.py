"""Jupyter notebooks as byte-faithful documents: read cells, put rewritten sources back.

Why not nbformat for reading and writing: `nbformat.reads` joins each cell's source list
into one string and `nbformat.writes` re-serialises with its own indent and key order, so an
untouched notebook would not come back byte for byte. We read the JSON with `json`, note where
each code cell's `source` value sits in the text (json_spans.py), and write a changed notebook
by replacing only the `source` values that changed, each in the layout of the value it replaces
(a list of lines with the same separators, or one string; escapes as the file has them). Every
other byte stays as it was, whatever indent, key order or escapes wrote the file. nbformat is
used in the tests to check that what we write is still a valid notebook.

Code cells may hold IPython syntax that is not Python (`%pip install ...` with backslash
continuations, `!cmd`, `x = !cmd`, `obj?`, `%%bash` cells). `to_python` swaps each such line for
a placeholder statement on its own line (same indentation, so the cell parses and line numbers
stay), and `from_python` swaps them back verbatim.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
import warnings
from typing import Any

from migrate.kernel import json_spans
from migrate.kernel.files import SourceError

# Cell magics whose body is Python; any other `%%magic` cell (bash, html, ...) is not touched.
PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun", "%%memit", "%%debug")
# `%magic`, `!cmd`, `?obj`, `x = !cmd`, `x = %magic`, `obj?`, `obj??`, and the automagic
# `pip install ...` / `conda install ...` IPython runs without `%` (never Python either way).
_MAGIC_LINE = re.compile(
    r"^\s*(?:[%!?]|[\w.\[\]'\"]+\s*=\s*[!%]|[\w.]+\?\??\s*$"
    r"|(?:pip3?|conda|mamba|uv\s+pip)\s+(?:install|uninstall)\b)"
)
_PLACEHOLDER = "__trl_migrate_ipython_{}__"
_PLACEHOLDER_LINE = re.compile(r"^([ \t]*)__trl_migrate_ipython_(\d+)__[ \t]*$")


@dataclasses.dataclass
class Notebook:
    doc: dict[str, Any]
    text: str  # the notebook as read
    spans: dict[int, json_spans.Span]  # position in `cells` -> where its `source` value is
    original: dict[int, Any]  # position in `cells` -> its `source` value as read

    def dumps(self) -> str:
        """The notebook with every changed `source` value written in place, all else as read."""
        cells = self.doc.get("cells") or []
        out: list[str] = []
        done = 0
        for i, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("source") == self.original.get(i):
                continue
            span = self.spans.get(i)
            if span is None:
                raise SourceError(f"cell {i + 1} has no source in the file; not rewritten")
            out += [self.text[done : span.start], self._value(span, cell["source"])]
            done = span.end
        out.append(self.text[done:])
        return "".join(out)

    def _value(self, span: json_spans.Span, value: Any) -> str:
        """`value` in the layout of the value at `span`: the same separators around and between
        the lines of a list, each line as the file wrote it when it is unchanged."""
        ascii_only = json_spans.ascii_escaped(self.text)
        if not isinstance(value, list):
            return json.dumps(value, ensure_ascii=ascii_only)
        written = {
            json.loads(self.text[a:b]): self.text[a:b] for a, b in reversed(span.items)
        }  # each line's text as written (first occurrence wins)
        items = [written.get(v) or json.dumps(v, ensure_ascii=ascii_only) for v in value]
        if not items:
            return "[]"
        opening, between, closing = self._layout(span)
        return "[" + opening + between.join(items) + closing + "]"

    def _layout(self, span: json_spans.Span) -> tuple[str, str, str]:
        """(after `[`, between two lines, before `]`) of the array at `span`."""
        t = self.text
        if span.items:
            first, last = span.items[0], span.items[-1]
            opening, closing = t[span.start + 1 : first[0]], t[last[1] : span.end - 1]
            if len(span.items) > 1:
                return opening, t[first[1] : span.items[1][0]], closing
            return opening, "," + opening, closing
        # `"source": []`: one level deeper than the line of the key, in the file's indent unit.
        line_start = t.rfind("\n", 0, span.start) + 1
        indent = re.match(r"[ \t]*", t[line_start:]).group(0)  # type: ignore[union-attr]
        unit = re.search(r"\n( +|\t)\S", t)
        if unit is None:  # a one-line notebook
            return "", ", ", ""
        inner = indent + unit.group(1)
        return "\n" + inner, ",\n" + inner, "\n" + indent

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
    """Parse a notebook and note where each cell's source is, or raise SourceError."""
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
    original = {
        i: copy.deepcopy(c.get("source")) for i, c in enumerate(doc["cells"]) if isinstance(c, dict)
    }
    return Notebook(doc, text, json_spans.source_spans(text), original)


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


_INDENT = re.compile(r"[ \t]+")


def ipython_dedent(source: str) -> tuple[str, str]:
    """(the cell as IPython runs it, the indentation taken off): IPython drops a cell's leading
    blank lines and takes the first line's indentation off every line that starts with it, so
    a cell pasted from inside a block (`    trainer.train()`) runs; Python alone would call it
    an unexpected indent."""
    lines = source.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    found = _INDENT.match(first)
    if found is None:
        return source, ""
    space = found.group(0)
    return "".join(ln[len(space) :] if ln.startswith(space) else ln for ln in lines), space


def ipython_indent(source: str, space: str) -> str:
    """`source` (a rewritten cell) with the indentation `ipython_dedent` took off put back on
    its lines that are not blank: IPython takes it off again, so the cell runs as rewritten."""
    if not space:
        return source
    return "".join(space + ln if ln.strip() else ln for ln in source.splitlines(keepends=True))


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


def is_boundary(name: str) -> bool:
    """Whether `name` is the line that stands between two cells of a joined notebook."""
    return _BOUNDARY_LINE.match(name) is not None


def is_stand_in(name: str) -> bool:
    """Whether `name` stands for a line of a joined notebook that is not Python: a cell
    boundary, or an IPython line (`!pip install ...`, `%matplotlib inline`)."""
    return is_boundary(name) or _PLACEHOLDER_LINE.match(name) is not None


def syntax_problem(source: str) -> str | None:
    """Why this Python cannot parse a cell as IPython runs it (its IPython lines aside), in the
    words `ast` uses; None when it can."""
    code, _ = to_python(ipython_dedent(source)[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not the problem
            ast.parse(code)
    except SyntaxError as e:
        return f"{e.msg} at line {e.lineno or 1}, column {e.offset or 1}"
    except (ValueError, RecursionError, MemoryError) as e:
        return str(e) or type(e).__name__
    return None


def unparsable(sources: list[str]) -> dict[int, str]:
    """Position -> why, for the cells that are not Python. Each cell is compiled on its own when
    run, so one that is not stops only itself (it raises SyntaxError and runs nothing); the
    others are still a program."""
    found = {}
    for k, source in enumerate(sources):
        problem = syntax_problem(source)
        if problem is not None:
            found[k] = problem
    return found


@dataclasses.dataclass
class Joined:
    """The code cells of a notebook as one Python module, and the way back to cells."""

    text: str
    starts: list[int]  # 1-based line of `text` where each cell begins
    saved: list[list[str]]  # per cell, the IPython lines behind its placeholders
    newline_at_end: list[bool]
    # per cell: the indentation ipython_dedent took off, the cell with it off, and the cell as
    # it was (a cell the rewrite leaves alone is given back byte for byte)
    indents: list[tuple[str, str, str]]
    # the cells left out of `text` (not Python: `unparsable`), position -> the cell as it was
    left: dict[int, str] = dataclasses.field(default_factory=dict)

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
        # code a pass put where a left-out cell stands (an import added at the top, before a
        # first cell that is not Python) runs where the next cell starts: it goes there
        carried = ""
        last = -1  # the last cell given back that is not a left-out one
        for k, (lines, saved, newline, (space, dedented, original)) in enumerate(
            zip(segments, self.saved, self.newline_at_end, self.indents)
        ):
            if k in self.left:
                carried += "".join(lines)
                out.append(self.left[k])
                continue
            code = "".join(lines)
            if carried.strip():
                code = carried + code
            carried = ""
            source = from_python(code, saved)
            if not newline and source.endswith("\n"):
                source = source[:-2] if source.endswith("\r\n") else source[:-1]
            if space:
                source = original if source == dedented else ipython_indent(source, space)
            out.append(source)
            last = k
        if carried.strip():
            if last < 0:
                raise SourceError("internal error: no notebook cell to hold the rewrite")
            # after the last cell that runs (the cells after it are not Python)
            tail = out[last] if out[last].endswith("\n") or not out[last] else out[last] + "\n"
            out[last] = tail + carried
        return out

    def cell_of(self, line: int) -> tuple[int, int]:
        """(0-based cell position, 1-based line within the cell) of a line of `text`."""
        return _cell_of(self.starts, line)

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


def join_cells(sources: list[str], leave: frozenset[int] = frozenset()) -> Joined:
    """The cells as one module; those at the positions in `leave` stand in it as nothing (and
    come back from `split` as they were)."""
    parts: list[str] = []
    starts: list[int] = []
    saved_all: list[list[str]] = []
    indents: list[tuple[str, str, str]] = []
    line = 1
    for k, source in enumerate(sources):
        if k:
            parts.append(_BOUNDARY.format(k) + "\n")
            line += 1
        if k in leave:
            starts.append(line)
            saved_all.append([])
            indents.append(("", "", ""))
            continue
        dedented, space = ipython_dedent(source)
        indents.append((space, dedented, source) if space else ("", "", ""))
        text, saved = to_python(dedented)
        body = text if text.endswith("\n") or not text else text + "\n"
        starts.append(line)
        parts.append(body)
        saved_all.append(saved)
        line += body.count("\n")
    return Joined(
        "".join(parts),
        starts,
        saved_all,
        [s.endswith("\n") for s in sources],
        indents,
        {k: sources[k] for k in sorted(leave)},
    )


@dataclasses.dataclass
class Runnable:
    """The code cells of a notebook as one script a smoke run can execute, and the way back."""

    text: str
    starts: list[int]  # 1-based line of `text` where each code cell begins
    numbers: list[int]  # each code cell's 1-based position in the notebook
    skipped: list[str]  # the IPython lines that became `pass`

    def locate(self, finding):  # type: ignore[no-untyped-def]
        """The finding with its script line made cell-relative and its cell number set, and
        each `script line N` its message names made `cell C, line L`."""
        if not self.starts:
            return finding
        message = _SCRIPT_LINE.sub(
            lambda m: "cell {}, line {}".format(*self._cell_line(int(m.group(1)))),
            finding.message,
        )
        if not finding.line:
            return dataclasses.replace(finding, message=message)
        cell, line = self._cell_line(finding.line)
        return dataclasses.replace(finding, line=line, cell=cell, message=message)

    def _cell_line(self, line: int) -> tuple[int, int]:
        """(the cell's number in the notebook, the 1-based line within it) of a script line."""
        k, within = _cell_of(self.starts, line)
        return self.numbers[k], within


def _cell_of(starts: list[int], line: int) -> tuple[int, int]:
    """(0-based position of the cell holding `line`, 1-based line within it), for cells that
    begin at the 1-based lines `starts` of the joined text."""
    k = max((i for i, start in enumerate(starts) if start <= line), default=0)
    return k, line - starts[k] + 1


_SCRIPT_LINE = re.compile(r"\bscript line (\d+)\b")  # a line of Runnable.text named in a message


def runnable(text: str) -> Runnable:
    """Join a notebook's code cells into a script, every IPython line (`%pip ...`, `!cmd`, a
    `%%bash` cell's body) replaced by `pass` at its indentation so line numbers stay; raises
    SourceError for what is not a Python notebook. A cell that is not Python becomes a
    `raise SyntaxError(...)` (and `pass` lines): run in order, as `jupyter nbconvert --execute`
    runs it, the notebook stops there, and only there."""
    book = loads(text)
    if not book.is_python:
        raise SourceError("not a Python notebook (kernel language)")
    found = _runnable(book, {})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(found.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        broken = unparsable([cell_source(cell) for _, cell in book.code_cells()])
        if broken:
            found = _runnable(book, broken)
    return found


def _runnable(book: Notebook, broken: dict[int, str]) -> Runnable:
    parts: list[str] = []
    starts: list[int] = []
    numbers: list[int] = []
    skipped: list[str] = []
    line = 1
    for k, (number, cell) in enumerate(book.code_cells()):
        body, saved = to_python(ipython_dedent(cell_source(cell))[0])
        if k in broken:  # as many lines as the cell has, so the next cells' lines stay
            problem = f"cell {number} of the notebook is not Python: {broken[k]}"
            lines = [f"raise SyntaxError({problem!r})"]
            lines += ["pass"] * (len(body.splitlines()) - 1)
            saved = []
        else:
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
