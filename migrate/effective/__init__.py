"""The effective-settings checker: what a PPO run trained with before the rewrite and what the
rewritten TRL 1.13 run trains with, setting by setting, and whether `fix` said so.

For each PPO config call of the original file, the old run's settings come from the defaults of
its era (`codemods/data/ppo_defaults.json`, read from every TRL wheel) and the call's literal
keywords, through what each era's trainer did with them (legacy PPO never used a scheduler or
mixed precision of its own; the v2 trainers never clipped gradients). For the rewritten file,
the target config is built for real from the rewritten call's literal keywords in a subprocess
(the installed TRL 1.13, on the CPU), and its fields read back. A setting whose old value is
known and differs from the new one must be named by a finding; one whose old default changed
between releases of the era counts as differing unless the new value matches every release.

    python -m migrate.effective SCRIPT.py [--target rloo|grpo]    # runs `fix` on it in memory, then
    checks

It needs `trl` (the smoke extra); `fix` never imports it.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import sys
from collections.abc import Sequence
from typing import Any

import libcst as cst

from codemods import ppo
from migrate.effective import loop, models
from migrate.effective.new import TARGET_CLASSES, build_new, new_settings
from migrate.effective.old import CONFIG_CLASSES, NAMES, calls, era_of, old_settings
from migrate.effective.values import UNKNOWN
from migrate.kernel.findings import Finding


@dataclasses.dataclass(frozen=True)
class Difference:
    setting: str
    old: Any  # a value, or a tuple of the values the era's releases had
    new: Any
    covered_by: str  # the code of the finding that names it, "" when none does

    @property
    def covered(self) -> bool:
        return bool(self.covered_by)


@dataclasses.dataclass
class CallReport:
    line: int
    era: str
    old: dict[str, Any]
    new: dict[str, Any]
    differences: list[Difference]
    error: str = ""  # why the new config could not be built, if it could not

    @property
    def uncovered(self) -> list[Difference]:
        return [d for d in self.differences if not d.covered]


# -- comparing
# --------------------------------------------------------------------------------------
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return a == b


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    out = []
    for name, before in old.items():
        after = new.get(name, UNKNOWN)
        if before is UNKNOWN or after is UNKNOWN or name not in new:
            continue
        if isinstance(before, tuple):  # the era's releases disagreed: same only if it matches all
            if not all(_same(b, after) for b in before):
                out.append((name, before, after))
        elif not _same(before, after):
            out.append((name, before, after))
    return out


def covering(setting: str, findings: Sequence[Finding]) -> str:
    words = NAMES.get(setting, (setting,))
    for f in findings:
        if any(w in f.message for w in words):
            return f.code
    return ""


def check(
    original: str, rewritten: str, findings: Sequence[Finding], *, python: str = sys.executable
) -> list[CallReport]:
    """One report per PPO config call of `original` matched, in order, to the target config calls of
    `rewritten` (a call the rewrite left as it was gets no report: its TODO says why)."""
    old_calls = [c for c in calls(original, CONFIG_CLASSES) if not c.star]
    new_calls = calls(rewritten, TARGET_CLASSES)
    generation = _moved_generation(original, rewritten)
    cap = ppo.release_cap(cst.parse_module(original))  # `PPOTrainer(config=...)`: TRL 0.12-0.14
    reports = []
    for old, new in zip(old_calls, new_calls):
        era = era_of(old, original)
        before = old_settings(old, era, cap)
        fields, error = build_new(new.cls, new.kwargs, python=python)
        after = new_settings(fields)
        before["model_dtype"] = models.old_dtypes(original, era)
        after["model_dtype"] = models.new_dtypes(rewritten)
        if era == "legacy" and generation is not None:
            before.update(generation)
            after.update(loop.new_generation(fields))
        diffs = [
            Difference(n, b, a, covering(n, findings)) for n, b, a in differences(before, after)
        ]
        reports.append(CallReport(old.line, era, before, after, diffs, error))
    return reports


def _moved_generation(original: str, rewritten: str) -> dict[str, Any] | None:
    """The sampling settings of the original's legacy loop, when the rewrite moved its loop into
    the config (a loop left for a human still calls `generate`, and its TODO says why)."""
    settings = loop.old_generation(original)
    if settings is None:
        return None
    trainers = loop.trainer_names(ast.parse(original))
    return None if loop.still_generates(rewritten, trainers) else settings


def main(argv: list[str] | None = None) -> int:
    import argparse

    from codemods import RULES
    from codemods.base import Options
    from codemods.engine import process

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("original")
    p.add_argument("--target", default="rloo", choices=["rloo", "grpo"])
    args = p.parse_args(argv)
    with open(args.original, "rb") as fh:
        data = fh.read()
    result = process(
        args.original,
        data,
        codes=[r.code for r in RULES],
        options=Options(target=args.target, target_chosen=True),
    )
    rewritten = (result.new or data).decode("utf-8")
    uncovered = 0
    for r in check(data.decode("utf-8"), rewritten, result.findings):
        print(
            f"{args.original}:{r.line} "
            f"({r.era}){' - new config rejected: ' + r.error if r.error else ''}"
        )
        for d in r.differences:
            print(
                f"  {d.setting}: {d.old!r} -> {d.new!r}  "
                f"{'covered by ' + d.covered_by if d.covered else 'NOT REPORTED'}"
            )
        uncovered += len(r.uncovered)
    return 1 if uncovered else 0
