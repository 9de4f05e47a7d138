"""TRL103: reads and writes of a config variable's fields, renamed to the target config's or
marked with a TODO when TRL 1.13 has no such field."""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import ppo
from codemods.rules.ppo_config.plan import Plan
from codemods.rules.ppo_config.state import ConfigPass
from migrate.kernel.findings import Severity


class ConfigReads(ConfigPass):
    """Reads and writes of a config variable's fields: renamed to the target's, or a TODO when 1.13
    has none."""

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        model = self.model_reads.get(id(original_node))
        if model is not None:
            var, field, old = model
            owner = var or get_full_name_for_node(original_node.value)
            self.report(
                original_node,
                f"ModelConfig's `{old}` is `{owner}.{field}` in TRL 1.13"
                + (
                    f" (the `--{old}` flag is `--{field}` now)"
                    if field != old
                    else f" ({self.new_name} took the `--{old}` flag)"
                ),
                severity=Severity.WARNING,
            )
            return updated_node.with_changes(value=cst.Name(owner), attr=cst.Name(field))  # type: ignore[arg-type]
        clash = self.clash_reads.get(id(original_node))
        if clash is not None:
            self.report(
                original_node,
                f"`{clash.field}` is read from `{clash.config_var}` now (the flag moved there "
                f"with {self.new_name})",
                severity=Severity.INFO,
            )
            return updated_node.with_changes(value=cst.Name(clash.config_var))  # type: ignore[arg-type]
        if id(original_node) in self.handed and not self.in_import:
            param, field = self.handed[id(original_node)]
            self.todo(
                original_node,
                f"`{param}.{field}`: `{param}` is handed the parsed PPO config, and "
                f"{self.new_name} has no `{field}`: add it to your own script-arguments dataclass "
                "and read it "
                "from there",
            )
            return updated_node
        if id(original_node) in self.moved:
            move, config, field = self.moved[id(original_node)]
            self.report(
                original_node,
                f"`{config}.{field}` is `{move.var}.{field}` now: {self.new_name} has no "
                f"`{field}`, so it moved to `{move.cls}`, a dataclass written into this file; the "
                f"`--{field}` flag is unchanged",
                severity=Severity.INFO,
            )
            return updated_node.with_changes(value=cst.Name(move.var))
        owner = get_full_name_for_node(original_node.value) or ""
        plan = self.reads.get(owner)
        if plan is None:  # a parameter of a function every call hands the config to
            plan = self.param_plans.get(id(original_node))
        field = original_node.attr.value
        if plan is not None and field in plan.reads and not self.in_import:
            how, text = plan.reads[field]
            if how == "attr":
                self.report(
                    original_node, f"`{owner}.{field}` is `{owner}.{text}` in the new config"
                )
                return updated_node.with_changes(attr=cst.Name(text))
            if how == "value" and id(original_node) not in self._targets:
                self.report(
                    original_node,
                    f"`{owner}.{field}` is not a field of the new config; its value {text} is used",
                )
                return cst.parse_expression(text)
            if (
                how == "expr"
                and id(original_node) not in self._targets
                and self._visible_alike(owner, text, original_node)
            ):
                self.report(
                    original_node,
                    f"`{owner}.{field}` is not a field of the new config; `{text}`, "
                    + (
                        "what legacy PPOConfig derived it from, "
                        if text.startswith("math.")
                        else "which the config was given, "
                    )
                    + "is read instead",
                    severity=Severity.INFO,
                )
                if text.startswith("math."):
                    AddImportsVisitor.add_needed_import(self.context, "math")
                return cst.parse_expression(text)
            if how == "value" or (how == "expr" and id(original_node) in self._targets):
                text = (
                    f"this changes `{field}`, which the new config does not have (its value "
                    f"was {text}): move the setting where TRL 1.13 takes it"
                    if id(original_node) in self._targets
                    else text
                )
            elif how == "expr":
                text = (
                    f"`{field}` is not a field of the new config; it was `{text}` where the config "
                    "was built: "
                    "read that, or keep the value in a variable of your own"
                )
            self.todo(original_node, f"`{owner}.{field}`: {text}")
            return updated_node
        if plan is not None and not self.in_import:
            unset = self._unset_field(original_node, updated_node, owner, field, plan)
            if unset is not None:
                return unset
        return self._reference(original_node, updated_node)

    def _unset_field(
        self, node: cst.Attribute, updated: cst.Attribute, owner: str, field: str, plan: Plan
    ) -> cst.BaseExpression | None:
        """A read or write of a PPO field the call did not set (`config.ppo_epochs`,
        `config.accelerator_kwargs[...] = ...`): a renamed one follows its new name, one the new
        config lacks gets a TODO (on TRL 1.13 it is an AttributeError)."""
        row = ppo.mapping()["legacy_config" if plan.era == ppo.LEGACY else "v2_config"].get(field)
        if row is None or field in ppo.config_fields(self.target):
            return None
        to = row.get("to")
        if row["kind"] == "rename" and to in ppo.config_fields(self.target):
            self.report(node, f"`{owner}.{field}` is `{owner}.{to}` in the new config")
            return updated.with_changes(attr=cst.Name(to))
        hint = row.get("todo") or row.get("why") or "it has no equivalent"
        if "{value}" in hint:  # the field was not set: its default, where the era had one
            runs = ppo.default_history(plan.era, field, plan.before, plan.declared)
            values = {repr(value) for _, _, value in runs}
            shown = f"its default was {values.pop()}" if len(values) == 1 else "it was not set"
            hint = hint.format(value=shown)
        self.todo(
            node,
            f"`{owner}.{field}`: {self.new_name} has no `{field}` (a {ppo.ERA_TEXT[plan.era]} "
            f"field): {hint}",
        )
        return updated

    def _visible_alike(self, config: str, expr: str, read: cst.CSTNode) -> bool:
        """Whether `expr`'s root name means at `read` what it meant where `config` was built (the
        same scope, or a function that sees the same module-level binding)."""
        at = self.built_at.get(config)
        return at is not None and self.sees_alike(at, read, expr.split(".")[0])
