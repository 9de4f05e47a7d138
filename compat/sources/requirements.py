"""requirements*.txt and *.in, read as pip reads them: continuations, comments, -r/-c, -e,
hashes."""

from __future__ import annotations

import os
import re
import shlex

from packaging.utils import canonicalize_name

from compat.model import Declared, Include, SourceRead, Where, lines_with_offsets
from compat.sources import pep508

_COMMENT = re.compile(r"(^|\s+)#.*$")
_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+)?(\S+)\s*$")
_EDITABLE = re.compile(r"^(-e|--editable)(?:\s*=\s*|\s+)(\S+)")
_OPTION_IN_LINE = re.compile(r"\s+--?[a-zA-Z]")
# A `conda list --export` line (`name=version=build`, `_libgcc_mutex=0.1=conda_forge`), which
# people save as requirements.txt; pip would reject it, conda reads it as an exact pin.
_CONDA_EXPORT = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]*)=([^=\s<>!~;,]+)(?:=(\S+))?$")


def read(src: SourceRead) -> None:
    """Fill `src` from its text: requirements with their positions, includes, and TRL200 errors."""
    conda = _conda_export(src.text)
    for number, offsets, logical in _logical_lines(src.text):
        text = _COMMENT.sub("", logical).rstrip()
        if not text.strip():
            continue
        _read_line(src, number, offsets, text, conda=conda)


def _conda_export(text: str) -> bool:
    """Whether the file is `conda list --export` output (its header, or `name=version=build`
    lines and no pip-style pins): then `name=version` is a conda pin, not a typo of `==`."""
    head = text[:2000]
    if "# platform:" in head or "conda create" in head:
        return True
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    built = [ln for ln in lines if (m := _CONDA_EXPORT.match(ln)) and m.group(3)]
    return bool(built) and not any(re.search(r"[<>!~]=|==", ln) for ln in lines)


def _logical_lines(text: str) -> list[tuple[int, list[tuple[int, int]], str]]:
    """Physical lines joined at a trailing backslash; offsets map logical positions to the file."""
    out: list[tuple[int, list[tuple[int, int]], str]] = []
    parts: list[str] = []
    offsets: list[tuple[int, int]] = []  # (logical position, file offset) where each piece starts
    first = 0
    for number, start, line in lines_with_offsets(text):
        if not parts:
            first = number
        offsets.append((sum(len(p) for p in parts), start))
        if line.endswith("\\") and not _COMMENT.search(line):
            parts.append(line[:-1])
            continue
        parts.append(line)
        out.append((first, offsets, "".join(parts)))
        parts, offsets = [], []
    if parts:
        out.append((first, offsets, "".join(parts)))
    return out


def _file_offset(offsets: list[tuple[int, int]], pos: int) -> int:
    logical, start = offsets[0]
    for lp, fo in offsets:
        if lp <= pos:
            logical, start = lp, fo
    return start + (pos - logical)


def _read_line(
    src: SourceRead, number: int, offsets: list[tuple[int, int]], text: str, *, conda: bool
) -> None:
    stripped = text.strip()
    inc = _INCLUDE.match(stripped)
    if inc:
        option = "-c" if inc.group(1) in ("-c", "--constraint") else "-r"
        target = os.path.normpath(os.path.join(os.path.dirname(src.path), inc.group(2)))
        src.includes.append(Include(line=number, option=option, target=target))
        return
    edit = _EDITABLE.match(stripped)
    if edit:
        _add_url(src, number, edit.group(2))
        return
    if stripped.startswith("-"):
        return  # a global option: --index-url, --pre, --find-links, ...
    lead = len(text) - len(text.lstrip())
    opt = _OPTION_IN_LINE.search(text, lead)
    req_text = text[lead : opt.start()] if opt else text[lead:]
    options = text[opt.start() :] if opt else ""
    export = _CONDA_EXPORT.match(req_text.strip()) if conda else None
    if export:
        _add_conda_export(src, number, lead, offsets, export)
        return
    try:
        parsed = pep508.parse(req_text)
    except pep508.InvalidRequirement as e:
        src.error(
            number, f"pip would reject `{req_text.strip()}`: {_first_line(str(e))}", col=lead + 1
        )
        return
    if not parsed.name:
        return  # a local path without a name: nothing to check
    hashed = "--hash" in options
    where = None
    note = ""
    if hashed:
        note = "hash-pinned"
    elif not parsed.url:
        start = _file_offset(offsets, lead + parsed.span[0])
        end = _file_offset(offsets, lead + parsed.span[1])
        where = Where(start, end)
    src.declared.append(
        Declared(
            name=parsed.name,
            display=" ".join(req_text.split()),
            specifier=parsed.specifier,
            dialect="pep440",
            line=number,
            col=lead + 1,
            extras=parsed.extras,
            marker=parsed.marker,
            url=parsed.url,
            url_version=parsed.url_version,
            locked=_compile_command(src.path) if hashed else "",
            where=where,
            note=note,
        )
    )


def _add_conda_export(
    src: SourceRead, number: int, lead: int, offsets: list[tuple[int, int]], m: re.Match[str]
) -> None:
    """A `name=version[=build]` line, read as conda reads it (exact with a build string)."""
    name, version, build = m.group(1), m.group(2), m.group(3)
    start = _file_offset(offsets, lead + m.start(2) - 1)  # from the `=`
    src.declared.append(
        Declared(
            name="python" if name == "python" else canonicalize_name(name),
            display=m.group(0),
            specifier=f"={version}",
            dialect="conda",
            line=number,
            col=lead + 1,
            # A new version has builds of its own: a fix replaces `=version=build` whole.
            where=Where(start, _file_offset(offsets, lead + m.end(3 if build else 2))),
            note="a `conda list --export` line" + ("; its build string goes" if build else ""),
        )
    )


def _add_url(src: SourceRead, number: int, url: str) -> None:
    parsed = pep508.parse_bare_url(url)
    if not parsed.name:
        return
    src.declared.append(
        Declared(
            name=parsed.name,
            display=f"-e {url}",
            specifier="",
            dialect="pep440",
            line=number,
            url=url,
            url_version=parsed.url_version,
        )
    )


def _compile_command(path: str) -> str:
    stem, _ = os.path.splitext(path)
    source = stem + ".in"
    if os.path.exists(source):
        return (
            "pip-compile --generate-hashes --upgrade-package {req} "
            f"{shlex.quote(os.path.basename(source))}"
        )
    return (
        f"regenerate {os.path.basename(path)} with the tool that wrote it, e.g. pip-compile "
        "--upgrade-package {req}"
    )


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "invalid requirement"
