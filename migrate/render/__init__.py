"""Renderers for results: text grouped by file, the DESIGN JSON shape, and SARIF 2.1.0.

Pure functions from result values to strings; the CLI decides where they go.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from migrate import __version__
from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status

SCHEMA_VERSION = 1

_COLORS = {"error": "31", "warning": "33", "info": "36", "path": "1", "code": "35", "dim": "2"}
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_FIX_WORDS = {
    Fix.APPLIED: "fixed",
    Fix.AVAILABLE: "fixable",
    Fix.MANUAL: "manual",
    Fix.NONE: "",
}


def use_color(stream: Any) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_COLORS[style]}m{text}\x1b[0m" if color else text


def format_finding(f: Finding, *, color: bool = False) -> str:
    """`path:line:col: CODE severity [fix] message`, the shape editors and CI logs link."""
    where = f.where
    fix = _FIX_WORDS[f.fix]
    tag = f" [{fix}]" if fix else ""
    return (
        f"{_paint(where, 'path', color)}: {_paint(f.code, 'code', color)} "
        f"{_paint(f.severity.value, f.severity.value, color)}{tag} {f.message}"
    )


def render_text_findings(
    results: Iterable[FileResult],
    *,
    color: bool = False,
    findings: bool = True,
    statuses: bool = False,
) -> str:
    """Every failure and (with `findings`) finding, grouped by file in path order; with
    `statuses`, also a line for each file that changed, stayed or was skipped."""
    lines: list[str] = []
    for res in sorted(results, key=lambda r: r.path):
        if res.status is Status.FAILED:
            lines.append(
                f"{_paint(res.path, 'path', color)}: {_paint('error', 'error', color)}: "
                f"{res.message}"
            )
        elif statuses:
            why = f" ({res.message})" if res.message else ""
            lines.append(_paint(f"{res.path}: {res.status.value}{why}", "dim", color))
        if findings:
            for f in sorted(res.findings, key=Finding.sort_key):
                lines.append(format_finding(f, color=color))
    return "\n".join(lines) + ("\n" if lines else "")


def render_statistics(results: Iterable[FileResult], names: Mapping[str, str]) -> str:
    """One line per code: how many findings, how many fixed or fixable, how many manual."""
    by_code: dict[str, Counter[str]] = {}
    for res in results:
        for f in res.findings:
            by_code.setdefault(f.code, Counter())[f.fix.value] += 1
    lines = []
    for code in sorted(by_code):
        c = by_code[code]
        total = sum(c.values())
        auto = c["applied"] + c["available"]
        lines.append(
            f"{total:6d}  {code}  {names.get(code, ''):<16} {auto} auto, {c['manual']} manual"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def _github_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(results: Iterable[FileResult]) -> str:
    """GitHub Actions workflow commands: one annotation per finding and failed file."""
    lines = []
    for res in sorted(results, key=lambda r: r.path):
        path = _github_escape(_uri(res.path), prop=True)
        if res.status is Status.FAILED:
            lines.append(f"::error file={path},title=trl-migrate::{_github_escape(res.message)}")
        for f in sorted(res.findings, key=Finding.sort_key):
            where = f"file={path}"
            if (
                f.line and not f.cell
            ):  # notebook lines count within a cell: GitHub cannot place them
                where += f",line={f.line},col={f.col}"
            cell = f"cell {f.cell}, line {f.line}: " if f.cell else ""
            title = _github_escape(f"trl-migrate {f.code} [{f.fix.value}]", prop=True)
            lines.append(
                f"::{_GITHUB_LEVEL[f.severity]} "
                f"{where},title={title}::{_github_escape(cell + f.message)}"
            )
    return "\n".join(lines) + ("\n" if lines else "")


def summarize(results: Sequence[FileResult], **extra: int) -> dict[str, Any]:
    """Counts by status, by severity, by fix state and by code; `extra` adds counters."""
    statuses = Counter(r.status.value for r in results)
    findings = [f for r in results for f in r.findings]
    summary: dict[str, Any] = {s.value: statuses.get(s.value, 0) for s in Status}
    summary["files"] = len(results)
    summary["findings"] = len(findings)
    summary["by_severity"] = dict(sorted(Counter(f.severity.value for f in findings).items()))
    summary["by_fix"] = dict(sorted(Counter(f.fix.value for f in findings).items()))
    summary["by_code"] = dict(sorted(Counter(f.code for f in findings).items()))
    summary.update(extra)
    return summary


def render_json(
    command: str,
    results: Sequence[FileResult],
    summary: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> str:
    """The DESIGN shape: schema_version, command, files[], summary, plus command-specific
    sections."""
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "files": [r.to_json() for r in sorted(results, key=lambda r: r.path)],
        "summary": dict(summary),
    }
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_sarif(results: Sequence[FileResult], rules: Sequence[Mapping[str, str]]) -> str:
    """SARIF 2.1.0 for GitHub code scanning. `rules`: dicts with id, name, summary (and help)."""
    sarif_results = []
    for res in sorted(results, key=lambda r: r.path):
        for f in sorted(res.findings, key=Finding.sort_key):
            region: dict[str, int] = {}
            if f.line:
                region["startLine"] = f.line
                if f.col:
                    region["startColumn"] = f.col
            location: dict[str, Any] = {"artifactLocation": {"uri": _uri(f.path)}}
            if region:
                location["region"] = region
            sarif_results.append(
                {
                    "ruleId": f.code,
                    "level": _SARIF_LEVEL[f.severity],
                    "message": {"text": f.message},
                    "locations": [{"physicalLocation": location}],
                    "properties": {"fix": f.fix.value},
                }
            )
    failures = [
        {
            "level": "error",
            "message": {"text": r.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(r.path)}}}],
        }
        for r in sorted(results, key=lambda r: r.path)
        if r.status is Status.FAILED
    ]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trl-migrate",
                        "version": __version__,
                        "informationUri": "https://github.com/trl-migrate/trl-migrate",
                        "rules": [_sarif_rule(r) for r in rules],
                    }
                },
                "invocations": [
                    {"executionSuccessful": not failures, "toolExecutionNotifications": failures}
                ],
                "results": sarif_results,
            }
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _sarif_rule(rule: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": rule["id"],
        "name": rule.get("name", rule["id"]),
        "shortDescription": {"text": rule.get("summary", "")},
    }
    if rule.get("help"):
        out["fullDescription"] = {"text": rule["help"]}
    if rule.get("link"):
        out["helpUri"] = rule["link"]
    return out


def _uri(path: str) -> str:
    return path.replace(os.sep, "/")


def fix_summary_line(report: Any) -> str:
    """The last line of `fix` (`report`: a migrate.api FixReport): files by outcome, TODOs
    left, files found and parsed, seconds."""
    s = report.summary()
    verb = {"write": "rewritten", "check": "would be rewritten", "diff": "would be rewritten"}[
        report.mode
    ]
    manual = s["by_fix"].get("manual", 0)
    parts = [
        f"{s['changed']} file{'s' if s['changed'] != 1 else ''} {verb}",
        f"{s['unchanged']} unchanged",
        f"{s['failed']} failed",
        f"{manual} TODO{'s' if manual != 1 else ''} for a human",
    ]
    return (
        f"trl-migrate: {', '.join(parts)} ({s['discovered']} files found, {s['parsed']} "
        "parsed, "
        f"{s['seconds']:.2f} s)"
    )
