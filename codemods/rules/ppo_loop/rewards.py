"""TRL106: the statements that compute the rewards become the body of `reward_fn(prompts,
completions, **kwargs)`; the trainer and its config must be built in the loop's block."""

from __future__ import annotations

import itertools
import re

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, walk
from codemods.config_vars import is_parser
from codemods.rules.ppo_config.parsed import PARSE_METHODS
from codemods.rules.ppo_config.prescan import FACTORY_PARSERS
from codemods.rules.ppo_loop.loop_pass import LoopPass
from codemods.rules.ppo_loop.shape import Line, listed
from codemods.rules.ppo_loop.state import Refused
from codemods.rules.value_heads.tables import REWARD_ADAPTER
from migrate.kernel.findings import Severity

# columns of token ids, which a reward function over texts has no use for
TOKEN_COLUMNS = frozenset({"input_ids", "attention_mask", "labels"})


class Rewards(LoopPass):
    def _reward_body(
        self,
        lines: list[Line],
        batch: str | None,
        completions: str,
        forbidden: set[str | None],
        rewards: str | None,
        *,
        column_as: str = "completions",
        trainer: str | None = None,
    ) -> list[cst.BaseStatement]:
        """The user's reward statements, with batch["query"] as the function's `prompts` and
        batch[<completions>] as `column_as` (the `completions` argument, or the local name the
        loop decoded the responses to); their comments and blank lines come along."""
        scorers = _adapter_scorers(self.tree)
        if any(
            "compute_reward_score" in edits.code(ln.stmt)
            and not _scored_by_adapter(ln.stmt, scorers, trainer)
            for ln in lines
        ):
            raise Refused(
                "the reward comes from the policy's own reward adapter (`compute_reward_score` "
                "of a value-head model built with `reward_adapter=`), which TRL 1.13 does not "
                "have, and no model of this file gets a `RewardAdapter` from TRL102 (it does "
                "when the value-head model is built here with `reward_adapter=` and a "
                "`peft_config`): load that adapter as its own sequence-classification model "
                "(peft `PeftModel.from_pretrained` on the base model) and score the texts with "
                "it in `reward_fn`, or pass it as `reward_funcs=` with its tokenizer"
            )
        out: list[cst.BaseStatement] = []
        banned = {n for n in (*forbidden, batch) if n}
        for ln in lines:
            s = ln.stmt
            code = edits.code(
                s.with_changes(leading_lines=[]) if isinstance(s, cst.BaseCompoundStatement) else s
            ).strip()
            replaced = code
            for quote in ('"', "'"):  # batch["query"] and batch['query'] alike
                replaced = replaced.replace(f"{batch}[{quote}query{quote}]", "prompts").replace(
                    f"{batch}[{quote}{completions}{quote}]", column_as
                )
            if batch:
                replaced = self._dataset_columns(replaced, batch, s)
            stmt = cst.parse_statement(replaced + "\n")
            hit = edits.names(stmt) & banned
            if hit == {trainer} and _trainer_kept(stmt, trainer, scorers):
                hit = set()
            if hit:
                raise Refused(
                    f"`{' '.join(code.split())}` reads {listed(hit)}; a reward function sees only "
                    "the prompts "
                    f'(`{batch}["query"]`) and the completions (`{batch}["{completions}"]`)'
                )
            leading = (
                ln.comments
                if out
                else list(itertools.dropwhile(lambda e: e.comment is None, ln.comments))
            )
            stmt = stmt.with_changes(leading_lines=leading)
            if ln.trailing is not None and isinstance(stmt, cst.SimpleStatementLine):
                stmt = stmt.with_changes(trailing_whitespace=ln.trailing)
            out.append(stmt)
        if not any(rewards in edits.bound(ln.stmt) for ln in lines):
            raise Refused(f"`{rewards}` is not computed inside the loop")
        return out

    def _dataset_columns(self, code: str, batch: str, stmt: cst.CSTNode) -> str:
        """`batch["col"]` of another dataset column as `kwargs["col"]`: TRL 1.13 hands a reward
        function every other column of the dataset (remove_unused_columns is False for RLOO and
        GRPO) as a list with one entry per completion, aligned with `prompts`. The token columns
        are not text and stay unread."""
        pattern = re.compile(rf"\b{re.escape(batch)}\[(['\"])(\w+)\1\]")
        columns = sorted({c for _, c in pattern.findall(code)} - TOKEN_COLUMNS)
        if not columns:
            return code
        self.report(
            stmt,
            "the reward reads "
            + ", ".join(f'the dataset column "{c}"' for c in columns)
            + f" of `{batch}`; TRL 1.13 passes a dataset's other columns to reward functions as "
            "keyword lists with one entry per completion, so `reward_fn` reads `kwargs[...]` "
            "(keep `remove_unused_columns=False`, the default)",
            severity=Severity.INFO,
        )
        return pattern.sub(
            lambda mt: f'kwargs["{mt.group(2)}"]' if mt.group(2) in columns else mt.group(0),
            code,
        )

    def _trainer_and_config(
        self, before: list[cst.BaseStatement], trainer: str
    ) -> tuple[int, int, str]:
        """Indexes of the trainer and of its config (a config call, or the parse of a command-line
        parser of the config class) in `before`, and the config's name."""
        trainer_at = config_at = None
        config_name = ""
        inline = False
        for i, stmt in enumerate(before):
            assign = edits.assignment(stmt)
            if assign is None:
                continue
            target = get_full_name_for_node(assign.targets[0].target)
            if target == trainer and isinstance(assign.value, cst.Call):
                trainer_at = i
                arg = edits.kwarg(assign.value, "args")
                config_name = get_full_name_for_node(arg.value) if arg else ""  # type: ignore[assignment]
                inline = arg is not None and isinstance(arg.value, cst.Call)
        if trainer_at is None:
            raise Refused(f"`{trainer}` is not built in the same block as the loop")
        self.config_kind = "block"
        if inline and config_name.rpartition(".")[2] == self.config_cls:
            self.config_kind = "inline"  # `RLOOTrainer(args=RLOOConfig(...), ...)`
            return trainer_at, trainer_at, config_name
        parsers: set[str] = set()
        for i, stmt in enumerate(before[:trainer_at]):
            assign = edits.assignment(stmt)
            if assign is None or not isinstance(assign.value, cst.Call):
                continue
            func = get_full_name_for_node(assign.value.func) or ""
            assigned = assign.targets[0].target
            if (
                isinstance(assigned, cst.Name)
                and is_parser(func)
                and assign.value.args
                and any(
                    (get_full_name_for_node(e) or "").endswith(self.config_cls)
                    for e in edits.elements(assign.value.args[0].value)
                )
            ):
                parsers.add(assigned.value)
            elif (
                get_full_name_for_node(assigned) == config_name and func.endswith(self.config_cls)
            ) or (
                config_name in {get_full_name_for_node(e) for e in edits.elements(assigned)}
                and func.rpartition(".")[0] in parsers
                and func.rpartition(".")[2] in PARSE_METHODS
            ):
                config_at = i
        if config_at is None:
            config_at = _factory_config(before[:trainer_at], config_name, self.config_cls)
        if config_at is None and _imported(before, config_name, self.state.facts.local):
            self.config_kind = "imported"
            return trainer_at, trainer_at, config_name
        if config_at is None:
            raise Refused(
                f"the trainer's config `{config_name}` is neither a `{self.config_cls}(...)` call "
                "nor parsed by a "
                f"parser of `{self.config_cls}` in the same block"
            )
        return trainer_at, config_at, config_name


def _adapter_scorers(tree: cst.Module) -> set[str]:
    """Names TRL102 gave a reward adapter back: `X.compute_reward_score = RewardAdapter(...)`."""
    found = set()
    for assign in walk.find_all(tree, cst.Assign):
        value = assign.value
        for t in assign.targets:
            target = t.target
            if (
                isinstance(target, cst.Attribute)
                and target.attr.value == "compute_reward_score"
                and isinstance(target.value, cst.Name)
                and isinstance(value, cst.Call)
                and get_full_name_for_node(value.func) == REWARD_ADAPTER
            ):
                found.add(target.value.value)
    return found


def _scorer_calls(stmt: cst.CSTNode) -> list[cst.Attribute]:
    """The `X.compute_reward_score` of every call of it in `stmt`."""
    return [
        c.func
        for c in walk.find_all(stmt, cst.Call)
        if isinstance(c.func, cst.Attribute) and c.func.attr.value == "compute_reward_score"
    ]


def _policy_of(expr: cst.BaseExpression, trainer: str | None) -> bool:
    """`T.model` or `T.accelerator.unwrap_model(T.model)`: the trainer's policy, in TRL 1.13 the
    same model object the script built."""
    if isinstance(expr, cst.Call) and get_full_name_for_node(expr.func) == (
        f"{trainer}.accelerator.unwrap_model"
    ):
        expr = expr.args[0].value if len(expr.args) == 1 else expr
    return get_full_name_for_node(expr) == f"{trainer}.model"


def _scored_by_adapter(stmt: cst.CSTNode, scorers: set[str], trainer: str | None) -> bool:
    """Every `compute_reward_score(...)` in `stmt` calls the RewardAdapter TRL102 attached: on
    its model by name, or on the trainer's policy when exactly one model has one."""
    calls = _scorer_calls(stmt)
    return bool(calls) and all(
        (get_full_name_for_node(c.value) or "") in scorers
        or (len(scorers) == 1 and _policy_of(c.value, trainer))
        for c in calls
    )


def _trainer_kept(stmt: cst.CSTNode, trainer: str | None, scorers: set[str]) -> bool:
    """The trainer is read only as `T.accelerator` (an Accelerator in legacy PPO and in TRL
    1.13's trainers alike) or as the policy a RewardAdapter scores with."""
    policy = {
        id(n)
        for c in _scorer_calls(stmt)
        if len(scorers) == 1
        for n in walk.find_all(c.value, cst.Name)
        if _policy_of(c.value, trainer)
    }
    for attr in walk.find_all(stmt, cst.Attribute):
        if (
            isinstance(attr.value, cst.Name)
            and attr.value.value == trainer
            and attr.attr.value == "accelerator"
        ):
            policy.add(id(attr.value))
    uses = [n for n in walk.find_all(stmt, cst.Name) if n.value == trainer]
    # the Name nodes of `T.attr` are the `.value` of their Attribute, found by identity
    return all(id(n) in policy for n in uses)


def _imported(before: list[cst.BaseStatement], name: str, local: frozenset[str]) -> bool:
    """Whether `name` is a config this block only reads: imported from another file of the run
    (`from config import config`, which TRL103 rewrites there), bound by no statement of
    `before` but an import."""
    return (
        name in local
        and "." not in name
        and not any(
            name in edits.bound_names(s)
            and not (
                isinstance(s, cst.SimpleStatementLine)
                and all(isinstance(x, (cst.Import, cst.ImportFrom)) for x in s.body)
            )
            for s in before
        )
    )


def _factory_config(
    before: list[cst.BaseStatement], config_name: str, config_cls: str
) -> int | None:
    """Index in `before` of the dataclass whose field holds the config (`args.ppo_config`, with
    `args = tyro.cli(ScriptArguments)` and `ppo_config: PPOConfig = field(default_factory=lambda:
    PPOConfig(...))` in the class, as TRL 0.7's `ppo.py` had it), or None."""
    holder, _, name = config_name.rpartition(".")
    if not holder or "." in holder:
        return None
    cls_name = None
    for stmt in before:
        assign = edits.assignment(stmt)
        if assign is None or get_full_name_for_node(assign.targets[0].target) != holder:
            continue
        value = assign.value
        if (
            isinstance(value, cst.Call)
            and (get_full_name_for_node(value.func) or "") in FACTORY_PARSERS
            and len(value.args) == 1
            and isinstance(value.args[0].value, cst.Name)
        ):
            cls_name = value.args[0].value.value
        else:
            cls_name = None  # bound to something else later
    if cls_name is None:
        return None
    for i, stmt in enumerate(before):
        if (
            isinstance(stmt, cst.ClassDef)
            and stmt.name.value == cls_name
            and factory_call(stmt, name, config_cls) is not None
        ):
            return i
    return None


def factory_call(cls: cst.ClassDef, name: str, config_cls: str) -> cst.Call | None:
    """The `config_cls(...)` call of `name: ... = field(default_factory=lambda: config_cls(...))`
    in the class body."""
    for stmt in getattr(cls.body, "body", []):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if (
                isinstance(small, cst.AnnAssign)
                and isinstance(small.target, cst.Name)
                and small.target.value == name
                and isinstance(small.value, cst.Call)
                and (get_full_name_for_node(small.value.func) or "").rpartition(".")[2] == "field"
            ):
                factory = edits.kwarg(small.value, "default_factory")
                body = (
                    factory.value.body
                    if factory and isinstance(factory.value, cst.Lambda)
                    else None
                )
                if (
                    isinstance(body, cst.Call)
                    and (get_full_name_for_node(body.func) or "").rpartition(".")[2] == config_cls
                ):
                    return body
    return None
