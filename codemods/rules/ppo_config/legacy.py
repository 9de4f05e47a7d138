"""TRL103 for legacy configs (TRL <= 0.11): batch sizes, KL control, generation lengths and the
other
fields of the `step()`-loop era, mapped onto the target config."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo
from codemods.rules.ppo_config.plan import Plan, fmt, int_value, read_value
from migrate.kernel.findings import Severity


def _mini_default(plan: Plan, values: dict) -> int:
    """The default mini_batch_size of the releases a call that leaves it out can have run on.
    From TRL 0.7.11 PPOConfig rejects a batch_size that mini_batch_size (128 by default) times
    gradient_accumulation_steps does not divide (`exact_div` in its __post_init__): a literal
    batch_size of 32 ran on an older release, whose default (1) and other defaults the rewrite
    keeps (`plan.before`)."""
    bs = int_value(values, "batch_size", 128)
    ga = int_value(values, "gradient_accumulation_steps", 1)
    runs = ppo.default_history(ppo.LEGACY, "mini_batch_size", None, plan.declared)
    newest = runs[-1][2]
    if "batch_size" not in values or not bs or not ga or bs % (newest * ga) == 0:
        return int(newest)
    for at in range(len(runs) - 2, -1, -1):
        first, last, mini = runs[at]
        if isinstance(mini, int) and mini and bs % (mini * ga) == 0:
            plan.before = runs[at + 1][0]
            plan.notes.append(
                (
                    Severity.INFO,
                    f"`batch_size={bs}` is not a multiple of mini_batch_size {newest} (its "
                    f"default from TRL {runs[at + 1][0]}) times gradient_accumulation_steps, "
                    f"which those releases reject: the script ran on TRL {first}-{last}, "
                    f"whose defaults the rewrite keeps (mini_batch_size {mini})",
                )
            )
            return mini
    return int(newest)


def _default(plan: Plan, field: str, fallback: int) -> int:
    """The legacy default of `field` in the releases the call can have run on (its newest)."""
    runs = ppo.default_history(ppo.LEGACY, field, plan.before, plan.declared)
    value = runs[-1][2] if runs else fallback
    return value if isinstance(value, int) else fallback


def legacy_fields(plan: Plan, given: dict, values: dict, target: str) -> set[str]:
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
    shown = {k: edits.code(e).strip() for k, (_, e) in given.items()}
    idx = {k: i for k, (i, _) in given.items()}
    if "log_with" in given:
        value = values["log_with"]
        read_value(plan, "log_with", given["log_with"][1], value)  # `config.log_with` reads
        if value is None:
            plan.notes.append(
                (Severity.INFO, "`log_with=None` dropped: TRL 1.13 reports to nothing by default")
            )
        elif isinstance(value, str):
            plan.args.append((idx["log_with"], "report_to", fmt([value])))
        else:
            # None (no tracker) must be "none": transformers 5 would make report_to=None [None]
            plan.args.append(
                (idx["log_with"], "report_to", f'{_operand(shown["log_with"])} or "none"')
            )
            plan.notes.append(
                (
                    Severity.INFO,
                    f'`log_with={shown["log_with"]}` is `report_to` now, "none" where it gave '
                    "no tracker (None)",
                )
            )
    mini_key = "forward_batch_size" if "forward_batch_size" in given else "mini_batch_size"
    default_mini = 128  # the legacy default mini_batch_size from TRL 0.7.11
    if mini_key in given:
        plan.args.append((idx[mini_key], "per_device_train_batch_size", None))
        plan.reads[mini_key] = ("attr", "per_device_train_batch_size")
    else:
        default_mini = _mini_default(plan, values)
        plan.extra.append(("per_device_train_batch_size", str(default_mini)))
    if "forward_batch_size" in given and "mini_batch_size" in given:
        plan.notes.append(
            (
                Severity.INFO,
                "`mini_batch_size` dropped: `forward_batch_size` overrode it in legacy TRL",
            )
        )
    default_bs = _default(plan, "batch_size", 128)  # 256 before 0.7.11
    bs, mini, ga = (
        int_value(values, "batch_size", default_bs),
        int_value(values, mini_key, default_mini),
        int_value(values, "gradient_accumulation_steps", 1),
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
    elif None in (bs, mini, ga) and all(
        values.get(k, 1) is edits.NOT_LITERAL or int_value(values, k, 1) is not None
        for k in ("batch_size", mini_key, "gradient_accumulation_steps")
    ):
        # Read at run time (`script_args.batch_size`): the same division, done by Python there.
        b, mb = shown.get("batch_size", str(default_bs)), shown.get(mini_key, str(default_mini))
        spg_expr = b if mb == "1" else f"{_operand(b)} // {_operand(mb)}"
        plan.extra.append(("steps_per_generation", spg_expr))
        plan.notes.append(
            (
                Severity.INFO,
                f"steps_per_generation={spg_expr} (batch_size // mini_batch_size): one generation "
                "covers batch_size samples as in legacy PPO",
            )
        )
        if mini_key not in given and bs is None and mb != "1":
            # learn2Pro/buddygpt: `batch_size=args.batch_size` (2 by default) under the
            # mini_batch_size legacy PPOConfig defaulted to (128); one the script gives is its
            # own choice, made for its own batch sizes
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`mini_batch_size` is not given, so legacy PPOConfig's default of {mb} "
                    f"divides the batch_size read at run time: below {mb}, "
                    f"steps_per_generation={spg_expr} is 0, which legacy PPOConfig rejected (a "
                    "multiple of mini_batch_size * gradient_accumulation_steps was required) and "
                    f"{'RLOOConfig' if target == 'rloo' else 'GRPOConfig'} takes, generating "
                    "nothing to train on: give batch_size a multiple of it, or set "
                    "steps_per_generation",
                )
            )
        if bs is None:
            # known only at run time: an odd batch_size (one prompt a step) now stops the config
            n = 2 if target == "rloo" else 8
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`batch_size={shown['batch_size']}` is read at run time: a generation holds "
                    "num_generations completions of each prompt, so "
                    f"{'RLOOConfig' if target == 'rloo' else 'GRPOConfig'} raises ValueError "
                    f"unless batch_size is a multiple of num_generations={n}: a batch_size of 1 "
                    "(one prompt a step) no longer runs",
                )
            )
    else:
        rejected = (
            f": {bs} is not a multiple of mini_batch_size * gradient_accumulation_steps "
            f"({mini * ga}), which PPOConfig rejected from TRL 0.6.0 on"
            if bs is not None and mini and ga
            else ""
        )
        plan.todos.append(
            "set `steps_per_generation = batch_size // mini_batch_size` "
            f"(batch_size={shown.get('batch_size', str(default_bs))}, "
            f"mini_batch_size={shown.get(mini_key, str(default_mini))}) so one "
            f"generation covers batch_size samples as in legacy PPO{rejected}"
        )
    if "batch_size" in given:
        plan.reads["batch_size"] = (
            "todo",
            "`batch_size` is per_device_train_batch_size * steps_per_generation now",
        )
        if bs is not None:
            plan.reads["batch_size"] = ("value", shown["batch_size"])
    steps = values.get("steps", 20000)
    if isinstance(steps, int) and bs is not None:
        plan.reads["total_ppo_epochs"] = ("value", str(-(-steps // bs)))
    else:
        # legacy PPOConfig derived total_ppo_epochs = ceil(steps / batch_size) (steps 20000 unless
        # given); read at run time when either is (`script_args.steps`)
        b = _operand(shown.get("batch_size", str(default_bs)))
        plan.reads["total_ppo_epochs"] = (
            "expr",
            f"math.ceil({_operand(shown.get('steps', '20000'))} / {b})",
        )
    if "steps" in given:
        # No legacy PPOTrainer read `steps`: the config only derived `total_ppo_epochs` from it,
        # for the script's own loop, which alone decided how long training ran (TRL106 carries
        # that loop over; a read of `config.steps` gets the value).
        plan.reads["steps"] = ("value", shown["steps"])
        plan.notes.append(
            (
                Severity.INFO,
                f"`steps={shown['steps']}` was dropped: legacy PPOTrainer never read it (how long "
                "training ran was the script's own loop: max_steps or num_train_epochs say it "
                "now)",
            )
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
                    f"`{key}={shown[key]}` was dropped: set `torch_empty_cache_steps=1` if it is "
                    "true"
                )
    if "score_clip" in given and values["score_clip"] is not None:
        expr = given["score_clip"][1]
        if target == "rloo" and values["score_clip"] is not edits.NOT_LITERAL:
            c = shown["score_clip"]
            plan.args.append((idx["score_clip"], "reward_clip_range", f"(-{c}, {c})"))
        elif (
            target == "rloo"
            and isinstance(expr, (cst.Name, cst.Attribute))
            and get_full_name_for_node(expr)
        ):
            # A variable may hold None, which meant "no clipping" in legacy PPO; reading a name
            # twice is harmless.
            c = shown["score_clip"]
            plan.args.append(
                (idx["score_clip"], "reward_clip_range", f"None if {c} is None else (-{c}, {c})")
            )
        elif target == "rloo":
            plan.todos.append(
                f"`score_clip={shown['score_clip']}` was dropped: set `reward_clip_range=(-c, c)` "
                "with its "
                "value c (None: no clipping)"
            )
        else:
            plan.todos.append(
                f"`score_clip={shown['score_clip']}` was dropped: GRPOConfig has no reward "
                "clipping; "
                "clip inside your reward function"
            )
    if bs is not None and bs % (2 if target == "rloo" else 8):
        if bs % 2 == 0 and bs >= 2:
            plan.extra.append(("num_generations", "2"))
        elif spg is not None and mini_key in given:
            two_per_prompt(plan, idx[mini_key], mini_key, bs, mini, shown[mini_key])  # type: ignore[arg-type]
        else:
            plan.todos.append(
                f"`num_generations` (>= 2) must divide the generation batch ({bs} samples): "
                "raise batch_size or set per_device_train_batch_size/steps_per_generation"
            )
    return handled


def two_per_prompt(plan: Plan, index: int, mini_key: str, bs: int, mini: int, shown: str) -> None:
    """Odd legacy batch_size: RLOO/GRPO need >= 2 completions per prompt, so each of the batch_size
    prompts gets 2 and the per-device batch doubles (steps_per_generation stays batch_size //
    mini)."""
    plan.args = [(i, n, str(2 * mini) if i == index else v) for i, n, v in plan.args]
    plan.extra.append(("num_generations", "2"))
    plan.reads[mini_key] = ("value", shown)
    message = (
        f"`batch_size={bs}` is odd and RLOO/GRPO need >= 2 completions per prompt: each prompt now "
        "gets 2 "
        f"(num_generations=2), so a generation holds 2 * batch_size = {2 * bs} samples and "
        f"per_device_train_batch_size is 2 * {mini_key} = {2 * mini}"
    )
    plan.notes.append((Severity.WARNING, message))


def _operand(code: str) -> str:
    """`code` as an operand of `//`: names, attributes and literals as they are, else bracketed."""
    return code if code.replace(".", "").replace("_", "").isalnum() else f"({code})"
