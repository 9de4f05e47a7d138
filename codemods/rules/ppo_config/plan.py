"""What TRL103 writes for one `PPOConfig(...)` call: the target config's arguments, the TODOs and
the
notes, decided from the call's keywords, the era's defaults and the target's."""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo
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
    # the first release the call cannot have run on, when the file tells (a v2 PPOTrainer given
    # `config=`: ppo.release_cap) or the call's own values do (a legacy batch_size the newer
    # default mini_batch_size does not divide): defaults come from the releases before it
    before: str | None = None
    # the releases the project declares (its requirement files, or --trl-version): defaults come
    # from those where the era's changed between releases
    declared: ppo.Declared | None = None


def fmt(value: Any) -> str:
    return repr(value)


def completions_per_prompt(plan: Plan, target: str) -> None:
    written = dict(plan.extra) | {n: v for _, n, v in plan.args if v is not None}
    n = written.get("num_generations", "2" if target == "rloo" else "8")
    times = f"{n}x" if n.isdigit() else "num_generations times"
    plan.notes.append(
        (
            Severity.WARNING,
            f"PPO sampled one completion per prompt; {ppo.target_config(target)[:4]} samples "
            f"num_generations={n} per prompt and scores each against the others, so a generation "
            f"of the same number of samples holds 1/{n} as many prompts, and a pass over the "
            f"dataset (an epoch) takes {times} the generations and optimizer steps",
        )
    )


def algorithm(plan: Plan, target: str) -> None:
    """What RLOO or GRPO does where PPO's update differed, whatever the settings: PPO (legacy
    and v2) trained a value head, took GAE advantages whitened over the batch, and clipped each
    token's probability ratio at `cliprange`."""
    ppo_did = (
        "PPO trained a value head and took GAE advantages from it, whitened over each batch, "
        "and clipped each token's probability ratio at `cliprange`"
    )
    if target == "rloo":
        now = (
            "RLOO has no critic: a completion's advantage is its reward (KL penalty included) "
            "minus the mean reward of its prompt's other completions, not whitened "
            "(`normalize_advantages=True` whitens it over the batch), and `epsilon` clips one "
            "ratio per completion, its tokens' log-probabilities summed, so on long completions "
            "the same value clips far more often"
        )
    else:
        now = (
            "GRPO has no critic: a completion's advantage is its reward minus the mean of its "
            "prompt's group, divided by the group's standard deviation (`scale_rewards=\"group\"`; "
            '`"batch"` scales over the batch, closer to PPO\'s whitening), and `epsilon` clips '
            "each token's ratio as `cliprange` did"
        )
    plan.notes.append((Severity.WARNING, f"{ppo_did}; {now}"))


def read_value(plan: Plan, name: str, expr: cst.BaseExpression, value: Any) -> None:
    """Reads of a dropped field (`config.model_name`) get its literal value, else a TODO."""
    if value is not edits.NOT_LITERAL:
        plan.reads[name] = ("value", edits.code(expr).strip())
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


def int_value(values: dict[str, Any], name: str, default: int) -> int | None:
    value = values.get(name, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
