"""pyproject.toml: PEP 621 dependencies and optional-dependencies, PEP 735 dependency-groups,
requires-python, and Poetry's dependency tables with their ^ and ~ ranges."""

from __future__ import annotations

from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name

from compat.model import Declared, SourceRead, Where
from compat.sources import tomlsrc
from compat.sources.tomlsrc import Cursor


def read(src: SourceRead) -> None:
    doc = tomlsrc.load(src)
    if doc is None:
        return
    project = doc.get("project", {})
    if isinstance(project, dict):
        _pep621(src, project)
    groups = doc.get("dependency-groups", {})
    if isinstance(groups, dict):
        cur = Cursor(src.text, tomlsrc.section_offset(src.text, ("dependency-groups",)))
        for group, items in groups.items():
            for i, item in enumerate(items if isinstance(items, list) else []):
                key = ("dependency-groups", group, i)
                tomlsrc.pep508_item(src, item, key, cur, label=f"dependency group {group!r}")
    poetry = doc.get("tool", {}).get("poetry", {})
    if isinstance(poetry, dict):
        _poetry(src, poetry)


def _pep621(src: SourceRead, project: dict[str, Any]) -> None:
    text = src.text
    start = tomlsrc.section_offset(text, ("project",))
    if "requires-python" in project:
        line = Cursor(text, start).key("requires-python")
        tomlsrc.python_item(
            src, project["requires-python"], ("project", "requires-python"), line, "pep440"
        )
    cur = Cursor(text, start)
    for i, item in enumerate(project.get("dependencies", []) or []):
        tomlsrc.pep508_item(src, item, ("project", "dependencies", i), cur, label="dependencies")
    optional = project.get("optional-dependencies", {}) or {}
    cur = Cursor(text, tomlsrc.section_offset(text, ("project", "optional-dependencies")) or start)
    for extra, items in optional.items():
        for i, item in enumerate(items if isinstance(items, list) else []):
            key = ("project", "optional-dependencies", extra, i)
            tomlsrc.pep508_item(src, item, key, cur, label=f"optional dependency {extra!r}")


def _poetry(src: SourceRead, poetry: dict[str, Any]) -> None:
    tables: list[tuple[tuple[str, ...], Any]] = [
        (("tool", "poetry", "dependencies"), poetry.get("dependencies")),
        (("tool", "poetry", "dev-dependencies"), poetry.get("dev-dependencies")),
    ]
    for name, group in (poetry.get("group") or {}).items():
        tables.append(
            (("tool", "poetry", "group", name, "dependencies"), (group or {}).get("dependencies"))
        )
    for keys, table in tables:
        if not isinstance(table, dict):
            continue
        cur = Cursor(src.text, tomlsrc.section_offset(src.text, keys))
        for name, value in table.items():
            _poetry_item(src, keys + (name,), name, value, cur.key(name))


def _poetry_item(src: SourceRead, key: tuple[str, ...], name: str, value: Any, line: int) -> None:
    if name.lower() == "python":
        tomlsrc.python_item(src, value, key, line, "poetry")
        return
    marker = None
    url = ""
    if isinstance(value, dict):
        url = str(value.get("git") or value.get("url") or value.get("path") or "")
        if value.get("markers"):
            try:
                marker = Marker(str(value["markers"]))
            except InvalidMarker:
                src.error(line, f"poetry dependency {name!r}: invalid markers {value['markers']!r}")
        spec, where_key = value.get("version", ""), key + ("version",)
        if url and value.get("tag"):
            url = f"{url}@{value['tag']}"
    elif isinstance(value, str):
        spec, where_key = value, key
    else:
        spec, where_key = "", None  # a list of alternative constraints: checked, not edited
        if isinstance(value, list) and value and isinstance(value[0], dict):
            spec = str(value[0].get("version", ""))
    spec = str(spec)
    where = None
    if where_key is not None and not url and (spec or isinstance(value, dict)):
        start = len(spec) - len(spec.lstrip())
        where = Where(start, start + len(spec.strip()), where_key) if spec else None
    src.declared.append(
        Declared(
            name=canonicalize_name(name),
            display=f"{name} = {spec.strip() or url or '*'}",
            specifier=spec.strip(),
            dialect="poetry",
            line=line,
            marker=marker,
            url=url,
            url_version=_tag_version(url),
            where=where,
            note="" if where else "several constraints or a table without a version",
        )
    )


def _tag_version(url: str) -> str:
    from compat.sources.pep508 import url_version

    return url_version(f"git+{url}") if url and "@" in url else ""
