"""TRL101's second pass: imports of whole modules TRL 1.13 no longer has, still used after the
first."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import symbols
from codemods.base import RuleTransformer
from codemods.edits import (
    alias_name,
)


class GoneModuleImports(RuleTransformer):
    """Second pass: imports of modules TRL 1.13 no longer has, still used after the rewrite."""

    def __init__(self, context, state) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context, state)
        self.table = symbols.load()

    @classmethod
    def wanted(cls, state, names) -> bool:  # type: ignore[no-untyped-def]
        return bool(state.shared.gone_modules)

    def focus(self) -> tuple[str, ...]:
        return ("trl",)  # only imports of trl paths

    def visit_Import(self, node: cst.Import) -> None:
        self._flag(node, (alias_name(a) for a in node.names))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = get_full_name_for_node(node.module) or ""
        self._flag(node, (f"{module}.{alias_name(a)}" for a in node.names), exact=True)

    def _flag(self, node: cst.CSTNode, modules: Iterable[str], *, exact: bool = False) -> None:
        """TODO for each import of a gone module; `exact`: the name itself must be that module."""
        for module in modules:
            if self.table.get(module) is not None:
                continue  # a symbol, handled by the first pass
            candidates = [module] if exact else prefixes(module)
            gone = next((m for m in candidates if self.table.module_gone(m)), None)
            if gone is None:
                continue
            version = self.table.gone_modules[gone]
            when = f" (removed in TRL {version})" if version else ""
            self.todo(
                node,
                f"module `{gone}` does not exist in TRL 1.13{when}; "
                f"move what this file uses from it",
            )


def prefixes(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
