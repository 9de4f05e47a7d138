"""Removed helpers written into the user's file in place of their import (data:
codemods/data/inline.toml): TRL helpers by TRL101, transformers ones by TRL108. `WritesIn` is
the part both rules share: the written statements follow the import, and at the top level move
below the import block it belongs to."""

from __future__ import annotations

import functools
from importlib import resources

import libcst as cst
import tomlkit

from codemods import edits


@functools.cache
def _entries() -> dict[str, dict]:
    return tomlkit.parse(  # type: ignore[no-any-return]
        resources.files("codemods").joinpath("data/inline.toml").read_text("utf-8")
    ).unwrap()


@functools.cache
def _table() -> dict[str, str]:
    """Old import path -> the source that replaces it (with __NAME__ for the bound name)."""
    return {
        path: entry["source"].strip("\n") + "\n"
        for entry in _entries().values()
        for path in entry["paths"]
    }


def lookup(path: str) -> str | None:
    return _table().get(path)


def note(path: str) -> str:
    """Which release's behaviour the definition for `path` follows, when releases differed."""
    for entry in _entries().values():
        if path in entry["paths"]:
            return str(entry.get("note", ""))
    return ""


def lookup_reexport(path: str) -> str | None:
    """The definition for a path the symbol table lacks but whose name it knows (`PPODecorators`
    re-exported by `trl.trainer.ppo_trainer`, which imported it from `trl.core`): the one source
    every TRL path of that name has, or None when there is none or they differ."""
    name = path.rpartition(".")[2]
    found = {
        source
        for old, source in _table().items()
        if old.split(".")[0] == path.split(".")[0] and old.rpartition(".")[2] == name
    }
    return found.pop() if len(found) == 1 else None


def paths(package: str) -> list[str]:
    """The old import paths of `package` (`transformers`) that have a written-in definition."""
    return sorted(p for p in _table() if p.split(".")[0] == package)


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


class WritesIn:
    """Mixin of a RuleTransformer that writes definitions in place of imports."""

    _block_depth = 0
    _top_written: frozenset[int] = frozenset()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block_depth += 1

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self._block_depth -= 1
        return updated_node

    def followed_by(self, result, written: list[cst.BaseStatement], original):  # type: ignore[no-untyped-def]
        """`result` (what became of the import statement `original`) followed by `written`."""
        if not written:
            return result
        for i in range(1, len(written)):  # a blank line after a written class or function
            if isinstance(written[i - 1], (cst.ClassDef, cst.FunctionDef)) and not edits.leading(
                written[i]
            ):
                written[i] = written[i].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        if isinstance(result, cst.RemovalSentinel):
            first = written[0]
            written[0] = first.with_changes(
                leading_lines=[*original.leading_lines, *edits.leading(first)]
            )
            head = []
        else:
            head = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
        if self._block_depth == 0:  # place_written moves them below the import block
            self._top_written = self._top_written | {id(stmt) for stmt in written}
        return cst.FlattenSentinel([*head, *written])

    def place_written(self, module: cst.Module) -> cst.Module:
        """Definitions written in place of a module-level import go after the import block it
        was part of, so the imports stay together at the top."""
        body = list(module.body)
        written = [n for n in body if id(n) in self._top_written]
        if not written:
            return module
        start = body.index(written[0])
        end = start
        for i in range(start, len(body)):
            if id(body[i]) in self._top_written:
                continue
            if not edits.is_import_block(body[i]):
                break
            end = i
        if end == start:
            return module
        rest = [n for n in body if id(n) not in self._top_written]
        at = rest.index(body[end]) + 1
        return module.with_changes(body=[*rest[:at], *written, *rest[at:]])


def after_imports(module: cst.Module, written: list[cst.BaseStatement]) -> cst.Module:
    """`module` with `written` (top-level definitions) after its leading docstring and import
    block, two blank lines either side."""
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        if edits.is_import_block(stmt) or (i == 0 and edits.is_docstring(stmt)):
            at = i + 1
        else:
            break
    two = [cst.EmptyLine(indent=False), cst.EmptyLine(indent=False)]
    first = written[0]
    written = [first.with_changes(leading_lines=two), *written[1:]]
    rest = body[at:]
    if rest:
        head = rest[0]
        comments = [line for line in edits.leading(head) if line.comment is not None]
        rest[0] = head.with_changes(leading_lines=[*two, *comments])
    return module.with_changes(body=[*body[:at], *written, *rest])
