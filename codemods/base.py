"""What every rule shares: the Rule contract, the per-file context, findings and TODO comments.

A rule is a libcst codemod (`RuleTransformer`) plus metadata: a stable code, a name that is
also its module name and CLI id, a one-line summary and a before/after example. Rules report
findings through `RuleTransformer.report`, and leave TODOs with `RuleTransformer.todo`; the
TODO is attached above the statement being visited and never duplicated on a rerun.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import PositionProvider, QualifiedNameProvider, ScopeProvider

from migrate.findings import Finding, Fix, Severity

TODO_PREFIX = "# TODO(trl-migrate {code}): "


@dataclasses.dataclass(frozen=True)
class Options:
    """Settings that change what rules write. Picklable: it travels to worker processes."""

    target: str = "rloo"  # rloo | grpo: the trainer PPO code moves to


@dataclasses.dataclass
class FileState:
    """Per-file state shared by the rules that run on one file."""

    path: str
    options: Options
    findings: list[Finding] = dataclasses.field(default_factory=list)
    scratch: dict[str, set[str]] = dataclasses.field(default_factory=dict)  # between passes of a rule
    codes: frozenset[str] = frozenset()  # the rules running on this file


class RuleTransformer(VisitorBasedCodemodCommand):
    """Base transformer: findings with positions, and TODO comments on enclosing statements."""

    METADATA_DEPENDENCIES: ClassVar[Sequence[type]] = (PositionProvider, QualifiedNameProvider)
    CODE: ClassVar[str] = ""

    def __init__(self, context: CodemodContext, state: FileState) -> None:
        super().__init__(context)
        self.state = state
        self._pending: list[list[str]] = []
        self._first: cst.CSTNode | None = None
        self._import_depth = 0  # > 0 while inside an import statement
        self._header: set[str] = set()  # comments above the first statement live in Module.header

    def visit_Module(self, node: cst.Module) -> None:
        self._first = node.body[0] if node.body else None
        self._header = {line.comment.value for line in node.header if line.comment is not None}

    @classmethod
    def wanted(cls, state: FileState) -> bool:
        """Whether this pass can do anything given what earlier passes left in `state`."""
        return True

    # -- findings ---------------------------------------------------------------------------
    def report(
        self, node: cst.CSTNode, message: str, *, severity: Severity = Severity.ERROR, fix: Fix = Fix.APPLIED
    ) -> None:
        try:
            pos = self.get_metadata(PositionProvider, node).start
            line, col = pos.line, pos.column + 1
        except KeyError:  # a node built by this rule has no position; report the statement's
            line, col = 0, 0
        self.state.findings.append(
            Finding(self.CODE, severity, self.state.path, line, col, message, fix=fix)
        )

    def todo(self, node: cst.CSTNode, message: str, *, severity: Severity = Severity.ERROR) -> None:
        """A manual finding plus a `# TODO(trl-migrate CODE): message` above the statement."""
        self.report(node, message, severity=severity, fix=Fix.MANUAL)
        if self._pending:
            self._pending[-1].append(message)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        try:
            return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}
        except KeyError:
            return set()

    def import_referenced(self, import_node: cst.ImportFrom, bound: str) -> bool:
        """Whether the name `bound` by this import is still used (needs ScopeProvider metadata)."""
        scope = self.get_metadata(ScopeProvider, import_node, None)
        if scope is None:
            return True
        return any(a.references for a in scope.assignments[bound] if getattr(a, "node", None) is import_node)

    # -- statement frames: where TODOs land --------------------------------------------------
    @property
    def in_import(self) -> bool:
        """Inside `import ...` / `from ... import ...`: names there are bindings, not uses."""
        return self._import_depth > 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._pending.append([])
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self._import_depth += 1
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if isinstance(original_node, (cst.Import, cst.ImportFrom)):
            self._import_depth -= 1
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            messages = self._pending.pop()
            if messages:
                seen = self._header if original_node is self._first else set()
                result = _attach_todos(result, self.CODE, messages, seen)
        return result


def todo_comment(code: str, message: str) -> str:
    return TODO_PREFIX.format(code=code) + " ".join(message.split())


def _attach_todos(result, code: str, messages: list[str], seen: set[str]):  # type: ignore[no-untyped-def]
    """Put TODO lines above the first statement of `result` (a node or a FlattenSentinel)."""
    if isinstance(result, cst.FlattenSentinel):
        nodes = list(result.nodes)
        if nodes:
            nodes[0] = _with_todos(nodes[0], code, messages, seen)
        return cst.FlattenSentinel(nodes)
    if isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        return _with_todos(result, code, messages, seen)
    return result  # removed statement: nothing to annotate


def _with_todos(stmt, code: str, messages: list[str], seen: set[str]):  # type: ignore[no-untyped-def]
    existing = {line.comment.value for line in stmt.leading_lines if line.comment is not None} | seen
    added = []
    for message in dict.fromkeys(messages):  # keep order, drop repeats
        text = todo_comment(code, message)
        if text not in existing:
            added.append(cst.EmptyLine(comment=cst.Comment(text)))
            existing.add(text)
    if not added:
        return stmt
    return stmt.with_changes(leading_lines=[*stmt.leading_lines, *added])


class Rule:
    """A rule's metadata and its transformer class; instances live in codemods.RULES."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    before: ClassVar[str]
    after: ClassVar[str]
    transformers: ClassVar[Sequence[type[RuleTransformer]]]
    triggers: ClassVar[tuple[str, ...]] = ()  # a file must contain one of these to need the rule

    def triggered(self, text: str) -> bool:
        return not self.triggers or any(t in text for t in self.triggers)
