"""Check an environment and a repo's declared requirements against a TRL release, and fix floors.

Layered as pip check: `sources` read, `check` decides (pure), `fix` rewrites, `api` composes.
Importing this package never imports torch, transformers or the CLI.
"""

from __future__ import annotations

from compat.api import CompatReport, check_path

__all__ = ["CompatReport", "check_path"]
