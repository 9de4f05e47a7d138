"""`trl-migrate compat` through click: renderers, options and exit codes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from migrate.cli_compat import compat_command
from tests.compat.helpers import copy_fixture


def _run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(compat_command, list(args), catch_exceptions=False)


def test_text_table_and_exit_1(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture("demo", tmp_path)
    result = _run(folder, "--no-installed")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert "  1     trl        ==0.11.4  >=1.13.0                error TRL201  trl==1.13.0" in lines
    assert (
        "  4     vllm       ==0.19.0  >=0.19.1,<=0.28.0       error TRL201  vllm==0.19.1" in lines
    )
    assert lines[-1] == "summary: 4 error(s), 1 warning(s), 0 note(s), 5 fixable with --fix"
    assert "\x1b[" not in result.output  # not a terminal: no colour


def test_fix_writes_and_reports(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture("unpinned", tmp_path)
    result = _run(folder, "--no-installed", "--fix")
    assert result.exit_code == 0
    assert "fixed: trl>=1.13.0" in result.output
    assert (
        (tmp_path / "unpinned" / "requirements.txt")
        .read_text()
        .startswith("trl>=1.13.0\npeft>=0.13.0\n")
    )


def test_json_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture("demo", tmp_path)
    doc = json.loads(_run(folder, "--no-installed", "--format", "json").output)
    assert doc["command"] == "compat" and doc["schema_version"] == 1
    assert [f["code"] for f in doc["files"][0]["findings"]] == [
        "TRL201",
        "TRL205",
        "TRL201",
        "TRL201",
        "TRL201",
    ]
    rows = doc["compat"]["rows"]
    assert rows[0] == {
        "source": "requirements.txt",
        "line": 1,
        "package": "trl",
        "declared": "==0.11.4",
        "installed": "",
        "required": ">=1.13.0",
        "verdict": "error TRL201",
        "fix": "trl==1.13.0",
    }
    assert doc["compat"]["target_trl"] == "1.13.0" and doc["compat"]["environment"] is None


def test_sarif(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture("malformed", tmp_path)
    result = _run(folder, "--no-installed", "--format", "sarif")
    assert result.exit_code == 2
    run = json.loads(result.output)["runs"][0]
    assert "TRL201" in {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run["results"]} == {"TRL200", "TRL201"}


def test_bad_target_and_missing_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(compat_command, [str(tmp_path), "--target-trl", "9.9"])
    assert result.exit_code == 2 and "no compat rules for TRL 9.9" in result.output
    result = CliRunner().invoke(compat_command, [str(tmp_path / "nope")])
    assert result.exit_code == 2


def test_registered_on_the_main_group() -> None:
    from migrate.cli import main

    assert "compat" in main.commands


def test_docs_have_a_section_per_code() -> None:
    import os

    from compat.codes import CODES

    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "compat.md")
    with open(path, encoding="utf-8") as fh:
        doc = fh.read()
    assert [c for c in CODES if f"\n### {c}\n" not in doc] == []
