"""Smoke-run tests need the smoke extra; they share one folder of tiny models between runs."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Tiny models built once per test session (each run would otherwise build its own)."""
    return str(tmp_path_factory.mktemp("tiny-models"))
