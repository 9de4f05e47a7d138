"""Removed TRL helpers that TRL101 writes into the user's file (data: codemods/data/inline.toml)."""

from __future__ import annotations

import functools
from importlib import resources

import libcst as cst
import tomlkit


@functools.cache
def _table() -> dict[str, str]:
    """Old import path -> the source that replaces it (with __NAME__ for the bound name)."""
    doc = tomlkit.parse(
        resources.files("codemods").joinpath("data/inline.toml").read_text("utf-8")
    ).unwrap()
    return {
        path: entry["source"].strip("\n") + "\n"
        for entry in doc.values()
        for path in entry["paths"]
    }


def lookup(path: str) -> str | None:
    return _table().get(path)


def statements(source: str, name: str) -> list[cst.BaseStatement]:
    """The statements to write in place of the import, binding `name`; a class or function
    gets a blank line before it."""
    module = cst.parse_module(source.replace("__NAME__", name))
    body: list[cst.BaseStatement] = list(module.body)
    if not body:
        return body
    first = body[0]
    assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    first = first.with_changes(leading_lines=[*module.header, *first.leading_lines])
    if isinstance(first, (cst.ClassDef, cst.FunctionDef)):
        first = first.with_changes(
            leading_lines=[cst.EmptyLine(indent=False), *first.leading_lines]
        )
    body[0] = first
    return body
