"""TRL103: a script's own dataclass fields that clash with a flag the target config also declares
(flags.py decides which; this pass drops or marks them)."""

from __future__ import annotations

import libcst as cst

from codemods import ppo
from codemods.rules.ppo_config import flags
from codemods.rules.ppo_config.state import ConfigPass
from migrate.kernel.findings import Severity


class FlagClashes(ConfigPass):
    """Script dataclass fields that clash with a flag the target config also declares (flags.py
    decides)."""

    # -- script dataclass fields that clash with the new config's flags (codemods/flags.py) --------
    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        clash = self.clash_todo.get(id(node))
        if clash is not None:
            shown = (
                "no literal default"
                if clash.default is flags.NO_DEFAULT
                else f"default {clash.default!r}"
            )
            wanted = ppo.targets()["config_defaults"][self.target].get(
                clash.field, "not a plain value"
            )
            self.todo(
                node,
                f"{self.new_name} also has `--{clash.field}` (default {wanted!r}) and "
                "HfArgumentParser "
                f"rejects a flag defined twice: delete this field ({shown}) and read "
                f"`{clash.field}` from the "
                "config object instead",
                severity=Severity.ERROR,
            )

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        if not any(id(s) in self.clash_drop for s in original_node.body.body):
            return updated_node
        body = []
        for before, after in zip(original_node.body.body, updated_node.body.body):
            clash = self.clash_drop.get(id(before))
            if clash is None:
                body.append(after)
                continue
            wanted = ppo.targets()["config_defaults"][self.target].get(clash.field)
            self.report(
                before,
                _dropped(self.new_name, clash, wanted),
                severity=Severity.INFO if clash.same_default else Severity.WARNING,
            )
        if not body:
            body = [cst.SimpleStatementLine(body=[cst.Pass()])]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


def _dropped(new_name: str, clash: flags.Clash, wanted: object) -> str:
    """The finding for a script field dropped because the new config has the same flag."""
    head = (
        f"`{clash.cls}.{clash.field}` was removed: {new_name} has the same `--{clash.field}` flag"
    )
    if clash.same_default:
        head += f" with the same default ({clash.default!r})"
    head += ", and HfArgumentParser rejects a flag defined twice"
    if not clash.aliases:
        return f"{head}; reads use `{clash.config_var}.{clash.field}`"
    script = next(iter(clash.aliases.values()))[0]
    tail = (
        f"; `{script}.{clash.field} = {clash.config_var}.{clash.field}` after the parse keeps "
        "it for every reader"
    )
    if not clash.same_default:
        tail += (
            f", and `{clash.parser_var}.set_defaults({clash.field}={clash.default!r})` keeps "
            f"this script's default; {new_name}'s own default is {wanted!r}, so the "
            f"{new_name} itself now starts from {clash.default!r} as well"
        )
    return head + tail
