"""After a loop is rewritten: imports only the loop used (`respond_to_batch`, `LengthSampler`, ...)
go."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits
from codemods.base import FileState
from codemods.edits import alias_asname, alias_name

RESPOND = "trl.core.respond_to_batch"


def drop_orphaned_imports(module: cst.Module, names: set[str], state: FileState) -> cst.Module:
    """Remove `from trl.core import respond_to_batch [as n]` for the `names` nothing uses any more,
    with TRL101's TODO above it; TRL101's finding for it becomes an applied one."""
    if not names:
        return module
    todo = f"`{RESPOND}`"

    def imports_it(alias: cst.ImportAlias, source: str) -> bool:
        return (
            f"{source}.{alias_name(alias)}" == RESPOND
            and (alias_asname(alias) or alias_name(alias)) in names
        )

    def fix(body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        out: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for stmt in body:
            node = (
                stmt.body[0]
                if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                else None
            )
            if (
                not isinstance(node, cst.ImportFrom)
                or node.relative
                or node.module is None
                or isinstance(node.names, cst.ImportStar)
                or not any(
                    imports_it(a, get_full_name_for_node(node.module) or "") for a in node.names
                )
            ):
                out.append(
                    stmt.with_changes(leading_lines=[*carried, *edits.leading(stmt)])
                    if carried
                    else stmt
                )
                carried = []
                continue
            source = get_full_name_for_node(node.module) or ""
            kept = [a for a in node.names if not imports_it(a, source)]
            lines = [
                ln
                for ln in edits.leading(stmt)
                if not (ln.comment and todo in ln.comment.value and "TRL101" in ln.comment.value)
            ]
            if kept:
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                out.append(
                    stmt.with_changes(
                        body=[node.with_changes(names=kept)], leading_lines=[*carried, *lines]
                    )
                )
                carried = []
            else:
                carried = [*carried, *lines]
        return out

    class _Fix(cst.CSTTransformer):
        def leave_IndentedBlock(
            self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
        ) -> cst.IndentedBlock:
            return updated_node.with_changes(
                body=fix(updated_node.body) or [cst.SimpleStatementLine([cst.Pass()])]
            )

    new = module.visit(_Fix())
    new = new.with_changes(body=fix(new.body))  # type: ignore[union-attr]
    if new.code != module.code:  # type: ignore[union-attr]
        state.resolve_todo(
            "TRL101",
            todo,
            f"{todo} is gone in TRL 1.13; TRL106 rewrote its uses, so the import is unused and "
            "was removed",
        )
    return new  # type: ignore[return-value]
