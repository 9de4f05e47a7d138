"""Library entry points: what the CLI calls, and what tests and other tools call directly.

`fix_paths` (fix.py) rewrites code, `upgrade_path` (upgrade.py) runs the three jobs in order;
the rest hand one job's call through, so the CLI needs no other module of the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import codemods
from codemods import UnknownRuleError
from codemods.base import Options
from migrate.api.fix import (
    CHECK,
    DIFF,
    PARALLEL_THRESHOLD,
    WRITE,
    FixReport,
    copy_example,
    fix_paths,
    trl_version,
)
from migrate.api.upgrade import UpgradeReport, entry_points, upgrade_path
from migrate.kernel.findings import Severity


def smoke_script(script: str, args: Sequence[str] = (), **options: Any) -> Any:
    """`smoke SCRIPT`: one smoke run (migrate.smoke.smoke_script); torch stays in the subprocess."""
    from migrate import smoke
    from migrate.api.hints import explain

    return explain(smoke.smoke_script(script, list(args), **options))


def check_env(**options: Any) -> Any:
    """`smoke --env`: train the bundled reference stack here (imports torch)."""
    from migrate.reference.train import check_env as run

    return run(**options)


def check_compat(path: str, **options: Any) -> Any:
    """`compat PATH`: the compat report (compat.api.check_path); raises RulesError for a bad
    target."""
    from compat.api import check_path

    return check_path(path, **options)


def fix_rules() -> list[dict[str, str]]:
    """The codemod rules' code, name, summary and example (SARIF rules of `fix`)."""
    from migrate.kernel.findings import link_for

    return [
        {
            "id": r.code,
            "name": r.name,
            "summary": r.summary,
            "before": r.before,
            "after": r.after,
            "link": link_for(r.code),
        }
        for r in codemods.RULES
    ]


def fix_catalogue() -> list[dict[str, str]]:
    """Every code `fix` reports: its rules, then its own findings (TRL190, TRL191)."""
    from migrate.kernel import codes

    return fix_rules() + codes.fix_entries()


def rules_catalogue() -> list[dict[str, str]]:
    """Every code of every job, codemod rules first with their examples: `trl-migrate rules`."""
    from migrate.kernel import codes

    return fix_catalogue() + codes.compat_entries() + codes.smoke_entries()


def __getattr__(name: str) -> Any:
    # `RulesError` (a bad --target-trl) is looked up only by `compat`: importing compat here
    # would cost every `fix` run its import time (compat.api reads packaging, tomlkit, yaml).
    if name == "RulesError":
        from compat.rules import RulesError

        return RulesError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PARALLEL_THRESHOLD",
    "RulesError",
    "UnknownRuleError",
    "check_compat",
    "check_env",
    "smoke_script",
    "FixReport",
    "UpgradeReport",
    "entry_points",
    "upgrade_path",
    "fix_paths",
    "trl_version",
    "copy_example",
    "fix_rules",
    "rules_catalogue",
    "Options",
    "Severity",
    "WRITE",
    "CHECK",
    "DIFF",
]
