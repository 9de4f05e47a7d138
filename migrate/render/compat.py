"""The text report of `trl-migrate compat`: one table per source, then findings, then a summary."""

from __future__ import annotations

from collections import Counter

from compat.api import CompatReport
from compat.check import Row
from migrate.kernel.findings import Fix, Status
from migrate.render import render_text_findings

_PAINT = {"error": "31", "warning": "33", "ok": "32", "dim": "2", "bold": "1"}


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_PAINT[style]}m{text}\x1b[0m" if color and text else text


def _style(verdict: str) -> str:
    if verdict.startswith(("error", "missing", "too old")):
        return "error"
    if verdict == "ok" or verdict.startswith("bf16: yes"):
        return "ok"
    if verdict.startswith(("skipped", "not installed")):
        return "dim"
    return "warning"


def table(rows: list[Row], headers: list[str], cells: list[list[str]], *, color: bool) -> list[str]:
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    out = ["  " + "  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for row, cell in zip(rows, cells):
        parts = [c.ljust(w) for c, w in zip(cell, widths)]
        verdict_col = headers.index("verdict")
        parts[verdict_col] = _paint(parts[verdict_col], _style(row.verdict), color)
        out.append("  " + "  ".join(parts).rstrip())
    return out


def render_text(report: CompatReport, *, color: bool = False) -> str:
    lines = [_paint(f"trl-migrate compat: checked against TRL {report.target}", "bold", color), ""]
    required = f"required by TRL {report.target}"
    env = report.environment
    if env is not None:
        rows = [r for r in report.rows if r.source == env.python]
        lines.append(
            _paint(f"installed: {env.python} (Python {env.python_version})", "bold", color)
        )
        cells = [[r.package, r.installed, r.required, r.verdict, r.fix] for r in rows]
        lines += table(
            rows, ["package", "installed", required, "verdict", "fix"], cells, color=color
        )
        lines.append("")
    failed = {r.path: r for r in report.results if r.status is Status.FAILED}
    for source in report.sources:
        rows = [r for r in report.rows if r.source == source]
        lines.append(_paint(source, "bold", color))
        if source in failed:
            lines.append(
                f"  {_paint('could not be read', 'error', color)}: {failed[source].message}"
            )
        if rows:
            headers = ["line", "package", "declared", "installed", required, "verdict", "fix"]
            cells = [
                [
                    str(r.line or ""),
                    r.package,
                    r.declared,
                    r.installed,
                    r.required,
                    r.verdict,
                    r.fix,
                ]
                for r in rows
            ]
            if env is None:
                headers.remove("installed")
                cells = [c[:3] + c[4:] for c in cells]
            lines += table(rows, headers, cells, color=color)
        elif source not in failed:
            lines.append("  nothing TRL-related declared here")
        lines.append("")
    findings = render_text_findings(report.results, color=color)
    if findings:
        lines += ["findings:", findings.rstrip("\n"), ""]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def summary_line(report: CompatReport) -> str:
    findings = report.findings
    sev = Counter(f.severity.value for f in findings)
    fixable = sum(1 for f in findings if f.fix is Fix.AVAILABLE)
    applied = sum(1 for f in findings if f.fix is Fix.APPLIED)
    manual = sum(1 for f in findings if f.fix is Fix.MANUAL)
    failed = sum(1 for r in report.results if r.status is Status.FAILED)
    parts = [
        f"{sev.get('error', 0)} error(s)",
        f"{sev.get('warning', 0)} warning(s)",
        f"{sev.get('info', 0)} note(s)",
    ]
    if applied:
        parts.append(f"{applied} fixed")
    if fixable:
        parts.append(f"{fixable} fixable with --fix")
    if manual:
        parts.append(f"{manual} need a human")
    if failed:
        parts.append(f"{failed} source(s) could not be read")
    return "summary: " + ", ".join(parts)
