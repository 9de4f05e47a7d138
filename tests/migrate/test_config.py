"""[tool.trl-migrate] settings: found upward, validated, overridden by flags; and the output flags."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from migrate.cli import main
from migrate.kernel import config

VH = 'from trl import AutoModelForCausalLMWithValueHead\nm = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n'
SEED = "from trl import set_seed\n"


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.trl-migrate]\n{table}\n'
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "vh.py").write_text(VH)
    (tmp_path / "src" / "seed.py").write_text(SEED)
    return tmp_path


def test_settings_found_from_a_subfolder(tmp_path):
    project(tmp_path, 'target = "grpo"\nselect = ["TRL101"]\nexclude = ["legacy/"]\njobs = 1')
    settings = config.load(str(tmp_path / "src" / "vh.py"))
    assert settings == config.Settings(
        target="grpo",
        target_set=True,
        select=("TRL101",),
        exclude=("legacy/",),
        jobs=1,
        source=str(tmp_path / "pyproject.toml"),
    )


def test_pyproject_without_the_table_is_passed_over(tmp_path):
    project(tmp_path, 'target = "grpo"')
    inner = tmp_path / "src" / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    assert config.load(str(inner)).target == "grpo"
    assert config.load("/").source is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'targett = "grpo"',
            "unknown key 'targett' in [tool.trl-migrate]; known keys: exclude, ignore, jobs, select, target",
        ),
        ('target = "ppo"', "[tool.trl-migrate] target must be one of rloo, grpo; got 'ppo'"),
        ('select = "TRL101"', "[tool.trl-migrate] select must be a list of strings"),
        ("jobs = 0", "[tool.trl-migrate] jobs must be a positive integer"),
    ],
)
def test_bad_tables_are_errors_naming_file_and_key(tmp_path, table, message):
    project(tmp_path, table)
    result = CliRunner().invoke(main, ["fix", "--check", str(tmp_path / "src")])
    assert result.exit_code == 2
    assert str(tmp_path / "pyproject.toml") in result.output and message in result.output


def test_config_select_applies_and_flags_win(tmp_path):
    project(tmp_path, 'select = ["TRL102"]')
    only_vh = json.loads(invoke("fix", "--check", "--format", "json", str(tmp_path / "src")).stdout)
    assert only_vh["summary"]["by_code"] == {"TRL102": 1}
    flag = json.loads(
        invoke(
            "fix", "--check", "--format", "json", "--select", "TRL101", str(tmp_path / "src")
        ).stdout
    )
    assert flag["summary"]["by_code"] == {
        "TRL101": 2
    }  # seed.py, and the value head TRL102 would have taken


def test_config_exclude_is_anchored_at_the_pyproject(tmp_path):
    project(tmp_path, 'exclude = ["src/seed.py"]')
    doc = json.loads(invoke("fix", "--check", "--format", "json", str(tmp_path)).stdout)
    assert [f["path"].rsplit("/", 1)[1] for f in doc["files"]] == ["vh.py"]
    named = json.loads(
        invoke("fix", "--check", "--format", "json", str(tmp_path / "src" / "seed.py")).stdout
    )
    assert named["summary"]["by_code"] == {
        "TRL101": 1
    }  # a file named on the command line is always taken


def test_statistics_quiet_verbose_and_github(tmp_path):
    project(tmp_path, "jobs = 1")
    src = str(tmp_path / "src")
    stats = invoke("fix", "--check", "--statistics", src)
    assert "     1  TRL101  imports          1 auto, 0 manual" in stats.stderr
    assert "     1  TRL102  value-heads      1 auto, 0 manual" in stats.stderr
    quiet = invoke("fix", "--check", "--quiet", src)
    assert quiet.stderr.startswith("trl-migrate: 2 files would be rewritten")
    verbose = invoke("fix", "--check", "--verbose", src)
    assert f"settings from {tmp_path / 'pyproject.toml'}" in verbose.stderr
    assert f"{tmp_path / 'src' / 'seed.py'}: changed" in verbose.stderr
    github = invoke("fix", "--check", "--format", "github", src)
    assert github.stdout.splitlines()[0] == (
        f"::error file={tmp_path}/src/seed.py,line=1,col=17,title=trl-migrate TRL101 [available]::"
        "`trl.set_seed` was removed in TRL 0.14.0; it lives at `transformers.set_seed`"
    )


def test_every_command_help_shows_an_example():
    for command in main.commands:
        result = invoke(command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.stdout, f"`trl-migrate {command} --help` has no example"
