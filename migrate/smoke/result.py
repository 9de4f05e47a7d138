"""What one smoke run of one script found, as a value (and its TRL4nn findings)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from migrate.kernel.codes import (
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
        return "passed" if codes == {PASSED} else "failed"

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
            "trainers": [{k: v for k, v in t.items() if k != "log_history"} for t in self.trainers],
            "error": {k: v for k, v in self.error.items() if k != "traceback"}
            if self.error
            else None,
        }


def finding(
    result: SmokeResult, code: str, severity: Severity, message: str, line: int = 0
) -> None:
    fix = Fix.NONE if code in (PASSED, SKIPPED) else Fix.MANUAL
    result.findings.append(
        Finding(code, severity, result.path, line, 1 if line else 0, message, fix)
    )
