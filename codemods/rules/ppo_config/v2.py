"""TRL103 for PPOv2 and experimental configs (TRL 0.9 .. 1.12): `train()`-era fields mapped onto the
target config."""

from __future__ import annotations

import math

from codemods import edits, ppo
from codemods.rules.ppo_config.plan import Plan, int_value, read_value
from migrate.kernel.findings import Severity


def v2_fields(plan: Plan, given: dict, values: dict, target: str) -> set[str]:
    """v2 fields whose value changes form (research section 4.1)."""
    handled = {
        "kl_estimator",
        "total_episodes",
        "num_mini_batches",
        "num_sample_generations",
        "max_grad_norm",
    }
    shown = {k: edits.code(e).strip() for k, (_, e) in given.items()}
    idx = {k: i for k, (i, _) in given.items()}
    if "max_grad_norm" in given and values["max_grad_norm"] != 0:
        plan.args.append((idx["max_grad_norm"], "max_grad_norm", "0.0"))
        plan.notes.append(
            (
                Severity.WARNING,
                f"`max_grad_norm={shown['max_grad_norm']}` had no effect: the PPO v2 trainers "
                "never clipped gradients; max_grad_norm=0.0 keeps that (set a value to clip with "
                "TRL 1.13)",
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
                    f"`kl_estimator={shown['kl_estimator']}` is what "
                    f"{ppo.target_config(target)[:4]} uses; dropped",
                )
            )
        else:
            plan.todos.append(
                f"`kl_estimator={shown['kl_estimator']}` was dropped: "
                f"{ppo.target_config(target)[:4]} always "
                f"uses the {native} estimator "
                f"({'GRPO uses k3' if native == 'k1' else 'RLOO uses k1'})"
            )
    nmb = int_value(values, "num_mini_batches", 1)
    old_meaning = plan.era == ppo.PPOV2 or (
        plan.era == ppo.V2 and nmb == 1
    )  # 0.9-0.16; 1 means the same in both
    new_meaning = plan.era == ppo.EXPERIMENTAL or (plan.era == ppo.V2 and nmb == 1)
    p, ga, mu = (
        int_value(values, "per_device_train_batch_size", 8),
        int_value(values, "gradient_accumulation_steps", 1),
        int_value(values, "num_ppo_epochs", 4),
    )
    if "num_mini_batches" in given:
        if new_meaning and nmb is not None and ga is not None and ga % nmb == 0:
            plan.notes.append(
                (
                    Severity.INFO,
                    "`num_mini_batches` dropped: since TRL 0.17 it only split the rollout "
                    "(into no more parts than gradient_accumulation_steps, one optimizer step "
                    "each time as before)",
                )
            )
        elif new_meaning:
            # 0.17+: micro-batches of min(P, P*GA/nmb) samples, an optimizer step every GA of
            # them: nmb > GA took nmb/GA steps per rollout (W:0.17.0-1.12.0 ppo_trainer.py,
            # `accelerator.accumulate` over the minibatches' micro-batches)
            known = p is not None and ga is not None and nmb is not None
            if known and (p * ga) % nmb == 0 and nmb % ga == 0:  # type: ignore[operator]
                to = (
                    f"set per_device_train_batch_size={p * ga // nmb} and "  # type: ignore[operator]
                    f"steps_per_generation={nmb} to keep that"
                )
            else:
                to = (
                    "to keep that, set per_device_train_batch_size to that size and "
                    "steps_per_generation=num_mini_batches (where it did not exceed GA, nothing "
                    "to do)"
                )
            plan.todos.append(
                f"`num_mini_batches={shown['num_mini_batches']}` was dropped: since TRL 0.17 "
                "PPO split each rollout into that many minibatches, and where it exceeded "
                "gradient_accumulation_steps (GA) it took num_mini_batches / GA optimizer steps "
                "per rollout, over micro-batches of per_device_train_batch_size * GA / "
                f"num_mini_batches samples: {to}"
            )
        elif old_meaning and nmb is not None and ga is not None:
            if ga * nmb != ga:
                plan.args.append((idx["num_mini_batches"], "steps_per_generation", str(ga * nmb)))
        else:
            plan.todos.append(
                f"`num_mini_batches={shown['num_mini_batches']}` was dropped: on TRL 0.12-0.16 set "
                "`steps_per_generation = gradient_accumulation_steps * num_mini_batches`; on 0.17+ "
                "drop it"
            )
    if "total_episodes" in given and values["total_episodes"] is not None:
        te = int_value(values, "total_episodes", 0)
        if te is not None and p and ga and mu and nmb and (old_meaning or new_meaning):
            k = nmb if old_meaning else 1
            max_steps = math.ceil(te / (p * ga * k)) * mu * k
            plan.args.append((idx["total_episodes"], "max_steps", str(max_steps)))
            _rescale_intervals(plan, given, values, shown, idx, handled, mu * k)
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`total_episodes={shown['total_episodes']}` became max_steps={max_steps} = "
                    "ceil(total_episodes / (per_device_train_batch_size * "
                    "gradient_accumulation_steps"
                    f"{' * num_mini_batches' if k > 1 else ''})) * "
                    f"num_ppo_epochs{' * num_mini_batches' if k > 1 else ''}"
                    " for one process; divide the episodes by the number of processes for more",
                )
            )
        elif nmb == 1 and (expr := _max_steps_code(given, shown, values)) is not None:
            # read at run time (`args.total_episodes`, a constant of the script): the same
            # formula, written as code; num_mini_batches=1 means the same in every v2 release
            plan.args.append((idx["total_episodes"], "max_steps", expr))
            if mu is not None:
                _rescale_intervals(plan, given, values, shown, idx, handled, mu)
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`total_episodes={shown['total_episodes']}` became `max_steps={expr}`: "
                    "ceil(total_episodes / (per_device_train_batch_size * "
                    "gradient_accumulation_steps)) * num_ppo_epochs for one process, computed when "
                    "the config is built (-1, epochs instead, where total_episodes is None, as "
                    "PPO then trained num_train_epochs epochs); divide the episodes by the number "
                    "of processes for more",
                )
            )
        else:
            plan.todos.append(
                f"`total_episodes={shown['total_episodes']}` was dropped: set `max_steps = "
                "ceil(total_episodes / (per_device_train_batch_size * "
                "gradient_accumulation_steps * "
                "num_processes)) * num_ppo_epochs` (TRL 0.12-0.16: also x num_mini_batches inside "
                "and out)"
            )
        # a read of the field gets what the call gave it (`print(config.total_episodes)`)
        read_value(plan, "total_episodes", given["total_episodes"][1], values["total_episodes"])
        if plan.reads["total_episodes"][0] == "todo":
            plan.reads["total_episodes"] = (
                "todo",
                "`total_episodes` is gone: training length is `max_steps`",
            )
    if ("total_episodes" not in given or values["total_episodes"] is None) and (
        mu and nmb and (old_meaning or new_meaning)
    ):
        # the run's length is the epochs' (num_train_epochs), but the step counts of logging,
        # saving and evaluation change unit all the same
        _rescale_intervals(
            plan, given, values, shown, idx, handled, mu * (nmb if old_meaning else 1)
        )
    elif (
        mu is None
        and "num_ppo_epochs" in given
        and _is_dotted(shown["num_ppo_epochs"])
        and nmb == 1
        and "total_episodes" not in given
    ):
        # `num_ppo_epochs=config.num_ppo_epochs` (McClain-Thiel/PlasmidLLM): the same factor,
        # read where the config is built
        _rescale_intervals(plan, given, values, shown, idx, handled, shown["num_ppo_epochs"])
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


# Fields counted in trainer steps. PPO v2 took one step per rollout batch (its lr scheduler and
# global_step too); TRL 1.13 takes one per optimizer step, num_ppo_epochs (x num_mini_batches
# before 0.17) of them per batch, which is why max_steps is that many times the batches.
INTERVALS = ("warmup_steps", "logging_steps", "save_steps", "eval_steps")
# What each interval did in PPO v2 (W:0.12.2-0.25.0 ppo_trainer.py: one `global_step` and one
# scheduler step per rollout batch; `self.log(metrics)` on every batch; `should_save` checked,
# `should_evaluate` never: no evaluate() during training), and what the scaled value keeps.
INTERVAL_IN_V2 = {
    "warmup_steps": "counted rollout batches in PPO v2 (one scheduler step per batch)",
    "logging_steps": "did nothing in PPO v2, which logged every rollout batch",
    "save_steps": "counted rollout batches in PPO v2",
    "eval_steps": "did nothing in PPO v2, which never evaluated during training",
}
INTERVAL_KEPT = {
    "warmup_steps": "keeps the same point in training",
    "logging_steps": "logs every that many batches, as the value said",
    "save_steps": "keeps the same point in training",
    "eval_steps": (
        "evaluates every that many batches, as the value said, where `eval_strategy` is "
        '"steps" and the trainer has an `eval_dataset` (a full evaluate() PPO v2 never ran)'
    ),
}
INTERVAL_LEFT = {
    "logging_steps": "PPO v2 logged every rollout batch, TRL 1.13 logs every `logging_steps`",
    "save_steps": "saving runs {times} as often as in PPO v2",
    "eval_steps": (
        "PPO v2 never evaluated during training, TRL 1.13 runs evaluate() every `eval_steps` "
        'where `eval_strategy` is "steps" and the trainer has an `eval_dataset`'
    ),
}


def _max_steps_code(given: dict, shown: dict[str, str], values: dict) -> str | None:
    """`max_steps` as code, for a `total_episodes` or batch setting given as an expression:
    `math.ceil(E / (P * GA)) * MU`, with each operand the call's own code (or the v2 default) and
    literal factors of 1 left out, guarded by `-1 if E is None else` where E is a name or an
    attribute; None where an operand is a literal that is not a positive int (the formula would
    not mean what PPO did)."""
    parts = []
    for name, default in (
        ("total_episodes", None),
        ("per_device_train_batch_size", 8),
        ("gradient_accumulation_steps", 1),
        ("num_ppo_epochs", 4),
    ):
        if name not in given:
            parts.append(str(default))
            continue
        value = values[name]
        if value is not edits.NOT_LITERAL and not (
            isinstance(value, int) and not isinstance(value, bool) and value > 0
        ):
            return None
        if value is edits.NOT_LITERAL and name != "total_episodes" and not _is_dotted(shown[name]):
            return None  # evaluated twice (its own keyword and here): names and attributes only
        parts.append(shown[name] if value is edits.NOT_LITERAL else str(value))
    te, p, ga, mu = parts
    batch = " * ".join(_factor(x) for x in (p, ga) if x != "1") or "1"
    per = f"({batch})" if " * " in batch else batch
    steps = f"math.ceil({_factor(te)} / {per})" + (f" * {_factor(mu)}" if mu != "1" else "")
    # a flag or a field read at run time may be None (PPO then trained num_train_epochs epochs)
    may_be_none = values["total_episodes"] is edits.NOT_LITERAL and _is_dotted(te)
    return f"-1 if {te} is None else {steps}" if may_be_none else steps


def _is_dotted(code: str) -> bool:
    return all(part.isidentifier() for part in code.split("."))


def _factor(code: str) -> str:
    """`code` as an operand of `*` and `/`: names, attributes and numbers as they are."""
    return code if code.replace(".", "").replace("_", "").isalnum() else f"({code})"


def _rescale_intervals(
    plan: Plan,
    given: dict,
    values: dict,
    shown: dict,
    idx: dict,
    handled: set[str],
    factor: int | str,
) -> None:
    """Intervals counted in rollout batches, rescaled to optimizer steps by `factor`: a number,
    or the code of a name or attribute (a `num_ppo_epochs` read at run time), which the new
    values multiply by."""
    if factor == 1:
        return
    per_batch = factor if isinstance(factor, int) else f"`{factor}`"
    schedule = (
        values.get("lr_scheduler_type", "linear") if "lr_scheduler_type" in given else "linear"
    )
    if isinstance(schedule, str) and not schedule.startswith("constant"):
        plan.notes.append(
            (
                Severity.WARNING,
                f"PPO v2 stepped its `{schedule}` learning-rate schedule once per rollout batch, "
                "so every optimizer step of a batch ran at that batch's rate; TRL 1.13 steps it "
                f"at every optimizer step ({per_batch} per batch here): the same curve in finer "
                "steps, each batch's updates a little further along it, which over a few rollout "
                "batches adds up to a smaller total learning rate (3 batches of 4 steps under a "
                "linear decay: 19% less)",
            )
        )
    for name in INTERVALS:
        if name not in given:
            continue
        handled.add(name)
        value = values[name]
        per = factor if isinstance(factor, int) else f"`{factor}`"
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            scaled = str(value * factor) if isinstance(factor, int) else f"{value} * {factor}"
            plan.args.append((idx[name], name, scaled))
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`{name}={shown[name]}` {INTERVAL_IN_V2[name]}; TRL 1.13 counts optimizer "
                    f"steps ({per} per batch here), so {name}={scaled} "
                    f"{INTERVAL_KEPT[name]}",
                )
            )
        elif isinstance(value, float) and 0 < value < 1:
            plan.args.append((idx[name], name, None))  # a ratio of the run: unchanged
        else:
            plan.args.append((idx[name], name, None))
            plan.todos.append(
                f"`{name}={shown[name]}` {INTERVAL_IN_V2[name]}; TRL 1.13 counts optimizer "
                f"steps ({per} per batch here): multiply it by {per} where it is a number of "
                "steps (a ratio below 1 stays as it is)"
            )
    left = [n for n in INTERVALS if n not in given and n != "warmup_steps"]
    if left:
        times = f"{factor}x" if isinstance(factor, int) else f"`{factor}` times"
        said = "; ".join(INTERVAL_LEFT[n].format(times=times) for n in left)
        plan.notes.append(
            (
                Severity.WARNING,
                f"{', '.join(f'`{n}`' for n in left)} left at their defaults count optimizer "
                f"steps in TRL 1.13, {per_batch} per rollout batch here: {said}",
            )
        )
