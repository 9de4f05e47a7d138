"""TRL101's first pass: every `from trl... import` / `import trl...` whose path TRL 1.13 moved goes
to
its new home; removed ones get a TODO (the symbol table says which is which)."""

from __future__ import annotations

import difflib

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import inline, symbols, walk
from codemods.base import RuleTransformer
from codemods.edits import (
    KEEP,
    REMOVE,
    alias_asname,
    alias_name,
    import_from,
    new_alias,
    rewrite_import_from,
)
from codemods.rules.imports.gone import prefixes
from codemods.rules.imports.uses import (
    OWNERS,
    BoundAndUsedNames,
    QualifiedUses,
    dotted,
    message_for,
)
from codemods.symbols import Symbol
from migrate.kernel.findings import Severity


class RewriteImports(inline.WritesIn, RuleTransformer):
    def __init__(self, context, state) -> None:  # type: ignore[no-untyped-def]
        super().__init__(context, state)
        self.table = symbols.load()

    def focus(self):  # type: ignore[no-untyped-def]
        return self.trl_focus()  # trl imports, and uses of the names they bind

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._module = node
        self._bound: BoundAndUsedNames | None = None
        self._qualified: list[tuple[str, str]] | None = None

    # Whole-module facts, gathered on first need (most files have no star import of trl and
    # no import of a gone module, and never ask).
    def _bound_and_used(self) -> BoundAndUsedNames:
        if self._bound is None:
            self._bound = BoundAndUsedNames()
            walk.visit(self._module, self._bound)
        return self._bound

    @property
    def _free(self) -> set[str]:
        names = self._bound_and_used()
        return names.used - names.bound

    @property
    def _exported(self) -> set[str]:
        return self._bound_and_used().exported

    @property
    def _uses(self) -> list[tuple[str, str]]:
        if self._qualified is None:
            uses = QualifiedUses(self)
            walk.visit(self._module, uses)
            self._qualified = uses.names
        return self._qualified

    def _still_used(self, module: str, binding: str | None = None) -> list[str]:
        """Uses of `module` (or names under it), made through the local name `binding`
        (default: the module's own dotted name), that this pass will not rewrite away."""
        local = binding or module
        out = []
        for text, use in self._uses:
            if not (text == local or text.startswith(local + ".")):
                continue
            if use == module or use.startswith(module + "."):
                sym = self.table.get(use)
                if sym is None or sym.fate != symbols.MOVED:
                    out.append(use)
        return out

    def _unused_gone_import(self, alias: cst.ImportAlias, module: str, name: str | None) -> bool:
        """Schedule removal of an import of a gone module whose every use is rewritten."""
        self.state.shared.gone_modules.add(module)  # GoneModuleImports runs
        full = f"{module}.{name}" if name else module
        binding = alias_asname(alias) or (name if name else None)
        if self._still_used(full, binding):
            return False
        if binding is None and self._still_used(module.split(".")[0]):
            return False  # `import trl.core` also binds `trl`, which other code uses: leave_Import
        RemoveImportsVisitor.remove_unused_import(self.context, module, name, alias_asname(alias))
        version = self.table.gone_modules.get(full) or self._gone_version(full)
        self.report(
            alias,
            f"module `{full}` does not exist in TRL 1.13 (removed in TRL {version}); "
            "its uses were rewritten and the import removed",
        )
        return True

    # -- attribute use: trl.core.set_seed(...) -------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = alias_name(alias)
            if self._gone_module(module):
                self._unused_gone_import(alias, module, None)

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        names = []
        for orig, alias in zip(original_node.names, updated_node.names):
            module = alias_name(alias)
            root = module.split(".")[0]
            if (
                alias.asname is None
                and module != root
                and self._gone_module(module)
                and not self._still_used(module)
                and self._still_used(root)
            ):
                # `import trl.core` when only `trl.X` is used: keep the binding, drop the gone
                # module
                self.report(
                    orig,
                    f"module `{module}` does not exist in TRL 1.13; this file only uses "
                    f"`{root}` through it, so `import {root}` stays",
                )
                alias = alias.with_changes(name=cst.Name(root))
            names.append(alias)
        if all(a is b for a, b in zip(names, updated_node.names)):
            return updated_node
        return updated_node.with_changes(names=names)

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if self.in_import or not self.resolves_to_trl(original_node):
            return updated_node
        for qname in sorted(self.qualified_names(original_node)):
            sym = self.table.get(qname)
            if sym is None or self._owned(sym):
                continue
            if sym.fate == symbols.MOVED:
                AddImportsVisitor.add_needed_import(self.context, sym.to_module)
                self.report(original_node, message_for(sym), severity=self._severity(sym))
                return dotted(sym.to)
            self.todo(original_node, message_for(sym))
            break
        return updated_node

    # -- from X import a, b as c ----------------------------------------------------------------
    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        if len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.ImportFrom):
            return updated_node
        node = updated_node.body[0]
        if node.relative or node.module is None:
            return updated_node  # relative imports are a package's own business
        module = get_full_name_for_node(node.module) or ""
        if not (module == "trl" or module.startswith("trl.")):
            return updated_node
        if isinstance(node.names, cst.ImportStar):
            return self._star(original_node, updated_node, module)
        return self._names(original_node, updated_node, node, module)

    def _names(self, original, updated, node: cst.ImportFrom, module: str):  # type: ignore[no-untyped-def]
        assert not isinstance(node.names, cst.ImportStar)
        decisions: list = []
        written: list[
            cst.BaseStatement
        ] = []  # definitions of removed helpers (codemods/data/inline.toml)
        for alias, orig_alias in zip(node.names, original.body[0].names):
            name = alias_name(alias)
            full = f"{module}.{name}"
            known = self.table.get(full)
            sym = known or self.table.same_name(full)
            written_in = inline.lookup(full) or (
                None if known is not None else inline.lookup_reexport(full)
            )
            decisions.append(KEEP)
            if sym is None:
                if self.table.module_gone(full):  # `from trl import core`: a gone submodule
                    self._unused_gone_import(orig_alias, module, name)
                elif self._gone_module(module):
                    near = difflib.get_close_matches(
                        name, sorted(self.table.names_by_module.get(module, {})), n=1, cutoff=0.8
                    )
                    self.todo(
                        orig_alias,
                        f"`{module}` does not exist in TRL 1.13; `{name}` has no known new home"
                        + (
                            f" (no TRL release had `{full}`: misspelt `{near[0]}`? correct it "
                            "and run trl-migrate again)"
                            if near
                            else ""
                        ),
                    )
            elif sym.fate == symbols.MOVED:
                asname = alias_asname(alias) or (name if sym.to_name != name else None)
                decisions[-1] = (sym.to_module, [new_alias(sym.to_name, asname)])
                self.report(orig_alias, message_for(sym), severity=self._severity(sym))
            elif sym.fate == symbols.REMOVED and written_in is not None:
                decisions[-1] = REMOVE
                stmts, where = self.write_in(
                    self.state.helpers, inline.key_of(full), alias_asname(alias) or name
                )
                written.extend(stmts)
                gone = f"removed in TRL {sym.gone_in}" if sym.gone_in else "gone in TRL 1.13"
                caveat = inline.note(full)
                self.report(
                    orig_alias,
                    f"`{full}` was {gone}; an equivalent definition was written into {where}"
                    + (f": {caveat}" if caveat else ""),
                    severity=Severity.WARNING if caveat else Severity.ERROR,
                )
            elif sym.fate == symbols.REMOVED and self._unused(
                original, alias_asname(alias) or name, module
            ):
                decisions[-1] = REMOVE
                gone = f"removed in TRL {sym.gone_in}" if sym.gone_in else "gone in TRL 1.13"
                self.report(
                    orig_alias,
                    f"`{full}` was {gone}; this file never uses it, so the import was removed",
                    severity=Severity.INFO,
                )
            elif not self._owned(sym):
                self.todo(orig_alias, message_for(sym))
        # leave_Module moves what is written at the top level below the imports.
        return self.followed_by(rewrite_import_from(updated, decisions), written, updated)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return self.place_written(updated_node)

    def _star(self, original, updated, module: str):  # type: ignore[no-untyped-def]
        exported = self.table.names_by_module.get(module, {})
        used = [exported[n] for n in sorted(self._free & exported.keys())]
        moved = [s for s in used if s.fate == symbols.MOVED]
        manual = [
            s
            for s in used
            if s.fate == symbols.REMOVED or (s.fate in OWNERS and not self._owned(s))
        ]
        for sym in manual:
            self.todo(
                original, f"`from {module} import *` provides `{sym.name}`: " + message_for(sym)
            )
        by_target: dict[str, list[cst.ImportAlias]] = {}
        for sym in moved:
            asname = sym.name if sym.to_name != sym.name else None
            by_target.setdefault(sym.to_module, []).append(new_alias(sym.to_name, asname))
            self.report(original, message_for(sym), severity=self._severity(sym))
        new_lines = [import_from(t, a) for t, a in by_target.items()]
        if self._gone_module(module) and not manual:
            if new_lines:
                new_lines[0] = new_lines[0].with_changes(leading_lines=updated.leading_lines)
                return cst.FlattenSentinel(new_lines)
            self.todo(original, f"`{module}` does not exist in TRL 1.13: remove this star import")
            return updated
        if not new_lines:
            return updated
        return cst.FlattenSentinel([updated, *new_lines])

    # -- helpers -----------------------------------------------------------------------------------
    def _unused(self, stmt: cst.SimpleStatementLine, bound: str, module: str) -> bool:
        """A removed name this file imports and never uses (nor lists in `__all__`). A `# noqa`
        on the line says it is a deliberate re-export, which a human must replace; comments above
        a statement that would vanish whole would be lost, so it keeps its TODO instead."""
        comment = stmt.trailing_whitespace.comment
        if comment is not None and "noqa" in comment.value:
            return False
        if any(line.comment is not None for line in stmt.leading_lines):
            names = stmt.body[0].names  # type: ignore[attr-defined]
            others = [
                self.table.get(f"{module}.{alias_name(a)}") for a in names if alias_name(a) != bound
            ]
            if not any(s is None or s.fate != symbols.REMOVED for s in others):
                return False
        return bound not in self._exported and not self.import_referenced(stmt.body[0], bound)  # type: ignore[arg-type]

    def _owned(self, sym: Symbol) -> bool:
        """Whether another selected rule takes this name."""
        return any(code in self.state.codes for code in OWNERS.get(sym.fate, ()))

    def _gone_module(self, module: str) -> bool:
        return any(self.table.module_gone(m) for m in prefixes(module))

    def _gone_version(self, module: str) -> str:
        return next(
            (self.table.gone_modules[m] for m in prefixes(module) if self.table.module_gone(m)), ""
        )

    @staticmethod
    def _severity(sym: Symbol) -> Severity:
        return Severity.WARNING if sym.deprecated else Severity.ERROR
