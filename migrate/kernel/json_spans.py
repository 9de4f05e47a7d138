"""Where each code cell's `source` value sits in a notebook's bytes, so a rewrite can replace just
those values and keep every other byte (key order, indentation, escapes) as the notebook had it.

A small scanner over text `json.loads` has already accepted: it records spans, it does not
validate. Spans are character offsets into the decoded text.
"""

from __future__ import annotations

import dataclasses
import re

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"-?[0-9][0-9.eE+-]*|true|false|null")


@dataclasses.dataclass(frozen=True)
class Span:
    start: int
    end: int
    items: tuple[tuple[int, int], ...] = ()  # the elements' spans, when the value is an array


def source_spans(text: str) -> dict[int, Span]:
    """0-based position in `cells` -> the span of that cell's `source` value."""
    found: dict[int, Span] = {}
    _Scanner(text, found).top()
    return found


class _Scanner:
    def __init__(self, text: str, found: dict[int, Span]) -> None:
        self.text = text
        self.found = found

    def ws(self, i: int) -> int:
        return _WS.match(self.text, i).end()  # type: ignore[union-attr]

    def top(self) -> None:
        i = self.ws(0)
        if self.text.startswith("{", i):
            self.obj(i, on_key=self._top_key)

    def _top_key(self, key: str, i: int) -> int:
        if key == "cells" and self.text.startswith("[", i):
            return self.array(i, on_item=self._cell)[0]
        return self.value(i)

    def _cell(self, index: int, i: int) -> int:
        if not self.text.startswith("{", i):
            return self.value(i)

        def on_key(key: str, j: int) -> int:
            if key != "source":
                return self.value(j)
            if self.text.startswith("[", j):
                end, items = self.array(j)
                self.found[index] = Span(j, end, tuple(items))
            else:
                end = self.value(j)
                self.found[index] = Span(j, end)
            return end

        return self.obj(i, on_key=on_key)

    def value(self, i: int) -> int:
        """The end of the value starting at `i`."""
        c = self.text[i]
        if c == "{":
            return self.obj(i)
        if c == "[":
            return self.array(i)[0]
        if c == '"':
            return _STRING.match(self.text, i).end()  # type: ignore[union-attr]
        return _SCALAR.match(self.text, i).end()  # type: ignore[union-attr]

    def obj(self, i, on_key=None) -> int:  # type: ignore[no-untyped-def]
        i = self.ws(i + 1)
        if self.text.startswith("}", i):
            return i + 1
        while True:
            m = _STRING.match(self.text, i)
            assert m is not None
            key = _unquote(m.group(0))
            i = self.ws(m.end())
            i = self.ws(i + 1)  # the colon
            i = on_key(key, i) if on_key else self.value(i)
            i = self.ws(i)
            if self.text.startswith("}", i):
                return i + 1
            i = self.ws(i + 1)  # the comma

    def array(self, i, on_item=None) -> tuple[int, list[tuple[int, int]]]:  # type: ignore[no-untyped-def]
        items: list[tuple[int, int]] = []
        i = self.ws(i + 1)
        if self.text.startswith("]", i):
            return i + 1, items
        while True:
            start = i
            i = on_item(len(items), i) if on_item else self.value(i)
            items.append((start, i))
            i = self.ws(i)
            if self.text.startswith("]", i):
                return i + 1, items
            i = self.ws(i + 1)  # the comma


def _unquote(literal: str) -> str:
    import json

    value: str = json.loads(literal)
    return value


def ascii_escaped(text: str) -> bool:
    """Whether the notebook writes non-ASCII characters as `\\uXXXX` escapes (no raw ones, and
    at least one escape of a non-ASCII character)."""
    if any(ord(c) > 127 for c in text):
        return False
    return re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", text) is not None
