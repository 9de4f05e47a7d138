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

from codemods import walk
from codemods.base import Rule, RuleTransformer

OLD, NEW = "torch_dtype", "dtype"
PARSES = ("parse_args_into_dataclasses", "parse_args_and_config", "parse_yaml_file", "parse_dict")


class RenameModelConfigDtype(RuleTransformer):
    NAMES = (OLD,)

    def focus(self) -> tuple[str, ...]:
        return (OLD,)

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        bound: dict[str, set[str]] = {}  # name -> what the file binds it to ("model" or "other")
        parsers: dict[str, int] = {}  # parser variable -> index of ModelConfig in its tuple
        assigns = walk.find_all(node, cst.Assign)
        for assign in assigns:
            value = assign.value
            if isinstance(value, cst.Call) and self._is_model_config(value.func):
                kind = "model"
            else:
                kind = "other"
                at = self._model_config_slot(value)
                if at is not None:
                    for t in assign.targets:
                        name = get_full_name_for_node(t.target)
                        if name:
                            parsers[name] = at
            for t in assign.targets:
                name = get_full_name_for_node(t.target)
                if name:
                    bound.setdefault(name, set()).add(kind)
        for assign in assigns:
            value = assign.value
            if not (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in PARSES
            ):
                continue
            at = parsers.get(get_full_name_for_node(value.func.value) or "")
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if at is None or not isinstance(target, (cst.Tuple, cst.List)):
                continue
            if at < len(target.elements):
                slot = target.elements[at].value
                if isinstance(slot, cst.Name):
                    kinds = bound.setdefault(slot.value, set())
                    kinds.discard("other")  # this assignment binds it to the ModelConfig
                    kinds.add("model")
        self.model_vars = {n for n, kinds in bound.items() if kinds == {"model"}}

    def _is_model_config(self, func: cst.BaseExpression) -> bool:
        names = self.qualified_names(func) if self.resolves_to_trl(func) else ()
        return bool(names) and all(
            q.startswith("trl.") and q.endswith(".ModelConfig") for q in names
        )

    def _model_config_slot(self, value: cst.BaseExpression) -> int | None:
        """Index of ModelConfig in `HfArgumentParser((A, B, ModelConfig))` / TrlParser(...)."""
        if not isinstance(value, cst.Call) or not value.args:
            return None
        name = (get_full_name_for_node(value.func) or "").rpartition(".")[2]
        seq = value.args[0].value
        if name not in ("HfArgumentParser", "TrlParser") or not isinstance(
            seq, (cst.Tuple, cst.List)
        ):
            return None
        return next((i for i, e in enumerate(seq.elements) if self._is_model_config(e.value)), None)

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
