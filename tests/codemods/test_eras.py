"""Whole scripts from every TRL era, written by us: exact output, stable, and loadable on 1.13.

Expected outputs live in tests/fixtures/eras/expected/ (one per input, same name). After a
deliberate change to a rule, regenerate them with `TRL_MIGRATE_UPDATE_GOLDEN=1 pytest
tests/codemods/test_eras.py` and review the diff like code.
"""

from __future__ import annotations

import ast
import importlib
import os
import pathlib
import warnings

import pytest

from tests.codemods.helpers import run

ROOT = pathlib.Path(__file__).parents[2]
ERAS = ROOT / "tests" / "fixtures" / "eras"
EXAMPLE = ROOT / "migrate" / "examples" / "ppo_project"
SCRIPTS = sorted(ERAS.glob("*.py")) + sorted(EXAMPLE.glob("*.py"))


def expected_path(script: pathlib.Path) -> pathlib.Path:
    return ERAS / "expected" / script.name


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_era_script_golden(script):
    out, _ = run(script.read_text())
    golden = expected_path(script)
    if os.environ.get("TRL_MIGRATE_UPDATE_GOLDEN") == "1":
        golden.write_text(out)
    assert out == golden.read_text()
    ast.parse(out)
    assert run(out)[0] == out


def _trl_imports(tree: ast.Module, lines: list[str]):
    """(module, name or None, line, has a TODO right above) for each import of trl."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "trl":
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            names = [None for a in node.names if a.name.split(".")[0] == "trl"]
        else:
            continue
        above = lines[node.lineno - 2] if node.lineno >= 2 else ""
        for name in names:
            module = node.module if isinstance(node, ast.ImportFrom) else None
            yield module, name, node.lineno, "TODO(trl-migrate" in above


def _resolves(module: str | None, name: str | None) -> bool:
    if module is None:
        return True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = importlib.import_module(module)
            return name is None or name == "*" or hasattr(mod, name)
    except Exception:
        return False


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_trl_import_resolves_on_1_13_or_has_a_todo(script):
    trl = pytest.importorskip("trl")
    if not trl.__version__.startswith("1.13."):
        pytest.skip(f"needs trl 1.13, found {trl.__version__}")
    out = expected_path(script).read_text()
    lines = out.splitlines()
    unresolved = [
        f"line {line}: from {module} import {name}"
        for module, name, line, has_todo in _trl_imports(ast.parse(out), lines)
        if not has_todo and not _resolves(module, name)
    ]
    assert unresolved == []
