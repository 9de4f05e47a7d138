"""TRL110 model-config: `ModelConfig.torch_dtype` is `ModelConfig.dtype` since TRL 0.23 (the old
name was removed in 0.27), in any script, not only PPO ones.

`ModelConfig(torch_dtype=...)` becomes `ModelConfig(dtype=...)`, and a read `x.torch_dtype` of a
name the file binds only to a ModelConfig (built by a call, or unpacked from the
`parse_args_into_dataclasses()` of a parser whose dataclasses include ModelConfig) becomes
`x.dtype`. The same value: an unset old `torch_dtype` (None) loaded float32 under the
transformers of its day, and 1.13's default `dtype="float32"` loads float32. A name bound to a
ModelConfig in one place and to something else in another is left alone (a transformers
config has its own `torch_dtype`).
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods.base import Rule, RuleTransformer
from codemods.config_vars import config_vars

OLD, NEW = "torch_dtype", "dtype"


class RenameModelConfigDtype(RuleTransformer):
    NAMES = (OLD,)

    def focus(self) -> tuple[str, ...]:
        return (OLD,)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        found = config_vars(
            node, lambda func: "ModelConfig" if self._is_model_config(func) else None
        )
        self.model_vars = set(found)

    def _is_model_config(self, func: cst.BaseExpression) -> bool:
        names = self.qualified_names(func) if self.resolves_to_trl(func) else ()
        return bool(names) and all(
            q.startswith("trl.") and q.endswith(".ModelConfig") for q in names
        )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self._is_model_config(original_node.func):
            return updated_node
        args = list(updated_node.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == OLD:
                if any(a.keyword is not None and a.keyword.value == NEW for a in args):
                    self.todo(
                        original_node, "`torch_dtype=` and `dtype=` are both given; keep `dtype=`"
                    )
                    return updated_node
                args[i] = arg.with_changes(keyword=cst.Name(NEW))
                self.report(
                    original_node.args[i],
                    "ModelConfig's `torch_dtype=` is `dtype=` (renamed in TRL 0.23, removed in "
                    "0.27); the same values",
                )
        return updated_node.with_changes(args=args)

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        if original_node.attr.value != OLD or self.in_import:
            return updated_node
        owner = get_full_name_for_node(original_node.value)
        if owner not in self.model_vars:
            return updated_node
        self.report(
            original_node,
            f"`{owner}.torch_dtype` is `{owner}.dtype` (ModelConfig renamed it in TRL 0.23 and "
            "removed the old name in 0.27; the `--torch_dtype` flag is `--dtype`)",
        )
        return updated_node.with_changes(attr=cst.Name(NEW))


class ModelConfigDtype(Rule):
    code = "TRL110"
    name = "model-config"
    summary = "Rename ModelConfig's `torch_dtype` (removed in TRL 0.27) to `dtype`."
    before = (
        "from transformers import HfArgumentParser\n"
        "from trl import ModelConfig, SFTConfig\n"
        "parser = HfArgumentParser((SFTConfig, ModelConfig))\n"
        "training_args, model_args = parser.parse_args_into_dataclasses()\n"
        "dtype = model_args.torch_dtype\n"
    )
    after = (
        "from transformers import HfArgumentParser\n"
        "from trl import ModelConfig, SFTConfig\n"
        "parser = HfArgumentParser((SFTConfig, ModelConfig))\n"
        "training_args, model_args = parser.parse_args_into_dataclasses()\n"
        "dtype = model_args.dtype\n"
    )
    transformers = (RenameModelConfigDtype,)
    triggers = (OLD,)
