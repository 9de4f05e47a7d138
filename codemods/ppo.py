"""What the PPO rules (TRL103-TRL107) share: the mapping data, PPO class matching, era detection,
literal values, call-argument layout, and the pass that swaps PPO imports once their uses are gone.

Eras: `legacy` (<= 0.11 `step()` API), `ppov2` (PPOv2Config/PPOv2Trainer, 0.9-0.12), `v2` (top-level
PPOConfig/PPOTrainer with `train()`, 0.12-0.28), `experimental` (`trl.experimental.ppo`, 0.26-1.12).
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from codemods import walk
from codemods.base import FileState, Identifiers, RuleTransformer
from codemods.edits import (
    KEEP,
    REMOVE,
    alias_asname,
    alias_name,
    imported_names,
    new_alias,
    rewrite_import_from,
)

LEGACY, PPOV2, V2, EXPERIMENTAL = "legacy", "ppov2", "v2", "experimental"
CONFIG_NAMES = ("PPOConfig", "PPOv2Config")
TRAINER_NAMES = ("PPOTrainer", "PPOv2Trainer")
TRAINER_HELPERS = ("OnlineTrainerState", "PolicyAndValueWrapper")  # gone with the trainer
TARGETS = {"rloo": ("RLOOConfig", "RLOOTrainer"), "grpo": ("GRPOConfig", "GRPOTrainer")}
ERA_TEXT = {
    LEGACY: "legacy PPO (TRL <= 0.11)",
    PPOV2: "PPOv2 (TRL 0.9-0.12)",
    V2: "PPO v2 (TRL 0.12-0.28)",
    EXPERIMENTAL: "trl.experimental.ppo (TRL 0.26-1.12)",
}


@functools.cache
def mapping() -> dict[str, Any]:
    return json.loads(
        resources.files("codemods").joinpath("data/ppo_mapping.json").read_text("utf-8")
    )


@functools.cache
def targets() -> dict[str, Any]:
    return json.loads(
        resources.files("codemods").joinpath("data/ppo_targets.json").read_text("utf-8")
    )


@functools.cache
def _defaults() -> dict[str, Any]:
    return json.loads(
        resources.files("codemods").joinpath("data/ppo_defaults.json").read_text("utf-8")
    )


def default_history(era: str, field: str) -> list[tuple[str, str, Any]]:
    """(first release, last release, default) for each run of releases of `era` in which the PPO
    config's `field` had one default, oldest first (codemods/data/ppo_defaults.json)."""
    runs: list[tuple[str, str, Any]] = []
    for version, eras in _defaults()["versions"].items():
        fields = eras.get(era)
        if fields is None or field not in fields:
            continue
        if runs and runs[-1][2] == fields[field]:
            runs[-1] = (runs[-1][0], version, fields[field])
        else:
            runs.append((version, version, fields[field]))
    return runs


def config_fields(target: str) -> frozenset[str]:
    return frozenset(targets()["config_fields"][target])


def target_config(target: str) -> str:
    return TARGETS[target][0]


def target_trainer(target: str) -> str:
    return TARGETS[target][1]


def ppo_class(qnames: Iterable[str], names: Sequence[str]) -> tuple[str, str | None] | None:
    """(class name, era the import path implies or None) when a qualified name is a TRL PPO class."""
    for q in sorted(qnames):
        head, _, name = q.rpartition(".")
        if name in names and (head == "trl" or head.startswith("trl.")):
            if head.startswith("trl.experimental"):
                return name, EXPERIMENTAL
            return name, PPOV2 if "v2" in name else None
    return None


# -- values and layout ------------------------------------------------------------------------------
NOT_LITERAL = object()


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def literal(expr: cst.BaseExpression) -> Any:
    """The Python value of a literal expression, or NOT_LITERAL."""
    try:
        return ast.literal_eval(code(expr).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_LITERAL


def kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def new_kwarg(name: str, value: str | cst.BaseExpression) -> cst.Arg:
    expr = cst.parse_expression(value) if isinstance(value, str) else value
    return cst.Arg(
        keyword=cst.Name(name),
        value=expr,
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def relayout(original: cst.Call, args: list[cst.Arg], fresh: set[int]) -> list[cst.Arg]:
    """Commas for a call's new argument list: kept arguments keep theirs (and their comments),
    new ones (ids in `fresh`) and a former last argument take the call's separator, and the last
    argument ends as the old last one did (a multi-line call keeps `)` on its own line)."""
    if not args:
        return []
    sep: cst.Comma | None = next(
        (a.comma for a in original.args[:-1] if isinstance(a.comma, cst.Comma)), None
    )
    if sep is None:
        ws = original.whitespace_before_args
        sep = cst.Comma(
            whitespace_after=ws
            if isinstance(ws, cst.ParenthesizedWhitespace)
            else cst.SimpleWhitespace(" ")
        )
    last = original.args[-1] if original.args else None
    out = []
    for i, arg in enumerate(args):
        if i == len(args) - 1:
            out.append(
                arg.with_changes(
                    comma=last.comma if last is not None else cst.MaybeSentinel.DEFAULT
                )
            )
        elif id(arg) in fresh or not isinstance(arg.comma, cst.Comma):
            out.append(arg.with_changes(comma=sep))
        else:
            out.append(arg)
    return out


# -- era of a whole file ------------------------------------------------------------------------------
class FileFacts(walk.Visitor):
    """Era signals and the names bound to PPO configs and trainers, gathered before a rewrite."""

    def __init__(self, owner: RuleTransformer) -> None:
        self.owner = owner
        self.signals: set[str] = set()
        self.trainer_vars: set[str] = set()
        self.config_vars: set[str] = set()
        self._legacy_kw = set(mapping()["legacy_only"])
        self._v2_kw = set(mapping()["v2_only"])
        self.weak: set[str] = (
            set()
        )  # reads of fields only one era's config had: `ppo_config.query_dataset`

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _LEGACY_READS:
            self.weak.add(LEGACY)
        elif node.attr.value in _V2_READS:
            self.weak.add(V2)

    def visit_Call(self, node: cst.Call) -> None:
        qn = self.owner.qualified_names(node.func)
        trainer = ppo_class(qn, TRAINER_NAMES)
        config = ppo_class(qn, CONFIG_NAMES)
        found = trainer or config
        if found is not None and found[1] is not None:
            self.signals.add(found[1])
        keys = {a.keyword.value for a in node.args if a.keyword is not None}
        if trainer is not None:
            positional = sum(1 for a in node.args if a.keyword is None and not a.star)
            if positional >= 2 or keys & {
                "dataset",
                "num_shared_layers",
                "training_data_collator",
                "optimizer",
            }:
                self.signals.add(LEGACY)
            if keys & {
                "args",
                "processing_class",
                "reward_model",
                "value_model",
                "train_dataset",
                "policy",
            }:
                self.signals.add(V2)
        if config is not None:
            if keys & self._legacy_kw:
                self.signals.add(LEGACY)
            if keys & self._v2_kw:
                self.signals.add(V2)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("step", "log_stats"):
            if (get_full_name_for_node(func.value) or "") in self.trainer_vars:
                self.signals.add(LEGACY)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not isinstance(node.value, cst.Call):
            return
        qn = self.owner.qualified_names(node.value.func)
        for target in node.targets:
            name = get_full_name_for_node(target.target)
            if name and ppo_class(qn, TRAINER_NAMES):
                self.trainer_vars.add(name)
            if name and ppo_class(qn, CONFIG_NAMES):
                self.config_vars.add(name)

    def era(self) -> str | None:
        """One era when the signals agree; PPOv2/experimental imports win over keyword shapes."""
        for strong in (EXPERIMENTAL, PPOV2):
            if strong in self.signals:
                return strong if LEGACY not in self.signals else None
        if len(self.signals) == 1:
            return next(iter(self.signals))
        if not self.signals and len(self.weak) == 1:  # e.g. a parsed config and no call to judge by
            return next(iter(self.weak))
        return None


# Field names only one era's PPO config had, distinctive enough that reading one in a PPO file
# tells the era (generic ones like `batch_size` or `output_dir` are left out).
_LEGACY_READS = frozenset(
    {
        "query_dataset",
        "mini_batch_size",
        "forward_batch_size",
        "ppo_epochs",
        "init_kl_coef",
        "adap_kl_ctrl",
        "tracker_project_name",
        "tracker_kwargs",
        "accelerator_kwargs",
        "optimize_cuda_cache",
        "optimize_device_cache",
        "use_score_scaling",
        "use_score_norm",
        "score_clip",
        "push_to_hub_if_best_kwargs",
    }
)
_V2_READS = frozenset(
    {
        "total_episodes",
        "num_ppo_epochs",
        "num_mini_batches",
        "response_length",
        "missing_eos_penalty",
        "sft_model_path",
        "reward_model_path",
        "local_rollout_forward_batch_size",
        "num_sample_generations",
    }
)


# -- imports: swap a PPO name for its target once nothing uses it ---------------------------------------
class FinishPPOImports(RuleTransformer):
    """Last pass of a PPO rule: an import of one of OWNED that nothing uses any more becomes an
    import of the target names the rule wrote (`needed`), in place (a module-level one
    joins the file's `from trl import ...`); one still used keeps a TODO: it fails on TRL 1.13."""

    OWNED: tuple[str, ...] = ()

    @staticmethod
    def needed(state: FileState) -> set[str]:
        """The target names the rule wrote (a field of `state.shared`)."""
        raise NotImplementedError

    @classmethod
    def wanted(cls, state: FileState, names: Identifiers) -> bool:
        return bool(cls.needed(state)) or names.has_any(cls.OWNED)

    STILL_USED = ""

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self.to_import = set(self.needed(self.state))
        self.have = imported_names(node, "trl")
        self.top_trl = any(_is_import_from(s, "trl") for s in node.body)
        self.depth = 0
        self.star = any(_is_import_from(s, "trl", star=True) for s in node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        self.depth -= 1
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        node = original_node.body[0] if len(original_node.body) == 1 else None
        if (
            not isinstance(node, cst.ImportFrom)
            or node.relative
            or node.module is None
            or isinstance(node.names, cst.ImportStar)
        ):
            return updated_node
        module = get_full_name_for_node(node.module) or ""
        if not (module == "trl" or module.startswith("trl.")):
            return updated_node
        decisions: list = []
        for alias in node.names:
            name = alias_name(alias)
            if name not in self.OWNED:
                decisions.append(KEEP)
            elif self.import_referenced(node, alias_asname(alias) or name):
                decisions.append(KEEP)
                self.todo(alias, f"`{module}.{name}` does not exist in TRL 1.13; {self.STILL_USED}")
            else:
                wanted = sorted(self.to_import - self.have)
                self.have.update(wanted)
                if wanted and module != "trl" and self.depth == 0 and self.top_trl:
                    for n in wanted:  # joins the module's `from trl import ...`
                        AddImportsVisitor.add_needed_import(self.context, "trl", n)
                    wanted = []
                decisions.append(("trl", [new_alias(n) for n in wanted]) if wanted else REMOVE)
                self.report(
                    alias,
                    f"`{module}.{name}` does not exist in TRL 1.13; "
                    + (
                        f"imported {', '.join(wanted)} in its place"
                        if wanted
                        else "its uses were rewritten and the import removed"
                    ),
                )
        return rewrite_import_from(updated_node, decisions)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.star:  # the PPO name came from a star import of a module TRL 1.13 lacks
            for name in sorted(self.to_import - self.have):
                AddImportsVisitor.add_needed_import(self.context, "trl", name)
        return updated_node


def _is_import_from(stmt: cst.CSTNode, source: str, *, star: bool = False) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.ImportFrom)
        and stmt.body[0].module is not None
        and not stmt.body[0].relative
        and get_full_name_for_node(stmt.body[0].module) == source
        and isinstance(stmt.body[0].names, cst.ImportStar) == star
    )
