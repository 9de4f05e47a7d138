"""The `trl-migrate` CLI: exit codes, output formats, rule selection, and its import cost."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import jsonschema
import pytest
from click.testing import CliRunner

from migrate.cli import main

SCHEMA = json.loads((pathlib.Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())
VH = 'from trl import AutoModelForCausalLMWithValueHead\nm = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n'
TODO_ONLY = "from trl.core import randn_tensor\nx = randn_tensor((2, 3))\n"  # used: an unused removed name is just removed


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "vh.py").write_text(VH)
    (tmp_path / "clean.py").write_text("import trl\ntrainer = trl.SFTTrainer\n")
    return tmp_path


def test_check_exit_1_then_fix_then_check_exit_0(project):
    result = invoke("fix", "--check", str(project))
    assert result.exit_code == 1
    assert f"{project / 'vh.py'}:2:5: TRL102 error [fixable]" in result.stderr
    assert (project / "vh.py").read_text() == VH
    assert invoke("fix", str(project)).exit_code == 0
    assert "AutoModelForCausalLM.from_pretrained" in (project / "vh.py").read_text()
    again = invoke("fix", "--check", str(project))
    assert again.exit_code == 0
    assert "0 files would be rewritten" in again.stderr


def test_diff_prints_a_patch_and_writes_nothing(project):
    result = invoke("fix", "--diff", str(project / "vh.py"))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"--- a/{project / 'vh.py'}\n+++ b/{project / 'vh.py'}\n")
    assert (project / "vh.py").read_text() == VH


def test_diff_comes_before_the_findings_in_one_pipe(project):
    # `fix --diff 2>&1 | less`: the patch (stdout) and the findings (stderr) share one pipe
    out = subprocess.run(
        [sys.executable, "-m", "migrate", "fix", "--diff", str(project / "vh.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    ).stdout
    assert out.startswith(f"--- a/{project / 'vh.py'}\n"), out
    assert out.index("+m = AutoModelForCausalLM.from_pretrained") < out.index("TRL102")


def test_manual_todos_keep_exit_1_after_writing(tmp_path):
    (tmp_path / "a.py").write_text(TODO_ONLY)
    assert invoke("fix", str(tmp_path)).exit_code == 1
    assert invoke("fix", "--check", str(tmp_path)).exit_code == 1  # the TODO still needs a human
    assert (tmp_path / "a.py").read_text().count("TODO(trl-migrate TRL101)") == 1


def test_failed_file_gives_exit_2_and_others_still_fixed(project):
    (project / "broken.py").write_text("import trl\ndef f(:\n")
    result = invoke("fix", str(project))
    assert result.exit_code == 2
    assert "broken.py: error: syntax error at line 2" in result.stderr
    assert "AutoModelForCausalLM.from_pretrained" in (project / "vh.py").read_text()


def test_json_matches_the_documented_schema(project):
    (project / "broken.py").write_text("import trl\ndef f(:\n")
    result = invoke("fix", "--check", "--format", "json", str(project))
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["command"] == "fix"
    statuses = {pathlib.Path(f["path"]).name: f["status"] for f in doc["files"]}
    assert statuses == {"broken.py": "failed", "clean.py": "unchanged", "vh.py": "changed"}
    assert doc["summary"]["exit_code"] == 2 == result.exit_code
    vh = next(f for f in doc["files"] if f["path"].endswith("vh.py"))
    assert vh["findings"][0] == {
        "code": "TRL102",
        "severity": "error",
        "line": 2,
        "col": 5,
        "fix": "available",
        "message": "`AutoModelForCausalLMWithValueHead` was removed in TRL 1.13; loading `AutoModelForCausalLM` instead (a value head saved with the checkpoint, `v_head.*`, is not loaded)",
    }


def test_sarif_is_2_1_0_with_rules_and_locations(project):
    result = invoke("fix", "--check", "--format", "sarif", str(project))
    doc = json.loads(result.stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"TRL101", "TRL102"}
    first = run["results"][0]
    assert first["ruleId"] == "TRL102" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 5}


def test_sarif_lists_the_codes_of_fix_itself(tmp_path):
    # a TRL191 result named a rule the SARIF run did not list (nor did a TRL190 one)
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": s}
        for s in ("from trl import set_seed", "x = (")
    ]
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(doc))
    run = json.loads(invoke("fix", "--check", "--format", "sarif", str(tmp_path)).stdout)["runs"][0]
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {"TRL190", "TRL191"} <= rules
    assert {r["ruleId"] for r in run["results"]} == {"TRL101", "TRL191"}


def codes_found(*args: str) -> dict[str, int]:
    return json.loads(invoke("fix", "--check", "--format", "json", *args).stdout)["summary"][
        "by_code"
    ]


def test_select_and_ignore(project):
    (project / "seed.py").write_text("from trl import set_seed\n")
    assert codes_found("--select", "TRL101", str(project)) == {
        "TRL101": 2
    }  # it marks the value head itself
    assert codes_found("--select", "TRL101,TRL102", str(project)) == {"TRL101": 1, "TRL102": 1}
    assert codes_found("--select", "TRL1", "--ignore", "TRL101", str(project)) == {"TRL102": 1}
    assert codes_found("--select", "value-heads", str(project)) == {"TRL102": 1}
    assert codes_found("--ignore", "TRL1", str(project)) == {}
    bad = CliRunner().invoke(main, ["fix", "--select", "TRL999", str(project)])
    assert bad.exit_code == 2 and "unknown rule 'TRL999'" in bad.output


def test_diff_and_check_together_is_a_usage_error(project):
    result = CliRunner().invoke(main, ["fix", "--diff", "--check", str(project)])
    assert result.exit_code == 2 and "--diff and --check" in result.output


def test_rules_lists_and_explains():
    listing = invoke("rules")
    assert listing.exit_code == 0
    assert "TRL101  imports" in listing.stdout and "TRL102  value-heads" in listing.stdout
    one = invoke("rules", "TRL102")
    assert (
        "Before:" in one.stdout
        and "AutoModelForCausalLMWithValueHead.from_pretrained" in one.stdout
    )
    assert "docs/rules.md#trl102" in one.stdout
    assert CliRunner().invoke(main, ["rules", "TRL999"]).exit_code == 2
    compat = invoke("rules", "TRL201")
    assert (
        compat.stdout.startswith("TRL201  no-version-works")
        and "docs/compat.md#trl201" in compat.stdout
    )
    assert "TRL309  torch-bf16" in listing.stdout


def test_rules_explains_every_smoke_code_and_the_docs_have_a_section_for_each():
    from pathlib import Path

    from migrate.kernel import codes

    docs = (Path(__file__).resolve().parents[2] / "docs" / "smoke.md").read_text()
    for code, (name, _) in codes.SMOKE.items():
        one = invoke("rules", code)
        assert one.exit_code == 0 and one.stdout.startswith(f"{code}  {name}"), one.output
        assert f"docs/smoke.md#{code.lower()}" in one.stdout and f"### {code}\n" in docs


def test_console_script_and_module_run_without_heavy_imports(tmp_path):
    (tmp_path / "vh.py").write_text(VH)
    probe = (
        "import sys, runpy; sys.argv = ['trl-migrate', 'fix', '--check', sys.argv[1]];"
        "code = 0\n"
        "try:\n    runpy.run_module('migrate', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'trl', 'datasets', 'compat.api') "
        "if m in sys.modules)\n"
        "print('HEAVY', heavy, 'EXIT', code)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert "HEAVY [] EXIT 1" in out.stdout, out.stderr  # `fix` does not pay for compat either


def test_trl_version_says_which_release_ran(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("from trl import PPOConfig\nconfig = PPOConfig(learning_rate=1e-5)\n")
    runner = CliRunner()
    result = runner.invoke(main, ["fix", "--diff", "--trl-version", "0.7.10", str(script)])
    assert result.exit_code == 1  # changes to make
    assert "+config = RLOOConfig(learning_rate=1e-5, per_device_train_batch_size=1, " in (
        result.output
    )
    for flags, words in (
        (["fix", "--check"], "--trl-version banana: not a version or a specifier"),
        (["upgrade", "--dry-run", "--no-smoke"], "--trl-version banana: not a version"),
    ):
        bad = runner.invoke(main, [*flags, "--trl-version", "banana", str(tmp_path)])
        assert bad.exit_code == 2 and words in bad.output
    none = runner.invoke(main, ["fix", "--check", "--trl-version", ">=2", str(script)])
    assert none.exit_code == 2 and "no TRL release with a PPO config" in none.output
    assert script.read_text().startswith("from trl import PPOConfig")  # nothing written
