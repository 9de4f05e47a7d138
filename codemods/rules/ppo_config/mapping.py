"""TRL103's mapping of one `PPOConfig(...)` call onto the target config: the common fields here, the
era's own in legacy.py and v2.py, the defaults that differ between them reported."""

from __future__ import annotations

import difflib

import libcst as cst

from codemods import edits, ppo
from codemods.rules.ppo_config.legacy import legacy_fields
from codemods.rules.ppo_config.plan import Plan, algorithm, completions_per_prompt, read_value
from codemods.rules.ppo_config.v2 import v2_fields
from migrate.kernel.findings import Severity

REPORT_TO = (
    "`report_to` is not set: on transformers 4 its default reported to every integration "
    "installed (wandb, tensorboard, ...); on transformers 5, which TRL 1.13 installs in "
    "practice, it reports to none: if this ran on transformers 4 and logged that way, set "
    '`report_to="all"` (or name the tracker)'
)


def _misspelt(unknown: list[str], known: list[str], era: str) -> str:
    """Words for unknown keywords that look like a known field misspelt (`learning_riate`): the
    call raised TypeError on the releases it was written for too, so its intent is the field."""
    close = {}
    for name in unknown:
        near = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.85)
        if near:
            close[name] = near[0]
    if not close:
        return ""
    guesses = ", ".join(f"`{name}` for `{field}`" for name, field in close.items())
    # Legacy PPOConfig was a dataclass of its own fields only, all of them in the mapping; a
    # v2 config also took every TrainingArguments field of its transformers release.
    where = (
        f"no {ppo.ERA_TEXT[era]} release took it either: the call raised TypeError there"
        if era == ppo.LEGACY and len(close) == len(unknown)
        else "check the spelling"
    )
    return f" (misspelt? {guesses}: {where})"


def plan_call(
    call: cst.Call,
    era: str | None,
    target: str,
    *,
    parsed: bool = False,
    before: str | None = None,
    declared: ppo.Declared | None = None,
) -> Plan:
    """Decide the rewrite of `PPOConfig(...)`; `plan.fail` says why it must stay as it is.
    `parsed`: the config is built by a parser, so a field the call leaves out may still come
    from the command line. `before`: the first release the file cannot have run on
    (`ppo.release_cap`, for the v2 era): its defaults are those of the releases before it."""
    plan = Plan(
        before=before if era == ppo.V2 else None, declared=declared
    )  # legacy_fields may narrow before
    given: dict[str, tuple[int, cst.BaseExpression]] = {}
    for i, arg in enumerate(call.args):
        if arg.keyword is None:
            plan.fail = (
                "it has positional or `*`/`**` arguments; write the keywords out"
                if arg.star != "**"
                else f"`**{edits.code(arg.value).strip()}` holds PPO field names that must be "
                "renamed one by one"
            )
            return plan
        given[arg.keyword.value] = (i, arg.value)
    if era is None:
        plan.fail = (
            "cannot tell whether it is legacy (<= 0.11) or v2 PPOConfig from its keywords "
            "or this file"
        )
        return plan
    plan.era = era
    table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
    fields = ppo.config_fields(target)
    values = {k: edits.literal(v) for k, (_, v) in given.items()}
    moved = ppo.moved_by_drift() if era != ppo.LEGACY else frozenset()
    unknown = [k for k in given if k not in table and k not in fields and k not in moved]
    if unknown:
        plan.fail = (
            f"`{'`, `'.join(unknown)}` is neither a known {ppo.ERA_TEXT[era]} field nor a field of "
            f"{ppo.target_config(target)}{_misspelt(unknown, [*table, *fields, *moved], era)}"
        )
        return plan
    special = legacy_fields if era == ppo.LEGACY else v2_fields
    handled = special(plan, given, values, target)
    if era != ppo.LEGACY and "report_to" not in given and not parsed:
        # the TrainingArguments default these configs inherited: "all" (every integration
        # installed) on transformers 4, "none" on 5; which one ran the file does not say
        plan.notes.append((Severity.WARNING, REPORT_TO))
    for name, (i, expr) in given.items():
        if name in handled:
            continue
        row = table.get(name, {"kind": "same"})
        kind, value = row["kind"], values[name]
        shown = edits.code(expr).strip()
        if kind == "rename" and row["to"] in given:
            # `exp_name=` beside `run_name=`: one keyword of the target would be given twice.
            same = edits.code(given[row["to"]][1]).strip() == shown
            plan.notes.append(
                (
                    Severity.INFO if same else Severity.WARNING,
                    f"`{name}={shown}` dropped: it becomes `{row['to']}`, which the call "
                    "also sets" + ("" if same else " (to another value, kept)"),
                )
            )
            read_value(plan, name, expr, value)
        elif kind in ("same", "rename"):
            new = row.get("to", name)
            plan.args.append((i, new, None))
            if new != name:
                plan.reads[name] = ("attr", new)
        elif kind == "drop":
            said = (
                f"`{name}={shown}` dropped: {row['said']}"
                if "said" in row  # a field TRL 1.13 has, which the old trainer ignored
                else f"`{name}` is not used by TRL 1.13 ({row.get('why', 'runtime')}); dropped"
            )
            plan.notes.append((Severity.INFO, said))
            read_value(plan, name, expr, value)
        elif kind == "gone":
            plan.notes.append(
                (
                    Severity.WARNING,
                    f"`{name}={shown}` dropped: {row['why']}; that behaviour is gone",
                )
            )
            read_value(plan, name, expr, value)
        elif kind == "todo" or (kind == "flag" and value != row["off"]):
            plan.todos.append(f"`{name}={shown}` was dropped: " + row["todo"].format(value=shown))
            read_value(plan, name, expr, value)
        else:  # a flag at its harmless value
            plan.notes.append(
                (Severity.INFO, f"`{name}={shown}` is what TRL 1.13 does anyway; dropped")
            )
            read_value(plan, name, expr, value)
    cap = plan.before
    for name, row in table.items():  # target defaults that differ from PPO's: keep PPO's
        emit = row.get("emit")
        if isinstance(emit, dict):
            emit = emit.get(era)
        if (cap or plan.declared) and emit is not None:
            emit = _capped_emit(era, name, emit, cap, plan.declared)
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
            if "note" in row:  # what the written value does not carry over: said
                plan.notes.append((Severity.WARNING, row["note"]))
    _unset_flags(plan, given, table, era, parsed=parsed)
    _kept_defaults(plan, given, era, target, cap)
    _changed_defaults(plan, given, table, era, cap)
    completions_per_prompt(plan, target)
    algorithm(plan, target)
    return plan


def _capped_emit(
    era: str, name: str, emit: str, cap: str | None, declared: ppo.Declared | None
) -> str:
    """The value written for an absent field when the file's releases end before `cap` or the
    project declares its releases: the default of those releases where `emit` is the era's
    newest default (`learning_rate`), else `emit` itself, which then says what the trainer did
    (v2's `max_grad_norm=0.0`: it never clipped)."""
    newest = ppo.default_history(era, name)
    capped = ppo.default_history(era, name, cap, declared)
    if not newest or not capped or not isinstance(capped[-1][2], (int, float)):
        return emit
    try:
        is_default = float(emit) == float(newest[-1][2])
    except (TypeError, ValueError):
        return emit
    return repr(capped[-1][2]) if is_default else emit


def _unset_flags(plan: Plan, given: dict, table: dict, era: str, *, parsed: bool) -> None:
    """A flag field the call leaves out whose PPO default, in every release of the era, is not
    the value TRL 1.13 behaves as (v2's `stop_token=None`: PPO did not stop at EOS). The
    rewrite cannot keep that behaviour, so it says the training changes (a warning: the value
    was PPO's default, not a choice the file made). A parsed config may get the value from the
    command line."""
    for name, row in table.items():
        if row["kind"] != "flag" or name in given:
            continue
        runs = ppo.default_history(era, name, None, plan.declared)
        if not runs or any(value == row["off"] for _, _, value in runs):
            continue
        default = runs[-1][2]
        said = row["todo"].format(value=repr(default))
        said = said.removesuffix(f" (`{name}={default!r}`)")  # the message names it already
        where = (
            "has no value here; unless the command line sets it, PPO ran with"
            if parsed
            else "is not set, so PPO ran with"
        )
        plan.notes.append(
            (Severity.WARNING, f"`{name}` {where} its default `{name}={default!r}`: {said}")
        )


def _kept_defaults(plan: Plan, given: dict, era: str, target: str, before: str | None) -> None:
    """A training field both configs have, left out of the call, whose default in the era's newest
    release differs from the target's (bf16 and gradient_checkpointing of PPOv2): keep PPO's."""
    written = {n for _, n, _ in plan.args} | {n for n, _ in plan.extra}
    defaults = ppo.targets()["config_defaults"][target]
    for name in ppo.mapping()["training_fields"]:
        runs = ppo.default_history(era, name, before, plan.declared)
        if name in given or name in written or name not in defaults or not runs:
            continue
        old, new = runs[-1][2], defaults[name]
        if name == "bf16" and new is None:
            new = not defaults.get("fp16")  # TRL's configs turn an unset bf16 into `not fp16`
        if old != new and isinstance(old, (bool, int, float, str)):
            plan.extra.append((name, repr(old)))


def _changed_defaults(plan: Plan, given: dict, table: dict, era: str, before: str | None) -> None:
    """A field the call leaves out whose default changed between the era's releases: the file does
    not say which release it ran on, so say which default the rewrite kept."""
    for name in ppo.mapping()["training_fields"]:
        if name in given:
            continue
        runs = ppo.default_history(era, name, before, plan.declared)
        if len(runs) < 2:
            everywhere = ppo.default_history(era, name, before)
            if runs and plan.declared is not None and len(everywhere) > 1:
                plan.notes.append(
                    (
                        Severity.INFO,
                        f"`{name}` is not set and its {ppo.ERA_TEXT[era]} default changed "
                        f"between releases; the rewrite keeps {runs[0][2]!r}, the default of "
                        f"the releases that {plan.declared.text} allows",
                    )
                )
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
                f"releases: the rewrite keeps {newest[2]!r} (TRL {newest[0]}-{newest[1]}); if you "
                "ran "
                f"another release ({older}), set `{new}` to that value",
            )
        )
