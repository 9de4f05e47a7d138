"""compat's view of its codes (the table lives in the kernel, beside every other job's)."""

from __future__ import annotations

from migrate.kernel.codes import COMPAT as CODES
from migrate.kernel.codes import compat_entries as sarif_rules
from migrate.kernel.findings import Severity

__all__ = ["CODES", "sarif_rules", "severity"]


def severity(code: str) -> Severity:
    return CODES[code][1]
