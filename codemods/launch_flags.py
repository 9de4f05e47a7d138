"""Command-line flags of a launch line (`python ppo.py --num_ppo_epochs 4 ...`) that a script's
parsed PPO config took, checked against the config TRL103 put in its place: renamed flags get
their new spelling, flags the new config lacks get the reason. Data only: the field tables of
codemods/data/ppo_mapping.json."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from codemods import ppo

TABLES = ("legacy_config", "v2_config")


@dataclasses.dataclass(frozen=True)
class FlagChange:
    flag: str  # "--num_ppo_epochs", as the line spells it
    new: str  # "--num_iterations"; "" when the new config has no such flag
    why: str  # for a flag with no new spelling: what became of the setting
    code: str = "TRL103"  # the rule whose table says so (TRL108: transformers drift)
    drop: bool = False  # the flag (and a value after it) leaves the line: it changed nothing
    owner: str = "TrainingArguments"  # the class whose flag it was (for a dropped flag)
    value: str = ""  # the flag's new value, where the old one is gone (`--optim adamw_hf`)
    was: str = ""  # that old value


def _script_fields() -> frozenset[str]:
    return frozenset(
        f for era in (ppo.LEGACY, "v2", "ppov2", "experimental") for f in ppo.script_fields(era)
    )


def changes(
    args: Sequence[str], target: str, declared: Callable[[str], bool] | None = None
) -> list[FlagChange]:
    """The flags among `args` that the target config spells differently or lacks, in order.
    A flag the target config has, a script-only field (TRL103 keeps its flag), or a name no PPO
    config had (the script's own) is left alone. With `declared` (whether the rewritten script
    declares a field: the dataclass TRL103 wrote for the script-only fields it reads), a
    script-only field it does not declare read nothing before either (the PPO trainers never
    used them): its flag leaves the line (SaySelf's `--reward_model_path` of a script that loads
    its reward model from a fixed path)."""
    fields = ppo.config_fields(target)
    table = ppo.mapping()
    script = _script_fields()
    out: list[FlagChange] = []
    seen: set[str] = set()
    for flag, name, value in _flags(args):
        if name in script and declared is not None and name not in seen and not declared(name):
            seen.add(name)
            why = "a PPO config field only scripts read, and this one does not read it"
            out.append(FlagChange(flag, "", why, drop=True, owner=ppo.target_config(target)))
            continue
        if name in seen or name in fields or name in script:
            continue
        rows = [table[t][name] for t in TABLES if name in table[t]]
        if not rows:
            continue
        seen.add(name)
        renamed = [r["to"] for r in rows if r["kind"] == "rename" and r.get("to") in fields]
        if renamed:
            out.append(FlagChange(flag, f"--{renamed[0]}", ""))
            continue
        row = rows[-1]
        gone = dropped(flag, value, row)
        if gone:
            out.append(FlagChange(flag, "", gone, drop=True, owner=ppo.target_config(target)))
            continue
        if row["kind"] == "special" and row.get("to"):
            why = (
                f"set `--{row['to']}` instead: the new config counts `{row['to']}`, not "
                f"`{name}` (the conversion is in docs/rules.md, TRL103)"
            )
        else:
            why = row.get("todo") or row.get("why") or "it has no equivalent"
        out.append(FlagChange(flag, "", why.replace("{value}", value or "<value>")))
    return out


def dropped(flag: str, value: str, row: dict[str, object]) -> str:
    """Why the flag can leave the line with nothing lost, as TRL103 drops the same keyword of a
    `PPOConfig(...)` call: a field TRL 1.13 does not use, a value-model field (RLOO/GRPO have no
    value model), or a switch at the value TRL 1.13 behaves like (`--stop_token eos`); ""
    otherwise."""
    kind = row["kind"]
    if kind == "drop":
        return f"TRL 1.13 does not use it ({row.get('why', 'runtime')})"
    if kind == "gone":
        return f"{row['why']}; that behaviour is gone"
    if kind == "flag" and same_value(value, row["off"]):
        return f"`{flag} {value}` is what TRL 1.13 does anyway" if value else ""
    return ""


def same_value(given: str, off: object) -> bool:
    """Whether a command-line value is `off` as HfArgumentParser reads it (`False`, `false`,
    `no`, `0` for a boolean)."""
    if isinstance(off, bool):
        words = ("false", "f", "no", "n", "0") if not off else ("true", "t", "yes", "y", "1")
        return given.lower() in words
    if isinstance(off, (int, float)):
        try:
            return float(given) == float(off)
        except ValueError:
            return False
    return off is not None and given == str(off)


# Classes a launch line's flags reach through HfArgumentParser/TrlParser: the drift keywords of
# these (TRL108's table) are flags too.
CONFIG_CALLEES = ("transformers.TrainingArguments", "trl.SFTConfig", "trl.RLOOConfig")


def drift_changes(
    args: Sequence[str], declared: Callable[[str], bool], script: str = ""
) -> list[FlagChange]:
    """The flags among `args` that TRL108's keyword table renames on TrainingArguments and TRL's
    configs (`--evaluation_strategy` -> `--eval_strategy`; `--warmup_ratio 0.05` ->
    `--warmup_steps 0.05`, only for a ratio below 1) or drops (`--overwrite_output_dir`, which
    changed nothing in training; `drop`), in order. A flag the script declares
    itself (`declared(name)`: a field of its own dataclass) is its own and left alone; a
    `warmup_ratio` that is not a number below 1 gets no new spelling, with the reason. With
    `script` (its text), only the flags of classes it names (`SFTConfig` for `--max_seq_length`),
    and the fields of the TRL configs it names that TRL 1.13 lacks (`--max_prompt_length` of a
    script that parses a GRPOConfig; drift.json's `config_fields`)."""
    from codemods.rules.drift import config_fields, is_ratio, removed, sentence, table

    rules = {  # renamed keywords, and dropped ones (no `to`)
        k: r
        for k, r in [*table()["keywords"].items(), *table()["dropped"].items()]
        if any(fnmatch.fnmatchcase(c, p) for c in CONFIG_CALLEES for p in r["callees"])
    }
    fields = {  # fields of the TRL configs the script names that 1.13 lacks
        name: (cls, row)
        for cls, rows in config_fields().items()
        if script and _names(cls, script)
        for name, row in rows.items()
    }
    out: list[FlagChange] = []
    seen: set[str] = set()
    for flag, name, value in _flags(args):
        if name in fields and name not in seen and not declared(name):
            seen.add(name)
            cls, row = fields[name]
            why = removed(cls, name, row)
            if row["action"] == "rename":
                out.append(FlagChange(flag, f"--{row['to']}", why, "TRL108"))
            elif row["action"] == "drop":
                out.append(FlagChange(flag, "", why, "TRL108", drop=True, owner=cls))
            else:
                out.append(FlagChange(flag, "", f"{why}: {sentence(row['do'])}", "TRL108"))
            continue
        gone = table()["values"].get(name, {}).get(value)
        if (  # the value decides, even for a field of the script's own: TRL108 rewrites the
            # default of such an `optim` field because the script hands it to TrainingArguments
            gone is not None
            and name not in seen
            and any(fnmatch.fnmatchcase(c, p) for c in CONFIG_CALLEES for p in gone["callees"])
        ):
            seen.add(name)
            why = f"{gone['why']}; {gone['note']}"
            out.append(FlagChange(flag, "", why, "TRL108", value=gone["to"], was=value))
            continue
        switch = table()["switches"].get(name)
        if (
            switch is not None
            and name not in seen
            and not declared(name)
            and (not script or any(_names(p, script) for p in switch["callees"]))
        ):
            seen.add(name)
            out.append(_switched(flag, value, switch))
            continue
        rule = rules.get(name)
        if rule is None or name in seen or declared(name):
            continue
        if script and not any(_names(pattern, script) for pattern in rule["callees"]):
            continue
        seen.add(name)
        why = rule["why"].split(";")[0].rstrip(".")
        if "to" not in rule:
            out.append(FlagChange(flag, "", why, "TRL108", drop=True))
            continue
        if rule.get("ratio") and not is_ratio(value):
            out.append(
                FlagChange(flag, "", f"{why}: pass the ratio as --{rule['to']} below 1", "TRL108")
            )
            continue
        out.append(FlagChange(flag, f"--{rule['to']}", why, "TRL108"))
    return out


def _switched(flag: str, value: str, switch: dict[str, Any]) -> FlagChange:
    """A boolean flag of drift.json's `switches` (`--group_by_length`, bare or with a value):
    true becomes the new flag with its value (`--train_sampling_strategy group_by_length`),
    false leaves the line (the new flag's default is what it did), anything else (`$GROUP`)
    has no new spelling."""
    why = switch["why"].split(";")[0]
    on = switch["on"] if isinstance(switch["on"], str) else " ".join(switch["on"])
    new = f"--{switch['to']}"
    if not value or same_value(value, True):
        return FlagChange(flag, new, why, "TRL108", value=on, was=value)
    if same_value(value, False):
        return FlagChange(flag, "", why, "TRL108", drop=True)
    return FlagChange(flag, "", f"{why}: give `{new} {on}` where it is true", "TRL108")


def _names(pattern: str, script: str) -> bool:
    """Whether `script` names the class of a callee pattern (`trl.*Config`: any `...Config`)."""
    last = pattern.rpartition(".")[2]
    word = r"\w*".join(re.escape(part) for part in last.split("*"))
    return re.search(rf"\b{word}\b", script) is not None


def _flags(args: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """Each `--flag` of `args`: as spelled, as a field name (`-` read as `_`), and its value
    (`--flag=v`, or the next token when that is not a flag; "" when none)."""
    for i, token in enumerate(args):
        if not token.startswith("--") or len(token) < 3:
            continue
        flag, eq, value = token.partition("=")
        if not eq:
            value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else ""
        yield flag, flag[2:].replace("-", "_"), value


def renamed(args: Sequence[str], found: Sequence[FlagChange]) -> list[str]:
    """`args` with each renamed flag spelled the new way (`--num_ppo_epochs=4` ->
    `--num_iterations=4`); flags without a new spelling stay as they are."""
    new = {c.flag: c.new for c in found if c.new and not c.value}
    dropped = {c.flag for c in found if c.drop}
    values = {c.flag: c.value for c in found if c.value and not c.new}
    switched = {c.flag: [c.new, *c.value.split()] for c in found if c.new and c.value}
    out: list[str] = []
    skip_value = False
    revalue = ""  # the new value of the flag just passed (`--optim adamw_hf`)
    for token in args:
        flag, eq, value = token.partition("=")
        if skip_value:
            skip_value = False
            if not token.startswith("-"):
                continue  # the dropped flag's value (`--overwrite_output_dir True`)
        if revalue and not token.startswith("-"):
            out.append(revalue)
            revalue = ""
            continue
        revalue = ""
        if flag in dropped:
            skip_value = not eq
            continue
        if flag in switched:  # the flag and a true value after it give way to the new pair
            out.extend(switched[flag])
            skip_value = not eq
            continue
        if flag in values:
            if eq:
                out.append(flag + eq + values[flag])
            else:
                out.append(token)
                revalue = values[flag]
            continue
        out.append(new[flag] + eq + value if flag in new else token)
    return out


def left_out(args: Sequence[str], found: Sequence[FlagChange]) -> tuple[list[str], list[str]]:
    """`args` without the flags of `found` that have no new spelling and stay on the line for a
    human (a TODO), and those flags with their values (`--total_episodes 1000`): a smoke run of
    the line goes on without them, and says the real launch stops on them."""
    todo = {c.flag for c in found if not (c.new or c.drop or c.value)}
    kept: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        flag, eq, _ = token.partition("=")
        if flag not in todo:
            kept.append(token)
            i += 1
            continue
        value = not eq and i + 1 < len(args) and not args[i + 1].startswith("-")
        out.append(f"{token} {args[i + 1]}" if value else token)
        i += 2 if value else 1
    return kept, out


def with_value(line: str, flag: str, old: str, new: str) -> str:
    """`line` of a shell script with `flag`'s value `old` (`--optim adamw_hf`, `--optim=...`)
    as `new`."""
    return re.sub(
        rf"((?<![\w-]){re.escape(flag)}(?:=|[ \t]+))['\"]?{re.escape(old)}['\"]?(?=[\s\\]|$)",
        lambda m: m.group(1) + new,
        line,
    )


def with_switch(line: str, flag: str, new: str, value: str) -> str:
    """`line` of a shell script with the boolean `flag`, bare or given a true value
    (`--group_by_length`, `--group_by_length True`, `--group_by_length=true`), as `new value`."""
    true = "['\"]?(?i:true|t|yes|y|1)['\"]?"
    return re.sub(
        rf"(?<![\w-]){re.escape(flag)}(?:=(?:{true})|[ \t]+(?:{true}))?(?=[\s\\]|$)",
        f"{new} {value}",
        line,
    )


def without_flag(line: str, flag: str) -> str:
    """`line` of a shell script without `flag` and a value after it (a word that is not a
    flag), or with `=value`."""
    return re.sub(
        rf"[ \t]*(?<![\w-]){re.escape(flag)}(?:=\S*|[ \t]+(?!-)[^\s\\]+)?(?=[\s\\]|$)",
        "",
        line,
    )
