"""TRL102's second pass: swap unused value-head imports for the classes the rewrite needs, in
place."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from codemods import edits, symbols
from codemods.base import RuleTransformer
from codemods.edits import (
    KEEP,
    REMOVE,
    alias_asname,
    alias_name,
    imported_names,
    new_alias,
    rewrite_import_from,
)
from codemods.rules.value_heads.tables import REPLACEMENT
from migrate.kernel.findings import Severity


class FinishValueHeadImports(RuleTransformer):
    """Second pass: swap unused value-head imports for the classes the rewrite needs, in place.

    An import whose name is still used (say by an isinstance check left with a TODO) stays,
    with a TODO of its own: it would fail on TRL 1.13.
    """

    NAMES = ("ValueHead", "PreTrainedModelWrapper", "SUPPORTED_ARCHITECTURES")

    @classmethod
    def wanted(cls, state, names) -> bool:  # type: ignore[no-untyped-def]
        return bool(state.shared.value_head_imports) or super().wanted(state, names)

    def focus(self) -> tuple[str, ...]:
        return ("trl",)  # only imports of the value-head paths (all under trl)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.paths = {p: s.name for p, s in symbols.load().by_fate(symbols.VALUE_HEAD).items()}
        self.needed = set(self.state.shared.value_head_imports)
        self.have = imported_names(node, "transformers", read_after=self.needed)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        found = edits.named_import_from(original_node)
        if found is None:
            return updated_node
        node, module, aliases = found
        decisions: list = []
        for alias in aliases:
            cls = self.paths.get(f"{module}.{alias_name(alias)}")
            if cls is None:
                decisions.append(KEEP)
            elif self.import_has_fallback(node, alias_asname(alias) or alias_name(alias)):
                decisions.append(KEEP)
                self.todo(
                    alias,
                    f"`{cls}` does not exist in TRL 1.13, so this guarded import always fails and "
                    "the fallback runs: load the plain transformers model where the code needs "
                    "it, or drop the guard",
                )
            elif self.import_referenced(node, alias_asname(alias) or alias_name(alias)):
                decisions.append(KEEP)
                self.todo(
                    alias,
                    f"`{cls}` does not exist in TRL 1.13; finish the TODOs on its remaining uses, "
                    "then delete this import",
                )
            elif REPLACEMENT.get(cls) in self.needed - self.have:
                names = sorted(
                    self.needed - self.have
                )  # the replacement and its helpers, in one import
                decisions.append(("transformers", [new_alias(n) for n in names]))
                self.have.update(names)
            else:
                decisions.append(REMOVE)
                if any(f"`{cls}`" in f.message for f in self.state.findings if f.code == "TRL102"):
                    continue  # its uses' findings say what became of it
                self.report(
                    alias,
                    f"`{cls}` does not exist in TRL 1.13 and this file never uses it, so the "
                    "import was removed",
                    severity=Severity.INFO,
                )
        return rewrite_import_from(updated_node, decisions)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        for name in sorted(self.needed - self.have):  # the value head came in some other way (star)
            AddImportsVisitor.add_needed_import(self.context, "transformers", name)
        return updated_node
