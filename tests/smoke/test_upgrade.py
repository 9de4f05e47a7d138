"""`trl-migrate upgrade` (fix, then compat --fix, then smoke of each migrated entry point) and
`trl-migrate demo` (upgrade on a copy of the bundled example project)."""

from __future__ import annotations

import json
import pathlib

import pytest
from click.testing import CliRunner

from migrate import api
from migrate.cli import main
from migrate.kernel.findings import FileResult, Status


def _changed(source: str) -> FileResult:
    return FileResult("x.py", Status.CHANGED, new=source.encode())


@pytest.mark.parametrize(
    ("source", "entry"),
    [
        ('if __name__ == "__main__":\n    main()\n', True),
        ("trainer = make()\ntrainer.train()\n", True),
        ("with ctx():\n    for _ in range(2):\n        trainer.train()\n", True),
        ("def run(trainer):\n    trainer.train()\n", False),
        ("class T:\n    def go(self):\n        self.trainer.train()\n", False),
        ("import trl\n", False),
    ],
)
def test_entry_points_have_a_main_guard_or_train_at_the_top_level(source, entry):
    found, missing = api.entry_points("x.py", [_changed(source)])
    assert [e.path for e in found] == (["x.py"] if entry else [])
    assert [m.path for m in missing] == ([] if entry else ["x.py"])


def test_dry_run_writes_nothing_and_runs_nothing(tmp_path):
    where = pathlib.Path(api.copy_example(str(tmp_path / "p")))
    before = {p.name: p.read_bytes() for p in where.iterdir()}
    run = CliRunner().invoke(
        main, ["upgrade", "--dry-run", "--no-installed", "--format", "json", str(where)]
    )
    assert run.exit_code == 1, run.output
    doc = json.loads(run.output)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(
        doc,
        json.loads((pathlib.Path(__file__).parents[2] / "docs" / "report.schema.json").read_text()),
    )
    assert (
        doc["command"] == "upgrade"
        and doc["smoke"] == []
        and doc["smoke_note"].startswith("dry run")
    )
    assert doc["fix"]["mode"] == "diff" and doc["compat"]["rows"]
    assert {p.name: p.read_bytes() for p in where.iterdir()} == before


def test_without_the_smoke_extra_the_demo_says_how_to_install_it_and_exits_0(tmp_path, monkeypatch):
    from migrate import smoke

    monkeypatch.setattr(smoke, "missing_packages", lambda: ["torch", "trl"])
    run = CliRunner().invoke(main, ["demo", "--dest", str(tmp_path / "demo")])
    assert run.exit_code == 0, run.output
    assert run.output.count("TRL419") == 2  # sentiment_legacy.py and tldr_v2.py
    assert "pip install torch==2.13.0 && pip install 'trl-migrate[smoke]'" in run.output
    notebook = json.loads((tmp_path / "demo" / "value_head.ipynb").read_text())
    code = "".join(line for cell in notebook["cells"] for line in cell["source"])
    assert "AutoModelForCausalLMWithValueHead" not in code and "TODO(trl-migrate TRL102)" in code
    assert "trl==1.13.0" in (tmp_path / "demo" / "requirements.txt").read_text()  # pins fixed


def test_upgrade_no_smoke_reports_code_and_pins(tmp_path):
    where = api.copy_example(str(tmp_path / "p"))
    report = api.upgrade_path(where, smoke=False, installed=False)
    assert report.smokes == [] and report.smoke_note == "--no-smoke"
    assert report.fix.summary()["changed"] == 3 and report.compat is not None
    assert report.exit_code == 1  # TODOs remain for a human


@pytest.mark.smoke
def test_demo_rewrites_fixes_pins_and_smoke_runs_every_migrated_script(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    run = CliRunner().invoke(main, ["demo", "--dest", str(tmp_path / "demo")])
    assert run.exit_code == 0, run.output
    out = run.output
    assert f"trl-migrate smoke {tmp_path / 'demo' / 'sentiment_legacy.py'}: passed" in out
    assert "TRL410 info trained: RLOOTrainer 2 steps" in out
    assert f"trl-migrate smoke {tmp_path / 'demo' / 'tldr_v2.py'}: passed" in out
    assert out.count("TRL410 info trained: RLOOTrainer 2 steps") == 2 and "smoke: 2 passed" in out
    # What is left for a human: the v2 script's generate_completions() and the notebook's value head.
    assert "2 TODOs for a human" in out and "(exit 1)" in out
    assert "trl==1.13.0" in out and "Demo wall time" in out


FIXTURE_REPO = pathlib.Path(__file__).parents[1] / "fixtures" / "repos" / "rlhf_project"


@pytest.mark.smoke
def test_upgrade_proves_a_src_package_through_the_repos_own_launcher(tmp_path):
    # src/ layout, a shell launcher with a variable, a yaml config read relative to the repo
    # root, a required flag the launcher does not give, a missing optional module (loguru), and
    # a rewritten module that nothing runs.
    import importlib.util
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(FIXTURE_REPO, root)
    report = api.upgrade_path(str(root), installed=False)
    script = str(root / "scripts" / "train_ppo.py")
    assert [(e.path, e.found_in, e.via) for e in report.entry_points] == [
        (script, "run_ppo.sh:4", (str(root / "src" / "rlhfpkg" / "train.py"),))
    ]
    assert [u.path for u in report.unreached] == [str(root / "src" / "rlhfpkg" / "legacy.py")]
    [smoke] = report.smokes
    assert smoke.outcome == "passed" and smoke.steps_run == 2, (smoke.findings, smoke.log_tail)
    assert smoke.args == ["--model_name", "Qwen/Qwen3-0.6B", "--config", "configs/ppo.yaml"]
    assert smoke.filled == ["--dataset_name", "trl-migrate/stand-in"] and smoke.cwd == "."
    assert smoke.stand_ins == ([] if importlib.util.find_spec("loguru") else ["loguru"])
    assert {"config": "RLOOConfig", "field": "max_steps", "was": -1, "now": 2} in smoke.overrides
    doc = report.to_json_extra()
    assert doc["entry_points"][0]["launch"] == (
        "python scripts/train_ppo.py --model_name $MODEL --config configs/ppo.yaml"
    )
    assert doc["smoke"][0]["command"] == (
        f"python {script} --model_name Qwen/Qwen3-0.6B --config configs/ppo.yaml "
        "--dataset_name trl-migrate/stand-in"
    )
    assert not (root / "runs").exists()  # outputs stayed in the throwaway copy


RECIPE_REPO = pathlib.Path(__file__).parents[1] / "fixtures" / "repos" / "recipe_project"


@pytest.mark.smoke
def test_upgrade_trains_a_script_from_its_yaml_recipe_with_the_todo_keys_left_out(tmp_path):
    # alignment-handbook's layout: a parser of the repo reads the YAML recipe named first on
    # the launch line; its PPO keys follow the rewritten config, and the two left for a human
    # stay out of the smoke run's copy only
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(RECIPE_REPO, root)
    report = api.upgrade_path(str(root), installed=False)
    [smoke] = report.smokes
    assert smoke.outcome == "passed" and smoke.steps_run == 2, (smoke.findings, smoke.log_tail)
    assert smoke.args == ["recipes/ppo.yaml"]
    left = [o for o in smoke.overrides if o["config"] == "recipes/ppo.yaml"]
    assert left == [
        {"config": "recipes/ppo.yaml", "field": "total_episodes", "was": 10000, "now": "left out"},
        {
            "config": "recipes/ppo.yaml",
            "field": "missing_eos_penalty",
            "was": 1.0,
            "now": "left out",
        },
    ]
    warned = [f.message for f in smoke.findings if f.code == "TRL420"]
    assert any(
        m.startswith(
            "recipes/ppo.yaml (passed by the launch line at run.sh:3) sets `total_episodes`"
        )
        for m in warned
    )
    assert "total_episodes: 10000" in (root / "recipes" / "ppo.yaml").read_text()  # the repo's


@pytest.mark.smoke
def test_a_crash_in_a_rewritten_module_says_whether_the_rewrite_changed_that_line(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "helpers.py").write_text(
        "from trl.core import LengthSampler\n\nsampler = LengthSampler(2, 4)\nsize = undefined\n"
    )
    (root / "train.py").write_text(
        'import helpers\n\nif __name__ == "__main__":\n    print(helpers.size)\n'
    )
    report = api.upgrade_path(str(root), installed=False)
    [smoke] = report.smokes
    [crash] = [f for f in smoke.findings if f.code == "TRL412"]
    line = (root / "helpers.py").read_text().splitlines().index("size = undefined") + 1
    assert line > 4  # the rewrite wrote LengthSampler in above it
    shown = smoke.shown(str(root / "helpers.py"))
    assert crash.message == (
        f"the script raised NameError: name 'undefined' is not defined; the file {shown} "
        "imports or defines `undefined` nowhere: the repository's own code, not the rewrite; "
        f"it came from {shown}:{line}, a line the rewrite did not change"
    ), crash.message


ERAS = pathlib.Path(__file__).parents[1] / "fixtures" / "eras"


@pytest.mark.smoke
def test_a_script_no_launcher_runs_is_run_as_its_usage_string_says(tmp_path):
    # TRL's PPOv2 script with its usage in a string after the imports, as TRL's examples and
    # their copies in public repos keep it (ninoaf/PPO_transfomer_toy, TPNxl/592rli-llm-project):
    # the smoke run takes its flags in their new spelling, drops those that change nothing and
    # goes on without the one RLOOConfig lacks, which a TRL420 names.
    source = (ERAS / "ppov2_0_10.py").read_text()
    usage = (
        '"""\npython examples/scripts/ppo.py --output_dir models/minimal/ppo \\\n'
        "    --model_name_or_path EleutherAI/pythia-1b-deduped --num_ppo_epochs 2 \\\n"
        "    --total_episodes 1000 --stop_token eos --local_rollout_forward_batch_size 4\n"
        '"""\n'
    )
    root = tmp_path / "repo"
    root.mkdir()
    (root / "ppo.py").write_text(source.replace("\nparser =", "\n" + usage + "\nparser =", 1))
    report = api.upgrade_path(str(root), installed=False)
    [entry] = report.entry_points
    text = (root / "ppo.py").read_text()
    line = text.splitlines().index(
        "python examples/scripts/ppo.py --output_dir models/minimal/ppo \\"
    )
    assert entry.found_in == f"ppo.py:{line + 1}"
    assert entry.left_out == ("--total_episodes 1000",)
    [smoke] = report.smokes
    assert smoke.outcome == "passed" and smoke.steps_run == 2, (smoke.findings, smoke.log_tail)
    assert smoke.args == [
        "--output_dir",
        "models/minimal/ppo",
        "--model_name_or_path",
        "EleutherAI/pythia-1b-deduped",
        "--num_iterations",
        "2",
    ]
    left = [f.message for f in smoke.findings if f.code == "TRL420" and "launch line" in f.message]
    assert left == [
        f"the launch line at ppo.py:{line + 1} passes `--total_episodes 1000`, which the rewritten "
        "script's parser no longer takes (a finding of this report says what replaces it): the "
        "smoke run left it out, the real launch would stop on it"
    ]
    assert {
        "config": "launch line",
        "field": "--total_episodes",
        "was": "1000",
        "now": "left out",
    } in smoke.overrides
