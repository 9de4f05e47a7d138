"""Lock files, where the pinned version is what counts: uv.lock, poetry.lock, pylock.toml.

Never edited: each locked package carries the command that regenerates the lock.
"""

from __future__ import annotations

import os
import re

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name

from compat.model import Declared, SourceRead
from compat.sources import tomlsrc


def read(src: SourceRead) -> None:
    doc = tomlsrc.load(src)
    if doc is None:
        return
    key = "packages" if src.fmt == "pylock" else "package"
    entries = doc.get(key, [])
    if not isinstance(entries, list):
        src.error(0, f"`{key}` is not an array of tables")
        src.fatal = True
        return
    command = _command(src, doc)
    for entry in entries:
        if isinstance(entry, dict) and "name" in entry:
            _entry(src, entry, command)


def _command(src: SourceRead, doc: dict) -> str:
    name = os.path.basename(src.path)
    if src.fmt == "uv.lock":
        return "uv lock --upgrade-package {name}"
    if src.fmt == "poetry.lock":
        return "poetry update {name}"
    creator = str(doc.get("created-by", "")) or "the tool that wrote it"
    return f"regenerate {name} with {creator} (e.g. `uv export --format pylock.toml -o {name}`)"


def _entry(src: SourceRead, entry: dict, command: str) -> None:
    name = str(entry["name"])
    version = str(entry.get("version", ""))
    line = _line(src.text, name)
    marker = None
    if entry.get("marker"):
        try:
            marker = Marker(str(entry["marker"]))
        except InvalidMarker:
            src.error(line, f"{name}: invalid marker {entry['marker']!r}")
    url = ""
    source = entry.get("source") or entry.get("vcs") or {}
    if isinstance(source, dict) and not version:
        url = str(source.get("git") or source.get("url") or "")
    src.declared.append(
        Declared(
            name=canonicalize_name(name),
            display=f"{name} {version}".strip(),
            specifier=f"=={version}" if version else "",
            dialect="pep440",
            line=line,
            marker=marker,
            url=url,
            locked=command,
            note="lock file",
        )
    )


def _line(text: str, name: str) -> int:
    m = re.search(rf"""^[ \t]*name[ \t]*=[ \t]*["']{re.escape(name)}["']""", text, re.MULTILINE)
    return text.count("\n", 0, m.start()) + 1 if m else 0
