"""Shared test helpers for rule tables: run rules on text, check output parses and is stable."""

from __future__ import annotations

import ast
import textwrap

import codemods
from codemods.base import Options
from codemods.engine import fix_text
from migrate.kernel.findings import Finding


def run(
    src: str, *, select: tuple[str, ...] = (), target: str = "rloo"
) -> tuple[str, list[Finding]]:
    rules = codemods.select(select)
    return fix_text(src, path="t.py", rules=rules, options=Options(target=target))


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def assert_fixes(
    before: str, after: str, *, select: tuple[str, ...] = (), target: str = "rloo"
) -> list[Finding]:
    """`before` becomes exactly `after`, which parses and which a second run leaves alone."""
    out, findings = run(before, select=select, target=target)
    assert out == after, f"the rewrite:\n{out}\nexpected:\n{after}"
    ast.parse(out)
    again, _ = run(out, select=select, target=target)
    assert again == out, "second run changed the output"
    return findings


def assert_noop(src: str, *, select: tuple[str, ...] = ()) -> list[Finding]:
    out, findings = run(src, select=select)
    assert out == src
    return findings
