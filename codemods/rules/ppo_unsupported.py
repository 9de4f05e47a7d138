"""TRL107 ppo-unsupported: PPO-era code no rule can rewrite safely gets a TODO and a finding.

Subclasses of PPO classes (their overrides call internals RLOO/GRPO do not have), monkeypatches
of TRL attributes, `SUPPORTED_ARCHITECTURES`, `TextEnvironment` (removed in 0.21), and
`mock.patch("trl....")` targets that no longer exist. Value-head surgery (`.v_head`) and
encoder-decoder value heads are TRL102's.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, symbols
from codemods.base import Rule, RuleTransformer

PATCHERS = ("patch", "patch.object")
GONE_NAMES = {
    "SUPPORTED_ARCHITECTURES": "the value-head classes it listed are gone; use "
    "`transformers.PreTrainedModel` for checks",
    "TextEnvironment": "removed in TRL 0.21: for tool use, pass `tools=[...]` (or "
    "`environment_factory=`) to GRPOTrainer",
    "TextHistory": "removed in TRL 0.21 with TextEnvironment",
}


class FlagUnsupported(RuleTransformer):
    def focus(self):  # type: ignore[no-untyped-def]
        return self.trl_focus()  # every check is of a trl path: a base, a name or a patch target

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.table = symbols.load()
        self.target = self.state.target

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            found = ppo.ppo_class(
                self.names_from(base.value, "trl"), (*ppo.CONFIG_NAMES, *ppo.TRAINER_NAMES)
            )
            if found is not None:
                new = (
                    ppo.target_config(self.target)
                    if "Config" in found[0]
                    else ppo.target_trainer(self.target)
                )
                self.todo(
                    node,
                    f"`{node.name.value}` subclasses `{found[0]}`, which TRL 1.13 removed: port it "
                    f"to `{new}` "
                    "by hand (its internals differ: no value model, no step(), generation inside "
                    "train())",
                )

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if isinstance(target, cst.Attribute) and self.resolves_to_trl(target.value):
            owner = [
                q for q in self.qualified_names(target.value) if q == "trl" or q.startswith("trl.")
            ]
            if owner:
                self.todo(
                    node,
                    f"this patches `{owner[0]}.{target.attr.value}`; TRL 1.13 moved or removed PPO "
                    "internals, "
                    "so check the patched name still exists and still does what you override",
                )

    def visit_Name(self, node: cst.Name) -> None:
        self._gone(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._gone(node)

    def _gone(self, node: cst.BaseExpression) -> None:
        if self.in_import or not self.resolves_to_trl(node):
            return
        for q in self.qualified_names(node):
            name = q.rpartition(".")[2]
            if (q == "trl" or q.startswith("trl.")) and name in GONE_NAMES:
                self.todo(node, f"`{name}` does not exist in TRL 1.13: {GONE_NAMES[name]}")
                return

    def visit_Call(self, node: cst.Call) -> None:
        func = get_full_name_for_node(node.func) or ""
        if not any(func == p or func.endswith("." + p) for p in PATCHERS) or not node.args:
            return
        path = edits.literal(node.args[0].value)
        if not isinstance(path, str) or not path.startswith("trl."):
            return
        module = path.rpartition(".")[0]
        sym = self.table.get(path) or self.table.get(module)
        if sym is not None or any(self.table.module_gone(module[:i]) for i in _cuts(module)):
            self.todo(
                node,
                f'`mock.patch("{path}")` targets a path TRL 1.13 does not have; patch the '
                "RLOO/GRPO "
                "equivalent or drop the patch",
            )


def _cuts(module: str) -> list[int]:
    return [i for i, c in enumerate(module + ".") if c == "."]


class PPOUnsupportedRule(Rule):
    code = "TRL107"
    name = "ppo-unsupported"
    summary = (
        "Mark PPO-era code that needs a human: subclasses, monkeypatches, TextEnvironment, "
        "mock.patch paths."
    )
    before = "from trl import PPOTrainer\nclass MyTrainer(PPOTrainer):\n    pass\n"
    after = (
        "from trl import PPOTrainer\n"
        "# TODO(trl-migrate TRL107): `MyTrainer` subclasses `PPOTrainer`, which TRL 1.13 removed: "
        "port it to `RLOOTrainer` "
        "by hand (its internals differ: no value model, no step(), generation inside train())\n"
        "class MyTrainer(PPOTrainer):\n"
        "    pass\n"
    )
    transformers = (FlagUnsupported,)
    triggers = ("trl",)
