"""`upgrade` on a repository whose launch line hands its PPO script a YAML recipe (the fixture
repo tests/fixtures/repos/recipe_project, alignment-handbook's layout): the recipe's keys follow
the rewritten config, PPO's defaults that a file parser never reads are written in, and what is
left for a human keeps a TODO and stays out of the smoke run's copy."""

from __future__ import annotations

import json
import pathlib
import shutil

from migrate import api
from migrate.kernel.findings import Fix, Status
from migrate.smoke.workspace import trim_configs

FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "repos" / "recipe_project"

RECIPE_AFTER = """\
# PPO recipe (TRL 0.12)
model_name_or_path: Qwen/Qwen3-0.6B
dataset_name: trl-lib/tldr
reward_model_path: Qwen/Qwen3-0.6B-reward
learning_rate: 3.0e-6   # tuned
per_device_train_batch_size: 4
num_iterations: 2
beta: 0.05
max_completion_length: 53
# TODO(trl-migrate TRL103): `total_episodes`: set `max_steps` instead: the new config counts `max_steps`, not `total_episodes` (the conversion is in docs/rules.md, TRL103)
total_episodes: 10000
# TODO(trl-migrate TRL103): `missing_eos_penalty`: add a reward function to the trainer's reward_funcs: `def missing_eos_penalty(completion_ids, **kwargs): return [0.0 if tokenizer.eos_token_id in ids else -1.0 for ids in completion_ids]`
missing_eos_penalty: 1.0
output_dir: runs/ppo
report_to: none
# trl-migrate (TRL103): PPO's values for the settings this file leaves out; the script parses this file into its configs, which start from RLOOConfig's own defaults
max_grad_norm: 0.0
temperature: 0.7
disable_dropout: true
bf16: false
gradient_checkpointing: false
"""


def _repo(tmp_path: pathlib.Path) -> pathlib.Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    return root


def test_a_yaml_recipe_follows_the_rewritten_config_and_a_second_run_changes_nothing(tmp_path):
    root = _repo(tmp_path)
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    recipe = root / "recipes" / "ppo.yaml"
    assert recipe.read_text() == RECIPE_AFTER
    [launch] = [r for r in report.launches if r.path == str(recipe)]
    assert launch.status is Status.CHANGED
    assert [(f.line, f.fix) for f in launch.findings] == [
        (7, Fix.APPLIED),  # num_ppo_epochs
        (8, Fix.APPLIED),  # kl_coef
        (9, Fix.APPLIED),  # response_length
        (10, Fix.APPLIED),  # stop_token eos: what TRL 1.13 does
        (11, Fix.MANUAL),  # total_episodes
        (12, Fix.MANUAL),  # missing_eos_penalty
        (1, Fix.APPLIED),  # the defaults written in
    ]
    assert "`stop_token eos` is what TRL 1.13 does anyway, so it was removed" in (
        launch.findings[3].message
    )
    # the script moved reward_model_path to a dataclass of its own: the recipe keeps it
    script = (root / "ppo.py").read_text()
    assert (
        "ppo_args.reward_model_path" in script
        and "RecipeParser((ScriptArguments, RLOOConfig, ModelConfig, PPOScriptArguments))" in script
    )
    [entry] = report.entry_points
    assert entry.config_left_out == (
        ("recipes/ppo.yaml", "total_episodes"),
        ("recipes/ppo.yaml", "missing_eos_penalty"),
    )
    again = api.upgrade_path(str(root), smoke=False, installed=False)
    assert recipe.read_text() == RECIPE_AFTER
    assert all(r.status is Status.UNCHANGED for r in again.launches)


def test_a_dry_run_reports_the_recipe_and_writes_nothing(tmp_path):
    root = _repo(tmp_path)
    before = (root / "recipes" / "ppo.yaml").read_bytes()
    report = api.upgrade_path(str(root), dry_run=True, installed=False)
    assert (root / "recipes" / "ppo.yaml").read_bytes() == before
    [launch] = [r for r in report.launches if r.path.endswith("ppo.yaml")]
    assert launch.status is Status.UNCHANGED
    assert all(f.fix is Fix.MANUAL for f in launch.findings)
    assert launch.findings[0].message.endswith(
        "for the rewritten script's config: change it in this file"
    )


def test_a_recipe_another_script_reads_too_gets_no_ppo_defaults(tmp_path):
    root = _repo(tmp_path)
    (root / "eval.py").write_text(
        "from recipe_lib.parser import RecipeParser\n"
        "from trl import ModelConfig, ScriptArguments\n\n"
        "script_args, model_args = RecipeParser((ScriptArguments, ModelConfig)).parse()\n"
    )
    (root / "run.sh").write_text(
        "python ppo.py recipes/ppo.yaml\npython eval.py recipes/ppo.yaml\n"
    )
    api.upgrade_path(str(root), smoke=False, installed=False)
    text = (root / "recipes" / "ppo.yaml").read_text()
    assert "num_iterations: 2" in text  # renamed: the file is the PPO script's recipe
    assert "max_grad_norm" not in text  # eval.py's parser has no RLOOConfig to take it


def test_a_json_config_of_parse_json_file_is_edited_key_by_key(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "train.py").write_text(
        "import sys\n"
        "from transformers import HfArgumentParser\n"
        "from trl import ModelConfig, PPOConfig, PPOTrainer\n\n"
        'if __name__ == "__main__":\n'
        "    parser = HfArgumentParser((PPOConfig, ModelConfig))\n"
        "    config, model_config = parser.parse_json_file(json_file=sys.argv[1])\n"
        "    trainer = PPOTrainer(config=config, processing_class=tok, policy=policy, "
        "ref_policy=ref, reward_model=rm, train_dataset=ds)\n"
        "    trainer.train()\n"
    )
    cfg = {"output_dir": "o", "kl_coef": 0.05, "vf_coef": 0.1, "total_episodes": 100}
    (root / "cfg.json").write_text(json.dumps(cfg, indent=2) + "\n")
    (root / "run.sh").write_text("python train.py cfg.json\n")
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    data = json.loads((root / "cfg.json").read_text())
    assert data == {
        "output_dir": "o",
        "beta": 0.05,
        "total_episodes": 100,  # for a human: JSON holds no comment, the finding says so
        **{k: v for k, v in data.items() if k not in ("output_dir", "beta", "total_episodes")},
    }
    assert data["max_grad_norm"] == 0.0 and "vf_coef" not in data
    [launch] = [r for r in report.launches if r.path.endswith("cfg.json")]
    [todo] = [f for f in launch.findings if f.fix is Fix.MANUAL]
    assert todo.line == 5 and "JSON holds no comment: this finding is the TODO" in todo.message


def test_a_smoke_copy_leaves_out_the_keys_left_for_a_human(tmp_path):
    copy = tmp_path / "copy"
    (copy / "recipes").mkdir(parents=True)
    (copy / "recipes" / "ppo.yaml").write_text(RECIPE_AFTER)
    trimmed = trim_configs(
        str(copy), [("recipes/ppo.yaml", "total_episodes"), ("recipes/ppo.yaml", "nope")]
    )
    assert trimmed == []  # a key the file lacks: nothing is left out, the run meets the file
    trimmed = trim_configs(
        str(copy),
        [("recipes/ppo.yaml", "total_episodes"), ("recipes/ppo.yaml", "missing_eos_penalty")],
    )
    assert trimmed == [
        ("recipes/ppo.yaml", "total_episodes", 10000),
        ("recipes/ppo.yaml", "missing_eos_penalty", 1.0),
    ]
    text = (copy / "recipes" / "ppo.yaml").read_text()
    assert "total_episodes:" not in text and "missing_eos_penalty:" not in text
    assert "num_iterations: 2" in text
