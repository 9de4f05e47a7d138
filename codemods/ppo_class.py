"""What the passes of TRL103 (configs) and TRL104 (trainers) share: the file's facts, the
subclasses and monkeypatches they leave to TRL107, and the one way a reference to a PPO class
is handled (renamed to the target class, or a TODO saying why not)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import libcst as cst

from codemods import ppo, walk
from codemods.base import RuleTransformer
from migrate.kernel.findings import Severity


@dataclasses.dataclass(frozen=True)
class ReferencePlace:
    """A class reference's place: `child` is the reference or the tuple/list holding it,
    `holder` the node above that (an `Arg`, an `Assign`, ...), `outer` the node an `Arg`
    belongs to (a `Call`, a `ClassDef`), `above` the node above that one, and `in_sequence`
    whether the reference sits in a tuple or list."""

    child: cst.CSTNode
    holder: cst.CSTNode | None
    outer: cst.CSTNode | None
    above: cst.CSTNode | None
    in_sequence: bool


class PPOClassPass(RuleTransformer):
    CLASSES: ClassVar[tuple[str, ...]] = ()  # the PPO classes this pass owns

    facts: ppo.FileFacts
    file_era: str | None  # the era the whole file reads as
    target: str  # rloo | grpo
    new_name: str  # the target class
    _handled: set[int]  # ids of nodes another rule owns or this pass already handled

    def target_class(self) -> str:
        raise NotImplementedError

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.facts = ppo.FileFacts(self)
        walk.visit(node, self.facts)
        self.file_era = self.facts.era()
        if self.file_era is not None:
            self.state.shared.ppo_era = self.file_era
        elif any(
            (self.facts.signals, self.facts.trainer_vars, self.facts.config_vars, self.facts.weak)
        ):
            # PPO code whose era its signals disagree on (or that only reads one era's config
            # fields, from no PPO class of trl's): TRL108 then says, not changes
            self.state.shared.ppo_era = self.state.shared.ppo_era or "unknown"
        self.target = self.state.target
        self.new_name = self.target_class()
        self._handled = set()
        self._methods: set[int] = set()  # ids of `X` in `X.__init__` and other dunder reads
        if self.state.target_reason and self.state.target_reason not in {
            f.message for f in self.state.findings
        }:
            self.report(node, self.state.target_reason, severity=Severity.INFO)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target: cst.BaseExpression = node.target  # a monkeypatch of a PPO class is TRL107's
        while isinstance(target, cst.Attribute):
            target = target.value
            self._handled.add(id(target))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:  # subclasses are TRL107's
            self._handled.add(id(base.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # `PPOTrainer.__init__(self, config=..., ...)` in a subclass: the arguments are PPO's,
        # which the successor's constructor does not take.
        if node.attr.value.startswith("__") and node.attr.value.endswith("__"):
            self._methods.add(id(node.value))

    # What each rule says; `found` is (the PPO class, its era or None).
    def mutation_message(self, found: tuple[str, str | None]) -> str:
        raise NotImplementedError

    def retired_message(self, found: tuple[str, str | None]) -> str | None:
        """Why a class has no successor at all, or None when the target class replaces it."""
        return None

    def unsafe_reference(self, node: cst.CSTNode, found: tuple[str, str | None]) -> str | None:
        """Why renaming this reference (not a call) could change what the code does, or None."""
        return None

    def reference_place(self, node: cst.CSTNode) -> ReferencePlace | None:
        """Where a reference to a PPO class stands, for `unsafe_reference`: None inside an
        annotation (where a rename changes nothing) or where the tree is not known."""
        tree = self.walked_tree()
        at = tree.index.get(id(node)) if tree is not None else None
        if at is None:
            return None
        nodes, parents = tree.nodes, tree.parents  # type: ignore[union-attr]
        up = parents[at]
        while up >= 0:
            if isinstance(nodes[up], cst.Annotation):
                return None
            up = parents[up]
        # out of a tuple or list of classes, to the node that holds it
        child, up = at, parents[at]
        while up >= 0 and isinstance(nodes[up], (cst.Element, cst.Tuple, cst.List)):
            child, up = up, parents[up]
        holder = nodes[up] if up >= 0 else None
        outer_at = parents[up] if isinstance(holder, cst.Arg) and up >= 0 else -1
        outer = nodes[outer_at] if outer_at >= 0 else None
        above = nodes[parents[outer_at]] if outer_at >= 0 and parents[outer_at] >= 0 else None
        return ReferencePlace(nodes[child], holder, outer, above, child != at)

    def renamed_message(self, found: tuple[str, str | None]) -> tuple[str, Severity]:
        raise NotImplementedError

    def _renamed(self, ref: cst.BaseExpression) -> cst.BaseExpression | None:
        raise NotImplementedError

    def _reference(self, original: Any, updated: Any) -> Any:
        """A name or attribute that may be a PPO class: renamed, or a TODO that says why not."""
        if self.in_import or id(original) in self._handled:
            return updated
        found = ppo.ppo_class(self.names_from(original, "trl"), self.CLASSES)
        if found is None:
            return updated
        self._handled.add(id(original))
        if self.in_mutation:
            self.todo(original, self.mutation_message(found))
            return updated
        if id(original) in self._methods:
            self.todo(
                original,
                f"this calls `{found[0]}`'s own method with PPO's arguments; `{self.new_name}` "
                "takes other ones (no value model, no step(), generation inside train()): port "
                "this call by hand",
            )
            return updated
        retired = self.retired_message(found) or self.unsafe_reference(original, found)
        if retired is not None:
            self.todo(original, retired)
            return updated
        new = self._renamed(original)
        if new is None:
            self.todo(original, f"`{found[0]}` is gone in TRL 1.13: use `trl.{self.new_name}`")
            return updated
        message, severity = self.renamed_message(found)
        self.report(original, message, severity=severity)
        return new
