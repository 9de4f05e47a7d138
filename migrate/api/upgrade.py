"""`upgrade_path`: fix the code, fix the pins, and smoke-train the migrated entry points; the
entry points are the rewritten scripts that train when run."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from codemods.base import Options
from migrate.api.fix import DIFF, WRITE, FixReport, fix_paths
from migrate.kernel.findings import FileResult, Status


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
        """0 nothing left for a human; 1 TODOs, pins or smoke failures need one; 2 something could
        not run."""
        codes = [
            self.fix.exit_code,
            2 if self.compat_error else self.compat.exit_code if self.compat else 0,
        ]
        codes += [s.exit_code for s in self.smokes if s.outcome != "skipped"]
        return 2 if 2 in codes else 1 if 1 in codes else 0

    def results(self) -> list[FileResult]:
        """Every file's findings from all three stages; a smoked script carries its smoke
        findings."""
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
        todo.extend(ast.iter_child_nodes(node))  # type: ignore[arg-type]
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
        from compat.resolve import resolver

        # The fixed pins are proven to resolve when a resolver is installed (`uv`); without
        # one, nothing is said here: `compat --resolve` says why it cannot run.
        report.compat = check_path(
            path, installed=installed, fix=not dry_run, resolve=resolver() is not None
        )
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
