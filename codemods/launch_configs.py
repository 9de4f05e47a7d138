"""Config files a launch line hands a parsed-config script (`python ppo.py --config ppo.yaml`,
`python ppo_tldr.py recipes/ppo_tldr.yaml`, a JSON for `parse_json_file`): their top-level keys
are the script's flags, so they get launch_flags' changes. YAML is edited line by line and JSON
key by key, each edit checked by parsing the result: the file is rewritten only when it loads
as the same settings with the changes applied, else left as it was."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from codemods.launch_flags import FlagChange
from migrate.kernel import config_text

SUFFIXES = (".yaml", ".yml", ".json")
# script text that reads a config file given on its command line: TrlParser's `--config`,
# HfArgumentParser's file parsers (alignment-handbook's H4ArgumentParser calls the YAML one)
READS_CONFIG_FLAG = ("parse_args_and_config",)
READS_CONFIG_FILE = ("parse_yaml_file", "parse_json_file")


def config_paths(args: Sequence[str], script: str) -> list[tuple[str, bool]]:
    """The config files among a launch line's `args` that `script` (its text, with the repo's
    modules it imports) reads, each with whether `--config` gave it: the value of `--config`
    for a TrlParser script, positional `.yaml`/`.yml`/`.json` arguments for one that parses a
    file of its command line."""
    out: list[tuple[str, bool]] = []
    flag_reader = any(f"{name}(" in script for name in READS_CONFIG_FLAG)
    file_reader = any(f"{name}(" in script for name in READS_CONFIG_FILE)
    i = 0
    while i < len(args):
        token = args[i]
        if token.startswith("--"):
            flag, eq, value = token.partition("=")
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("--"):
                value, i = args[i + 1], i + 1
            if flag == "--config" and flag_reader and value.endswith(SUFFIXES):
                out.append((value, True))
        elif token.endswith(SUFFIXES) and file_reader:
            out.append((token, False))
        i += 1
    return out


def as_args(data: dict[str, Any]) -> list[str]:
    """The settings as the flags of a launch line (`--kl_coef 0.05`), for launch_flags: a
    boolean as HfArgumentParser reads it, a list or mapping as a value no table matches."""
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, bool):
            shown = "true" if value else "false"
        elif isinstance(value, (list, dict)):
            shown = "<structured>"
        elif value is None:
            shown = "null"
        else:
            shown = str(value)
        out += [f"--{key}", shown]
    return out


@dataclasses.dataclass(frozen=True)
class Edited:
    text: str | None  # the file as rewritten; None when no edit is safe (or none is needed)
    lines: dict[str, int]  # each changed key's line (1-based), in the file as it was
    left: tuple[str, ...]  # keys with no new spelling, kept for a human


def rewrite(
    text: str, suffix: str, changes: Sequence[FlagChange], todo: Callable[[str, str], str]
) -> Edited:
    """`text` with `changes` applied: renamed keys spelled the new way, dropped ones removed,
    new values written; a key with no new spelling stays, with a TODO comment above it in YAML
    (`todo(code, message)` writes the comment; JSON has none). The result must load as the
    original settings with exactly those changes, else `text` is None."""
    data = config_text.load(text, suffix)
    if data is None:
        return Edited(None, {}, ())
    lines = text.splitlines(keepends=True)
    spans = config_text.json_keys(lines) if suffix == ".json" else config_text.yaml_keys(lines)
    keys = [c.flag[2:] for c in changes]
    where = {key: spans[key][0] + 1 for key in keys if key in spans}
    left = tuple(key for key, c in zip(keys, changes) if not (c.new or c.drop or c.value))
    expected = dict(data)
    edits: list[tuple[int, int, list[str]]] = []  # (start, end, lines in their place)
    for key, change in zip(keys, changes):
        if key not in spans:
            return Edited(None, where, left)
        start, end = spans[key]
        first = lines[start]
        if change.drop:
            expected.pop(key, None)
            edits.append((start, end, []))
            continue
        if not (change.new or change.value):  # for a human: a TODO above it (YAML only)
            if suffix != ".json":
                indent = first[: len(first) - len(first.lstrip())]
                ending = first[len(first.rstrip("\r\n")) :] or "\n"
                note = todo(change.code, f"`{key}`: {unflagged(change.why)}")
                if start == 0 or lines[start - 1].strip() != note:  # a rerun: there already
                    edits.append((start, start, [f"{indent}{note}{ending}"]))
            continue
        new_key = change.new[2:] if change.new else key
        if new_key != key and new_key in expected:
            return Edited(None, where, left)  # both spellings set: which wins is the user's
        value = expected.pop(key)
        if change.value:  # a new value on the key's own line
            if " " in change.value or end - start != 1:
                return Edited(None, where, left)
            replaced = _with_value(first, change.was, change.value, suffix, whole=bool(change.new))
            if replaced is None:
                return Edited(None, where, left)
            first, value = replaced, _scalar(change.value, suffix)
        expected[new_key] = value
        edits.append(
            (start, end, [_with_key(first, key, new_key, suffix), *lines[start + 1 : end]])
        )
    if not edits:
        return Edited(None, where, left)
    out = list(lines)
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out[start:end] = new
    new_text = "".join(config_text.json_commas(out) if suffix == ".json" else out)
    if config_text.load(new_text, suffix) != expected:
        return Edited(None, where, left)
    return Edited(new_text, where, left)


def _with_key(line: str, key: str, new: str, suffix: str) -> str:
    if suffix == ".json":
        return line.replace(f'"{key}"', f'"{new}"', 1)
    return new + line[len(key) :]


def _with_value(line: str, was: str, value: str, suffix: str, *, whole: bool) -> str | None:
    """The key's line with its value replaced: the old value's text where it stands
    (`optim: adamw_hf  # note` -> `optim: adamw_torch  # note`), or, for a switch that becomes
    another key (`whole`), the whole value. None when the old value is not on the line."""
    head, colon, rest = line.partition(":")
    body = rest.rstrip("\r\n")
    ending = rest[len(body) :]
    shown = json.dumps(value) if suffix == ".json" else value
    if whole:
        comma = "," if suffix == ".json" and body.rstrip().endswith(",") else ""
        return f"{head}{colon} {shown}{comma}{ending}"
    if not was or was not in body:
        return None
    return f"{head}{colon}{body.replace(was, value, 1)}{ending}"


def _scalar(value: str, suffix: str) -> Any:
    if suffix == ".json":
        return value
    return config_text.yaml_module().safe_load(value)


def unflagged(why: str) -> str:
    """A launch-flag reason in a config file's words: `--max_steps` is the key `max_steps`."""
    return re.sub(r"`--([\w-]+)", r"`\1", why)
