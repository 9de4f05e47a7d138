"""Where a missing dependency goes in a source, written in that source's own style: the line
after trl's in a requirements file, a conda `dependencies:` list or a setup.cfg value; the item
after trl's in a quoted list (`[project] dependencies`, setup.py); the key after trl's in a
Poetry or Pipfile table. None when there is no such place that is safe to write.
"""

from __future__ import annotations

import re

from compat.model import Declared, SourceRead, Where

_LINE_FORMATS = ("requirements", "conda", "setup.cfg")
_TABLE_FORMATS = ("Pipfile",)


def dependency_after(src: SourceRead, trl: Declared, name: str) -> tuple[Where, str] | None:
    """(an insertion point, the text to insert there) that declares `name` next to `trl`."""
    if src.is_lock or trl.line < 1 or "--hash" in src.text:
        return None
    if src.fmt == "notebook":
        return _install_line(src, trl, name)
    lines = src.text.splitlines(keepends=True)
    if trl.line > len(lines):
        return None
    start = sum(len(ln) for ln in lines[: trl.line - 1])
    line = lines[trl.line - 1]
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    if trl.dialect == "poetry" or src.fmt in _TABLE_FORMATS:
        m = re.match(r"^([ \t]*)[\"']?trl[\"']?[ \t]*=", body)
        if m is None or body.rstrip().endswith(("{", "[", ",")):
            return None  # a key whose value spans lines
        return _after_line(src.text, start + len(line), ending, f'{m.group(1)}{name} = "*"')
    if src.fmt in _LINE_FORMATS:
        if body.rstrip().endswith("\\"):
            return None  # trl's requirement continues on the next line
        lead = re.match(r"^[ \t]*(?:-[ \t]+)?", body).group(0)  # type: ignore[union-attr]
        if not body[len(lead) :].lower().startswith("trl"):
            return None  # the requirement does not start the line (a URL, a list on one line)
        return _after_line(src.text, start + len(line), ending, f"{lead}{name}")
    if src.fmt in ("pyproject", "setup.py"):
        return _quoted(start, body, ending or _newline(src.text), name, trl.display)
    return None


def _install_line(src: SourceRead, trl: Declared, name: str) -> tuple[Where, str] | None:
    """` name` after trl's word on its notebook install line (inside the cell's JSON string),
    when the reader could place trl's specifier there."""
    if trl.where is None:
        return None
    at = trl.where.end
    for closing in ('\\"', "'"):  # the word was quoted on the command line: after the quote
        if src.text.startswith(closing, at):
            at += len(closing)
            break
    nxt = src.text[at : at + 2]
    if not (nxt[:1] in (" ", '"') or nxt in ("\\n", "\\r")):
        return None  # the word does not end here (a marker, `;`, ...)
    return Where(at, at), f" {name}"


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _after_line(text: str, at: int, ending: str, new: str) -> tuple[Where, str]:
    """`new` as a line of its own at `at`, the end of a line that ends with `ending`."""
    if ending:
        return Where(at, at), f"{new}{ending}"
    return Where(at, at), f"{_newline(text)}{new}"  # the file's last line, with no newline


def _quoted(
    start: int, body: str, ending: str, name: str, display: str
) -> tuple[Where, str] | None:
    """`"name"` as the next item of the list that holds trl's quoted requirement."""
    hits = [
        m
        for m in re.finditer(r"(['\"])(trl\b[^'\"]*)\1", body)
        if m.group(2).strip() == display.strip() and not re.match(r"\s*:", body[m.end() :])
    ]  # the requirement, not a dict key spelled the same (`{"trl": ["trl"]}`)
    if len(hits) != 1:
        return None
    quote, item_end = hits[0].group(1), start + hits[0].end()
    rest = body[hits[0].end() :]
    item = f"{quote}{name}{quote}"
    if re.match(r"^[ \t]*,[ \t]*(?:#.*)?$", rest):  # one item a line, trailing comma
        lead = re.match(r"^[ \t]*", body).group(0)  # type: ignore[union-attr]
        at = start + len(body) + len(ending)
        return Where(at, at), f"{lead}{item},{ending}"
    if re.match(r"^[ \t]*(?:#.*)?$", rest):  # the last item, no trailing comma
        lead = re.match(r"^[ \t]*", body).group(0)  # type: ignore[union-attr]
        return Where(item_end, item_end), f",{ending}{lead}{item}"
    if re.match(r"^[ \t]*[,\]]", rest):  # items on one line
        return Where(item_end, item_end), f", {item}"
    return None
