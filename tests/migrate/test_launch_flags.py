"""Launch lines that pass flags of a PPO config a script parses: after the rewrite the script
parses RLOOConfig/GRPOConfig, so renamed flags are written in (shell scripts) and flags the new
config lacks are marked, never left to fail at argparse unreported."""

from __future__ import annotations

import pytest

from codemods import launch_flags
from migrate import api
from migrate.kernel.findings import Fix, Status

SCRIPT = """\
from transformers import HfArgumentParser
from trl import ModelConfig, PPOConfig, PPOTrainer, ScriptArguments

if __name__ == "__main__":
    parser = HfArgumentParser((ScriptArguments, PPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_into_dataclasses()
    trainer = PPOTrainer(args=training_args, processing_class=tok, model=policy, ref_model=ref, reward_model=rm, value_model=vm, train_dataset=ds)
    trainer.train()
"""

RUN = """\
#!/bin/bash
set -e
    python scripts/train.py --output_dir out \\
        --num_ppo_epochs 2 --total_episodes=1000 \\
        --learning_rate 3e-6 --missing_eos_penalty 1.0
"""

RUN_AFTER = """\
#!/bin/bash
set -e
    # TODO(trl-migrate TRL103): `--total_episodes`: set `--max_steps` instead: the new config counts `max_steps`, not `total_episodes` (the conversion is in docs/rules.md, TRL103)
    # TODO(trl-migrate TRL103): `--missing_eos_penalty`: add a reward function to the trainer's reward_funcs: `def missing_eos_penalty(completion_ids, **kwargs): return [0.0 if tokenizer.eos_token_id in ids else -1.0 for ids in completion_ids]`
    python scripts/train.py --output_dir out \\
        --num_iterations 2 --total_episodes=1000 \\
        --learning_rate 3e-6 --missing_eos_penalty 1.0
"""


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--learning_rate", "1e-6", "--output_dir", "o"], id="fields-the-target-has"),
        pytest.param(["--sft_model_path", "m", "--model_name", "x"], id="script-only-fields"),
        pytest.param(["--my_reward_scale", "2", "-v", "--"], id="the-scripts-own-flags"),
    ],
)
def test_flags_the_new_config_takes_are_left_alone(args):
    assert launch_flags.changes(args, "rloo") == []
    assert launch_flags.renamed(args, []) == args


@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_renamed_flags_get_the_new_spelling_and_others_the_reason(target):
    args = ["--num_ppo_epochs=4", "--exp_name", "e", "--whiten_rewards", "--stop_token", "bos"]
    found = launch_flags.changes(args, target)
    assert [(c.flag, c.new, c.drop) for c in found] == [
        ("--num_ppo_epochs", "--num_iterations", False),
        ("--exp_name", "--run_name", False),
        ("--whiten_rewards", "", False),  # a bare boolean flag is True: whitening was on
        ("--stop_token", "", False),
    ]
    assert "`stop_token=bos`" in found[3].why
    assert launch_flags.renamed(args, found) == [
        "--num_iterations=4",
        "--run_name",
        "e",
        "--whiten_rewards",
        "--stop_token",
        "bos",
    ]
    kept, left_out = launch_flags.left_out(launch_flags.renamed(args, found), found)
    assert kept == ["--num_iterations=4", "--run_name", "e"]
    assert left_out == ["--whiten_rewards", "--stop_token bos"]


@pytest.mark.parametrize(
    ("args", "why"),
    [
        pytest.param(
            ["--local_rollout_forward_batch_size", "16"],
            "TRL 1.13 does not use it (RLOO guide: follows per_device_train_batch_size)",
            id="a-field-1.13-does-not-use",
        ),
        pytest.param(
            ["--vf_coef=0.1"],
            "no value model in RLOO/GRPO; that behaviour is gone",
            id="a-value-model-field",
        ),
        pytest.param(
            ["--stop_token", "eos"], "`--stop_token eos` is what TRL 1.13 does anyway", id="eos"
        ),
        pytest.param(
            ["--whiten_rewards", "False"],
            "`--whiten_rewards False` is what TRL 1.13 does anyway",
            id="a-switch-off",
        ),
        pytest.param(
            ["--ratio_threshold", "10"],
            "`--ratio_threshold 10` is what TRL 1.13 does anyway",
            id="a-number-at-its-harmless-value",
        ),
    ],
)
def test_flags_the_rewrite_would_drop_leave_the_line(args, why):
    # the same keywords of a `PPOConfig(...)` call are dropped by TRL103 (mapping.plan_call)
    [change] = launch_flags.changes([*args, "--output_dir", "o"], "rloo")
    assert (change.flag, change.new, change.drop, change.why) == (
        args[0].partition("=")[0],
        "",
        True,
        why,
    )
    assert launch_flags.renamed([*args, "--output_dir", "o"], [change]) == ["--output_dir", "o"]


@pytest.mark.parametrize(
    "args",
    [["--whiten_rewards", "true"], ["--ratio_threshold", "5"], ["--stop_token", "bos"]],
)
def test_a_switch_at_another_value_keeps_its_todo(args):
    [change] = launch_flags.changes(args, "rloo")
    assert not change.drop and not change.new and args[1] in change.why


def _repo(tmp_path, launcher: str = "run.sh", text: str = RUN):
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "train.py").write_text(SCRIPT)
    (root / launcher).write_text(text)
    return root


def test_a_shell_launch_line_gets_the_new_flags_and_todos_and_a_second_run_changes_nothing(
    tmp_path,
):
    root = _repo(tmp_path)
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    assert (root / "run.sh").read_text() == RUN_AFTER
    [launch] = report.launches
    assert launch.status is Status.CHANGED and launch.path == str(root / "run.sh")
    assert sorted((f.line, f.code, f.fix, f.message.split(" ")[0]) for f in launch.findings) == [
        (3, "TRL103", Fix.APPLIED, "`--num_ppo_epochs`"),
        (3, "TRL103", Fix.MANUAL, "`--missing_eos_penalty`"),
        (3, "TRL103", Fix.MANUAL, "`--total_episodes`"),
    ]
    assert report.launch_todos == 2 and report.exit_code == 1
    [entry] = report.entry_points  # the smoke run would try the line as it now reads
    assert entry.args == ("--output_dir", "out", "--num_iterations", "2", "--learning_rate", "3e-6")
    # ... less the flags the new config lacks, which it names as what the real launch stops on
    assert entry.left_out == ("--total_episodes=1000", "--missing_eos_penalty 1.0")
    again = api.upgrade_path(str(root), smoke=False, installed=False)
    assert again.launches == [] and (root / "run.sh").read_text() == RUN_AFTER


def test_flags_that_change_nothing_under_the_new_config_leave_a_shell_line(tmp_path):
    run = (
        "python scripts/train.py --output_dir out --stop_token eos \\\n"
        "    --local_rollout_forward_batch_size 4 --vf_coef=0.2\n"
        "echo done\n"
    )
    root = _repo(tmp_path, text=run)
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    # the line the flags went from is gone, and the one before it no longer continues onto
    # `echo done`
    assert (root / "run.sh").read_text() == "python scripts/train.py --output_dir out\necho done\n"
    [launch] = report.launches
    assert [(f.line, f.fix, f.message) for f in launch.findings] == [
        (
            1,
            Fix.APPLIED,
            "`--stop_token` has no RLOOConfig flag: `--stop_token eos` is what TRL 1.13 does "
            "anyway, so it was removed",
        ),
        (
            1,
            Fix.APPLIED,
            "`--local_rollout_forward_batch_size` has no RLOOConfig flag: TRL 1.13 does not use "
            "it (RLOO guide: follows per_device_train_batch_size), so it was removed",
        ),
        (
            1,
            Fix.APPLIED,
            "`--vf_coef` has no RLOOConfig flag: no value model in RLOO/GRPO; that behaviour is "
            "gone, so it was removed",
        ),
    ]
    [entry] = report.entry_points
    assert entry.args == ("--output_dir", "out") and entry.left_out == ()
    assert report.launch_todos == 0
    again = api.upgrade_path(str(root), smoke=False, installed=False)
    assert again.launches == [] and (root / "run.sh").read_text() == (
        "python scripts/train.py --output_dir out\necho done\n"
    )


def test_a_dry_run_reports_the_flags_and_writes_nothing(tmp_path):
    root = _repo(tmp_path)
    report = api.upgrade_path(str(root), dry_run=True, installed=False)
    assert (root / "run.sh").read_text() == RUN
    [launch] = report.launches
    assert launch.status is Status.UNCHANGED
    assert {f.fix for f in launch.findings} == {Fix.MANUAL}
    assert any("change it on this line" in f.message for f in launch.findings)


def test_a_readme_launch_line_is_reported_not_rewritten(tmp_path):
    readme = (
        "# Train\n\n```bash\npython scripts/train.py --output_dir out --num_ppo_epochs 2\n```\n"
    )
    root = _repo(tmp_path, "README.md", readme)
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    assert (root / "README.md").read_text() == readme
    [launch] = report.launches
    assert [(f.line, f.fix) for f in launch.findings] == [(4, Fix.MANUAL)]
    assert launch.findings[0].message == (
        "`--num_ppo_epochs` is `--num_iterations` for the rewritten script's config: change it "
        "on this line"
    )


def test_a_script_with_its_own_argparse_keeps_its_launch_line(tmp_path):
    own = (
        "import argparse\nfrom trl import PPOConfig\n"
        "p = argparse.ArgumentParser()\np.add_argument('--num_ppo_epochs', type=int)\n"
        "a = p.parse_args()\nconfig = PPOConfig(output_dir='o', num_ppo_epochs=a.num_ppo_epochs)\n"
        "if __name__ == '__main__':\n    print(config)\n"
    )
    root = _repo(tmp_path)
    (root / "scripts" / "train.py").write_text(own)
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    assert report.launches == [] and (root / "run.sh").read_text() == RUN


SFT = """\
from dataclasses import dataclass
from transformers import HfArgumentParser, TrainingArguments
import trl

@dataclass
class Args:
    model: str = "gpt2"
    max_seq_length: int = 512

if __name__ == "__main__":
    args, training_args = HfArgumentParser((Args, TrainingArguments)).parse_args_into_dataclasses()
    extra = TrainingArguments("o", evaluation_strategy="no")
    print(args, training_args, extra)
"""

SFT_RUN = """\
python sft.py --output_dir out --evaluation_strategy steps --warmup_ratio 0.05 \\
    --max_seq_length 256 --lr_scheduler_type cosine
python sft2.py --output_dir out --warmup_ratio=1.0
"""


def _upgrade_sft(tmp_path, run_sh: str):  # type: ignore[no-untyped-def]
    """A package of two scripts that parse TrainingArguments, launched by `run_sh`, upgraded
    without smoke runs."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "sft.py").write_text(SFT)
    (tmp_path / "sft2.py").write_text(SFT)
    (tmp_path / "run.sh").write_text(run_sh)
    return api.upgrade_path(str(tmp_path), smoke=False, installed=False)


def test_transformers_drift_flags_of_a_parsed_training_args_are_written_in(tmp_path):
    # Jerry-XDL/AIDoctor's run_sft.sh: --evaluation_strategy and --warmup_ratio, which
    # transformers 5's TrainingArguments rejects
    report = _upgrade_sft(tmp_path, SFT_RUN)
    assert (tmp_path / "run.sh").read_text() == (
        "python sft.py --output_dir out --eval_strategy steps --warmup_steps 0.05 \\\n"
        "    --max_seq_length 256 --lr_scheduler_type cosine\n"  # the script's own field stays
        "# TODO(trl-migrate TRL108): `--warmup_ratio`: transformers 5.0 removed warmup_ratio "
        "and reads a warmup_steps float in [0, 1) as that ratio of the total steps "
        "(TrainingArguments.get_warmup_steps of 5.25: ceil(total * warmup_steps) below 1, as 4.x "
        "did with ceil(total * warmup_ratio) when warmup_steps was 0): "
        "pass the ratio as --warmup_steps below 1\n"
        "python sft2.py --output_dir out --warmup_ratio=1.0\n"
    )
    [launch] = report.launches
    assert sorted((f.line, f.code, f.fix) for f in launch.findings) == [
        (1, "TRL108", Fix.APPLIED),
        (1, "TRL108", Fix.APPLIED),
        (3, "TRL108", Fix.MANUAL),
    ]
    assert launch.findings[0].message.startswith(
        "`--evaluation_strategy` is `--eval_strategy` now (transformers 4.46 renamed it"
    ) and launch.findings[0].message.endswith("(written in)")
    again = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert (tmp_path / "run.sh").read_text().count("TODO") == 1
    assert all(r.status is not Status.CHANGED for r in again.launches)


def test_a_flag_of_a_dataclass_the_script_imports_from_the_repo_is_left_alone(tmp_path):
    # zucchini-nlp/RLHF-GPT2: `TrainArguments` (in configs.py) declares warmup_ratio; run_sft.sh's
    # `--warmup_ratio 0.05` was renamed, and the parser then rejected `--warmup_steps`
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "configs.py").write_text(
        "from dataclasses import dataclass\n\n@dataclass\nclass TrainArguments:\n"
        "    output_dir: str = 'o'\n    warmup_ratio: float = 0.0\n"
    )
    (tmp_path / "sft.py").write_text(
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "from configs import TrainArguments\nimport trl\n"
        "if __name__ == '__main__':\n"
        "    (args,) = HfArgumentParser((TrainArguments,)).parse_args_into_dataclasses()\n"
        "    extra = TrainingArguments('o', evaluation_strategy='no')\n"
    )
    run = "python sft.py --output_dir out --warmup_ratio 0.05\n"
    (tmp_path / "run.sh").write_text(run)
    report = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert (tmp_path / "run.sh").read_text() == run
    assert report.launches == []
    assert "eval_strategy='no'" in (tmp_path / "sft.py").read_text()  # the script was rewritten


def test_drift_flags_the_script_declares_itself_are_its_own():
    declared = {"warmup_ratio"}.__contains__
    assert launch_flags.drift_changes(["--warmup_ratio", "0.1"], declared) == []
    assert [
        c.new for c in launch_flags.drift_changes(["--warmup-ratio", "0.1"], set().__contains__)
    ] == ["--warmup_steps"]


def test_drift_flags_only_for_the_classes_the_script_names():
    none = set().__contains__
    args = ["--max_seq_length", "8", "--evaluation_strategy", "no"]
    only_training_args = "HfArgumentParser((Args, TrainingArguments))"
    assert [c.new for c in launch_flags.drift_changes(args, none, only_training_args)] == [
        "--eval_strategy"
    ]
    sft = "from trl import SFTConfig\nHfArgumentParser((Args, SFTConfig))"
    assert [c.new for c in launch_flags.drift_changes(args, none, sft)] == [
        "--max_length",
        "--eval_strategy",
    ]


def test_overwrite_output_dir_leaves_the_launch_line(tmp_path):
    # Jerry-XDL/AIDoctor's and dukeyuan/finetuning's run_*.sh pass --overwrite_output_dir, which
    # transformers 5's TrainingArguments no longer has (HfArgumentParser then rejects the line)
    report = _upgrade_sft(
        tmp_path,
        "python sft.py --output_dir out \\\n"
        "    --overwrite_output_dir \\\n"
        "    --do_train\n"
        "python sft2.py --overwrite_output_dir True --output_dir o2\n",
    )
    assert (tmp_path / "run.sh").read_text() == (
        "python sft.py --output_dir out \\\n    --do_train\npython sft2.py --output_dir o2\n"
    )
    [launch] = report.launches
    assert [(f.line, f.code, f.fix) for f in launch.findings] == [
        (1, "TRL108", Fix.APPLIED),
        (4, "TRL108", Fix.APPLIED),
    ]
    assert launch.findings[0].message == (
        "`--overwrite_output_dir` is not a flag of TrainingArguments any more (transformers 5.0 "
        "removed overwrite_output_dir); it changed nothing in training, so it was removed"
    )
    again = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert all(r.status is not Status.CHANGED for r in again.launches)


def test_a_dropped_flag_leaves_the_arguments_of_the_smoke_run():
    change = launch_flags.FlagChange("--overwrite_output_dir", "", "gone", "TRL108", drop=True)
    args = ["--overwrite_output_dir", "True", "--lr", "1", "--overwrite_output_dir=1", "--x"]
    assert launch_flags.renamed(args, [change]) == ["--lr", "1", "--x"]
    declared = {"overwrite_output_dir"}.__contains__
    assert launch_flags.drift_changes(["--overwrite_output_dir"], declared) == []


GRPO = """\
from dataclasses import dataclass, field
from transformers import HfArgumentParser
from trl import GRPOConfig


@dataclass
class ScriptArguments:
    dataset_path: str = field(default="data")


parser = HfArgumentParser((ScriptArguments, GRPOConfig))
script_args, training_args = parser.parse_args_into_dataclasses()
# a rewrite in the same file (the entry points `upgrade` checks are those of rewritten files)
critic = GRPOConfig(output_dir="critic", vllm_guided_decoding_regex=r"\\d+")
"""


def test_fields_a_parsed_trl_config_lost_are_renamed_dropped_or_left_with_a_todo(tmp_path):
    # ktolnos/Reward-Model-Overoptimization's grpo.sh passes --max_prompt_length and
    # --wandb_log_unique_prompts to a script that parses a GRPOConfig; TRL 1.13's rejects both.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "grpo.py").write_text(GRPO)
    (tmp_path / "run.sh").write_text(
        "python grpo.py --output_dir out --max_prompt_length 1024 \\\n"
        "    --wandb_log_unique_prompts True --vllm_enable_prefix_caching --dataset_path d\n"
    )
    report = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert (tmp_path / "run.sh").read_text() == (
        "# TODO(trl-migrate TRL108): `--max_prompt_length`: TRL 0.28.0 removed GRPOConfig's "
        "`max_prompt_length`: limit prompt length in your data instead: drop or pre-truncate "
        "over-long prompts before training (up to 0.25 the trainer kept only the last N prompt "
        "tokens, 512 by default; 1.13 never truncates prompts). With vLLM in colocate mode, also "
        "set vllm_max_model_length to at least your longest prompt plus max_completion_length, "
        "because older releases derived the vLLM context length from this setting.\n"
        "python grpo.py --output_dir out --max_prompt_length 1024 \\\n"
        "    --log_unique_prompts True --dataset_path d\n"
    )
    [launch] = report.launches
    assert [(f.line, f.fix, f.message.split(" (")[0]) for f in launch.findings] == [
        (
            1,
            Fix.MANUAL,
            "`--max_prompt_length` is not a flag of the rewritten script's config: "
            "TRL 0.28.0 removed GRPOConfig's `max_prompt_length`: limit prompt length in your data "
            "instead: drop or pre-truncate over-long prompts before training",
        ),
        (1, Fix.APPLIED, "`--wandb_log_unique_prompts` is `--log_unique_prompts` now"),
        (1, Fix.APPLIED, "`--vllm_enable_prefix_caching` is not a flag of GRPOConfig any more"),
    ]
    again = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert all(r.status is not Status.CHANGED for r in again.launches)
    assert (tmp_path / "run.sh").read_text().count("TODO") == 1


def test_config_field_flags_only_for_the_configs_the_script_names():
    none = set().__contains__
    args = ["--max_prompt_length", "8", "--use_liger", "True"]
    assert launch_flags.drift_changes(args, none, "HfArgumentParser((A, TrainingArguments))") == []
    sft = "from trl import SFTConfig\nHfArgumentParser((A, SFTConfig))"
    assert [(c.flag, c.new) for c in launch_flags.drift_changes(args, none, sft)] == [
        ("--use_liger", "--use_liger_kernel")
    ]
    own = {"max_prompt_length"}.__contains__  # the script's own field of that name
    grpo = "from trl import GRPOConfig\nHfArgumentParser((A, GRPOConfig))"
    assert launch_flags.drift_changes(["--max_prompt_length", "8"], own, grpo) == []


def test_a_flag_value_transformers_removed_gets_its_replacement(tmp_path):
    # `--optim adamw_hf`, which HF example scripts passed: TrainingArguments of transformers
    # >= 4.56.2 (TRL 1.13's floor) rejects the name; TRL108 rewrites it in Python already
    report = _upgrade_sft(
        tmp_path,
        "python sft.py --output_dir out --optim adamw_hf \\\n    --lr 1\n"
        "python sft2.py --optim='adamw_hf'\n",
    )
    assert (tmp_path / "run.sh").read_text() == (
        "python sft.py --output_dir out --optim adamw_torch \\\n    --lr 1\n"
        "python sft2.py --optim=adamw_torch\n"
    )
    [launch] = report.launches
    assert [(f.line, f.fix, f.message.split(" (")[0]) for f in launch.findings] == [
        (1, Fix.APPLIED, "`--optim adamw_hf` is `--optim adamw_torch` now"),
        (3, Fix.APPLIED, "`--optim adamw_hf` is `--optim adamw_torch` now"),
    ]
    again = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert all(r.status is not Status.CHANGED for r in again.launches)
    change = launch_flags.FlagChange("--optim", "", "gone", "TRL108", value="b", was="a")
    assert launch_flags.renamed(["--optim", "a", "--x", "--optim=a"], [change]) == [
        "--optim",
        "b",
        "--x",
        "--optim=b",
    ]
    # the script's own `optim` field (the stack-llama reward script's), whose default TRL108
    # rewrites because the script hands it to TrainingArguments: the value is gone all the same
    own = {"optim"}.__contains__
    [found] = launch_flags.drift_changes(["--optim", "adamw_hf"], own)
    assert (found.value, found.was) == ("adamw_torch", "adamw_hf")
    assert launch_flags.drift_changes(["--optim", "sgd"], own) == []


def test_a_scripts_usage_string_is_tried_with_the_new_flags_and_reported_once(tmp_path):
    """TRL's examples (and their copies) carry their launch line in a string after the imports:
    the smoke run tries it with the new spellings; its PPO flags are the rewrite's TODO, its
    transformers flags a finding of `upgrade` at that line (nothing is written into it)."""
    usage = (
        '"""\npython train.py --output_dir out --num_ppo_epochs 2 --total_episodes 100 \\\\\n'
        '    --evaluation_strategy no --stop_token eos\n"""\n'
    )
    root = tmp_path / "repo"
    root.mkdir()
    (root / "train.py").write_text(SCRIPT.replace("\nif __name__", "\n" + usage + "\nif __name__"))
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    text = (root / "train.py").read_text()
    assert "# TODO(trl-migrate TRL103): the usage in this docstring passes PPO flags" in text
    [entry] = report.entry_points
    line = text.splitlines().index('"""') + 2  # the command's first line
    assert entry.found_in == f"train.py:{line}"
    assert entry.args == ("--output_dir", "out", "--num_iterations", "2", "--eval_strategy", "no")
    assert entry.left_out == ("--total_episodes 100",)
    [launch] = report.launches
    assert launch.status is Status.UNCHANGED
    assert [(f.line, f.code, f.fix) for f in launch.findings] == [(line, "TRL108", Fix.MANUAL)]
    assert launch.findings[0].message.startswith("`--evaluation_strategy` is `--eval_strategy`")


def test_a_removed_switch_flag_becomes_the_new_flag_and_value(tmp_path):
    # `--group_by_length`, which the stack-llama SFT launch lines pass: transformers 5 moved the
    # setting to `--train_sampling_strategy group_by_length`; a false one is the default
    report = _upgrade_sft(
        tmp_path,
        "python sft.py --output_dir out --group_by_length \\\n    --lr 1\n"
        "python sft2.py --group_by_length True --include_inputs_for_metrics=false --x 1\n",
    )
    assert (tmp_path / "run.sh").read_text() == (
        "python sft.py --output_dir out --train_sampling_strategy group_by_length \\\n"
        "    --lr 1\n"
        "python sft2.py --train_sampling_strategy group_by_length --x 1\n"
    )
    [launch] = report.launches
    assert [(f.line, f.fix, f.message.split(" (")[0]) for f in launch.findings] == [
        (1, Fix.APPLIED, "`--group_by_length` is `--train_sampling_strategy group_by_length` now"),
        (
            3,
            Fix.APPLIED,
            "`--group_by_length True` is `--train_sampling_strategy group_by_length` now",
        ),
        (
            3,
            Fix.APPLIED,
            "`--include_inputs_for_metrics` is not a flag of TrainingArguments any more",
        ),
    ]
    again = api.upgrade_path(str(tmp_path), smoke=False, installed=False)
    assert all(r.status is not Status.CHANGED for r in again.launches)


def test_a_switch_flag_in_the_smoke_runs_arguments():
    none = set().__contains__
    args = ["--group_by_length", "--bf16", "--include-inputs-for-metrics=1", "--g", "0"]
    found = launch_flags.drift_changes(args, none)
    assert launch_flags.renamed(args, found) == [
        "--train_sampling_strategy",
        "group_by_length",
        "--bf16",
        "--include_for_metrics",
        "inputs",
        "--g",
        "0",
    ]
    off = ["--group_by_length", "no", "--lr", "1"]
    assert launch_flags.renamed(off, launch_flags.drift_changes(off, none)) == ["--lr", "1"]
    # the script's own flag of that name, and a script that names no TrainingArguments
    assert launch_flags.drift_changes(["--group_by_length"], {"group_by_length"}.__contains__) == []
    assert launch_flags.drift_changes(["--group_by_length"], none, "import argparse") == []
    # a value the line does not spell out: no new spelling, the reason says what to give
    [found] = launch_flags.drift_changes(["--group_by_length", "$GROUP"], none)
    assert (found.new, found.drop, found.why) == (
        "",
        False,
        "transformers 5.0 removed group_by_length: give `--train_sampling_strategy "
        "group_by_length` where it is true",
    )


@pytest.mark.parametrize(
    ("line", "after"),
    [
        ("python a.py --group_by_length --bf16", "python a.py --x v --bf16"),
        ("python a.py --group_by_length True \\", "python a.py --x v \\"),
        ("python a.py --group_by_length='true'", "python a.py --x v"),
        ("python a.py --group_by_length_x 1", "python a.py --group_by_length_x 1"),
        ("python a.py --my--group_by_length", "python a.py --my--group_by_length"),
    ],
)
def test_with_switch_rewrites_the_flag_and_a_true_value_only(line, after):
    assert launch_flags.with_switch(line, "--group_by_length", "--x", "v") == after


@pytest.mark.parametrize(
    ("reads", "kept"),
    [
        pytest.param("", False, id="the-script-never-reads-it"),
        pytest.param(
            "    print(training_args.reward_model_path)\n", True, id="the-script-reads-it"
        ),
    ],
)
def test_a_script_only_field_flag_the_script_never_reads_leaves_the_line(tmp_path, reads, kept):
    # seen in liushiliushi/SaySelf: `--reward_model_path ...` to a copy of TRL's ppo.py that
    # loads its reward model from a fixed path; PPOConfig took the flag and nothing read it, and
    # the rewritten script's parser (RLOOConfig, no reward_model_path) rejected it
    reads = "    print(training_args.sft_model_path)\n" + reads  # read: TRL103 keeps its flag
    script = SCRIPT.replace("    trainer.train()\n", "    trainer.train()\n" + reads)
    run = "python scripts/train.py --output_dir out --reward_model_path rm --sft_model_path sft\n"
    root = _repo(tmp_path, text=run)
    (root / "scripts" / "train.py").write_text(script)
    report = api.upgrade_path(str(root), smoke=False, installed=False)
    text = (root / "run.sh").read_text()
    assert ("--reward_model_path rm" in text) is kept and "--sft_model_path sft" in text
    said = [f.message for launch in report.launches for f in launch.findings]
    assert [m for m in said if m.startswith("`--reward_model_path`")] == (
        []
        if kept
        else [
            "`--reward_model_path` has no RLOOConfig flag: a PPO config field only scripts "
            "read, and this one does not read it, so it was removed"
        ]
    )
