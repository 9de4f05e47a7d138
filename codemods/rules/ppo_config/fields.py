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
            self.report(
                before,
                f"`{clash.cls}.{clash.field}` was removed: {self.new_name} has the same "
                f"`--{clash.field}` flag with the same default ({clash.default!r}), and "
                "HfArgumentParser rejects "
                f"a flag defined twice; reads use `{clash.config_var}.{clash.field}`",
                severity=Severity.INFO,
            )
        if not body:
            body = [cst.SimpleStatementLine(body=[cst.Pass()])]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))
