"""The last pass of TRL103 and TRL104: an import of a PPO class nothing uses any more becomes an
import of the target names the rule wrote, in place; one still used keeps a TODO."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo
from codemods.base import FileState, Identifiers, RuleTransformer
from codemods.edits import (
    KEEP,
    REMOVE,
    alias_asname,
    alias_name,
    imported_names,
    new_alias,
    rewrite_import_from,
)


# -- imports: swap a PPO name for its target once nothing uses it
# ---------------------------------------
class FinishPPOImports(RuleTransformer):
    """Last pass of a PPO rule: an import of one of OWNED that nothing uses any more becomes an
    import of the target names the rule wrote (`needed`), in place (a module-level one
    joins the file's `from trl import ...`); one still used keeps a TODO: it fails on TRL 1.13."""

    OWNED: tuple[str, ...] = ()

    @staticmethod
    def needed(state: FileState) -> set[str]:
        """The target names the rule wrote (a field of `state.shared`)."""
        raise NotImplementedError

    @classmethod
    def wanted(cls, state: FileState, names: Identifiers) -> bool:
        return bool(cls.needed(state)) or names.has_any(cls.OWNED)

    STILL_USED = ""

    def successors(self) -> str:
        """The classes that take over from the owned ones, in words."""
        raise NotImplementedError

    def focus(self) -> tuple[str, ...]:
        return ("trl",)  # only `from trl... import` statements; uses are asked of the scope

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.to_import = set(self.needed(self.state))
        self.have = imported_names(node, "trl", read_after=self.to_import)
        self.top_trl = any(_is_import_from(s, "trl") for s in node.body)
        self.depth = 0
        self.star = any(_is_import_from(s, "trl", star=True) for s in node.body)
        self.before_try: list[set[str]] = []  # what was imported where each open `try:` began
        self.in_try_body: list[set[str]] = []  # ... and by its body, while a handler is read

    # An `except ImportError:` branch that does something and then imports the same names
    # again (an auto-installer's second try, SarbasishChowdhury2002/MedLLM) runs instead of the
    # `try:` body's imports, not after them: the names that body imported are not there for it.
    # A branch of imports only (a shim trying a second place) still collapses.
    def visit_Try(self, node: cst.Try) -> None:
        self.before_try.append(set(self.have))

    def leave_Try(self, original_node: cst.Try, updated_node: cst.Try) -> cst.Try:
        self.before_try.pop()
        return updated_node

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.in_try_body.append(self.have)
        if not all(
            isinstance(s, cst.SimpleStatementLine)
            and all(isinstance(b, (cst.Import, cst.ImportFrom, cst.Pass)) for b in s.body)
            for s in getattr(node.body, "body", ())
        ):
            self.have = set(self.before_try[-1])

    def leave_ExceptHandler(
        self, original_node: cst.ExceptHandler, updated_node: cst.ExceptHandler
    ) -> cst.ExceptHandler:
        self.have = self.in_try_body.pop() | self.have
        return updated_node

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self.depth -= 1
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        found = edits.named_import_from(original_node)
        if found is None:
            return updated_node
        node, module, aliases = found
        if not (module == "trl" or module.startswith("trl.")):
            return updated_node
        decisions: list = []
        for alias in aliases:
            name = alias_name(alias)
            if name not in self.OWNED or ppo.elsewhere(f"{module}.{name}"):
                decisions.append(KEEP)
            elif self.import_has_fallback(node, alias_asname(alias) or name):
                decisions.append(KEEP)
                self.todo(
                    alias,
                    f"`{module}.{name}` does not exist in TRL 1.13, so this guarded import always "
                    "fails and the fallback runs: port the code that needs it to "
                    f"{self.successors()}, or drop the guard",
                )
            elif self.import_referenced(node, alias_asname(alias) or name):
                decisions.append(KEEP)
                self.todo(alias, f"`{module}.{name}` does not exist in TRL 1.13; {self.STILL_USED}")
            else:
                wanted = sorted(self.to_import - self.have)
                self.have.update(wanted)
                if wanted and module != "trl" and self.depth == 0 and self.top_trl:
                    for n in wanted:  # joins the module's `from trl import ...`
                        AddImportsVisitor.add_needed_import(self.context, "trl", n)
                    wanted = []
                decisions.append(("trl", [new_alias(n) for n in wanted]) if wanted else REMOVE)
                mentioned = any(f"`{name}`" in f.message for f in self.state.findings)
                self.report(
                    alias,
                    f"`{module}.{name}` does not exist in TRL 1.13; "
                    + (
                        f"imported {', '.join(wanted)} in its place"
                        if wanted
                        else "its uses were rewritten and the import removed"
                        if mentioned
                        else "this file never uses it, so the import was removed"
                    ),
                )
        return rewrite_import_from(updated_node, decisions)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.star:  # the PPO name came from a star import of a module TRL 1.13 lacks
            for name in sorted(self.to_import - self.have):
                AddImportsVisitor.add_needed_import(self.context, "trl", name)
        return updated_node


def _is_import_from(stmt: cst.CSTNode, source: str, *, star: bool = False) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.ImportFrom)
        and stmt.body[0].module is not None
        and not stmt.body[0].relative
        and get_full_name_for_node(stmt.body[0].module) == source
        and isinstance(stmt.body[0].names, cst.ImportStar) == star
    )
