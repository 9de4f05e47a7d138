"""The pure check: declared requirements and an installed environment judged against the rules.

No I/O here: readers produce `SourceRead` / `Environment` values, this module returns findings,
table rows and the edits a fix would make.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from compat import insert
from compat.codes import severity
from compat.model import Declared, SourceRead
from compat.rules import PackageRule, Rules
from compat.sources.installed import Environment
from compat.versions import (
    Clause,
    SpecError,
    Verdict,
    intersect,
    intervals_of,
    judge,
    judge_version,
    parse_clauses,
    rewrite,
)
from migrate.kernel.findings import Finding, Fix, Severity

_CODE_OF = {Verdict.NONE_WORKS: "TRL201", Verdict.TOO_OLD: "TRL202", Verdict.TOO_NEW: "TRL203"}


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of a compat table."""

    source: str
    line: int
    package: str
    declared: str
    installed: str
    required: str
    verdict: str
    fix: str = ""

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Edit:
    """Replace the specifier text of `declared` with `new` (a fix, applied by compat.fix)."""

    declared: Declared
    new: str
    finding: Finding


@dataclasses.dataclass(frozen=True)
class Add:
    """Declare `name` next to `declared` (a fix, applied by compat.api after the edits)."""

    declared: Declared
    name: str
    finding: Finding


@dataclasses.dataclass
class Checked:
    findings: list[Finding] = dataclasses.field(default_factory=list)
    rows: list[Row] = dataclasses.field(default_factory=list)
    edits: list[Edit] = dataclasses.field(default_factory=list)
    adds: list[Add] = dataclasses.field(default_factory=list)


def _required(rule: PackageRule) -> list[Clause]:
    return parse_clauses(rule.specifier)


def applies(d: Declared, markers: dict[str, str] | None) -> bool:
    if d.marker is None or markers is None:
        return True
    return bool(d.marker.evaluate(dict(markers, extra="")))


def check_source(
    src: SourceRead,
    rules: Rules,
    *,
    env: Environment | None = None,
    markers: dict[str, str] | None = None,
    also_declared: frozenset[str] = frozenset(),
    offload: tuple[str, ...] = (),
) -> Checked:
    """Judge every requirement of one source. `markers=None` means every platform; `offload`:
    where the repo's code turns on gradient-checkpointing offload (compat.usage)."""
    out = Checked(findings=list(src.errors))
    for d in src.declared:
        rule = rules.rule_for(d.name)
        if rule is not None:
            _check_one(out, src, d, rule, env=env, markers=markers, target=rules.target)
    _declared_defects(out, src, rules, markers, also_declared, offload)
    return out


def _installed(env: Environment | None, name: str) -> str:
    if env is None:
        return ""
    if name == "python":
        return env.python_version
    return env.version_of(name) or "-"


def _check_one(
    out: Checked,
    src: SourceRead,
    d: Declared,
    rule: PackageRule,
    *,
    env: Environment | None,
    markers,
    target,
) -> None:
    row: dict[str, Any] = {
        "source": src.display,
        "line": d.line,
        "package": rule.name,
        "declared": d.specifier or d.url or "(any)",
        "installed": _installed(env, rule.name),
        "required": rule.specifier,
    }
    if not applies(d, markers):
        out.rows.append(Row(**row, verdict=f"skipped: marker {d.marker} is false here"))
        return
    if d.url and not d.url_version:
        msg = (
            f"`{d.display}` installs {rule.name} from a URL with no version tag, so any version "
            f"can come; pin a release tag at or above {_floor_text(rule)}"
        )
        out.findings.append(_finding("TRL204", src, d, msg, Fix.MANUAL))
        out.rows.append(Row(**row, verdict="unpinned URL", fix="pin a release tag"))
        return
    spec = f"=={d.url_version}" if d.url else d.specifier
    dialect = "pep440" if d.url else d.dialect
    try:
        verdict = judge(parse_clauses(spec, dialect), _required(rule))
    except SpecError as e:
        out.findings.append(
            _finding("TRL200", src, d, f"cannot read the version of `{d.display}`: {e}", Fix.NONE)
        )
        out.rows.append(Row(**row, verdict="unreadable"))
        return
    if verdict is Verdict.OK:
        out.rows.append(Row(**row, verdict="ok"))
        return
    new = _new_spec(spec, dialect, rule)
    code = _CODE_OF[verdict]
    fix, fix_text = _fix_of(d, rule, new)
    finding = _finding(code, src, d, _message(verdict, d, rule, fix_text, str(target)), fix)
    out.findings.append(finding)
    out.rows.append(Row(**row, verdict=f"{_SHORT[verdict]} {code}", fix=fix_text))
    if fix is Fix.AVAILABLE:
        out.edits.append(Edit(d, new, finding))


_SHORT = {
    Verdict.NONE_WORKS: "error",
    Verdict.TOO_OLD: "floor too low",
    Verdict.TOO_NEW: "above ceiling",
}


def _new_spec(spec: str, dialect: str, rule: PackageRule) -> str:
    try:
        return rewrite(spec, dialect, _required(rule))
    except SpecError:
        return rule.specifier


def _floor_text(rule: PackageRule) -> str:
    return str(rule.floor) if rule.floor else rule.specifier


def _fix_of(d: Declared, rule: PackageRule, new: str) -> tuple[Fix, str]:
    shown = _shown(d, rule, new)
    if d.locked:
        req = f"'{rule.name}{rule.specifier}'"
        return Fix.MANUAL, d.locked.format(name=rule.name, req=req)
    if d.url:
        return Fix.MANUAL, f"use a release tag in {rule.specifier}"
    if d.where is None:
        return Fix.MANUAL, f"change it to {shown}" + (f" ({d.note})" if d.note else "")
    return Fix.AVAILABLE, shown


def _shown(d: Declared, rule: PackageRule, new: str) -> str:
    """The fixed requirement as a user would write it in that file."""
    if d.name == "python":
        return f"python{new}" if d.dialect == "conda" else new
    if " = " in d.display:  # a TOML table entry: poetry or Pipfile
        return f'{d.display.split(" = ", 1)[0]} = "{new}"'
    extras = f"[{','.join(sorted(d.extras))}]" if d.extras else ""
    space = " " if d.specifier and f" {d.specifier}" in d.display else ""
    return f"{rule.name}{extras}{space}{new}"


def _message(verdict: Verdict, d: Declared, rule: PackageRule, fix_text: str, target: str) -> str:
    what = f"`{d.display}`"
    need = f"{rule.name}{rule.specifier}" if rule.name != "python" else f"Python {rule.specifier}"
    why = _why(rule)
    if d.locked:
        return (
            f"{what} is locked at a version TRL {target} cannot use: it needs {need}{why}; a "
            f"lock is not edited in place: {fix_text}"
        )
    if verdict is Verdict.NONE_WORKS:
        head = f"{what}: no version it admits works with TRL {target}, which needs {need}{why}"
    elif verdict is Verdict.TOO_OLD:
        pinned = (
            "has no version constraint, so it"
            if not d.specifier
            else "has a floor that is too low: it"
        )
        head = f"{what} {pinned} admits versions older than TRL {target} needs: {need}{why}"
    else:
        head = f"{what} admits versions newer than TRL {target} supports: {need}{why}"
    return f"{head}; fix: {fix_text}"


def _why(rule: PackageRule) -> str:
    if rule.role == "extra":
        was = f"; previously {rule.was}" if rule.was else ""
        return f" (its `{rule.extra}` extra{was})"
    if rule.role == "base":
        return " (a base dependency)"
    return ""


def _finding(code: str, src: SourceRead, d: Declared, message: str, fix: Fix) -> Finding:
    return Finding(code, severity(code), src.display, d.line, d.col, message, fix)


def _declared_defects(
    out: Checked,
    src: SourceRead,
    rules: Rules,
    markers,
    also_declared: frozenset[str],
    offload: tuple[str, ...] = (),
) -> None:
    trls = [d for d in src.declared if d.name == "trl" and not d.url and applies(d, markers)]
    if not trls:
        return
    trl = trls[0]
    edits = {id(e.declared): e.new for e in out.edits}
    spec = edits.get(id(trl), trl.specifier)
    try:
        admitted = intervals_of(parse_clauses(spec, trl.dialect))
    except SpecError:
        return
    names = {d.name for d in src.declared} | set(also_declared)
    has_vllm_extra = any("vllm" in d.extras for d in trls)
    for defect in rules.defects:
        if not intersect(admitted, intervals_of(parse_clauses(defect.trl))):
            continue
        if defect.kind == "undeclared-dependency":
            needs = canonicalize_name(defect.needs)
            if needs in names or (defect.satisfied_by_extra and has_vllm_extra):
                continue
            where = (
                "to the project's dependencies and lock again"
                if src.is_lock
                else f"next to `{trl.display}`"
            )
            msg = (
                f"{defect.summary.format(trl=rules.target)}; add `{defect.needs}` {where} "
                f"(or use trl[{defect.satisfied_by_extra}])"
            )
            can_add = insert.dependency_after(src, trl, defect.needs) is not None
            finding = _finding("TRL205", src, trl, msg, Fix.AVAILABLE if can_add else Fix.MANUAL)
            out.findings.append(finding)
            if can_add:
                out.adds.append(Add(trl, defect.needs, finding))
        elif defect.kind == "notice" and not src.is_lock and offload:
            msg = (
                f"{defect.summary.format(trl=rules.target)}; the code sets it at {_places(offload)}"
            )
            out.findings.append(_finding("TRL207", src, trl, msg, Fix.NONE))


def check_environment(env: Environment, rules: Rules, *, offload: tuple[str, ...] = ()) -> Checked:
    """Judge the installed distributions; findings have line 0 and the interpreter as path."""
    out = Checked()
    where = env.python
    _python(out, env, rules)
    for name in sorted(rules.packages, key=lambda n: (n != "trl", n)):
        _installed_one(out, env, rules.packages[name], rules)
    for name, dists in sorted(env.dists.items()):
        if len(dists) > 1:
            found = "; ".join(f"{d.version} at {d.path}" for d in dists)
            out.findings.append(
                Finding(
                    "TRL304",
                    Severity.WARNING,
                    where,
                    0,
                    0,
                    f"{name} is installed {len(dists)} times ({found}); the first one on sys.path "
                    "wins; uninstall the others",
                    Fix.MANUAL,
                )
            )
    for path, problem in env.broken:
        out.findings.append(
            Finding(
                "TRL305",
                Severity.WARNING,
                where,
                0,
                0,
                f"broken metadata at {path}: {problem}; reinstall or delete that folder",
                Fix.MANUAL,
            )
        )
    _installed_defects(out, env, rules, offload)
    torch = env.version_of("torch")
    text = (
        f"torch {torch}; bf16 usable: {env.bf16}"
        if torch
        else "torch is not installed (accelerate needs it to train)"
    )
    out.findings.append(Finding("TRL309", Severity.INFO, where, 0, 0, text))
    out.rows.append(
        Row(where, 0, "torch", "", torch or "-", "", f"bf16: {env.bf16}" if torch else "-")
    )
    return out


def _python(out: Checked, env: Environment, rules: Rules) -> None:
    verdict = judge_version(Version(env.python_version), _required(rules.python), "public")
    ok = verdict is Verdict.OK
    out.rows.append(
        Row(
            env.python,
            0,
            "python",
            "",
            env.python_version,
            rules.python.specifier,
            "ok" if ok else "error TRL308",
        )
    )
    if not ok:
        out.findings.append(
            Finding(
                "TRL308",
                Severity.ERROR,
                env.python,
                0,
                0,
                f"Python {env.python_version} is too old: TRL {rules.target} needs Python "
                f"{rules.python.specifier} ({rules.python.cite})",
                Fix.MANUAL,
            )
        )


def _installed_one(out: Checked, env: Environment, rule: PackageRule, rules: Rules) -> None:
    where = env.python
    version = env.version_of(rule.name)
    install = f"pip install '{rule.name}{rule.specifier}'"
    if version is None:
        needed = rule.role in ("target", "base")
        out.rows.append(
            Row(
                where,
                0,
                rule.name,
                "",
                "-",
                rule.specifier,
                "missing TRL301" if needed else "not installed (optional)",
                install if needed else "",
            )
        )
        if needed:
            why = (
                "the migration target"
                if rule.role == "target"
                else f"TRL {rules.target} always needs it"
            )
            out.findings.append(
                Finding(
                    "TRL301",
                    Severity.ERROR,
                    where,
                    0,
                    0,
                    f"{rule.name} is not installed ({why}); fix: {install}",
                    Fix.MANUAL,
                )
            )
        return
    try:
        verdict = judge_version(Version(version), _required(rule), rule.compare)
    except InvalidVersion:
        out.findings.append(
            Finding(
                "TRL305",
                Severity.WARNING,
                where,
                0,
                0,
                f"{rule.name} has an unreadable version {version!r}",
                Fix.MANUAL,
            )
        )
        out.rows.append(Row(where, 0, rule.name, "", version, rule.specifier, "unreadable TRL305"))
        return
    if verdict is Verdict.OK:
        out.rows.append(Row(where, 0, rule.name, "", version, rule.specifier, "ok"))
        return
    code = "TRL303" if verdict is Verdict.TOO_NEW else "TRL302"
    state = "newer than TRL supports" if code == "TRL303" else "older than TRL needs"
    out.findings.append(
        Finding(
            code,
            severity(code),
            where,
            0,
            0,
            f"{rule.name} {version} is installed, {state}: "
            f"{rule.name}{rule.specifier}{_why(rule)}; fix: {install}",
            Fix.MANUAL,
        )
    )
    out.rows.append(
        Row(
            where,
            0,
            rule.name,
            "",
            version,
            rule.specifier,
            f"{'too new' if code == 'TRL303' else 'too old'} {code}",
            install,
        )
    )


def _places(where: tuple[str, ...]) -> str:
    return ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")


def _installed_defects(
    out: Checked, env: Environment, rules: Rules, offload: tuple[str, ...] = ()
) -> None:
    trl = env.version_of("trl")
    if trl is None:
        return
    try:
        trl_v = Version(trl)
    except InvalidVersion:
        return
    for defect in rules.defects:
        if not defect.affects(trl_v):
            continue
        if defect.kind == "undeclared-dependency" and env.version_of(defect.needs) is None:
            out.findings.append(
                Finding(
                    "TRL306",
                    Severity.ERROR,
                    env.python,
                    0,
                    0,
                    f"{defect.summary.format(trl=trl)}, and it is not installed: `from trl import "
                    f"GRPOTrainer` fails; fix: pip install {defect.needs}",
                    Fix.MANUAL,
                )
            )
        elif defect.kind == "notice" and offload:
            have = env.version_of(defect.package) or "not installed"
            msg = (
                f"{defect.summary.format(trl=trl)}; {defect.package} here: {have}; the code sets "
                f"it at {_places(offload)}"
            )
            out.findings.append(Finding("TRL307", Severity.INFO, env.python, 0, 0, msg))
