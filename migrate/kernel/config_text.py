"""YAML and JSON config files edited as text, key by key at the top level, each edit checked by
loading the result: the settings a parser reads stay exactly as meant, and comments, order and
layout stay as the user wrote them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any


def load(text: str, suffix: str) -> dict[str, Any] | None:
    """The file's settings, when it is one mapping of names to values; None otherwise."""
    yaml = yaml_module() if suffix != ".json" else None
    try:
        data = json.loads(text) if yaml is None else yaml.safe_load(text)
    except ValueError:
        return None
    except Exception as e:  # yaml.YAMLError: not a config this module can read
        if yaml is not None and isinstance(e, yaml.YAMLError):
            return None
        raise
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        return None
    return data


def without(text: str, suffix: str, keys: Sequence[str]) -> str | None:
    """`text` without the top-level `keys` (a smoke run's copy of a config whose keys the
    rewritten script's parser no longer takes); None when that cannot be done safely."""
    data = load(text, suffix)
    if data is None:
        return None
    lines = text.splitlines(keepends=True)
    spans = json_keys(lines) if suffix == ".json" else yaml_keys(lines)
    if not all(k in spans for k in keys):
        return None
    out = list(lines)
    for start, end in sorted((spans[k] for k in set(keys)), reverse=True):
        del out[start:end]
    if suffix == ".json":
        out = json_commas(out)
    new_text = "".join(out)
    if load(new_text, suffix) != {k: v for k, v in data.items() if k not in keys}:
        return None
    return new_text


_YAML_KEY = re.compile(r"([A-Za-z_][\w.\-]*)[ \t]*:(?=[ \t]|\r?$|\n)")


def yaml_keys(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each top-level key of a block-style YAML mapping: the lines of its entry (the key's line
    and the indented or `- ` lines under it; blank and comment lines after it stay outside).
    A key written twice is not listed."""
    spans: dict[str, tuple[int, int]] = {}
    twice: set[str] = set()
    i = 0
    while i < len(lines):
        match = _YAML_KEY.match(lines[i])
        if match is None:
            i += 1
            continue
        end = i + 1
        last = i + 1
        while end < len(lines):
            body = lines[end].rstrip("\r\n")
            if not body.strip() or body.lstrip().startswith("#"):
                end += 1
                continue
            if body[0] in " \t" or body.startswith("- ") or body == "-":
                end += 1
                last = end
                continue
            break
        key = match.group(1)
        if key in spans:
            twice.add(key)
        spans[key] = (i, last)
        i = last
    return {k: v for k, v in spans.items() if k not in twice}


JSON_KEY = re.compile(r'^([ \t]*)"((?:[^"\\]|\\.)*)"[ \t]*:')


def json_keys(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each top-level key of a JSON object written one entry per line (the layout json.dump
    and editors give): the lines of its entry, found by depth. A key written twice, or on a
    line with other entries, is not listed."""
    spans: dict[str, tuple[int, int]] = {}
    twice: set[str] = set()
    depth = 0
    current: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        match = JSON_KEY.match(line)
        if depth == 1 and match is not None:
            if current is not None:
                spans.setdefault(current[0], (current[1], i))
            key = match.group(2)
            if key in spans or (current and current[0] == key):
                twice.add(key)
            current = (key, i)
        depth += _depth_change(line)
        if depth == 0 and current is not None:  # the closing brace: the last entry ends above
            spans.setdefault(current[0], (current[1], i))
            current = None
    return {k: v for k, v in spans.items() if k not in twice}


def _depth_change(line: str) -> int:
    """How far `line` opens (+) or closes (-) JSON objects and arrays, strings skipped."""
    change, in_string, escaped = 0, False, False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            change += 1
        elif ch in "}]":
            change -= 1
    return change


def json_commas(lines: list[str]) -> list[str]:
    """After entries went, the entry left last before the closing brace loses its comma."""
    out = list(lines)
    for i, line in enumerate(out):
        if line.lstrip().startswith("}"):
            j = i - 1
            while j >= 0 and not out[j].strip():
                j -= 1
            if j >= 0:
                body = out[j].rstrip("\r\n")
                if body.rstrip().endswith(","):
                    out[j] = body.rstrip()[:-1] + out[j][len(body) :]
    return out


def with_defaults(text: str, suffix: str, values: dict[str, Any], note: str) -> str | None:
    """`text` with `values` added for the keys it leaves out (a comment `note` above them in
    YAML): the settings a parser of the file builds from its classes' own defaults, which a
    script's `set_defaults` does not reach. None when that cannot be done safely."""
    data = load(text, suffix)
    if data is None:
        return None
    added = {k: v for k, v in values.items() if k not in data}
    if not added:
        return None
    lines = text.splitlines(keepends=True)
    ending = next((ln[len(ln.rstrip("\r\n")) :] for ln in lines if ln.endswith("\n")), "\n")
    if suffix == ".json":
        close = max((i for i, ln in enumerate(lines) if ln.strip().startswith("}")), default=-1)
        entries = [ln for ln in lines[:close] if JSON_KEY.match(ln)]
        if close < 0 or not entries:
            return None
        indent = JSON_KEY.match(entries[0]).group(1)  # type: ignore[union-attr]
        new = [f'{indent}"{k}": {json.dumps(v)},{ending}' for k, v in added.items()]
        new[-1] = new[-1].replace(f",{ending}", ending)
        last = close - 1
        while last >= 0 and not lines[last].strip():
            last -= 1
        body = lines[last].rstrip("\r\n")
        if not body.rstrip().endswith((",", "{")):
            lines[last] = body + "," + lines[last][len(body) :]
        out = lines[:close] + new + lines[close:]
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += ending
        dumped = yaml_module().safe_dump(added, sort_keys=False, default_flow_style=False)
        out = [*lines, f"{note}{ending}", *(f"{ln}{ending}" for ln in dumped.splitlines())]
    new_text = "".join(out)
    if load(new_text, suffix) != {**data, **added}:
        return None
    return new_text


def yaml_module() -> Any:
    import yaml  # pyyaml: a dependency already (compat reads environment.yml)

    return yaml
