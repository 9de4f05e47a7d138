"""Apply floor fixes to a source's text: exact span edits, or tomlkit item edits for TOML.

Only the specifier text changes; every other byte of the file stays as it was. The caller
writes the result with migrate.kernel.files.atomic_write.
"""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import String

from compat.check import Edit
from compat.model import SourceRead
from migrate.kernel.files import SourceError


def apply(src: SourceRead, edits: list[Edit]) -> bytes:
    """The new bytes of `src` with every edit applied; raises SourceError when that is not safe."""
    text = src.text
    plain = [e for e in edits if e.declared.where is not None and e.declared.where.key is None]
    keyed = [e for e in edits if e.declared.where is not None and e.declared.where.key is not None]
    if plain:
        text = _apply_spans(text, plain)
    if keyed:
        text = _apply_toml(text, keyed)
    try:
        return text.encode(src.encoding)
    except UnicodeEncodeError as e:
        raise SourceError(f"the fixed text cannot be encoded as {src.encoding}") from e


def _apply_spans(text: str, edits: list[Edit]) -> str:
    wheres = [(e.declared.where, e.new) for e in edits]
    spans = sorted(((w.start, w.end, new) for w, new in wheres if w is not None), reverse=True)
    last = len(text) + 1
    for start, end, new in spans:
        if end > last:
            raise SourceError("two fixes overlap; not rewritten")
        text = text[:start] + new + text[end:]
        last = start
    return text


def _apply_toml(text: str, edits: list[Edit]) -> str:
    doc = tomlkit.parse(text)
    if tomlkit.dumps(doc) != text:
        raise SourceError("tomlkit cannot round-trip this file byte for byte; not rewritten")
    expected: list[tuple[tuple[Any, ...], str]] = []
    for edit in edits:
        where = edit.declared.where
        assert where is not None and where.key is not None
        parent, last = _parent(doc, where.key)
        item = parent[last]
        if not isinstance(item, String):
            raise SourceError(f"{'.'.join(map(str, where.key))} is not a string; not rewritten")
        value = str(item)
        new_value = value[: where.start] + edit.new + value[where.end :]
        parent[last] = _like(item, value, new_value, where.start, where.end, edit.new)
        expected.append((where.key, new_value))
    out = tomlkit.dumps(doc)
    _verify(out, expected)
    return out


def _parent(doc: Any, key: tuple[Any, ...]) -> tuple[Any, Any]:
    node = doc
    for part in key[:-1]:
        node = node[part]
    return node, key[-1]


def _like(item: String, value: str, new_value: str, start: int, end: int, new: str) -> String:
    """A String of the same kind (basic/literal, single/multi-line) and trivia as `item`."""
    raw = item.as_string()
    quote = 3 if item.type.is_multiline() else 1
    inner = raw[quote:-quote]
    if inner == value:
        new_raw = new_value
    else:
        old = value[start:end]
        if not old or inner.count(old) != 1:
            raise SourceError("the string has escapes around its version; not rewritten")
        new_raw = inner.replace(old, new)
    return String(item.type, new_value, new_raw, item.trivia)


def _verify(out: str, expected: list[tuple[tuple[Any, ...], str]]) -> None:
    try:
        parsed = tomlkit.parse(out).unwrap()
    except TOMLKitError as e:
        raise SourceError(f"the fixed TOML does not parse ({e}); not rewritten") from e
    for key, value in expected:
        node: Any = parsed
        for part in key:
            node = node[part]
        if node != value:
            raise SourceError("the fixed TOML does not hold the new value; not rewritten")
