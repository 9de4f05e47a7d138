"""The libcst rules, registered in code order. Importing this never imports torch or the CLI."""

from __future__ import annotations

from collections.abc import Iterable

from codemods import rules as _rules  # noqa: F401  (imports every rule: each registers itself)
from codemods.base import Rule

RULES: tuple[Rule, ...] = tuple(cls() for _, cls in sorted(Rule.registry.items()))
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


class UnknownRuleError(ValueError):
    """A --select/--ignore entry that names no rule."""


def select(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[Rule, ...]:
    """Rules chosen by code or code prefix (`TRL1` selects TRL101, TRL102, ...) or by name."""
    chosen = list(select) or ["TRL"]
    dropped = list(ignore)
    for entry in [*chosen, *dropped]:
        if not _matching(entry):
            known = ", ".join(f"{r.code} ({r.name})" for r in RULES)
            raise UnknownRuleError(f"unknown rule {entry!r}; known rules: {known}")
    picked = {r.code for e in chosen for r in _matching(e)} - {
        r.code for e in dropped for r in _matching(e)
    }
    return tuple(r for r in RULES if r.code in picked)


def _matching(entry: str) -> list[Rule]:
    key = entry.strip()
    return [r for r in RULES if r.code.startswith(key.upper()) or r.name == key.lower()]
