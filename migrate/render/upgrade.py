"""Text for `upgrade`'s three-stage report."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from migrate.render import fix_summary_line, render_text_findings, use_color
from migrate.render.compat import render_text as render_compat
from migrate.render.smoke import render_script_text

if TYPE_CHECKING:
    from migrate.api import UpgradeReport


def render_upgrade(report: UpgradeReport, *, dry_run: bool) -> str:
    """The text report of `upgrade`: the three stages in order, then one verdict line."""
    color = use_color(sys.stdout)
    out = ["== 1. code (trl-migrate fix" + (" --diff" if dry_run else "") + ")"]
    if dry_run:
        out += [r.diff.rstrip("\n") for r in report.fix.results if r.diff]
    out.append(render_text_findings(report.fix.reported(), color=color).rstrip("\n"))
    out.append(fix_summary_line(report.fix))
    out.append(
        "\n== 2. pins and environment (trl-migrate compat" + ("" if dry_run else " --fix") + ")"
    )
    out.append(
        f"error: {report.compat_error}"
        if report.compat_error
        else render_compat(report.compat, color=color).rstrip("\n")
    )
    launch = [r for r in report.launches if r.findings]
    if launch:
        out.append(
            "launch lines and their config files that set what the rewritten configs changed:"
        )
        out.append(render_text_findings(launch, color=color).rstrip("\n"))
    out.append("\n== 3. smoke-train the migrated scripts (trl-migrate smoke)")
    for entry in report.entry_points:
        via = f", proves {', '.join(entry.via)}" if entry.via else ""
        out.append(f"entry point: {entry.path} ({entry.found_in}{via})")
    out.extend(f"no entry point: {u.path}: {u.why}" for u in report.unreached)
    out.append(
        render_script_text(report.smokes, color=color).rstrip("\n")
        if report.smokes
        else f"not run: {report.smoke_note}"
    )
    fix_s = report.fix.summary()
    counts = {
        k: sum(s.outcome == k for s in report.smokes)
        for k in ("passed", "failed", "skipped", "harness")
    }
    smoke = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none run"
    pins = report.compat.exit_code if report.compat else 2
    verdict = {
        0: "nothing left for a human",
        1: "a human still has work to do (see the findings above)",
        2: "something could not be processed or run",
    }[report.exit_code]
    out.append(
        f"\ntrl-migrate upgrade: {fix_s['changed']} files rewritten, "
        f"{fix_s['by_fix'].get('manual', 0) + report.launch_todos} TODOs for a human; "
        f"pins {'ok' if pins == 0 else 'need attention' if pins == 1 else 'could not be checked'}; "
        f"smoke: {smoke} "
        f"({report.seconds:.1f} s). {verdict} (exit {report.exit_code})"
    )
    return "\n".join(part for part in out if part) + "\n"
