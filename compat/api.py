"""The library entry point: `check_path` reads every source, checks it, fixes it, and reports."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from packaging.markers import default_environment

from compat import fix as fixer
from compat import insert, usage
from compat import resolve as resolver
from compat.check import Add, Checked, Row, check_environment, check_source
from compat.codes import severity
from compat.conflicts import conflicts
from compat.model import SourceRead
from compat.rules import Rules, load_rules
from compat.sources import discover, read_source
from compat.sources.installed import Environment, EnvironmentReadError, read_environment
from migrate.kernel.files import SourceError, atomic_write
from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status


@dataclasses.dataclass
class CompatReport:
    target: str
    root: str
    results: list[FileResult]
    rows: list[Row]
    environment: Environment | None = None
    sources: list[str] = dataclasses.field(default_factory=list)  # display paths, in order

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    @property
    def exit_code(self) -> int:
        """0 nothing to do or all fixed; 1 findings remain; 2 a source could not be read."""
        if any(r.status is Status.FAILED for r in self.results):
            return 2
        for f in self.findings:
            if f.severity is Severity.INFO or f.fix is Fix.APPLIED:
                continue
            if f.severity is Severity.ERROR or f.fix in (Fix.AVAILABLE, Fix.MANUAL):
                return 1
        return 0

    def to_json_extra(self) -> dict[str, Any]:
        env = None
        if self.environment is not None:
            env = {
                "python": self.environment.python,
                "python_version": self.environment.python_version,
                "torch": self.environment.version_of("torch"),
                "bf16": self.environment.bf16,
            }
        return {
            "compat": {
                "target_trl": self.target,
                "environment": env,
                "rows": [r.to_json() for r in self.rows],
            }
        }


def check_path(
    path: str = ".",
    *,
    installed: bool = True,
    python: str | None = None,
    all_platforms: bool = False,
    fix: bool = False,
    target_trl: str = "1.13.0",
    check_bf16: bool = True,
    resolve: bool = False,
) -> CompatReport:
    """Check the environment and every requirements source under `path` against `target_trl`.

    Raises RulesError for an unknown target; every other problem is a result value.
    """
    rules = load_rules(target_trl)
    results: list[FileResult] = []
    rows: list[Row] = []
    env = None
    offload = tuple(usage.offload_uses(path))  # TRL207/TRL307 matter only where it is on
    if installed:
        env = _environment(python, rules, results, rows, check_bf16=check_bf16, offload=offload)
    markers = None if all_platforms else _markers(env)
    root = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    reads = _read_all(path, root)
    checks = []
    for src in reads.values():
        below = _included_names(src, reads)
        checks.append(
            (
                src,
                check_source(
                    src, rules, env=env, markers=markers, also_declared=below, offload=offload
                ),
            )
        )
    for src, finding in conflicts(checks, markers, fix=fix):
        next(c for s, c in checks if s is src).findings.append(finding)
    for src, checked in checks:
        result, src_rows = _result(src, checked, fix=fix)
        results.append(result)
        rows.extend(src_rows)
    if resolve:
        _resolve(results, [s for s, _ in checks], str(rules.target), env)
    return CompatReport(
        str(rules.target), root, results, rows, env, [s.display for s in reads.values()]
    )


def _resolve(
    results: list[FileResult], sources: list[SourceRead], target: str, env: Environment | None
) -> None:
    """Resolve each manifest as it now is on disk (fixed, with --fix) with the target TRL."""
    import sys

    version = (
        ".".join(env.python_version.split(".")[:2])
        if env
        else f"{sys.version_info[0]}.{sys.version_info[1]}"
    )
    on_disk = [read_source(s.path, s.display, s.fmt) for s in sources]
    by_display = {r.path: r for r in results}
    for src, finding in resolver.resolve(on_disk, target_trl=target, python_version=version):
        result = by_display.get(src.display) if src is not None else None
        if result is None:
            results.append(FileResult(finding.path, Status.UNCHANGED, [finding]))
        else:
            result.findings.append(finding)


def _markers(env: Environment | None) -> dict[str, str]:
    markers: dict[str, str] = {k: str(v) for k, v in default_environment().items()}
    if env is not None and env.python_version.count(".") == 2:
        markers["python_full_version"] = env.python_version
        markers["python_version"] = ".".join(env.python_version.split(".")[:2])
    return markers


def _environment(
    python: str | None,
    rules: Rules,
    results: list[FileResult],
    rows: list[Row],
    *,
    check_bf16: bool,
    offload: tuple[str, ...] = (),
) -> Environment | None:
    try:
        env = read_environment(python, check_bf16=check_bf16)
    except EnvironmentReadError as e:
        where = python or "python"
        f = Finding("TRL300", Severity.ERROR, where, 0, 0, str(e), Fix.MANUAL)
        results.append(FileResult(where, Status.FAILED, [f], message=str(e)))
        return None
    checked = check_environment(env, rules, offload=offload)
    results.append(FileResult(env.python, Status.UNCHANGED, checked.findings))
    rows.extend(checked.rows)
    return env


def _display(path: str, root: str) -> str:
    rel = os.path.relpath(path, os.path.abspath(root))
    return rel.replace(os.sep, "/")


def _read_all(path: str, root: str) -> dict[str, SourceRead]:
    """Every source under `path`, and every file a requirements file includes, each read once."""
    reads: dict[str, SourceRead] = {}

    def visit(file: str, stack: tuple[str, ...]) -> None:
        src = read_source(file, _display(file, root))
        reads[file] = src
        for inc in src.includes:
            if inc.target in stack + (file,):
                chain = " -> ".join(
                    _display(p, root)
                    for p in stack[stack.index(inc.target) if inc.target in stack else 0 :]
                    + (file, inc.target)
                )
                src.errors.append(
                    Finding(
                        "TRL206",
                        severity("TRL206"),
                        src.display,
                        inc.line,
                        0,
                        f"`{inc.option} {os.path.basename(inc.target)}` closes an include cycle "
                        f"({chain}); each file is checked once",
                    )
                )
            elif inc.target in reads:
                continue
            elif not os.path.isfile(inc.target):
                missing = SourceRead(
                    inc.target, _display(inc.target, root), "requirements", fatal=True
                )
                missing.error(
                    0,
                    f"included from {src.display}:{inc.line} (`{inc.option}`) but there is no such "
                    "file",
                )
                reads[inc.target] = missing
            else:
                visit(inc.target, stack + (file,))

    for file in discover(path):
        if file not in reads:
            visit(file, ())
    return reads


def _included_names(src: SourceRead, reads: dict[str, SourceRead]) -> frozenset[str]:
    names: set[str] = set()
    seen: set[str] = {src.path}
    todo = [i.target for i in src.includes]
    while todo:
        target = todo.pop()
        if target in seen or target not in reads:
            continue
        seen.add(target)
        names.update(d.name for d in reads[target].declared)
        todo.extend(i.target for i in reads[target].includes)
    return frozenset(names)


def _result(src: SourceRead, checked: Checked, *, fix: bool) -> tuple[FileResult, list[Row]]:
    errors = [f for f in checked.findings if f.code == "TRL200"]
    if errors or src.fatal:
        first = errors[0] if errors else None
        where = f"line {first.line}: " if first and first.line else ""
        message = f"{where}{first.message}" if first else "could not be read"
        return FileResult(
            src.display, Status.FAILED, checked.findings, message=message
        ), checked.rows
    if not (fix and (checked.edits or checked.adds)):
        return FileResult(src.display, Status.UNCHANGED, checked.findings), checked.rows
    try:
        new = fixer.apply(src, checked.edits) if checked.edits else src.data
        new = _add_dependencies(src, new, checked.adds)
        _verify_fixed(src, new, added=[a.name for a in checked.adds])
        atomic_write(src.path, new, expected=src.data)
    except SourceError as e:
        return FileResult(
            src.display, Status.FAILED, checked.findings, message=f"not fixed: {e}"
        ), checked.rows
    applied = {id(e.finding) for e in checked.edits} | {id(a.finding) for a in checked.adds}
    findings = [f.with_fix(Fix.APPLIED) if id(f) in applied else f for f in checked.findings]
    fixed_lines = {(e.declared.line, e.declared.name) for e in checked.edits}
    rows = [
        dataclasses.replace(r, fix=f"fixed: {r.fix}") if (r.line, r.package) in fixed_lines else r
        for r in checked.rows
    ]
    return FileResult(src.display, Status.CHANGED, findings, old=src.data, new=new), rows


def _reread(src: SourceRead, new: bytes) -> SourceRead:
    from compat.sources import _readers

    again = SourceRead(
        src.path,
        src.display,
        src.fmt,
        data=new,
        text=new.decode(src.encoding),
        encoding=src.encoding,
    )
    _readers()[src.fmt](again)
    return again


def _add_dependencies(src: SourceRead, new: bytes, adds: list[Add]) -> bytes:
    """`new` with each added requirement written next to trl, found again in the fixed text."""
    for add in adds:
        again = _reread(src, new)
        trl = next(
            (
                d
                for d in again.declared
                if d.name == add.declared.name and d.line == add.declared.line
            ),
            None,
        )
        spot = insert.dependency_after(again, trl, add.name) if trl is not None else None
        if spot is None:
            raise SourceError(f"no place to add `{add.name}` next to trl any more; not rewritten")
        where, text = spot
        new = (again.text[: where.start] + text + again.text[where.end :]).encode(src.encoding)
    return new


def _verify_fixed(src: SourceRead, new: bytes, *, added: Sequence[str] = ()) -> None:
    """The fixed text must read back with no new errors, and the same requirements (plus the
    ones added)."""
    again = _reread(src, new)
    if len(again.errors) > len(src.errors):
        raise SourceError("the fixed file does not read back the same way; not rewritten")
    if sorted(d.name for d in again.declared) != sorted([*(d.name for d in src.declared), *added]):
        raise SourceError("the fixed file does not read back the same way; not rewritten")
