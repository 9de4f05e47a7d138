"""The one findings model every job reports in: codes, severities, fix states, per-file results.

A leaf module of the shared kernel: it imports nothing else from the project.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

DOCS_URL = "https://github.com/trl-migrate/trl-migrate/blob/main/docs/"


class Severity(str, enum.Enum):
    ERROR = "error"  # breaks on TRL 1.13
    WARNING = "warning"  # behaviour changes
    INFO = "info"


class Fix(str, enum.Enum):
    APPLIED = "applied"  # the file was rewritten
    AVAILABLE = "available"  # would apply without --diff/--check
    MANUAL = "manual"  # a human must act; a TODO was left where code was involved
    NONE = "none"  # informational, nothing to do


class Status(str, enum.Enum):
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    FAILED = "failed"
    SKIPPED = "skipped"


def link_for(code: str) -> str:
    """The documentation anchor of a code: TRL1nn rules, TRL2nn/3nn compat, TRL4nn smoke."""
    page = {"1": "rules.md", "2": "compat.md", "3": "compat.md", "4": "smoke.md"}.get(
        code[3:4], "rules.md"
    )
    return f"{DOCS_URL}{page}#{code.lower()}"


@dataclasses.dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    path: str
    line: int  # 1-based; 0 when the finding is about the whole file or environment
    col: int  # 1-based; 0 when unknown
    message: str
    fix: Fix = Fix.NONE
    link: str = ""
    cell: int = 0  # notebooks: 1-based cell position, and `line` counts within the cell

    def __post_init__(self) -> None:
        if not self.link:
            object.__setattr__(self, "link", link_for(self.code))

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        return (self.path, self.cell, self.line, self.col, self.code, self.message)

    @property
    def where(self) -> str:
        """`path:line:col`, `path:cell 3:line:col` in a notebook, or `path` for a whole file."""
        if self.line == 0:
            return self.path
        cell = f"cell {self.cell}:" if self.cell else ""
        col = f":{self.col}" if self.col else ""
        return f"{self.path}:{cell}{self.line}{col}"

    def with_fix(self, fix: Fix) -> Finding:
        return dataclasses.replace(self, fix=fix)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "fix": self.fix.value,
        }
        if self.cell:
            out["cell"] = self.cell
        return out


@dataclasses.dataclass
class FileResult:
    """What happened to one file. A value, never an exception, at the batch boundary."""

    path: str
    status: Status
    findings: list[Finding] = dataclasses.field(default_factory=list)
    message: str = ""  # why it failed or was skipped
    old: bytes | None = None  # original bytes, kept only when the file changed
    new: bytes | None = None  # rewritten bytes, only when the file changed
    diff: str = ""  # unified diff, when asked for
    helpers: tuple[str, ...] = ()  # removed helpers the rewrite wrote in (codemods/inline.py)

    @property
    def needs_human(self) -> bool:
        return any(f.fix is Fix.MANUAL for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status.value,
            "findings": [f.to_json() for f in sorted(self.findings, key=Finding.sort_key)],
        }
        if self.message:
            out["message"] = self.message
        if self.diff:
            out["diff"] = self.diff
        return out
