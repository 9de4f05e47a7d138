"""Library entry points: what the CLI calls, and what tests and other tools call directly.

`fix_paths` discovers files, runs the rules (in worker processes when there are enough files
to repay the start-up), writes the changed files atomically, and returns a `FixReport`.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

import codemods
from codemods import UnknownRuleError
from codemods.base import Options
from compat.rules import RulesError
from codemods.engine import NOT_TRL, process, scan
from migrate.kernel.discovery import discover
from migrate.kernel.files import SourceError, atomic_write
from migrate.kernel.findings import FileResult, Fix, Severity, Status

WRITE, CHECK, DIFF = "write", "check", "diff"
# Below this many files to parse, a pool's start-up costs more than it saves.
PARALLEL_THRESHOLD = 16


@dataclasses.dataclass
class FixReport:
    results: list[FileResult]
    mode: str
    discovered: int  # files found before the prefilter
    parsed: int  # files that needed a parse
    seconds: float

    @property
    def exit_code(self) -> int:
        """0 nothing left to do; 1 changes to make or findings for a human; 2 some input failed."""
        if any(r.status is Status.FAILED for r in self.results):
            return 2
        if self.mode != WRITE and any(r.status is Status.CHANGED for r in self.results):
            return 1
        if any(r.needs_human for r in self.results):
            return 1
        return 0

    def reported(self) -> list[FileResult]:
        """The results worth listing: all but files skipped by the prefilter during a walk."""
        return [
            r for r in self.results if not (r.status is Status.SKIPPED and r.message == NOT_TRL)
        ]

    def summary(self) -> dict[str, object]:
        from migrate.render import summarize

        out = summarize(self.reported(), discovered=self.discovered, parsed=self.parsed)
        out["skipped"] = sum(r.status is Status.SKIPPED for r in self.results)
        out["seconds"] = round(self.seconds, 3)
        out["mode"] = self.mode
        out["exit_code"] = self.exit_code
        return out


def fix_paths(
    paths: Sequence[str],
    *,
    mode: str = WRITE,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    options: Options = Options(),
    jobs: int | None = None,
    exclude: Sequence[str] = (),
    exclude_root: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FixReport:
    """Rewrite (or, with mode check/diff, only report on) every Python file under `paths`.

    Raises codemods.UnknownRuleError for a bad select/ignore entry; every per-file problem is
    a FAILED result instead.
    """
    if mode not in (WRITE, CHECK, DIFF):
        raise ValueError(f"mode must be one of write, check, diff; got {mode!r}")
    started = time.perf_counter()
    codes = tuple(r.code for r in codemods.select(select, ignore))
    candidates, missing = discover(paths, patterns=exclude, patterns_root=exclude_root)
    results = [FileResult(m.path, Status.FAILED, message=m.message) for m in missing]
    todo: list[tuple[str, bytes]] = []
    for cand in candidates:
        done, data = scan(cand.path, cand.path, explicit=cand.explicit)
        if done is not None:
            results.append(done)
        else:
            todo.append((cand.path, data))
    work = partial(_process_one, codes=codes, options=options, want_diff=mode == DIFF)
    results.extend(_run(work, todo, jobs, progress))
    if mode == WRITE:
        results = [_write(r) for r in results]
    else:
        results = [_as_available(r) for r in results]
    results.sort(key=lambda r: r.path)
    return FixReport(results, mode, len(candidates), len(todo), time.perf_counter() - started)


def _process_one(
    item: tuple[str, bytes], *, codes: Sequence[str], options: Options, want_diff: bool
) -> FileResult:
    path, data = item
    return process(path, data, codes=codes, options=options, want_diff=want_diff)


def _run(
    work,
    todo: list[tuple[str, bytes]],
    jobs: int | None,  # type: ignore[no-untyped-def]
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    workers = min(jobs or os.cpu_count() or 1, len(todo))
    results: list[FileResult] = []
    if workers <= 1 or len(todo) < PARALLEL_THRESHOLD:
        for item in todo:
            results.append(work(item))
            if progress:
                progress(len(results), len(todo))
        return results
    # fork: workers inherit the imported rules and symbol table instead of importing them again.
    method = "fork" if sys.platform.startswith("linux") else None
    # Largest first, one file per task: a file's cost grows with its size (milliseconds to tens of
    # seconds), and contiguous chunks or big files handed out last leave one worker running alone.
    ordered = sorted(todo, key=lambda item: len(item[1]), reverse=True)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method)
    ) as pool:
        for result in pool.map(work, ordered, chunksize=1):
            results.append(result)
            if progress:
                progress(len(results), len(todo))
    return results


def _write(result: FileResult) -> FileResult:
    if result.status is not Status.CHANGED or result.new is None:
        return result
    try:
        atomic_write(result.path, result.new, expected=result.old)
    except SourceError as e:
        failed = _as_available(result)  # nothing was applied: the file kept its old bytes
        return dataclasses.replace(failed, status=Status.FAILED, message=str(e))
    return result


def _as_available(result: FileResult) -> FileResult:
    findings = [f.with_fix(Fix.AVAILABLE) if f.fix is Fix.APPLIED else f for f in result.findings]
    return dataclasses.replace(result, findings=findings)


def copy_example(dest: str | None = None) -> str:
    """Copy the bundled example PPO project into `dest` (default: a new temporary folder)."""
    import shutil
    import tempfile
    from importlib import resources

    target = dest or tempfile.mkdtemp(prefix="trl-migrate-demo-")
    source = resources.files("migrate").joinpath("examples/ppo_project")
    with resources.as_file(source) as folder:
        shutil.copytree(folder, target, dirs_exist_ok=True)
    return target


@dataclasses.dataclass
class UpgradeReport:
    """`upgrade`: the fix report, the compat report, one smoke result per migrated entry point."""

    path: str
    fix: FixReport
    compat: Any = None  # compat.api.CompatReport, or None when it could not run
    compat_error: str = ""
    smokes: list[Any] = dataclasses.field(default_factory=list)  # migrate.smoke.SmokeResult
    smoke_note: str = ""  # why no script was smoke-run, when none was
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 nothing left for a human; 1 TODOs, pins or smoke failures need one; 2 something could not run."""
        codes = [
            self.fix.exit_code,
            2 if self.compat_error else self.compat.exit_code if self.compat else 0,
        ]
        codes += [s.exit_code for s in self.smokes if s.outcome != "skipped"]
        return 2 if 2 in codes else 1 if 1 in codes else 0

    def results(self) -> list[FileResult]:
        """Every file's findings from all three stages; a smoked script carries its smoke findings."""
        fixed = {r.path: r for r in self.fix.reported()}
        for smoke in self.smokes:
            own = smoke.file_result()
            base = fixed.get(smoke.path)
            fixed[smoke.path] = (
                own
                if base is None
                else dataclasses.replace(base, findings=base.findings + own.findings)
            )
        compat = list(self.compat.results) if self.compat else []
        return sorted(fixed.values(), key=lambda r: r.path) + compat

    def summary(self) -> dict[str, object]:
        from migrate.render import summarize

        out = summarize(self.results(), exit_code=self.exit_code)
        out["seconds"] = round(self.seconds, 3)
        out["smoked"] = {
            s.outcome: sum(x.outcome == s.outcome for x in self.smokes) for s in self.smokes
        }
        return out

    def to_json_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"fix": self.fix.summary()}
        if self.compat is not None:
            extra.update(self.compat.to_json_extra())
        extra["smoke"] = [s.to_json() for s in self.smokes]
        if self.smoke_note:
            extra["smoke_note"] = self.smoke_note
        return extra


def entry_points(results: Sequence[FileResult]) -> list[str]:
    """The rewritten files a user runs: a .py file with a `__main__` guard or `.train()` at the
    top level, or a notebook whose code cells call `.train()` at the top level."""
    return [
        r.path
        for r in results
        if r.status is Status.CHANGED and _is_entry_point(r.path, r.new or b"")
    ]


def _is_entry_point(path: str, source: bytes) -> bool:
    if path.endswith(".ipynb"):
        from migrate.kernel import notebooks
        from migrate.kernel.files import SourceError

        try:
            return _runs_training(notebooks.runnable(source.decode("utf-8")).text.encode("utf-8"))
        except (UnicodeDecodeError, SourceError):
            return False
    return path.endswith(".py") and _runs_training(source)


def _runs_training(source: bytes) -> bool:
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if (
            isinstance(node, ast.If)
            and "__name__" in ast.unparse(node.test)
            and "__main__" in ast.unparse(node.test)
        ):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "train"
        ):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def upgrade_path(
    path: str,
    *,
    options: Options = Options(),
    dry_run: bool = False,
    smoke: bool = True,
    steps: int = 2,
    timeout: float = 300.0,
    installed: bool = True,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> UpgradeReport:
    """`fix` (writing; with `dry_run`, a diff only), then `compat` on `path` and the environment
    (pins fixed in place unless `dry_run`), then `smoke` of every rewritten entry-point script.

    Never raises for a user's file or script: every problem is a finding in the report.
    """
    started = time.perf_counter()
    say = progress or (lambda message: None)
    say(f"fix: rewriting {path}" if not dry_run else f"fix --diff: {path}")
    report = UpgradeReport(
        path, fix_paths([path], mode=DIFF if dry_run else WRITE, options=options, jobs=jobs)
    )
    say("compat: checking pins and the environment")
    try:
        from compat.api import check_path

        report.compat = check_path(path, installed=installed, fix=not dry_run)
    except Exception as e:  # noqa: BLE001 - a compat failure is reported; the smoke stage still runs
        report.compat_error = f"{type(e).__name__}: {e}"
    scripts = entry_points(report.fix.results)
    if dry_run or not smoke:
        report.smoke_note = "dry run: nothing was written or run" if dry_run else "--no-smoke"
    elif not scripts:
        report.smoke_note = (
            "no rewritten entry-point script (a __main__ guard or a top-level .train())"
        )
    else:
        from migrate import smoke as smoking

        missing = smoking.missing_packages()
        for script in scripts:
            if missing:
                report.smokes.append(smoking.skipped(script, missing, steps=steps, timeout=timeout))
                continue
            say(f"smoke: {script}")
            report.smokes.append(smoking.smoke_script(script, steps=steps, timeout=timeout))
    report.seconds = time.perf_counter() - started
    return report


def smoke_script(script: str, args: Sequence[str] = (), **options: Any) -> Any:
    """`smoke SCRIPT`: one smoke run (migrate.smoke.smoke_script); torch stays in the subprocess."""
    from migrate import smoke

    return smoke.smoke_script(script, list(args), **options)


def check_env(**options: Any) -> Any:
    """`smoke --env`: train the bundled reference stack here (imports torch)."""
    from migrate.reference.train import check_env as run

    return run(**options)


def check_compat(path: str, **options: Any) -> Any:
    """`compat PATH`: the compat report (compat.api.check_path); raises RulesError for a bad target."""
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


def rules_catalogue() -> list[dict[str, str]]:
    """Every code of every job, codemod rules first with their examples: `trl-migrate rules`."""
    from migrate.kernel import codes

    return fix_rules() + codes.compat_entries() + codes.smoke_entries()


__all__ = [
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
    "copy_example",
    "fix_rules",
    "rules_catalogue",
    "Options",
    "Severity",
    "WRITE",
    "CHECK",
    "DIFF",
]
