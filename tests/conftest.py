"""Test-wide settings: offline always, so no test can reach a model hub."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
# Every qualified-name answer the engine's import bindings give is checked against libcst's
# scope analysis (codemods/bindings.py): a difference fails the file, and so the test.
os.environ.setdefault("TRL_MIGRATE_CHECK_BINDINGS", "1")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """`slow` tests (full corpus runs, long benchmarks) run only with TRL_MIGRATE_SLOW=1."""
    import pytest

    if os.environ.get("TRL_MIGRATE_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set TRL_MIGRATE_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
