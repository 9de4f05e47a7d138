"""TRL103 ppo-config: `PPOConfig(...)` / `PPOv2Config(...)` of every era become `RLOOConfig(...)`
(or `GRPOConfig(...)` with `--target grpo`), field by field from `codemods/data/ppo_mapping.json`.

TRL 1.13 removed PPO (huggingface/trl#7020). Renames keep the user's expressions; values that
change form (`total_episodes`, `steps`, `batch_size`) are computed when the inputs are literals,
else a TODO gives the formula; value-model fields are dropped with a warning. A call that cannot
be rewritten whole (positional or `**d` arguments, unknown keywords, an era it cannot tell) stays
as it is with a TODO. Also `HfArgumentParser((..., PPOConfig))` and reads of the config's fields.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    ExpressionContextProvider,
    ScopeProvider,
)

from codemods import ppo, ppo_flags, ppo_paths, walk
from codemods.base import FileState, Rule, RuleTransformer
from migrate.kernel.findings import Severity


@dataclasses.dataclass
class Plan:
    """How one config call is rewritten, decided from the original call without side effects."""

    era: str = ""
    args: list[tuple[int, str, str | None]] = dataclasses.field(
        default_factory=list
    )  # (arg index, new name, new value code)
    extra: list[tuple[str, str]] = dataclasses.field(
        default_factory=list
    )  # (name, value code) appended
    notes: list[tuple[Severity, str]] = dataclasses.field(default_factory=list)  # applied findings
    todos: list[str] = dataclasses.field(default_factory=list)
    reads: dict[str, tuple[str, str]] = dataclasses.field(
        default_factory=dict
    )  # field -> ("attr"|"value"|"todo", text)
    fail: str = ""


def _fmt(value: Any) -> str:
    return repr(value)


def plan_call(call: cst.Call, era: str | None, target: str) -> Plan:
    """Decide the rewrite of `PPOConfig(...)`; `plan.fail` says why it must stay as it is."""
    plan = Plan()
    given: dict[str, tuple[int, cst.BaseExpression]] = {}
    for i, arg in enumerate(call.args):
        if arg.keyword is None:
            plan.fail = (
                "it has positional or `*`/`**` arguments; write the keywords out"
                if arg.star != "**"
                else f"`**{ppo.code(arg.value).strip()}` holds PPO field names that must be renamed one by one"
            )
            return plan
        given[arg.keyword.value] = (i, arg.value)
    if era is None:
        plan.fail = "cannot tell whether it is legacy (<= 0.11) or v2 PPOConfig from its keywords or this file"
        return plan
    plan.era = era
    table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
    fields = ppo.config_fields(target)
    values = {k: ppo.literal(v) for k, (_, v) in given.items()}
    unknown = [k for k in given if k not in table and k not in fields]
    if unknown:
        plan.fail = (
            f"`{'`, `'.join(unknown)}` is neither a known {ppo.ERA_TEXT[era]} field nor a field of "
            f"{ppo.target_config(target)}"
        )
        return plan
    special = _legacy if era == ppo.LEGACY else _v2
    handled = special(plan, given, values, target)
    for name, (i, expr) in given.items():
        if name in handled:
            continue
        row = table.get(name, {"kind": "same"})
        kind, value = row["kind"], values[name]
        shown = ppo.code(expr).strip()
        if kind in ("same", "rename"):
            new = row.get("to", name)
            plan.args.append((i, new, None))
            if new != name:
                plan.reads[name] = ("attr", new)
        elif kind == "drop":
            plan.notes.append(
                (
                    Severity.INFO,
                    f"`{name}` is not used by TRL 1.13 ({row.get('why', 'runtime')}); dropped",
                )
            )
            _read_value(plan, name, expr, value)
        elif kind == "gone":
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`{name}={shown}` dropped: {row['why']}; that behaviour is gone",
                )
            )
            _read_value(plan, name, expr, value)
        elif kind == "todo" or (kind == "flag" and value != row["off"]):
            plan.todos.append(f"`{name}={shown}` was dropped: " + row["todo"].format(value=shown))
            _read_value(plan, name, expr, value)
        else:  # a flag at its harmless value
            plan.notes.append(
                (Severity.INFO, f"`{name}={shown}` is what TRL 1.13 does anyway; dropped")
            )
            _read_value(plan, name, expr, value)
    for name, row in table.items():  # target defaults that differ from PPO's: keep PPO's
        emit = row.get("emit")
        if isinstance(emit, dict):
            emit = emit.get(era)
        new = row.get("to", name)
        if (
            emit is not None
            and name not in given
            and new not in given
            and all(new != n for _, n, _ in plan.args)
        ):
            plan.extra.append((new, emit))
    for name, row in ppo.mapping()["era_extra"].get(era, {}).items():
        if name not in given:
            plan.extra.append((name, row["value"]))
    _kept_defaults(plan, given, era, target)
    _changed_defaults(plan, given, table, era)
    _completions_per_prompt(plan, target)
    return plan


def _kept_defaults(plan: Plan, given: dict, era: str, target: str) -> None:
    """A training field both configs have, left out of the call, whose default in the era's newest
    release differs from the target's (bf16 and gradient_checkpointing of PPOv2): keep PPO's."""
    written = {n for _, n, _ in plan.args} | {n for n, _ in plan.extra}
    defaults = ppo.targets()["config_defaults"][target]
    for name in ppo.mapping()["training_fields"]:
        runs = ppo.default_history(era, name)
        if name in given or name in written or name not in defaults or not runs:
            continue
        old, new = runs[-1][2], defaults[name]
        if name == "bf16" and new is None:
            new = not defaults.get("fp16")  # TRL's configs turn an unset bf16 into `not fp16`
        if old != new and isinstance(old, (bool, int, float, str)):
            plan.extra.append((name, repr(old)))


def _changed_defaults(plan: Plan, given: dict, table: dict, era: str) -> None:
    """A field the call leaves out whose default changed between the era's releases: the file does
    not say which release it ran on, so say which default the rewrite kept."""
    for name in ppo.mapping()["training_fields"]:
        if name in given:
            continue
        runs = ppo.default_history(era, name)
        if len(runs) < 2:
            continue
        new = table.get(name, {}).get("to", name)
        newest = runs[-1]
        older = "; ".join(
            f"{v!r} in TRL {a}-{b}" if a != b else f"{v!r} in TRL {a}" for a, b, v in runs[:-1]
        )
        plan.notes.append(
            (
                Severity.WARNING,
                f"`{name}` is not set and its {ppo.ERA_TEXT[era]} default changed between "
                f"releases: the rewrite keeps {newest[2]!r} (TRL {newest[0]}-{newest[1]}); if you ran "
                f"another release ({older}), set `{new}` to that value",
            )
        )


def _completions_per_prompt(plan: Plan, target: str) -> None:
    written = dict(plan.extra) | {n: v for _, n, v in plan.args if v is not None}
    n = written.get("num_generations", "2" if target == "rloo" else "8")
    plan.notes.append(
        (
            Severity.WARNING,
            f"PPO sampled one completion per prompt; {ppo.target_config(target)[:4]} samples "
            f"num_generations={n} per prompt and scores each against the others, so a generation of the "
            f"same number of samples holds 1/{n} as many prompts",
        )
    )


def _read_value(plan: Plan, name: str, expr: cst.BaseExpression, value: Any) -> None:
    """Reads of a dropped field (`config.model_name`) get its literal value, else a TODO."""
    if value is not ppo.NOT_LITERAL:
        plan.reads[name] = ("value", ppo.code(expr).strip())
    elif isinstance(expr, (cst.Name, cst.Attribute)) and get_full_name_for_node(expr):
        plan.reads[name] = (
            "expr",
            get_full_name_for_node(expr) or "",
        )  # `model_name=script_args.model_name`
    else:
        plan.reads[name] = (
            "todo",
            f"`{name}` is not a field of the new config; keep the value in a variable of your own",
        )


def _int(values: dict[str, Any], name: str, default: int) -> int | None:
    value = values.get(name, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _legacy(plan: Plan, given: dict, values: dict, target: str) -> set[str]:
    """Legacy fields whose value changes form (research section 4.2)."""
    handled = {
        "log_with",
        "steps",
        "batch_size",
        "mini_batch_size",
        "forward_batch_size",
        "adap_kl_ctrl",
        "max_grad_norm",
        "optimize_cuda_cache",
        "optimize_device_cache",
        "score_clip",
    }
    shown = {k: ppo.code(e).strip() for k, (_, e) in given.items()}
    idx = {k: i for k, (i, _) in given.items()}
    if "log_with" in given:
        value = values["log_with"]
        if value is None:
            plan.notes.append(
                (Severity.INFO, "`log_with=None` dropped: TRL 1.13 reports to nothing by default")
            )
        elif isinstance(value, str):
            plan.args.append((idx["log_with"], "report_to", _fmt([value])))
        else:
            plan.todos.append(
                f"`log_with={shown['log_with']}` was dropped: set `report_to=[<tracker>]` (a list; [] for none)"
            )
    mini_key = "forward_batch_size" if "forward_batch_size" in given else "mini_batch_size"
    if mini_key in given:
        plan.args.append((idx[mini_key], "per_device_train_batch_size", None))
        plan.reads[mini_key] = ("attr", "per_device_train_batch_size")
    else:
        plan.extra.append(
            ("per_device_train_batch_size", "128")
        )  # the legacy default mini_batch_size
    if "forward_batch_size" in given and "mini_batch_size" in given:
        plan.notes.append(
            (
                Severity.INFO,
                "`mini_batch_size` dropped: `forward_batch_size` overrode it in legacy TRL",
            )
        )
    bs, mini, ga, epochs = (
        _int(values, "batch_size", 128),
        _int(values, mini_key, 128),
        _int(values, "gradient_accumulation_steps", 1),
        _int(values, "ppo_epochs", 4),
    )
    spg = None
    if bs is not None and mini and ga and bs % (mini * ga) == 0:
        spg = bs // mini
        if spg != ga:
            plan.extra.append(("steps_per_generation", str(spg)))
        if "batch_size" in given:
            plan.notes.append(
                (
                    Severity.INFO,
                    f"`batch_size={bs}` became steps_per_generation={spg} (batch_size // "
                    "mini_batch_size): one generation covers the same samples",
                )
            )
    else:
        plan.todos.append(
            "set `steps_per_generation = batch_size // mini_batch_size` "
            f"(batch_size={shown.get('batch_size', '128')}, mini_batch_size={shown.get(mini_key, '128')}) so one "
            "generation covers batch_size samples as in legacy PPO"
        )
    if "batch_size" in given:
        plan.reads["batch_size"] = (
            "todo",
            "`batch_size` is per_device_train_batch_size * steps_per_generation now",
        )
        if bs is not None:
            plan.reads["batch_size"] = ("value", shown["batch_size"])
    if "steps" in given:
        steps = _int(values, "steps", 20000)
        if steps is not None and spg is not None and epochs is not None:
            max_steps = math.ceil(steps / bs) * epochs * spg // ga  # type: ignore[operator]
            plan.args.append((idx["steps"], "max_steps", str(max_steps)))
            plan.notes.append(
                (
                    Severity.INFO,
                    f"`steps={steps}` became max_steps={max_steps}: ceil(steps / batch_size) "
                    "rollouts x ppo_epochs x batch_size / (mini_batch_size x gradient_accumulation_steps)",
                )
            )
        else:
            plan.todos.append(
                f"`steps={shown['steps']}` was dropped: set `max_steps = ceil(steps / batch_size) * ppo_epochs * "
                "batch_size // (mini_batch_size * gradient_accumulation_steps)`"
            )
    adaptive = values.get("adap_kl_ctrl", True)
    if adaptive is not False:
        plan.notes.append(
            (
                Severity.WARNING,
                "legacy PPO adapted the KL coefficient (adap_kl_ctrl, on by default); "
                "TRL 1.13 keeps `beta` fixed at the initial value",
            )
        )
    if "max_grad_norm" in given:
        value = values["max_grad_norm"]
        plan.args.append((idx["max_grad_norm"], "max_grad_norm", "0.0" if value is None else None))
    for key in ("optimize_cuda_cache", "optimize_device_cache"):
        if key in given:
            if values[key] is True:
                plan.args.append((idx[key], "torch_empty_cache_steps", "1"))
            elif values[key] is not False:
                plan.todos.append(
                    f"`{key}={shown[key]}` was dropped: set `torch_empty_cache_steps=1` if it is true"
                )
    if "score_clip" in given and values["score_clip"] is not None:
        expr = given["score_clip"][1]
        if target == "rloo" and values["score_clip"] is not ppo.NOT_LITERAL:
            c = shown["score_clip"]
            plan.args.append((idx["score_clip"], "reward_clip_range", f"(-{c}, {c})"))
        elif (
            target == "rloo"
            and isinstance(expr, (cst.Name, cst.Attribute))
            and get_full_name_for_node(expr)
        ):
            # A variable may hold None, which meant "no clipping" in legacy PPO; reading a name twice is harmless.
            c = shown["score_clip"]
            plan.args.append(
                (idx["score_clip"], "reward_clip_range", f"None if {c} is None else (-{c}, {c})")
            )
        elif target == "rloo":
            plan.todos.append(
                f"`score_clip={shown['score_clip']}` was dropped: set `reward_clip_range=(-c, c)` with its "
                "value c (None: no clipping)"
            )
        else:
            plan.todos.append(
                f"`score_clip={shown['score_clip']}` was dropped: GRPOConfig has no reward clipping; "
                "clip inside your reward function"
            )
    if bs is not None and bs % (2 if target == "rloo" else 8):
        if bs % 2 == 0 and bs >= 2:
            plan.extra.append(("num_generations", "2"))
        elif spg is not None and mini_key in given:
            _two_per_prompt(plan, idx[mini_key], mini_key, bs, mini, shown[mini_key])  # type: ignore[arg-type]
        else:
            plan.todos.append(
                f"`num_generations` (>= 2) must divide the generation batch ({bs} samples): "
                "raise batch_size or set per_device_train_batch_size/steps_per_generation"
            )
    return handled


def _two_per_prompt(plan: Plan, index: int, mini_key: str, bs: int, mini: int, shown: str) -> None:
    """Odd legacy batch_size: RLOO/GRPO need >= 2 completions per prompt, so each of the batch_size
    prompts gets 2 and the per-device batch doubles (steps_per_generation stays batch_size // mini)."""
    plan.args = [(i, n, str(2 * mini) if i == index else v) for i, n, v in plan.args]
    plan.extra.append(("num_generations", "2"))
    plan.reads[mini_key] = ("value", shown)
    message = (
        f"`batch_size={bs}` is odd and RLOO/GRPO need >= 2 completions per prompt: each prompt now gets 2 "
        f"(num_generations=2), so a generation holds 2 * batch_size = {2 * bs} samples and "
        f"per_device_train_batch_size is 2 * {mini_key} = {2 * mini}"
    )
    plan.notes.append((Severity.WARNING, message))


def _v2(plan: Plan, given: dict, values: dict, target: str) -> set[str]:
    """v2 fields whose value changes form (research section 4.1)."""
    handled = {
        "kl_estimator",
        "total_episodes",
        "num_mini_batches",
        "num_sample_generations",
        "max_grad_norm",
    }
    shown = {k: ppo.code(e).strip() for k, (_, e) in given.items()}
    idx = {k: i for k, (i, _) in given.items()}
    if "max_grad_norm" in given and values["max_grad_norm"] != 0:
        plan.args.append((idx["max_grad_norm"], "max_grad_norm", "0.0"))
        plan.notes.append(
            (
                Severity.WARNING,
                f"`max_grad_norm={shown['max_grad_norm']}` had no effect: the PPO v2 trainers "
                "never clipped gradients; max_grad_norm=0.0 keeps that (set a value to clip with TRL 1.13)",
            )
        )
    elif "max_grad_norm" in given:
        plan.args.append((idx["max_grad_norm"], "max_grad_norm", None))
    if "kl_estimator" in given:
        native = "k1" if target == "rloo" else "k3"
        if values["kl_estimator"] == native:
            plan.notes.append(
                (
                    Severity.INFO,
                    f"`kl_estimator={shown['kl_estimator']}` is what {ppo.target_config(target)[:4]} uses; dropped",
                )
            )
        else:
            plan.todos.append(
                f"`kl_estimator={shown['kl_estimator']}` was dropped: {ppo.target_config(target)[:4]} always "
                f"uses the {native} estimator ({'GRPO uses k3' if native == 'k1' else 'RLOO uses k1'})"
            )
    nmb = _int(values, "num_mini_batches", 1)
    old_meaning = plan.era == ppo.PPOV2 or (
        plan.era == ppo.V2 and nmb == 1
    )  # 0.9-0.16; 1 means the same in both
    new_meaning = plan.era == ppo.EXPERIMENTAL or (plan.era == ppo.V2 and nmb == 1)
    p, ga, mu = (
        _int(values, "per_device_train_batch_size", 8),
        _int(values, "gradient_accumulation_steps", 1),
        _int(values, "num_ppo_epochs", 4),
    )
    if "num_mini_batches" in given:
        if new_meaning:
            plan.notes.append(
                (
                    Severity.INFO,
                    "`num_mini_batches` dropped: since TRL 0.17 it only split the rollout",
                )
            )
        elif old_meaning and nmb is not None and ga is not None:
            if ga * nmb != ga:
                plan.args.append((idx["num_mini_batches"], "steps_per_generation", str(ga * nmb)))
        else:
            plan.todos.append(
                f"`num_mini_batches={shown['num_mini_batches']}` was dropped: on TRL 0.12-0.16 set "
                "`steps_per_generation = gradient_accumulation_steps * num_mini_batches`; on 0.17+ drop it"
            )
    if "total_episodes" in given and values["total_episodes"] is not None:
        te = _int(values, "total_episodes", 0)
        if te is not None and p and ga and mu and nmb and (old_meaning or new_meaning):
            k = nmb if old_meaning else 1
            max_steps = math.ceil(te / (p * ga * k)) * mu * k
            plan.args.append((idx["total_episodes"], "max_steps", str(max_steps)))
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`total_episodes={shown['total_episodes']}` became max_steps={max_steps} = "
                    "ceil(total_episodes / (per_device_train_batch_size * gradient_accumulation_steps"
                    f"{' * num_mini_batches' if k > 1 else ''})) * num_ppo_epochs{' * num_mini_batches' if k > 1 else ''}"
                    " for one process; divide the episodes by the number of processes for more",
                )
            )
        else:
            plan.todos.append(
                f"`total_episodes={shown['total_episodes']}` was dropped: set `max_steps = "
                "ceil(total_episodes / (per_device_train_batch_size * gradient_accumulation_steps * "
                "num_processes)) * num_ppo_epochs` (TRL 0.12-0.16: also x num_mini_batches inside and out)"
            )
        plan.reads["total_episodes"] = (
            "todo",
            "`total_episodes` is gone: training length is `max_steps`",
        )
    if "num_sample_generations" in given:
        value = values["num_sample_generations"]
        if value == 0:
            plan.notes.append((Severity.INFO, "`num_sample_generations=0` dropped"))
        elif isinstance(value, int):
            plan.args.append((idx["num_sample_generations"], "log_completions", "True"))
            plan.notes.append(
                (
                    Severity.INFO,
                    "sample completions are logged every logging_steps (`log_completions=True`)",
                )
            )
        else:
            plan.todos.append(
                f"`num_sample_generations={shown['num_sample_generations']}` was dropped: set "
                "`log_completions=True` to log samples every logging_steps"
            )
    return handled


class RewritePPOConfig(RuleTransformer):
    CODE = "TRL103"
    METADATA_DEPENDENCIES = (ScopeProvider, ExpressionContextProvider)
    NAMES = ppo.CONFIG_NAMES

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        facts = ppo.FileFacts(self)
        node.visit(facts)
        self.file_era = facts.era()
        self.target = self.state.options.target
        self.new_name = ppo.target_config(self.target)
        self.reads: dict[str, Plan] = {}  # config variable -> the plan of the call that built it
        self.read_scopes: dict[str, Any] = {}  # config variable -> the scope it was built in
        self.parsers: dict[
            str, tuple[int, str | None]
        ] = {}  # HfArgumentParser variable -> (index of the config, era)
        self._handled: set[int] = set()
        self._targets: set[int] = set()
        node.visit(_Prescan(self))
        seen = ppo_paths.collect(
            self, node
        )  # parsers, their unpacks, classes, reads: one pass for the three plans
        self.moves, self.handed = ppo_paths.plan(
            self, seen, self.file_era
        )  # script-only fields of a parsed config
        self.appends = {m.parser_seq: m.cls for m in self.moves} | {
            t: m.var for m in self.moves for t in m.targets
        }
        self.moved = {i: (m, *read) for m in self.moves for i, read in m.reads.items()}
        clashes = ppo_flags.plan(self, seen, self.target)  # script flags the new config also has
        self.clash_drop = {id(c.statement): c for c in clashes if c.config_var}
        self.clash_todo = {id(c.node): c for c in clashes if not c.config_var}
        self.clash_reads = {id(r): c for c in clashes for r in c.reads}
        self.model_reads = ppo_flags.model_config_reads(self, seen)

    def era_of(self, call: cst.Call, hint: str | None) -> str | None:
        keys = {a.keyword.value for a in call.args if a.keyword is not None}
        m = ppo.mapping()
        legacy, v2 = bool(keys & set(m["legacy_only"])), bool(keys & set(m["v2_only"]))
        if hint is not None:
            return None if legacy else hint
        if legacy != v2:
            return ppo.LEGACY if legacy else ppo.V2
        return None if legacy else self.file_era

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target  # a monkeypatch of a PPO class is TRL107's
        while isinstance(target, cst.Attribute):
            target = target.value
            self._handled.add(id(target))
        self._targets.add(id(node.target))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:  # subclasses are TRL107's
            self._handled.add(id(base.value))

    # -- script dataclass fields that clash with the new config's flags (codemods/ppo_flags.py) --------
    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        clash = self.clash_todo.get(id(node))
        if clash is not None:
            shown = (
                "no literal default"
                if clash.default is ppo_flags._NO_DEFAULT
                else f"default {clash.default!r}"
            )
            wanted = ppo.targets()["config_defaults"][self.target].get(
                clash.field, "not a plain value"
            )
            self.todo(
                node,
                f"{self.new_name} also has `--{clash.field}` (default {wanted!r}) and HfArgumentParser "
                f"rejects a flag defined twice: delete this field ({shown}) and read `{clash.field}` from the "
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
                f"`--{clash.field}` flag with the same default ({clash.default!r}), and HfArgumentParser rejects "
                f"a flag defined twice; reads use `{clash.config_var}.{clash.field}`",
                severity=Severity.INFO,
            )
        if not body:
            body = [cst.SimpleStatementLine(body=[cst.Pass()])]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    # -- the call ------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if ppo.ppo_class(self.qualified_names(node.func), ppo.CONFIG_NAMES):
            self._handled.add(id(node.func))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        found = ppo.ppo_class(self.qualified_names(original_node.func), ppo.CONFIG_NAMES)
        if found is None:
            return updated_node
        name, hint = found
        expanded = _expand_dict_literal(original_node)
        plan = plan_call(expanded, self.era_of(expanded, hint), self.target)
        func = self._renamed(original_node.func)
        if plan.fail or func is None:
            self.todo(
                original_node,
                f"`{name}` is gone in TRL 1.13 and this call was left as it is: "
                f"{plan.fail or 'import the new config from trl'}; rewrite it as `{self.new_name}(...)` "
                "following docs/rules.md (TRL103)",
            )
            return updated_node
        call = _expand_dict_literal(updated_node)
        args: list[cst.Arg] = []
        fresh: set[int] = set()
        for i, new, value in sorted(plan.args):
            arg = call.args[i].with_changes(keyword=cst.Name(new))
            if value is not None:
                arg = arg.with_changes(value=cst.parse_expression(value))
            if i == len(call.args) - 1:
                fresh.add(id(arg))  # the old last argument: its comma ends the call
            args.append(arg)
        for new, value in plan.extra:
            arg = ppo.new_kwarg(new, value)
            fresh.add(id(arg))
            args.append(arg)
        for severity, message in plan.notes:
            self.report(original_node, message, severity=severity)
        for message in plan.todos:
            self.todo(original_node, message, severity=Severity.WARNING)
        self.report(
            original_node,
            f"`{name}` ({ppo.ERA_TEXT[plan.era]}) was removed; rewritten as `{self.new_name}`",
        )
        return call.with_changes(func=func, args=ppo.relayout(call, args, fresh))

    def _renamed(self, ref: cst.BaseExpression) -> cst.BaseExpression | None:
        """`PPOConfig` -> `RLOOConfig`; `trl.PPOConfig` -> `trl.RLOOConfig`; None when it cannot say."""
        if isinstance(ref, cst.Name):
            self.state.shared.config_imports.add(self.new_name)
            return cst.Name(self.new_name)
        root = (get_full_name_for_node(ref) or "").split(".")[0]
        if root == "trl":
            return cst.parse_expression(f"trl.{self.new_name}")
        return None

    # -- other references: HfArgumentParser((..., PPOConfig)), annotations, reads of fields --------
    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

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
                f"{self.new_name} has no `{field}`: add it to your own script-arguments dataclass and read it "
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
                    f"`{owner}.{field}` is not a field of the new config; `{text}`, which the "
                    "config was given, is read instead",
                    severity=Severity.INFO,
                )
                return cst.parse_expression(text)
            if how == "expr":
                text = (
                    f"`{field}` is not a field of the new config; it was `{text}` where the config was built: "
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
        self.todo(
            node,
            f"`{owner}.{field}`: {self.new_name} has no `{field}` (a {ppo.ERA_TEXT[plan.era]} field): {hint}",
        )
        return updated

    def _visible_alike(self, config: str, expr: str, read: cst.CSTNode) -> bool:
        """Whether `expr`'s root name means at `read` what it meant where `config` was built (the same
        scope, or a function that sees the same module-level binding)."""
        built, here = self.read_scopes.get(config), self.get_metadata(ScopeProvider, read, None)
        if built is None or here is None:
            return False
        if here is built:
            return True
        root = expr.split(".")[0]
        there = {id(a.node) for a in built[root]} if root in built else set()
        return bool(there) and there == (
            {id(a.node) for a in here[root]} if root in here else set()
        )

    # -- a parsed config starts from PPO's defaults where they differ from the target's ------------
    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ):  # type: ignore[no-untyped-def]
        assign = original_node.body[0] if len(original_node.body) == 1 else None
        if original_node is self._first and isinstance(assign, cst.Expr) and self.parsers:
            self._usage_flags(original_node, assign.value)
        if (
            not isinstance(assign, cst.Assign)
            or len(assign.targets) != 1
            or not isinstance(assign.value, cst.Call)
        ):
            return updated_node
        var = get_full_name_for_node(assign.targets[0].target) or ""
        func = get_full_name_for_node(assign.value.func) or ""
        if var not in self.parsers or func.rpartition(".")[2] not in ppo_paths.PARSERS:
            return updated_node
        era = self.parsers[var][1]
        if era is None:
            self.todo(
                original_node,
                f"the parsed {self.new_name} starts from TRL 1.13's defaults, which differ from "
                "PPO's, and this file does not say which PPO era it was written for: set the defaults you "
                f"trained with through `{var}.set_defaults(...)`",
            )
            return updated_node
        plan = plan_call(cst.Call(func=cst.Name("PPOConfig")), era, self.target)
        for severity, message in plan.notes:
            self.report(original_node, message, severity=severity)
        for message in plan.todos:
            self.todo(original_node, message)
        if not plan.extra:
            return updated_node
        args = [ppo.new_kwarg(k, v) for k, v in plan.extra]
        args = [
            a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in args[:-1]
        ] + args[-1:]
        defaults = cst.SimpleStatementLine(
            body=[cst.Expr(cst.Call(func=cst.parse_expression(f"{var}.set_defaults"), args=args))]
        )
        shown = ", ".join(f"{k}={v}" for k, v in plan.extra)
        self.report(
            original_node,
            f"the parsed {self.new_name} would start from TRL 1.13's defaults: "
            f"`{var}.set_defaults({shown})` keeps {ppo.ERA_TEXT[era]}'s where they differ (a command-line "
            "flag or config file value still wins)",
            severity=Severity.INFO,
        )
        return cst.FlattenSentinel([updated_node, defaults])

    def _usage_flags(self, stmt: cst.SimpleStatementLine, doc: cst.BaseExpression) -> None:
        """The module docstring of a script that parses a PPO config is its usage: flags of PPO
        fields in it that the new config renamed or lacks get a TODO (the prose is the user's)."""
        text = ppo.literal(doc)
        if not isinstance(text, str):
            return
        flags = list(dict.fromkeys(re.findall(r"--([A-Za-z_]\w*)", text)))
        era = next((e for _, e in self.parsers.values() if e is not None), self.file_era)
        if (
            era is None
        ):  # the flags themselves may tell: `--num_ppo_epochs` is v2's, `--ppo_epochs` legacy's
            only = ppo.mapping()
            legacy, v2 = set(flags) & set(only["legacy_only"]), set(flags) & set(only["v2_only"])
            era = ppo.LEGACY if legacy and not v2 else ppo.V2 if v2 and not legacy else None
        if era is None:
            return
        table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
        fields = ppo.config_fields(self.target)
        renamed, gone = [], []
        for flag in flags:
            row = table.get(flag)
            if row is None or flag in fields:
                continue
            to = row.get("to") if row["kind"] == "rename" else row.get("flag")
            if to in fields:
                renamed.append(f"`--{flag}` is `--{to}`")
            else:
                gone.append(f"`--{flag}`")
        if renamed or gone:
            parts = ([", ".join(renamed)] if renamed else []) + (
                [f"{', '.join(gone)} {'has' if len(gone) == 1 else 'have'} no {self.new_name} flag"]
                if gone
                else []
            )
            self.todo(
                stmt,
                f"the usage in this docstring passes PPO flags: {'; '.join(parts)} "
                "(the config's findings say what replaces each)",
                severity=Severity.WARNING,
            )

    # -- the written-in dataclass of moved script-only fields ----------------------------------------
    def leave_Tuple(self, original_node: cst.Tuple, updated_node: cst.Tuple) -> cst.BaseExpression:
        name = self.appends.get(id(original_node))
        return updated_node if name is None else ppo_paths.appended(updated_node, name)

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.BaseExpression:
        name = self.appends.get(id(original_node))
        return updated_node if name is None else ppo_paths.appended(updated_node, name)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.moves:
            return updated_node
        body = list(updated_node.body)
        for move in sorted(self.moves, key=lambda m: -m.at):
            after = body[move.at : move.at + 1]
            if after:  # two blank lines after the class, as before it
                lines = list(after[0].leading_lines)
                blank = next(
                    (i for i, line in enumerate(lines) if line.comment is not None), len(lines)
                )
                after = [
                    after[0].with_changes(
                        leading_lines=[cst.EmptyLine(indent=False)] * max(0, 2 - blank) + lines
                    )
                ]
            body[move.at : move.at + 1] = [ppo_paths.class_statement(move, self.new_name), *after]
            self.report(
                move.parser,
                f"wrote dataclass `{move.cls}` for `{'`, `'.join(move.fields)}`, which "
                f"{self.new_name} lacks, and added it to the argument parser: the command-line flags are "
                "unchanged",
                severity=Severity.INFO,
            )
        AddImportsVisitor.add_needed_import(self.context, "dataclasses")
        return updated_node.with_changes(body=body)

    def _reference(self, original, updated):  # type: ignore[no-untyped-def]
        if self.in_import or id(original) in self._handled:
            return updated
        found = ppo.ppo_class(self.qualified_names(original), ppo.CONFIG_NAMES)
        if found is None:
            return updated
        self._handled.add(id(original))
        if self.in_mutation:
            self.todo(
                original,
                f"this changes `{found[0]}`, which TRL 1.13 removed; `{self.new_name}` has other "
                "fields and defaults: port the change to it by hand",
            )
            return updated
        new = self._renamed(original)
        if new is None:
            self.todo(original, f"`{found[0]}` is gone in TRL 1.13: use `trl.{self.new_name}`")
            return updated
        era = found[1] or self.file_era
        self.report(
            original,
            f"`{found[0]}` was removed; `{self.new_name}` takes its place. Command-line flags "
            f"change too: {_flag_renames(era)}",
            severity=Severity.WARNING,
        )
        return new


def _flag_renames(era: str | None) -> str:
    if era is None:
        return "see the TRL103 table in docs/rules.md"
    table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
    renames = [f"--{k} -> --{r['to']}" for k, r in table.items() if r["kind"] == "rename"]
    return ", ".join(renames) + "; the rest in docs/rules.md (TRL103)"


def _expand_dict_literal(call: cst.Call) -> cst.Call:
    """`PPOConfig(**{"a": 1})` -> `PPOConfig(a=1)` when every key is a string literal."""
    if not any(a.star == "**" and isinstance(a.value, cst.Dict) for a in call.args):
        return call
    args: list[cst.Arg] = []
    for arg in call.args:
        if arg.star == "**" and isinstance(arg.value, cst.Dict):
            elements = arg.value.elements
            keys = [
                ppo.literal(e.key) if isinstance(e, cst.DictElement) else None for e in elements
            ]
            if not all(isinstance(k, str) and k.isidentifier() for k in keys):
                return call
            for key, element in zip(keys, elements):
                args.append(
                    ppo.new_kwarg(key, element.value).with_changes(  # type: ignore[union-attr, arg-type]
                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                    )
                )
        else:
            args.append(arg)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


class _Prescan(walk.Visitor):
    """Which names hold a PPO config (from a call, or from HfArgumentParser), and how it is rewritten."""

    def __init__(self, owner: RewritePPOConfig) -> None:
        self.owner = owner

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if not isinstance(value, cst.Call):
            return
        owner = self.owner
        found = ppo.ppo_class(owner.qualified_names(value.func), ppo.CONFIG_NAMES)
        if found is not None:
            expanded = _expand_dict_literal(value)
            plan = plan_call(expanded, owner.era_of(expanded, found[1]), owner.target)
            for t in node.targets:
                name = get_full_name_for_node(t.target)
                if name and not plan.fail:
                    owner.reads[name] = plan
                    owner.read_scopes[name] = owner.get_metadata(ScopeProvider, node, None)
            return
        func_name = get_full_name_for_node(value.func) or ""
        if func_name.rpartition(".")[2] in ppo_paths.PARSERS:
            first = value.args[0].value if value.args else None
            items = first.elements if isinstance(first, (cst.Tuple, cst.List)) else []
            for i, el in enumerate(items):
                hit = ppo.ppo_class(owner.qualified_names(el.value), ppo.CONFIG_NAMES)
                if hit is not None:
                    for t in node.targets:
                        name = get_full_name_for_node(t.target)
                        if name:
                            owner.parsers[name] = (i, hit[1] or owner.file_era)
            return
        if (
            isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ppo_paths.PARSE_METHODS
        ):
            parser = owner.parsers.get(get_full_name_for_node(value.func.value) or "")
            target = node.targets[0].target if len(node.targets) == 1 else None
            if parser is None or not isinstance(target, (cst.Tuple, cst.List)):
                return
            index, era = parser
            if index < len(target.elements) and era is not None:
                name = get_full_name_for_node(target.elements[index].value)
                if name:
                    owner.reads[name] = _parsed_plan(era, owner.target)


def _parsed_plan(era: str, target: str) -> Plan:
    """Reads of a config parsed from the command line: renames, and TODOs for fields that are gone."""
    plan = Plan(era=era)
    table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
    for name, row in table.items():
        if row["kind"] in ("same",):
            continue
        if row["kind"] == "rename":
            plan.reads[name] = ("attr", row["to"])
        elif name in ppo_paths.fields(era):  # script-only: a parser TRL103 could not move
            plan.reads[name] = (
                "todo",
                f"{ppo.target_config(target)} has no `{name}`: add it to your own "
                "script-arguments dataclass (and to the command line you run)",
            )
        elif name in ("mini_batch_size", "forward_batch_size") and era == ppo.LEGACY:
            plan.reads[name] = ("attr", "per_device_train_batch_size")
        else:
            plan.reads[name] = (
                "todo",
                f"{ppo.target_config(target)} has no `{name}`; see docs/rules.md (TRL103)",
            )
    return plan


class PPOConfigImports(ppo.FinishPPOImports):
    CODE = "TRL103"
    OWNED = ppo.CONFIG_NAMES

    @staticmethod
    def needed(state: FileState) -> set[str]:
        return state.shared.config_imports
    STILL_USED = "finish the TODOs on its remaining uses, then import RLOOConfig (or GRPOConfig) from trl instead"


class PPOConfigRule(Rule):
    code = "TRL103"
    name = "ppo-config"
    summary = (
        "Rewrite PPOConfig/PPOv2Config of every era as RLOOConfig (or GRPOConfig), field by field."
    )
    before = (
        "from trl import PPOConfig\n"
        'config = PPOConfig(output_dir="out", total_episodes=10000, num_ppo_epochs=4, kl_coef=0.05, response_length=53)\n'
    )
    after = (
        "from trl import RLOOConfig\n"
        'config = RLOOConfig(output_dir="out", max_steps=5000, num_iterations=4, beta=0.05, max_completion_length=53, '
        "max_grad_norm=0.0, learning_rate=5e-05, temperature=0.7)\n"
    )
    transformers = (RewritePPOConfig, PPOConfigImports)
    triggers = ("PPOConfig", "PPOv2Config")
