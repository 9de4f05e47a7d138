"""TRL104: references to the PPO trainer classes and to trainer variables: renamed to the target's,
or a TODO for a method or attribute TRL 1.13's trainer lacks."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo
from codemods.rules.ppo_trainer.state import (
    LOOP_METHODS,
    REMOVED_CALL_TODO,
    TrainerPass,
)
from migrate.kernel.findings import Severity


class TrainerReferences(TrainerPass):
    """References to the trainer class and variables: renamed, or a TODO for a method 1.13 lacks."""

    def _assigned_var(self, call: cst.Call) -> str | None:
        return next((v for v, c in self.assignments.items() if c is call), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            for t in node.targets:
                name = get_full_name_for_node(t.target)
                if name:
                    self.assignments[name] = node.value

    def _renamed(self, ref: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(ref, cst.Name):
            self.state.shared.trainer_imports.add(self.new_name)
            return cst.Name(self.new_name)
        if (get_full_name_for_node(ref) or "").split(".")[0] == "trl":
            return cst.parse_expression(f"trl.{self.new_name}")
        return None

    # -- uses of the trainer: methods and attributes
    # ------------------------------------------------
    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        owner = get_full_name_for_node(original_node.value) or ""
        inner = original_node.value
        if (
            isinstance(inner, cst.Attribute)
            and inner.attr.value == "config"
            and (get_full_name_for_node(inner.value) or "") in self.trainer_vars
            and not self.in_import
        ):
            return self._config_field(original_node, updated_node, owner)
        handed = (
            owner not in self.trainer_vars
            and bool(self.param_trainers)
            and (self.function_of(original_node), owner) in self.param_trainers
        )
        if (owner not in self.trainer_vars and not handed) or self.in_import:
            return self._reference(original_node, updated_node)
        attr = original_node.attr.value
        if id(original_node) in self._dropped and attr == "dataloader":
            return updated_node  # in a statement that only showed it: dropped (rewrite.py)
        if attr in LOOP_METHODS:
            if owner in self.loop_vars and (attr == "step" or id(original_node) in self.in_loops):
                return updated_node  # TRL106's: the loop is rewritten whole, or gets its TODO
            if attr == "dataloader":
                self.todo(
                    original_node,
                    f"`{owner}.dataloader` was the legacy trainer's own DataLoader (batches of "
                    "the config's `batch_size` prompts, shuffled, the last partial batch "
                    f"dropped); {self.new_name} has none: it builds its batches inside "
                    f"`{owner}.train()` (`{owner}.get_train_dataloader()` gives them, in other "
                    "sizes), so compute what this reads from the dataset instead",
                )
            else:
                self.todo(
                    original_node,
                    f"`{owner}.{attr}` belongs to the legacy PPO loop, which TRL 1.13 does not "
                    f"have: generation and updates happen inside `{owner}.train()`",
                )
            return updated_node
        row = self.methods.get(attr)
        if id(original_node) in self._dropped:
            self.todo(
                original_node,
                REMOVED_CALL_TODO.format(owner=owner, cls=self.new_name),
                severity=Severity.WARNING,
            )
        elif row is None:
            self.todo(original_node, f"`{owner}.{attr}` has no counterpart on {self.new_name}")
        elif row["kind"] == "rename":
            self.report(
                original_node, f"`{owner}.{attr}` is `{owner}.{row['to']}` on {self.new_name}"
            )
            return updated_node.with_changes(attr=cst.Name(row["to"]))
        elif row["kind"] == "todo":
            self.todo(original_node, row["todo"])
        elif attr == "current_device":
            self.report(original_node, f"`{owner}.current_device` is `{owner}.accelerator.device`")
            return cst.parse_expression(
                f"{edits.code(updated_node.value).strip()}.accelerator.device"
            )
        return updated_node

    def _config_field(
        self, original_node: cst.Attribute, updated_node: cst.Attribute, config: str
    ) -> cst.BaseExpression:
        """`trainer.config.field` (`trainer.args.field` now): a field the new config has
        reads as it did; one it renames takes the new name (`ppo_epochs` -> `num_iterations`,
        as TRL103 renamed the keyword); one it lacks would raise AttributeError, and gets the
        reason as a TODO (seen in soniyachavan05/RLHF: `ppo_trainer.config.steps`)."""
        attr = original_node.attr.value
        fields = ppo.config_fields(self.target)
        if attr in fields:
            return updated_node
        table = ppo.mapping()
        tables = (
            ("legacy_config",)
            if self.file_era == ppo.LEGACY
            else ("v2_config",)
            if self.file_era is not None
            else ("legacy_config", "v2_config")
        )
        rows = [table[t][attr] for t in tables if attr in table[t]]
        renamed = [r["to"] for r in rows if r["kind"] == "rename" and r.get("to") in fields]
        new = config.rpartition(".")[0] + ".args"
        if renamed:
            self.report(
                original_node,
                f"`{config}.{attr}` is `{new}.{renamed[0]}` on {self.new_name} (the config "
                "field TRL103 renamed)",
            )
            return updated_node.with_changes(attr=cst.Name(renamed[0]))
        row = rows[-1] if rows else {}
        why = (
            f"it counts `{row['to']}` instead; the conversion is in docs/rules.md, TRL103"
            if row.get("kind") == "special" and row.get("to")
            else row.get("todo") or row.get("why") or ""
        )
        self.todo(
            original_node,
            f"`{config}.{attr}`: {ppo.target_config(self.target)} (`{new}`) has no `{attr}`"
            + (f" ({why})" if why else "")
            + ": keep the value in a variable of your own",
        )
        return updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def mutation_message(self, found: tuple[str, str | None]) -> str:
        return (
            f"this changes `{found[0]}`, which TRL 1.13 removed; `{self.new_name}` is no drop-in "
            "(no value model, no step(), generation inside train()): port the change to it by hand"
        )

    def retired_message(self, found: tuple[str, str | None]) -> str | None:
        if found[0] in ppo.TRAINER_HELPERS:
            return f"`{found[0]}` was part of PPOTrainer and is gone in TRL 1.13"
        return None

    def renamed_message(self, found: tuple[str, str | None]) -> tuple[str, Severity]:
        return f"`{found[0]}` was removed; `{self.new_name}` takes its place", Severity.ERROR

    def unsafe_reference(self, node: cst.CSTNode, found: tuple[str, str | None]) -> str | None:
        """A reference to the PPO trainer class that code builds elsewhere, with PPO's
        arguments (`trainer_class = trl.PPOTrainer`, then `trainer_class(config=..., ...)`,
        JulesGM/Marg-Li-CoT): renamed, it would hand the successor arguments it does not take,
        unseen. An annotation, an `isinstance`/`issubclass` check or a class's base (TRL107's)
        is renamed."""
        place = self.reference_place(node)
        if place is None:
            return None
        outer = place.outer
        if isinstance(outer, cst.ClassDef):
            return None
        if isinstance(outer, cst.Call) and get_full_name_for_node(outer.func) in (
            "isinstance",
            "issubclass",
            "super",  # `super(PPOTrainer, self)` in a subclass: the base's rename (TRL107's)
        ):
            return None
        if isinstance(place.holder, cst.Call) and place.holder.func is place.child:
            return None  # the class called: call.py's
        return (
            f"`{found[0]}` is used here other than as a type, in a check or as a base class; "
            f"TRL 1.13 has no `{found[0]}`, and `{self.new_name}` takes other arguments (reward "
            "functions, no value model, no step(), generation inside train()): where this class "
            f"is built, write the call out as `{self.new_name}(...)` following docs/rules.md "
            "(TRL104)"
        )
