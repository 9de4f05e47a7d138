"""TRL103's edits for parsed configs: where the script-only dataclass goes, its class statement, and
the parser's tuple of dataclasses with it appended."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import libcst as cst

from codemods import ppo
from codemods.edits import is_docstring, is_import_block

if TYPE_CHECKING:
    from codemods.rules.ppo_config.parsed import Collected, Move, Parser


def insert_at(seen: Collected, p: Parser) -> int | None:
    """After the leading imports, where `import dataclasses` will be; never after the parser's
    code."""
    body = seen.module.body
    at = 1 if body and is_docstring(body[0]) else 0
    while at < len(body) and _single_import(body[at]):
        at += 1
    if seen.dataclasses_import is not None:
        top, module_level = seen.dataclasses_import
        if not module_level:
            return None  # AddImportsVisitor would think `dataclasses` is imported already
        at = max(at, top + 1)
    while at < len(body) and is_import_block(body[at]):
        at += 1
    first_use = min([p.top, *(top for _, top in p.uses)])
    return at if at <= first_use else None


def _single_import(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))
    )


def unique_name(name: str, taken: set[str]) -> str:
    n, out = 2, name
    while out in taken:
        out, n = f"{name}{n}" if name[0].isupper() else f"{name}_{n}", n + 1
    return out


# -- edits
# ---------------------------------------------------------------------------------------------
def appended(seq: cst.Tuple | cst.List, name: str) -> cst.Tuple | cst.List:
    """`(a, b)` -> `(a, b, name)`, keeping the literal's separators and trailing comma."""
    elements = list(seq.elements)
    last = elements[-1]
    sep = (
        elements[-2].comma
        if len(elements) > 1 and isinstance(elements[-2].comma, cst.Comma)
        else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    trailing = last.comma
    if (
        len(elements) == 1
        and isinstance(trailing, cst.Comma)
        and isinstance(trailing.whitespace_after, cst.SimpleWhitespace)
    ):
        trailing = cst.MaybeSentinel.DEFAULT  # `(a,)` -> `(a, name)`
    elements[-1] = last.with_changes(comma=sep)
    elements.append(cst.Element(value=cst.Name(name), comma=trailing))
    return seq.with_changes(elements=elements)


def class_statement(move: Move, config: str) -> cst.BaseStatement:
    """The written dataclass, with a comment that says who wrote it and why."""
    table = ppo.script_fields(move.era)
    names = ", ".join(f"`{f}`" for f in move.fields)
    them, they = ("it", "it is one of") if len(move.fields) == 1 else ("them", "they are")
    lines = [
        *textwrap.wrap(
            f"Written by trl-migrate (TRL103): {config} has no {names}.",
            width=100,
            initial_indent="# ",
            subsequent_indent="# ",
            break_long_words=False,
            break_on_hyphens=False,
        ),
        f"# TRL's PPO trainer did not use {them}, this script does: {they} its own arguments now "
        "(same flags).",
        "@dataclasses.dataclass",
        f"class {move.cls}:",
    ]
    for f in move.fields:
        default = table[f][
            "default"
        ]  # None for `int | None` (HfArgumentParser parses it: TRL needs Python 3.10)
        shown = json.dumps(default) if isinstance(default, str) else repr(default)  # False, None
        lines += [
            f"    {f}: {table[f].get('type', 'str')} = dataclasses.field(",
            f"        default={shown},",
            f'        metadata={{"help": {json.dumps(table[f]["help"])}}},',
            "    )",
        ]
    module = cst.parse_module("\n".join(lines) + "\n")
    stmt = module.body[0]
    empty = cst.EmptyLine(indent=False)
    return stmt.with_changes(leading_lines=[empty, empty, *module.header, *stmt.leading_lines])
