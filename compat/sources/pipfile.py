"""Pipfile (pipenv): [packages], [dev-packages] and other categories, and [requires] python."""

from __future__ import annotations

from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name

from compat.model import Declared, SourceRead, Where
from compat.sources import tomlsrc
from compat.sources.pep508 import url_version
from compat.sources.tomlsrc import Cursor

_NOT_PACKAGES = {"source", "requires", "scripts", "pipenv"}


def read(src: SourceRead) -> None:
    doc = tomlsrc.load(src)
    if doc is None:
        return
    requires = doc.get("requires", {})
    if isinstance(requires, dict):
        cur = Cursor(src.text, tomlsrc.section_offset(src.text, ("requires",)))
        for key, dialect in (("python_version", "prefix"), ("python_full_version", "poetry")):
            if key in requires:
                line = cur.key(key)
                tomlsrc.python_item(src, requires[key], ("requires", key), line, dialect)
    for category, table in doc.items():
        if category in _NOT_PACKAGES or not isinstance(table, dict):
            continue
        cur = Cursor(src.text, tomlsrc.section_offset(src.text, (category,)))
        for name, value in table.items():
            _item(src, (category, name), name, value, cur.key(name))


def _item(src: SourceRead, key: tuple[str, ...], name: str, value: Any, line: int) -> None:
    marker = None
    url = ""
    extras: frozenset[str] = frozenset()
    if isinstance(value, dict):
        url = str(value.get("git") or value.get("file") or value.get("path") or "")
        if url and value.get("ref"):
            url = f"git+{url}@{value['ref']}" if "git" in value else url
        if value.get("markers"):
            try:
                marker = Marker(str(value["markers"]))
            except InvalidMarker:
                src.error(line, f"{name}: invalid markers {value['markers']!r}")
        extras = frozenset(canonicalize_name(e) for e in value.get("extras", []) or [])
        spec, where_key = str(value.get("version", "")), key + ("version",)
    else:
        spec, where_key = str(value), key
    spec = spec.strip()
    where = None
    if not url and "version" in (value if isinstance(value, dict) else {"version": 1}):
        raw = str(value["version"] if isinstance(value, dict) else value)
        start = len(raw) - len(raw.lstrip())
        where = Where(start, start + len(raw.strip()), where_key)
    src.declared.append(
        Declared(
            name=canonicalize_name(name),
            display=f"{name} = {spec or url or '*'}",
            specifier="" if spec == "*" else spec,
            dialect="pep440",
            line=line,
            extras=extras,
            marker=marker,
            url=url,
            url_version=url_version(url) if url.startswith("git+") else "",
            where=where,
            note="" if where else "a table without a version",
        )
    )
