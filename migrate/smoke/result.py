"""What one smoke run of one script found, as a value (and its TRL4nn findings)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from migrate.kernel.codes import (
    AT_SCALE,
    HARNESS,
    PASSED,
    SKIPPED,
)
from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status

TODO = re.compile(r"#\s*TODO\(trl-migrate (TRL\d{3})\)")


@dataclasses.dataclass
class SmokeResult:
    """What one smoke run of one script found. `outcome`: passed, failed, skipped, or harness."""

    path: str
    args: list[str]
    steps: int
    timeout: float
    findings: list[Finding] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    trainers: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    error: dict[str, Any] | None = None
    log_tail: str = ""
    tmpdir_removed: bool = True
    stand_ins: list[str] = dataclasses.field(default_factory=list)  # modules stood in for
    ran: str = (
        ""  # the file the harness executed: the script, or the script made of a notebook's cells
    )
    entry: Any = None  # the EntryPoint this run proves (migrate.smoke.entry_points), if known
    cwd: str = ""  # where it ran from, relative to the project root
    filled: list[str] = dataclasses.field(default_factory=list)  # required args the harness gave
    overrides: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # caps applied
    at_scale: list[str] = dataclasses.field(default_factory=list)  # what fails at real settings
    stack: str = ""  # where a timed-out run was, from its faulthandler dump
    root: str = ""  # the project root (absolute)
    copy: str = ""  # the throwaway copy of it the script ran in ('' when run in place)
    rewritten: frozenset[str] | None = None  # absolute paths `fix` rewrote (None: not known)
    # what those files held before the rewrite, by the same paths (empty: not known)
    before: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    # keys left out of the copy's config files (path from the project root, key, value)
    trimmed: list[tuple[str, str, Any]] = dataclasses.field(default_factory=list)

    def original(self, path: str) -> str | None:
        """The project file a path of the copy stands for (None when outside the project)."""
        import os

        base = self.copy or self.root
        if not base:
            return None
        rel = os.path.relpath(os.path.abspath(path), base)
        return None if rel.startswith("..") else os.path.normpath(os.path.join(self.root, rel))

    def shown(self, path: str) -> str:
        """`path` as the user reads it: relative to the current folder when under it."""
        import os

        rel = os.path.relpath(path)
        return path if rel.startswith("..") else rel

    @property
    def command(self) -> str:
        """The command line the run used, as a user would type it from `cwd`."""
        import shlex

        entry = self.entry
        head = f"python -m {entry.module}" if entry is not None and entry.module else ""
        if entry is not None and ":" in entry.module:  # a console script, by its own name
            head = shlex.split(entry.launch)[0] if entry.launch else entry.module
        if not head:
            head = f"python {shlex.quote(self.path)}"
        return " ".join([head, *(shlex.quote(a) for a in [*self.args, *self.filled])])

    @property
    def losses(self) -> list[float | str]:
        return [x for t in self.trainers for x in t.get("losses", [])]

    @property
    def steps_run(self) -> int:
        return sum(int(t.get("global_step", 0)) for t in self.trainers)

    @property
    def outcome(self) -> str:
        codes = {f.code for f in self.findings}
        if HARNESS in codes:
            return "harness"
        if SKIPPED in codes:
            return "skipped"
        return "passed" if PASSED in codes and codes <= {PASSED, AT_SCALE} else "failed"

    @property
    def exit_code(self) -> int:
        """0 trained; 1 the script failed (a human must look); 2 the smoke run itself could not
        run."""
        return {"passed": 0, "failed": 1}.get(self.outcome, 2)

    def file_result(self) -> FileResult:
        status = (
            Status.FAILED
            if self.outcome == "harness"
            else Status.SKIPPED
            if self.outcome == "skipped"
            else Status.UNCHANGED
        )
        message = (
            self.findings[0].message if status is not Status.UNCHANGED and self.findings else ""
        )
        return FileResult(self.path, status, findings=list(self.findings), message=message)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "args": self.args,
            "steps": self.steps,
            "timeout": self.timeout,
            "outcome": self.outcome,
            "seconds": round(self.seconds, 3),
            "steps_run": self.steps_run,
            "losses": self.losses,
            "stand_ins": self.stand_ins,
            "cwd": self.cwd,
            "filled": self.filled,
            "command": self.command,
            "overrides": self.overrides,
            "at_scale": self.at_scale,
            "entry_point": self.entry.to_json() if self.entry is not None else None,
            "trainers": [{k: v for k, v in t.items() if k != "log_history"} for t in self.trainers],
            "error": {k: v for k, v in self.error.items() if k != "traceback"}
            if self.error
            else None,
        }


def finding(
    result: SmokeResult, code: str, severity: Severity, message: str, line: int = 0
) -> None:
    fix = Fix.NONE if code in (PASSED, SKIPPED, AT_SCALE) else Fix.MANUAL
    result.findings.append(
        Finding(code, severity, result.path, line, 1 if line else 0, message, fix)
    )


def read_text(path: str) -> str:
    """The file's text ("" when it cannot be read), undecodable bytes replaced."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""
