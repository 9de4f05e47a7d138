"""Edit helpers shared by rules: rewrite a `from X import ...` statement in place.

Moving a name to another module keeps the statement where it was (module level, function
body, try/except), so lazy and guarded imports stay lazy and guarded.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import walk

KEEP = "keep"
REMOVE = "remove"
# A decision per alias: KEEP, REMOVE, or (new module, new aliases) to replace it.
Decision = str | tuple[str, Sequence[cst.ImportAlias]]


def alias_name(alias: cst.ImportAlias) -> str:
    return get_full_name_for_node(alias.name) or ""


def alias_asname(alias: cst.ImportAlias) -> str | None:
    return get_full_name_for_node(alias.asname.name) if alias.asname is not None else None


def new_alias(name: str, asname: str | None = None) -> cst.ImportAlias:
    return cst.ImportAlias(
        name=cst.Name(name), asname=cst.AsName(name=cst.Name(asname)) if asname else None
    )


def import_from(module: str, aliases: Sequence[cst.ImportAlias]) -> cst.SimpleStatementLine:
    fixed = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
    return cst.SimpleStatementLine(
        body=[cst.ImportFrom(module=cst.parse_expression(module), names=fixed)]
    )  # type: ignore[arg-type]


def rewrite_import_from(stmt: cst.SimpleStatementLine, decisions: Sequence[Decision]):  # type: ignore[no-untyped-def]
    """Apply one decision per alias of the statement's only `from ... import` (not a star).

    A decision that moves a name to the statement's own module replaces it where it stands.

    Returns the statement unchanged when every decision is KEEP, a removal when nothing is
    left, the edited statement, or a FlattenSentinel of it and the new `from ... import`s.
    """
    node = stmt.body[0]
    assert isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar)
    if all(d == KEEP for d in decisions):
        return stmt
    here = (
        get_full_name_for_node(node.module)
        if node.module is not None and not node.relative
        else None
    )
    kept: list[cst.ImportAlias] = []
    moved: dict[str, list[cst.ImportAlias]] = {}
    for alias, decision in zip(node.names, decisions):
        if decision == KEEP:
            kept.append(alias)
        elif isinstance(decision, tuple) and decision[0] == here:  # same module: replace in place
            new = [
                a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                for a in decision[1]
            ]
            kept.extend([*new[:-1], new[-1].with_changes(comma=alias.comma)] if new else [])
        elif isinstance(decision, tuple):
            moved.setdefault(decision[0], []).extend(decision[1])
    new_lines = [import_from(module, aliases) for module, aliases in moved.items()]
    if not kept:
        if not new_lines:
            return cst.RemovalSentinel.REMOVE
        new_lines[0] = new_lines[0].with_changes(
            leading_lines=stmt.leading_lines, trailing_whitespace=stmt.trailing_whitespace
        )
        return new_lines[0] if len(new_lines) == 1 else cst.FlattenSentinel(new_lines)
    if isinstance(node.names[-1].comma, cst.MaybeSentinel):  # no trailing comma to keep
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    rest = stmt.with_changes(body=[node.with_changes(names=kept)])
    return cst.FlattenSentinel([rest, *new_lines]) if new_lines else rest


def is_import_block(stmt: cst.CSTNode) -> bool:
    """An import statement, or a `try:` whose body holds only imports (a guarded import)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
    if isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
        return all(is_import_block(s) for s in stmt.body.body)
    return False


def imported_names(module: cst.Module, source: str) -> set[str]:
    """Local names a file binds with `from source import name [as local]`, anywhere in it."""
    found: set[str] = set()

    class _Collect(walk.Visitor):
        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if (
                not node.relative
                and node.module is not None
                and not isinstance(node.names, cst.ImportStar)
                and get_full_name_for_node(node.module) == source
            ):
                found.update(alias_asname(a) or alias_name(a) for a in node.names)

    module.visit(_Collect())
    return found
