"""What TRL101 knows of a module before rewriting it: the sentence for each old import path, the
names
the module binds and exports, and every qualified name it uses."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import symbols, walk
from codemods.base import RuleTransformer
from codemods.edits import (
    alias_asname,
    alias_name,
)
from codemods.symbols import Symbol

# Fates other rules own: they rewrite the uses, then the imports. When those rules are not
# selected (--select TRL101), this rule marks the names instead, so nothing is left unmarked.
OWNERS = {symbols.VALUE_HEAD: ("TRL102",), symbols.PPO: ("TRL103", "TRL104")}


_PPO_HINT = (
    "migrate to RLOOTrainer/RLOOConfig (or GRPOTrainer/GRPOConfig); rules TRL103-TRL107 do "
    "it (docs/rules.md)"
)


def dotted(path: str) -> cst.BaseExpression:
    return cst.parse_expression(path)


def message_for(sym: Symbol) -> str:
    """The one sentence a user reads about an old import path."""
    gone = f"removed in TRL {sym.gone_in}" if sym.gone_in else "gone in TRL 1.13"
    if sym.fate == symbols.MOVED and sym.deprecated:
        return (
            f"`{sym.path}` is deprecated in TRL 1.13 (it warns when used); import it from "
            f"`{sym.to}`"
        )
    if sym.fate == symbols.MOVED:
        return f"`{sym.path}` was {gone}; it lives at `{sym.to}`" + (
            f": {sym.hint}" if sym.hint else ""
        )
    if sym.fate == symbols.PPO:
        return f"`{sym.path}` was {gone} and TRL 1.13 has no PPO: {_PPO_HINT}"
    if sym.fate == symbols.VALUE_HEAD:
        return (
            f"`{sym.path}` was {gone}: load the plain transformers model (AutoModelForCausalLM); "
            "rule TRL102 does it"
        )
    hint = f": {sym.hint}" if sym.hint else "; TRL 1.13 has no replacement"
    return f"`{sym.path}` was {gone}{hint}"


class BoundAndUsedNames(walk.Visitor):
    """Names a module uses, and names it binds itself (for resolving star imports)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.bound: set[str] = set()
        self.exported: set[str] = set()  # the strings of `__all__ = [...]` / `__all__ += [...]`

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(
            isinstance(t.target, cst.Name) and t.target.value == "__all__" for t in node.targets
        ):
            self._export(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == "__all__":
            self._export(node.value)

    def _export(self, value: cst.BaseExpression) -> None:
        for element in getattr(value, "elements", ()):
            if isinstance(element.value, cst.SimpleString):
                self.exported.add(element.value.evaluated_value)  # type: ignore[arg-type]

    def visit_Name(self, node: cst.Name) -> None:
        self.used.add(node.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound.add(node.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.bound.add(node.target.value)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = alias_asname(node) or alias_name(node).split(".")[0]
        self.bound.add(bound)


class QualifiedUses(walk.Visitor):
    """Qualified names of every outermost name or attribute chain outside import statements."""

    def __init__(self, owner: RuleTransformer) -> None:
        self.owner = owner
        self.names: list[tuple[str, str]] = []  # (dotted text as written, qualified name)
        self._inner: set[int] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(id(node.value))
        self._record(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._record(node)

    def _record(self, node: cst.CSTNode) -> None:
        if id(node) not in self._inner and self.owner.resolves_to_trl(node):  # type: ignore[arg-type]
            text = get_full_name_for_node(node) or ""
            self.names.extend((text, q) for q in self.owner.qualified_names(node))
