"""`[tool.trl-migrate]` settings from the nearest pyproject.toml that has them; flags win.

```toml
[tool.trl-migrate]
target = "grpo"            # rloo (default) | grpo
select = ["TRL1"]          # rule codes or prefixes
ignore = ["TRL102"]
exclude = ["legacy/", "*_pb2.py"]   # .gitignore-style, relative to this pyproject.toml
jobs = 2
```
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import tomlkit  # reads TOML on Python 3.10 too (tomllib is 3.11+), already a dependency for compat

TABLE = "trl-migrate"
TARGETS = ("rloo", "grpo")


class ConfigError(ValueError):
    """A [tool.trl-migrate] table that is not valid; the message names the file and the key."""


@dataclasses.dataclass(frozen=True)
class Settings:
    target: str = "rloo"
    target_set: bool = False  # the table names a target (else the default, chosen per file)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    jobs: int | None = None
    source: str | None = None  # the pyproject.toml they came from

    @property
    def root(self) -> str:
        """Where `exclude` patterns are anchored."""
        return os.path.dirname(self.source) if self.source else os.getcwd()


def find(start: str) -> str | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.trl-migrate] table."""
    current = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(current, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _has_table(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return False
    return TABLE in text and bool(_table(path, text))


def _table(path: str, text: str) -> dict[str, Any]:
    try:
        doc = tomlkit.parse(text).unwrap()
    except Exception as e:  # tomlkit raises its own ParseError with line and column
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    table = doc.get("tool", {}).get(TABLE)
    return table if isinstance(table, dict) else {}


def load(start: str) -> Settings:
    """Settings for a run over paths at or below `start` (defaults when no table is found)."""
    path = find(start)
    if path is None:
        return Settings()
    with open(path, encoding="utf-8") as fh:
        table = _table(path, fh.read())
    return parse(table, source=path)


def parse(table: dict[str, Any], *, source: str) -> Settings:
    known = {f.name for f in dataclasses.fields(Settings)} - {"source"}
    for key in table:
        if key not in known:
            raise ConfigError(
                f"{source}: unknown key {key!r} in [tool.{TABLE}]; known keys: "
                f"{', '.join(sorted(known))}"
            )
    values: dict[str, Any] = {"source": source}
    if "target" in table:
        if table["target"] not in TARGETS:
            raise ConfigError(
                f"{source}: [tool.{TABLE}] target must be one of {', '.join(TARGETS)}; got "
                f"{table['target']!r}"
            )
        values["target"] = table["target"]
        values["target_set"] = True
    for key in ("select", "ignore", "exclude"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{source}: [tool.{TABLE}] {key} must be a list of strings")
            values[key] = tuple(value)
    if "jobs" in table:
        if (
            not isinstance(table["jobs"], int)
            or isinstance(table["jobs"], bool)
            or table["jobs"] < 1
        ):
            raise ConfigError(f"{source}: [tool.{TABLE}] jobs must be a positive integer")
        values["jobs"] = table["jobs"]
    return Settings(**values)
