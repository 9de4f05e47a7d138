"""`trl-migrate smoke SCRIPT` on small scripts written to fail in one way each: every failure is a
finding at the user's line, the run is offline and time-limited, and its folder is removed."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from click.testing import CliRunner  # noqa: E402

from migrate.cli import main  # noqa: E402
from migrate.reference.arguments import DATASET  # noqa: E402
from migrate.smoke import nested_projects, smoke_script  # noqa: E402


def _script(tmp_path: pathlib.Path, body: str, name: str = "train.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip())
    return str(path)


# a TODO line of the rewrite, at the top of a script whose stop is not what it warns of
TODO_LINE = "# TODO(trl-migrate TRL106): TRL 1.13 has no PPO step loop\n"


def _project_file(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    """A file of a project rooted at `tmp_path` (its pyproject.toml marks the root)."""
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    # TRL420 (a setting that fails at real scale, such as bf16 on a CPU) depends on the machine.
    return [f.code for f in result.findings if f.code != "TRL420"]


def test_a_grpo_script_with_hub_ids_trains_two_steps(tmp_path, store):
    # A model id as a string: GRPOTrainer loads it (and its reference model) through
    # create_model_from_path and the config's _name_or_path; the dataset comes from the table.
    script = _script(
        tmp_path,
        """
        from datasets import load_dataset
        from trl import GRPOConfig, GRPOTrainer

        def reward_len(completions, **kwargs):
            return [-abs(20 - len(c)) / 20 for c in completions]

        if __name__ == "__main__":
            dataset = load_dataset("trl-lib/tldr", split="train")
            args = GRPOConfig(output_dir="/abs/Qwen2-0.5B-GRPO", beta=0.04, per_device_train_batch_size=16,
                              num_generations=8, max_completion_length=256, report_to="wandb", push_to_hub=True)
            trainer = GRPOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=reward_len, args=args,
                                  train_dataset=dataset)
            trainer.train()
            trainer.push_to_hub()
            trainer.model.save_pretrained("saved", push_to_hub=True)
            print("OUTPUT_DIR", trainer.args.output_dir)
    """,
    )
    result = smoke_script(script, store=store, timeout=180)
    assert _codes(result) == ["TRL410"], result.log_tail
    assert result.exit_code == 0 and result.steps_run == 2 and len(result.losses) == 2
    out_dir = next(
        ln.split()[1] for ln in result.log_tail.splitlines() if ln.startswith("OUTPUT_DIR")
    )
    assert "trl-migrate-smoke-" in out_dir and not os.path.exists(
        out_dir
    )  # redirected, then removed


def test_a_script_that_raises_reports_the_users_line(tmp_path, store):
    script = _script(
        tmp_path,
        """
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("gpt2")
        config = {"lr": 1e-5}
        print(config["learning_rate"])
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL412"] and result.exit_code == 1
    f = result.findings[0]
    assert f.line == 5 and "KeyError" in f.message and "learning_rate" in f.message


def test_an_import_that_trl_1_13_lacks_names_what_and_where(tmp_path, store):
    script = _script(
        tmp_path,
        """
        import os
        # TODO(trl-migrate TRL101): `trl.core.LengthSampler` was removed in TRL 0.25.0
        from trl.core import LengthSampler
        from trl import PPOTrainer
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL411"] and result.findings[0].line == 3
    message = result.findings[0].message
    assert "`LengthSampler` from `trl.core`" in message and "TODO(trl-migrate TRL101)" in message


def test_a_script_that_sleeps_past_the_timeout_is_killed(tmp_path, store):
    script = _script(
        tmp_path,
        """
        import time
        time.sleep(600)
    """,
    )
    result = smoke_script(script, store=store, timeout=5)
    assert _codes(result) == ["TRL415"] and result.exit_code == 1
    assert result.seconds < 30 and "5 s timeout" in result.findings[0].message
    # The harness dumped its stack before the kill: the finding says where the script was.
    assert result.stack == "line 2 of the script (in <module>)"
    assert result.findings[0].message.endswith("; it was at line 2 of the script (in <module>)")


def test_a_timeout_in_a_file_the_rewrite_left_todos_in_names_them(tmp_path, store):
    # deb3011/rlhf_finetuning: its own loop over the dataset, left under TRL106's TODO, ran on
    # through the stand-in rows until the timeout
    script = _script(
        tmp_path,
        """
        import time
        # TODO(trl-migrate TRL106): TRL 1.13 has no PPO step loop and this one was left as it is
        for row in range(10**9):
            time.sleep(1)
    """,
    )
    result = smoke_script(script, store=store, timeout=5)
    assert _codes(result) == ["TRL415"]
    assert result.findings[0].message.endswith(
        "; it was at line 4 of the script (in <module>); the rewrite left TODOs in this file for "
        "a human: TRL106 (line 2)"
    )


@pytest.mark.parametrize(
    ("stop", "named"),
    [
        ('rows = [{"query": "hi"}]\nrows[0]["prompt"]', '"prompt"'),
        ("class M:\n    pass\nM().v_head", "`v_head`"),
    ],
)
def test_a_stop_on_what_a_todo_names_points_at_that_todo(tmp_path, store, stop, named):
    # DhanushGD/RLHF-PPO: RLOOTrainer stopped on KeyError: 'prompt', the column TRL105's TODO (on
    # the line of the dataset, not of the stop) asks for
    script = _script(
        tmp_path,
        "x = 1\n"
        '# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column (text) from `dataset`\n'
        "# TODO(trl-migrate TRL102): the value head `v_head` is gone; read the reward model\n"
        "y = 2\n" + stop + "\n",
    )
    result = smoke_script(script, store=store, timeout=60, cwd=str(tmp_path))
    code = "TRL105" if named == '"prompt"' else "TRL102"
    line = 2 if code == "TRL105" else 3
    assert result.findings[0].message.endswith(
        f"; the rewrite left a TODO(trl-migrate {code}) at line {line} that names {named}, "
        "for a human"
    ), result.findings[0].message
    # a key no TODO names: the file's TODOs are listed, with no claim
    other = _script(tmp_path, script_text(script).replace('"prompt"]', '"other"]'), "b.py")
    if code == "TRL105":
        message = smoke_script(other, store=store, timeout=60).findings[0].message
        assert message.endswith(
            "; the rewrite left TODOs in this file for a human: TRL105 (line 2), TRL102 (line 3)"
        ), message


@pytest.mark.parametrize(
    ("todo", "stop", "says"),
    [
        # tushargupta123/LLM-practice: a T5 policy, kept under TRL102's encoder-decoder TODO,
        # stopped where the trainer loads it as a causal LM, on a later cell
        (
            "TRL102): no TRL 1.13 online-RL trainer (GRPO, RLOO) takes encoder-decoder models: "
            "stay on TRL <= 1.12",
            "ValueError(\"Unrecognized configuration class <class 'T5Config'> for this kind of "
            'AutoModel: AutoModelForCausalLM.")',
            "TRL102) at line 1 that says TRL 1.13's trainers take no encoder-decoder model",
        ),
        # Taeksu-Kim/RLHF: a torch Dataset of tokenized queries, under TRL105's TODO, handed to
        # the trainer, which takes a datasets.Dataset
        (
            'TRL105): RLOOTrainer reads a "prompt" column (text or chat messages) from '
            "`train_dataset` and tokenizes it itself",
            "TypeError('`train_dataset` must be a `Dataset` or `IterableDataset`, got "
            "`PPO_dataset`.')",
            'TRL105) at line 1 that says RLOO/GRPO read a dataset of "prompt" rows',
        ),
    ],
)
def test_a_stop_on_a_cause_a_todo_states_points_at_that_todo(tmp_path, store, todo, stop, says):
    script = _script(tmp_path, f"# TODO(trl-migrate {todo}\nmodel = 't5'\nraise {stop}\n")
    result = smoke_script(script, store=store, timeout=60, cwd=str(tmp_path))
    assert result.findings[0].message.endswith(
        f"; the rewrite left a TODO(trl-migrate {says}, for a human"
    ), result.findings[0].message


def test_a_name_the_script_never_binds_is_the_repositorys_own_code(tmp_path, store):
    # williamfowler/CS138_RLAIF_PPO_vs_DPO: `tqdm(...)` with no import of tqdm, in a file with
    # TODOs, which are not why it stopped
    body = (
        "# TODO(trl-migrate TRL106): TRL 1.13 has no PPO step loop\n"
        "def steps(n):\n"
        "    return tqdm(range(n))\n"
        "steps(2)\n"
    )
    script = _script(tmp_path, body)
    message = smoke_script(script, store=store, timeout=60).findings[0].message
    assert message == (
        "the script raised NameError: name 'tqdm' is not defined; the script imports or "
        "defines `tqdm` nowhere: the repository's own code, not the rewrite"
    )
    # the original bound it and the rewritten file does not: the rewrite's doing, said so
    before = {os.path.abspath(script): b"from tqdm import tqdm\n" + body.encode()}
    message = (
        smoke_script(
            script,
            store=store,
            timeout=60,
            rewritten=frozenset(before),
            before=before,
        )
        .findings[0]
        .message
    )
    assert message == (
        "the script raised NameError: name 'tqdm' is not defined; the original script binds "
        "`tqdm` and the rewritten one does not: the rewrite dropped it, a bug of trl-migrate "
        "(please report it)"
    )
    # a `*` import may bind anything: the file's TODOs are listed, with no claim
    other = _script(tmp_path, "from os.path import *\n" + body, "star.py")
    message = smoke_script(other, store=store, timeout=60).findings[0].message
    assert message.endswith("; the rewrite left TODOs in this file for a human: TRL106 (line 2)")


def test_a_stop_in_a_project_file_on_what_its_todo_names_points_there(tmp_path, store):
    # ukhan1219/pychess: the KeyError came from the repo's own data module
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "data.py").write_text(
        '# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column (text)\n'
        "def first(rows):\n"
        "    return rows[0]['prompt']\n"
    )
    script = _script(tmp_path, "import data\ndata.first([{'query': 'hi'}])\n")
    result = smoke_script(script, store=store, timeout=60)
    assert result.findings[0].message.endswith(
        "; the rewrite left a TODO(trl-migrate TRL105) at "
        f'{result.shown(str(tmp_path / "data.py"))}:1 that names "prompt", for a human'
    ), result.findings[0].message


def script_text(path: str) -> str:
    return pathlib.Path(path).read_text()


@pytest.mark.parametrize(
    "call",
    [
        'urllib.request.urlopen("https://huggingface.co/api/models", timeout=5)',
        'huggingface_hub.hf_hub_download("gpt2", "config.json")',
    ],
    ids=["urllib", "hf_hub_download"],
)
def test_a_script_that_tries_the_network_gets_the_offline_error(tmp_path, store, call):
    script = _script(
        tmp_path,
        f"""
        import urllib.request
        import huggingface_hub

        {call}
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL416"], result.findings
    assert result.findings[0].line == 4 and "offline" in result.findings[0].message


def test_a_scripts_own_pip_install_finds_no_index_and_changes_nothing(tmp_path, store):
    """SarbasishChowdhury2002/MedLLM runs `pip install ...` in its `except ImportError:`: in a
    smoke run that subprocess must not reach an index (it once replaced this machine's torch)."""
    script = _script(
        tmp_path,
        """
        import subprocess, sys
        rc = subprocess.call([sys.executable, "-m", "pip", "install", "--no-deps", "six==1.10.0"])
        print("PIP_RC", rc)
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"]  # it ran to the end, trained nothing
    [rc] = [ln.split()[1] for ln in result.log_tail.splitlines() if ln.startswith("PIP_RC")]
    assert rc != "0" and "six==1.10.0" in result.log_tail
    import contextlib
    import importlib.metadata

    with contextlib.suppress(importlib.metadata.PackageNotFoundError):  # not installed at all
        assert importlib.metadata.version("six") != "1.10.0"


def test_the_temporary_folder_is_removed_and_outputs_stay_in_it(tmp_path, store):
    script = _script(
        tmp_path,
        """
        import os, tempfile
        open("checkpoint.bin", "w").write("x")
        print("CWD", os.getcwd(), tempfile.gettempdir())
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"]  # it ran to the end, but trained nothing
    cwd, tmp = next(ln.split()[1:] for ln in result.log_tail.splitlines() if ln.startswith("CWD"))
    assert "trl-migrate-smoke-" in cwd and tmp.startswith(os.path.dirname(cwd))
    assert not os.path.exists(cwd) and not (tmp_path / "checkpoint.bin").exists()


def test_a_non_finite_loss_is_reported(tmp_path, store):
    script = _script(
        tmp_path,
        """
        from datasets import Dataset
        from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

        class NanTrainer(Trainer):
            def compute_loss(self, model, inputs, **kwargs):
                return model(**inputs).loss * float("nan")

        ids = [[5, 6, 7, 8, 9, 10]] * 8
        data = Dataset.from_dict({"input_ids": ids, "labels": ids})
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        NanTrainer(model=model, args=TrainingArguments(output_dir="out", max_steps=100), train_dataset=data).train()
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL414"] and "nan" in result.findings[0].message
    assert result.steps_run == 2  # max_steps capped to --steps


def test_script_arguments_go_after_a_double_dash(tmp_path, store):
    script = _script(
        tmp_path,
        """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--dataset_name", required=True)
        print("DATASET", parser.parse_args().dataset_name)
    """,
    )
    # Not given: filled with a name the stand-in load_dataset serves, and said so.
    missing = smoke_script(script, store=store, timeout=120)
    assert _codes(missing) == ["TRL413"] and missing.filled == ["--dataset_name", DATASET]
    assert f"DATASET {DATASET}" in missing.log_tail
    assert missing.command == f"python {script} --dataset_name {DATASET}"
    runner = CliRunner()
    run = runner.invoke(
        main, ["smoke", script, "--format", "json", "--", "--dataset_name", "trl-lib/tldr"]
    )
    doc = json.loads(run.output)
    assert (
        run.exit_code == 1 and doc["files"][0]["findings"][0]["code"] == "TRL413"
    )  # ran; trained nothing
    assert (
        doc["smoke"][0]["args"] == ["--dataset_name", "trl-lib/tldr"]
        and doc["summary"]["exit_code"] == 1
    )


def test_a_repos_own_migrate_and_compat_modules_are_the_ones_its_script_imports(tmp_path, store):
    # The harness is our `migrate` package; a repo with its own `migrate.py` / `compat/` must
    # still import those, not ours, while the stand-ins keep working.
    (tmp_path / "migrate.py").write_text("WHO = 'the repo'\n")
    (tmp_path / "compat").mkdir()
    (tmp_path / "compat" / "__init__.py").write_text("def check():\n    return 'repo compat'\n")
    script = _script(
        tmp_path,
        """
        import compat
        import migrate
        from transformers import AutoTokenizer

        assert migrate.WHO == "the repo", migrate.__file__
        assert compat.check() == "repo compat", compat.__file__
        tok = AutoTokenizer.from_pretrained("gpt2")
        print("TOKENS", len(tok("a b c")["input_ids"]))
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert "TOKENS" in result.log_tail and "AssertionError" not in result.log_tail, result.log_tail
    assert _codes(result) == ["TRL413"]  # it ran to the end; it just trains nothing


def test_missing_non_training_modules_get_reported_stand_ins(tmp_path, store):
    # PIL and loguru are not installed here; the script only uses them around training.
    script = _script(
        tmp_path,
        """
        from PIL import Image
        from loguru import logger
        import matplotlib.pyplot as plt
        from datasets import load_dataset
        from trl import GRPOConfig, GRPOTrainer

        def reward_len(completions, **kwargs):
            return [-abs(20 - len(c)) / 20 for c in completions]

        if __name__ == "__main__":
            logger.info("starting")
            args = GRPOConfig(output_dir="out", per_device_train_batch_size=2, num_generations=2)
            trainer = GRPOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=reward_len,
                                  args=args, train_dataset=load_dataset("trl-lib/tldr", split="train"))
            trainer.train()
            plt.plot([1, 2]); Image.new("RGB", (2, 2))
    """,
    )
    import importlib.util

    missing = [m for m in ("PIL", "loguru", "matplotlib") if importlib.util.find_spec(m) is None]
    result = smoke_script(script, store=store, timeout=180)
    assert _codes(result) == ["TRL410"], result.log_tail
    assert result.stand_ins == sorted(missing)
    if missing:
        assert f"with stand-ins for: {', '.join(sorted(missing))}" in result.findings[0].message
        off = smoke_script(script, store=store, timeout=180, stand_ins=False)
        assert _codes(off) == ["TRL411"]  # the import fails, as it would


def test_an_argparse_error_that_filling_cannot_fix_exits_with_its_last_lines(tmp_path, store):
    script = _script(
        tmp_path,
        """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--steps", type=int)
        parser.parse_args()
    """,
    )
    result = smoke_script(script, ["--steps", "many"], store=store, timeout=120)
    assert _codes(result) == ["TRL417"] and result.exit_code == 1
    message = result.findings[0].message
    assert message.startswith("the script exited with status 2 before training; its last lines: ")
    assert "error: argument --steps: invalid int value: 'many'" in message


def test_a_console_script_runs_its_function_with_the_launch_lines_arguments(tmp_path, store):
    # `rlaif-train --config c.yml`: the [project.scripts] function runs as its launcher would
    # call it, the package importable from src/ without installing it; its return is the status.
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n\n[project.scripts]\npkg-train = "pkg.cli:train_main"\n'
    )
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    cli = _script(
        tmp_path / "src" / "pkg",
        """
        import sys
        def train_main():
            print("ARGS", sys.argv[1:], __name__)
            return 3
    """,
        name="cli.py",
    )
    from migrate.smoke.entry_points import find

    (tmp_path / "README.md").write_text("```\npkg-train --config c.yml\n```\n")
    [entry], _ = find(str(tmp_path), {}, [cli])
    result = smoke_script(
        cli, list(entry.args), store=store, timeout=120, module=entry.module, entry=entry
    )
    assert "ARGS ['--config', 'c.yml'] pkg.cli" in result.log_tail, result.log_tail
    assert _codes(result) == ["TRL417"]
    assert result.findings[0].message.startswith("the script exited with status 3 before training")
    assert result.command == "pkg-train --config c.yml"


def test_settings_that_fail_at_real_scale_are_reported_after_the_capped_pass(tmp_path, store):
    # 3 prompts per device cannot hold whole groups of 2 generations: RLOOConfig rejects it at
    # the script's own values; the smoke caps (2 and 2) would hide that without TRL420.
    script = _script(
        tmp_path,
        """
        from datasets import load_dataset
        from trl import RLOOConfig, RLOOTrainer

        def reward_len(completions, **kwargs):
            return [-abs(20 - len(c)) / 20 for c in completions]

        args = RLOOConfig(output_dir="out", per_device_train_batch_size=3, num_generations=2,
                          bf16=False, use_cpu=True)
        trainer = RLOOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=reward_len, args=args,
                              train_dataset=load_dataset("trl-lib/tldr", split="train"))
        trainer.train()
    """,
    )
    result = smoke_script(script, store=store, timeout=180)
    assert [f.code for f in result.findings] == ["TRL410", "TRL420"], result.log_tail
    assert result.outcome == "passed" and result.exit_code == 0
    assert result.at_scale == [
        "RLOOConfig at the script's own settings: ValueError: generation_batch_size (3) must be "
        "divisible by num_generations (2)."
    ]
    assert {"config": "RLOOConfig", "field": "per_device_train_batch_size", "was": 3, "now": 2} in (
        result.overrides
    )
    assert {"config": "RLOOConfig", "field": "max_steps", "was": -1, "now": 2} in result.overrides


def test_a_crash_in_a_file_the_rewrite_did_not_touch_says_so(tmp_path, store):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "rewards.py").write_text("def score(x):\n    return 1 / 0\n")
    script = _script(tmp_path, "from rewards import score\nscore(1)\n")
    result = smoke_script(script, store=store, timeout=120, rewritten=frozenset({script}))
    assert _codes(result) == ["TRL412"] and result.findings[0].line == 2
    assert result.findings[0].message.endswith(
        f"; it came from {result.shown(str(tmp_path / 'rewards.py'))}:2, a file the rewrite did "
        "not touch"
    )


def test_the_project_root_and_src_are_importable_and_the_script_runs_from_its_cwd(tmp_path, store):
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "src" / "mypkg").mkdir(parents=True)
    (tmp_path / "src" / "mypkg" / "__init__.py").write_text("NAME = 'from src'\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "prompts.txt").write_text("hello\n")
    (tmp_path / "scripts").mkdir()
    script = _script(
        tmp_path / "scripts",
        """
        import os, mypkg
        print("PKG", mypkg.NAME)
        print("DATA", open("data/prompts.txt").read().strip())
        open("data/written.txt", "w").write("x")
    """,
    )
    result = smoke_script(script, store=store, timeout=120, cwd=str(tmp_path))
    assert _codes(result) == ["TRL413"], result.log_tail
    assert "PKG from src" in result.log_tail and "DATA hello" in result.log_tail
    assert result.cwd == "." and not (tmp_path / "data" / "written.txt").exists()


def test_a_nested_project_s_package_imports_as_pip_install_e_made_it(tmp_path, store):
    # PrasannS/rlhf-length-biases: `rlhfutils/setup.py` holds the `rlhfutils` package, which the
    # scripts import after `pip install -e rlhfutils`; the root's `rlhfutils/` folder alone is a
    # namespace package without `rl_utils`
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "rlhfutils" / "rlhfutils").mkdir(parents=True)
    (tmp_path / "rlhfutils" / "setup.py").write_text("")
    (tmp_path / "rlhfutils" / "rlhfutils" / "__init__.py").write_text("")
    (tmp_path / "rlhfutils" / "rlhfutils" / "rl_utils.py").write_text(
        "import loguru  # a module for no training, stood in for where it is missing\n"
        "NAME = 'nested'\n"
    )
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "setup.py").write_text("")
    script = _script(tmp_path, "from rlhfutils.rl_utils import NAME\nprint('PKG', NAME)\n")
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"], result.log_tail
    assert "PKG nested" in result.log_tail
    if importlib.util.find_spec("loguru") is None:
        assert result.stand_ins == ["loguru"]
    assert nested_projects(str(tmp_path)) == ("rlhfutils",)


def test_a_script_that_insists_on_cuda_is_said_to_need_a_device(tmp_path, store):
    # minsik-hong/rewardedsoups: `assert torch.cuda.is_available()` in a module the script
    # imports; tddpytester/pytester: `.cuda()` ("Torch not compiled with CUDA enabled")
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    (tmp_path / "tasks.py").write_text("import torch\nassert torch.cuda.is_available()\n")
    script = _script(tmp_path, "import tasks\n")
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL412"], result.log_tail
    assert "; the script needs a CUDA device, which this machine lacks" in (
        result.findings[0].message
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "tasks.py").write_text("assert 1 == 2\n")  # an assert of its own: no such words
    result = smoke_script(_script(plain, "import tasks\n"), store=store, timeout=120)
    assert "CUDA" not in result.findings[0].message


def test_an_import_error_the_script_catches_is_traced_to_the_rewrite_s_todo(tmp_path, store):
    # stephendongg/rlhf-clinical-redteaming: its runner catches every error, logs it and exits
    # 1; the error was the import of `trl.PPOConfig`, which the rewrite left under a TODO
    lib = tmp_path / "methods.py"
    lib.write_text(
        "def run():\n"
        "    # TODO(trl-migrate TRL103): `trl.PPOConfig` does not exist in TRL 1.13; finish ...\n"
        "    from trl import PPOConfig\n"
    )
    script = _script(
        tmp_path,
        """
        import sys, methods
        try:
            methods.run()
        except Exception as e:
            print("run failed:", repr(e))
            sys.exit(1)
        """,
    )
    result = smoke_script(script, store=store, timeout=120, rewritten=frozenset({str(lib)}))
    [found] = result.findings
    assert found.message.startswith("the script exited with status 1 before training"), found
    assert found.message.endswith(
        "; it caught an import error of TRL 1.13 and stopped (cannot import name 'PPOConfig' "
        f"from 'trl'); the rewrite left a TODO(trl-migrate TRL103) at {result.shown(str(lib))}:2 "
        "for a human"
    )


def test_data_files_not_in_the_repo_get_stand_in_rows_and_say_so(tmp_path, store):
    script = _script(
        tmp_path,
        """
        from datasets import load_dataset, load_from_disk
        a = load_dataset("json", data_files="data/train.json", split="train")
        b = load_from_disk("data/prepared")
        print("ROWS", len(a) > 0, len(b["train"]) > 0)
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"] and "ROWS True True" in result.log_tail
    assert result.stand_ins == [
        "data data/train.json (missing or empty in the repo)",
        "data data/prepared (missing or empty in the repo)",
    ]


def test_data_files_pandas_reads_that_are_not_in_the_repo_get_stand_in_rows(tmp_path, store):
    # abhaykrishna2010's notebooks read `pd.read_csv("/content/RLHF_csv.csv")` (a Colab upload),
    # jakq277's `pd.read_csv(data_path, index_col=0)`: stand-in rows, said as load_dataset's are
    (tmp_path / "real.csv").write_text("prompt,score\nhello,1\nworld,2\n")
    (tmp_path / "empty.jsonl").write_text("\n")
    script = _script(
        tmp_path,
        """
        import pandas as pd
        from pandas import read_json
        a = pd.read_csv("/content/RLHF_csv.csv", index_col=0)
        b = read_json("data/train.jsonl", lines=True)
        c = pd.read_csv("real.csv")
        d = pd.read_csv("gone.csv", usecols=["question", "answer"], nrows=5)
        e = pd.read_json("empty.jsonl", lines=True)
        print("ROWS", len(a) > 0, "chosen" in a.columns, len(b) > 0, len(c), list(d.columns), len(d), len(e) > 0)
        print("FIRST", a["chosen"][0].startswith(" "))
        # a sample sized for the real data takes the stand-in rows there are; real frames keep
        # pandas' checks
        print("SAMPLE", len(a.sample(100_000, random_state=42)) == len(a), len(a[a.index < 10].sample(50)))
        try:
            c.sample(3)
        except ValueError:
            print("REAL FRAME CHECKED")
        pd.read_csv("gone.csv", chunksize=2)
    """,
    )
    result = smoke_script(script, store=store, timeout=120, cwd=str(tmp_path))
    assert "ROWS True True True 2 ['question', 'answer'] 5 True" in result.log_tail, result.log_tail
    assert "FIRST True" in result.log_tail
    assert "SAMPLE True 10" in result.log_tail and "REAL FRAME CHECKED" in result.log_tail
    # a reader asked for chunks keeps pandas' own error
    assert result.findings[0].message.startswith("the script raised FileNotFoundError")
    assert result.stand_ins == [
        "data /content/RLHF_csv.csv (missing or empty in the repo)",
        "data data/train.jsonl (missing or empty in the repo)",
        "data gone.csv (missing or empty in the repo)",
        "data empty.jsonl (missing or empty in the repo)",
    ]


@pytest.mark.parametrize("placeholder", ["", "\n", " \n\n"])
def test_an_empty_data_file_gets_stand_in_rows_too(tmp_path, store, placeholder):
    # deb3011/rlhf_finetuning commits its data/sample.json as a lone newline.
    (tmp_path / "sample.json").write_text(placeholder)
    script = _script(
        tmp_path,
        """
        from datasets import load_dataset
        print("ROWS", len(load_dataset("json", data_files="sample.json", split="train")) > 0)
    """,
    )
    result = smoke_script(script, store=store, timeout=120, cwd=str(tmp_path))
    assert "ROWS True" in result.log_tail and result.stand_ins == [
        "data sample.json (missing or empty in the repo)"
    ]
    # A folder globbed for data files that holds none: `data_files={}`.
    (tmp_path / "sample.json").unlink()
    script = _script(
        tmp_path,
        """
        import glob
        from datasets import load_dataset
        files = {"train": glob.glob("data/finetune/*.json")} if glob.glob("data/finetune/*.json") else {}
        print("ROWS", len(load_dataset("json", data_files=files)["train"]) > 0)
    """,
    )
    result = smoke_script(script, store=store, timeout=120, cwd=str(tmp_path))
    assert "ROWS True" in result.log_tail, result.log_tail


def test_a_present_data_file_is_read_for_real(tmp_path, store):
    (tmp_path / "train.jsonl").write_text('{"prompt": "a"}\n{"prompt": "b"}\n')
    script = _script(
        tmp_path,
        """
        from datasets import load_dataset
        print("ROWS", len(load_dataset("json", data_files="train.jsonl", split="train")))
    """,
    )
    result = smoke_script(script, store=store, timeout=120, cwd=str(tmp_path))
    assert "ROWS 2" in result.log_tail and result.stand_ins == []


def test_a_missing_module_imported_by_a_project_helper_gets_a_stand_in(tmp_path, store):
    import importlib.util

    if importlib.util.find_spec("sklearn") is not None:
        pytest.skip("sklearn is installed here")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("from sklearn.metrics import accuracy_score\nOK = 1\n")
    script = _script(tmp_path, "import helpers\nprint('OK', helpers.OK)\n")
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"] and "OK 1" in result.log_tail
    assert result.stand_ins == ["sklearn"]


def test_a_name_a_project_file_never_binds_is_the_repositorys_own_code(tmp_path, store):
    # Kwaai-AI-Lab/kwaai-alignment: its dataset.py reads an `args` it never defines
    helper = _project_file(tmp_path, "dataset.py", "def size():\n    return args.size\n")
    script = _script(tmp_path, TODO_LINE + "import dataset\ndataset.size()\n")
    result = smoke_script(script, store=store, timeout=60, rewritten=frozenset(), before={})
    shown = result.shown(str(helper))
    assert result.findings[0].message.startswith(
        "the script raised NameError: name 'args' is not defined; the file "
        f"{shown} imports or defines `args` nowhere: the repository's own code, not the rewrite"
    ), result.findings[0].message
    # rewritten, what it held before not known: no claim
    result = smoke_script(
        script, store=store, timeout=60, rewritten=frozenset({str(helper)}), before={}
    )
    assert "imports or defines" not in result.findings[0].message
    # its names come from `from modules import *` of a project module that never binds `args`
    # either (Kwaai-AI-Lab's dataset.py); one that binds it, or a module not of the project
    # (`from torch import *`), may bind anything: no claim
    modules = _project_file(tmp_path, "modules.py", "import os\nX = 1\n")
    helper.write_text("from modules import *\n" + helper.read_text())
    before = {str(modules): b"import os\nX = 1\n"}
    result = smoke_script(
        script, store=store, timeout=60, rewritten=frozenset({str(modules)}), before=before
    )
    assert f"the file {shown} imports or defines `args` nowhere" in result.findings[0].message
    for held in (
        "import os\nargs = None\ndef later():\n    global args\n",
        "from torch import *\n",
    ):
        modules.write_text(held)
        result = smoke_script(script, store=store, timeout=60, rewritten=frozenset(), before={})
        assert "imports or defines" not in result.findings[0].message, held
    # the rewrite dropped it from the star-imported module: said to be ours
    modules.write_text("import os\n")
    before = {str(modules): b"import os\nargs = None\n"}
    result = smoke_script(
        script, store=store, timeout=60, rewritten=frozenset({str(modules)}), before=before
    )
    assert "the original file" in result.findings[0].message, result.findings[0].message


def test_a_command_line_read_by_hand_and_not_given_says_how_to_pass_it(tmp_path, store):
    # rmorain/sentiment-tuning: `section = sys.argv[1]` picks a section of config.ini
    script = _script(
        tmp_path,
        "import sys\n# TODO(trl-migrate TRL103): PPOConfig is gone\nsection = sys.argv[1]\n",
    )
    result = smoke_script(script, store=store, timeout=60)
    assert result.findings[0].message == (
        "the script raised IndexError: list index out of range; the script reads its command "
        "line by hand (`sys.argv[1]`), and the run gave it 0 arguments: pass them after `--` "
        "(or `--from-launcher` the script that runs it)"
    )
    assert _codes(smoke_script(script, ["base"], store=store, timeout=60)) == ["TRL413"]


def test_a_stop_before_any_changed_line_ran_is_not_the_rewrites(tmp_path, store):
    # CodeX-Addy/Fine-Tuning-LLM: a course notebook asserts, in its first cell, that it runs on
    # a SageMaker instance; the rewrite changed only lines below it
    old = (
        "import os\nassert os.environ.get('TRLM_NO_SUCH'), 'instance'\nfrom trl import PPOConfig\n"
    )
    script = _script(tmp_path, old.replace("PPOConfig", "RLOOConfig"))
    before = {os.path.abspath(script): old.encode()}
    result = smoke_script(
        script, store=store, timeout=60, rewritten=frozenset(before), before=before
    )
    assert result.findings[0].message == (
        "the script raised AssertionError: instance; it stopped before any line the rewrite "
        "changed had run (the first is line 3): the rewrite is not why it stopped"
    )
    # a loop whose body holds a changed line may have run it on an earlier turn: no claim
    old = "for i in range(2):\n    assert not i, 'second turn'\n    x = 'PPOConfig'\n"
    loop = _script(tmp_path, old.replace("PPOConfig", "RLOOConfig"), "loop.py")
    before = {os.path.abspath(loop): old.encode()}
    result = smoke_script(loop, store=store, timeout=60, rewritten=frozenset(before), before=before)
    assert result.findings[0].message == "the script raised AssertionError: second turn"


def test_an_unset_environment_variable_says_to_set_it(tmp_path, store):
    # sayands/noisy-lms: `workspace_dir = os.environ['NOISY_LM_DIR']`
    script = _script(
        tmp_path,
        "import os\n# TODO(trl-migrate TRL103): PPOConfig is gone\n"
        "where = os.environ['TRLM_UNSET_DIR']\n",
    )
    assert smoke_script(script, store=store, timeout=60).findings[0].message == (
        "the script raised KeyError: 'TRLM_UNSET_DIR'; the script reads the environment "
        "variable `TRLM_UNSET_DIR`, which is not set here: set it for the run "
        "(`TRLM_UNSET_DIR=... trl-migrate smoke ...`)"
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ('[{"instruction": "hi", "output": "yo"}]\n', '[{"conversations": ["x"]}]\n'),
        ('{"instruction": "hi", "output": "yo"}\n', '{"conversations": ["x"]}\n'),
    ],
    ids=["json-arrays", "json-lines"],
)
def test_data_files_that_disagree_on_columns_are_the_repositorys_own_data(
    tmp_path, store, first, second
):
    # Jerry-XDL/AIDoctor loads instruction/output rows and conversation rows as one table
    (tmp_path / "a.json").write_text(first)
    (tmp_path / "b.json").write_text(second)
    old = (
        TODO_LINE + "from datasets import load_dataset\n"
        "raw = load_dataset('json', data_files=['a.json', 'b.json'])\n"
    )
    script = _script(tmp_path, old)
    before = {os.path.abspath(script): old.encode()}
    result = smoke_script(
        script, store=store, timeout=60, cwd=str(tmp_path), rewritten=frozenset(), before=before
    )
    assert result.findings[0].message.endswith(
        "; the repository's data files do not share their columns, so datasets cannot read them "
        "as one table (the line that loads them is the original's): the repository's own data, "
        "not the rewrite"
    ), result.findings[0].message


def test_pandas_3_string_columns_are_the_environment_not_the_rewrite(tmp_path, store):
    # NhatHoang2002/CZ4042-minRLHF: `concatenate_datasets` of `from_pandas` rows and `map`'s
    script = _script(
        tmp_path,
        TODO_LINE + "import pandas as pd\n"
        "from datasets import Dataset, concatenate_datasets\n"
        "a = Dataset.from_pandas(pd.DataFrame({'x': ['a']}))\n"
        "b = Dataset.from_dict({'x': ['b']}).map(lambda r: {'x': r['x'] + '!'})\n"
        "concatenate_datasets([a, b])\n",
    )
    import pandas

    if int(pandas.__version__.split(".")[0]) < 3:
        pytest.skip("pandas 2 here: from_pandas gives string columns")
    message = smoke_script(script, store=store, timeout=60).findings[0].message
    assert message.endswith(
        "; pandas 3 (what a fresh install brings) makes `Dataset.from_pandas` text columns "
        "`large_string`, which datasets cannot align with the `string` columns other datasets "
        "have: the repository's code was written for pandas 2 (`pip install 'pandas<3'` runs it "
        "as written, or cast the columns): not the rewrite"
    ), message


def test_an_attribute_the_repositorys_own_module_lacks_is_its_own_code(tmp_path, store):
    # kmc0207/ppo-prompt: `utils.create_balanced_subset_and_validation(...)`, which its utils.py
    # (untouched by the rewrite) does not define
    helper = _project_file(tmp_path, "utils.py", "def other():\n    return 1\n")
    script = _script(tmp_path, TODO_LINE + "import utils\nutils.make_split([])\n")
    result = smoke_script(script, store=store, timeout=60, rewritten=frozenset(), before={})
    assert result.findings[0].message == (
        "the script raised AttributeError: module 'utils' has no attribute 'make_split'; `utils` "
        f"is the repository's own ({result.shown(str(helper))}), a file the rewrite did not "
        "touch, and has no `make_split`: the repository's own code, not the rewrite"
    )
    # rewritten by trl-migrate: what it held before says whose it is (kmc0207's utils.py
    # imports trl); not known, no claim (the file's TODOs are listed)
    rewritten = frozenset({str(helper)})
    for before, said in [
        (
            b"from trl import PPOConfig\ndef other():\n    return 1\n",
            f"; `utils` is the repository's own ({result.shown(str(helper))}), and had no "
            "`make_split` before the rewrite either: the repository's own code, not the rewrite",
        ),
        (
            b"def make_split(rows):\n    return rows\n",
            f"; `utils` ({result.shown(str(helper))}) had `make_split` before the rewrite and has "
            "it no more: the rewrite dropped it, a bug of trl-migrate (please report it)",
        ),
        (None, "; the rewrite left TODOs in this file for a human: TRL106 (line 1)"),
    ]:
        known = {str(helper): before} if before is not None else {}
        result = smoke_script(script, store=store, timeout=60, rewritten=rewritten, before=known)
        assert result.findings[0].message.endswith(said), result.findings[0].message


@pytest.mark.parametrize(
    ("files", "body", "said"),
    [
        # oladri-renuka/llm-post-training-pipeline: omegaconf, not installed, not stood in for
        (
            {},
            "import trlmigrate_absent_pkg\n",
            "ModuleNotFoundError: No module named 'trlmigrate_absent_pkg'; "
            "`trlmigrate_absent_pkg` is not installed here and is not part of the training "
            "stack: install it (the smoke run stands in only for the modules docs/smoke.md "
            "lists, and only where the project's own files import them)",
        ),
        # anon-submission-code/task-specific-prompt-rewriter: `from utils import ...` in a
        # helper that expects its own folder on sys.path
        (
            {"helper_files/utils.py": "X = 1\n"},
            "from utils import X\n",
            "cannot import `X` from `utils`: No module named 'utils'; `utils` is a module of the "
            "repository "
            "(helper_files/utils.py) that does not import from where the script runs: the "
            "repository's own code, not the rewrite",
        ),
        # aiintelligentsystems/askhistorians-knowledge-filling: a submodule its package lacks
        (
            {"redditqa/__init__.py": ""},
            "from redditqa.dataset import load\n",
            "cannot import `load` from `redditqa.dataset`: No module named 'redditqa.dataset'; "
            "`redditqa` is the repository's own package (redditqa/) and has no "
            "`redditqa.dataset`: the repository's own code, not the rewrite",
        ),
        # szalouk/rlhf-bias: a copy of TRL 0.x at the repository's root
        (
            {"trl/__init__.py": "from transformers import top_k_top_p_filtering\n"},
            "import trl\n",
            "cannot import `top_k_top_p_filtering` from `transformers`: cannot import name "
            "'top_k_top_p_filtering' from 'transformers'; the repository holds its own copy of "
            "`trl` (trl/ at its root), which the script imports in place of the installed one: "
            "remove that copy to run on TRL 1.13: the repository's own code, not the rewrite",
        ),
    ],
    ids=["not-installed", "repo-layout", "repo-package", "vendored-trl"],
)
def test_an_import_neither_trl_nor_the_rewrite_broke_says_whose_it_is(
    tmp_path, store, files, body, said
):
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        _project_file(tmp_path, name, text)
    script = _script(tmp_path, TODO_LINE + body)
    result = smoke_script(script, store=store, timeout=120, rewritten=frozenset(), before={})
    [stop] = result.findings
    assert stop.code == "TRL411"
    assert stop.message == f"import error on TRL 1.13: {said}", stop.message


def test_a_name_the_repositorys_own_module_lacks_is_its_own_code(tmp_path, store):
    # aiintelligentsystems/askhistorians-knowledge-filling: `load_reddit_dataset` is not in the
    # repo's redditqa/data.py, which the rewrite did not touch
    _project_file(tmp_path, "redditqa/__init__.py", "")
    data = _project_file(tmp_path, "redditqa/data.py", "def load():\n    return []\n")
    script = _script(tmp_path, TODO_LINE + "from redditqa.data import load_reddit_dataset\n")
    result = smoke_script(script, store=store, timeout=120, rewritten=frozenset(), before={})
    shown = result.shown(str(data))
    assert result.findings[0].message == (
        "import error on TRL 1.13: cannot import `load_reddit_dataset` from `redditqa.data`: "
        "cannot import name 'load_reddit_dataset' from 'redditqa.data'; `redditqa.data` is the "
        f"repository's own ({shown}), a file the rewrite did not touch, and defines no "
        "`load_reddit_dataset`: the repository's own code, not the rewrite"
    )
    # the rewrite touched that file: the TODO over the import is named instead
    rewritten = frozenset({str(data)})
    result = smoke_script(script, store=store, timeout=120, rewritten=rewritten, before={})
    assert result.findings[0].message.endswith(
        "; the rewrite left a TODO(trl-migrate TRL106) here for a human"
    )


def test_writes_to_a_hosted_notebooks_folder_stay_in_the_runs_folder(tmp_path, store):
    # abhaykrishna2010's notebooks pickle their generations to /content/ (Colab) after training
    name = f"trl-migrate-test-{os.getpid()}-{tmp_path.name}"
    script = _script(
        tmp_path,
        f"""
        import os, pathlib, pickle
        os.makedirs("/content/runs/{name}", exist_ok=True)
        with open("/content/runs/{name}/out.pkl", "wb") as fh:
            pickle.dump([1, 2], fh)
        with open("/content/runs/{name}/out.pkl", "rb") as fh:
            print("READ", pickle.load(fh))
        pathlib.Path("/kaggle/working/{name}.txt").write_text("done")
        print("BACK", pathlib.Path("/kaggle/working/{name}.txt").read_text())
        # DhanushGD/RLHF-PPO saves to Google Drive; safetensors and tokenizers write outside Python
        from transformers import AutoModelForCausalLM, AutoTokenizer
        saved = "/content/drive/MyDrive/{name}"
        os.makedirs(saved, exist_ok=True)
        AutoModelForCausalLM.from_pretrained("gpt2").save_pretrained(saved)
        AutoTokenizer.from_pretrained("gpt2").save_pretrained(saved)
        print("FILES", "model.safetensors" in os.listdir(saved), os.path.isfile(saved + "/tokenizer.json"))
        print("HERE", os.listdir() == os.listdir("."))
        AutoModelForCausalLM.from_pretrained(saved)
        AutoTokenizer.from_pretrained(saved)
        print("RELOADED")
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"], result.log_tail
    assert "READ [1, 2]" in result.log_tail and "BACK done" in result.log_tail
    assert "FILES True True" in result.log_tail and "RELOADED" in result.log_tail
    assert "HERE True" in result.log_tail
    assert not os.path.exists(f"/content/runs/{name}")
    assert not os.path.exists(f"/kaggle/working/{name}.txt")
    assert [(o["field"], o["was"]) for o in result.overrides] == [
        ("folder", "/content"),
        ("folder", "/kaggle/working"),
    ]
    assert all(o["now"].endswith(o["was"]) for o in result.overrides)


def test_a_line_that_fails_on_a_stand_ins_answer_says_to_install_the_module(tmp_path, store):
    # jakq277/STATS_FINAL: `train, test = train_test_split(data, ...)` under the stand-in for
    # sklearn, which gives nothing to unpack
    import importlib.util

    if importlib.util.find_spec("sklearn") is not None:
        pytest.skip("sklearn is installed here")
    script = _script(
        tmp_path,
        TODO_LINE + "from sklearn.model_selection import train_test_split as split\n"
        "train, test = split([1, 2, 3], test_size=0.2)\n",
    )
    result = smoke_script(script, store=store, timeout=60)
    assert result.findings[0].message == (
        "the script raised ValueError: not enough values to unpack (expected 2, got 0); `split` "
        "comes from the stand-in for `sklearn` (not installed here), which cannot give what the "
        "real module would: install `sklearn` to run past this line"
    )


def test_a_generator_dataset_that_reads_files_still_hashes(tmp_path, store):
    # mnuhn/oppositext: `Dataset.from_generator(gen)`, whose `open` datasets hashes with dill;
    # the hosted-folder `open` stands in its place without a closure dill would follow forever
    script = _script(
        tmp_path,
        """
        import pickle
        from datasets import Dataset
        def gen(path):
            try:
                with open(path) as fh:
                    yield from ({"text": line} for line in fh)
            except FileNotFoundError:
                yield {"text": "none"}
        ds = Dataset.from_generator(gen, gen_kwargs={"path": "missing.txt"})
        print("ROWS", len(ds), pickle.loads(pickle.dumps(open)) is open)
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert "ROWS 1 True" in result.log_tail, result.log_tail


def test_a_scripts_own_long_generation_is_capped_and_listed(tmp_path, store):
    # abhaykrishna2010's notebooks sample 256 new tokens for every stand-in prompt after
    # training, which ran past the timeout
    script = _script(
        tmp_path,
        """
        from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline
        tok = AutoTokenizer.from_pretrained("gpt2")
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        ids = tok("hello there", return_tensors="pt").input_ids
        out = model.generate(ids, max_new_tokens=256, min_new_tokens=256, do_sample=True)
        short = model.generate(ids, max_new_tokens=4, min_new_tokens=4, do_sample=True)
        print("NEW", out.shape[1] - ids.shape[1], short.shape[1] - ids.shape[1])
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert "NEW 16 4" in result.log_tail, result.log_tail
    assert [o for o in result.overrides if o["config"] == "generate"] == [
        {"config": "generate", "field": "max_new_tokens", "was": 256, "now": 16}
    ]


def test_python_runs_the_harness_in_another_interpreter(tmp_path, store):
    import subprocess
    import sys

    script = _script(tmp_path, "import sys\nprint('EXE', sys.executable)\n")
    # The same stack through another path to the interpreter: it runs there.
    result = smoke_script(script, store=store, timeout=120, python=sys.executable)
    assert _codes(result) == ["TRL413"] and f"EXE {sys.executable}" in result.log_tail
    # A bare venv has none of the training stack: skipped, saying where and how to install.
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bare = str(venv / "bin" / "python")
    skipped = smoke_script(script, store=store, timeout=120, python=bare)
    assert _codes(skipped) == ["TRL419"] and skipped.exit_code == 2
    assert skipped.findings[0].message.startswith(
        f"not smoke-run: torch, transformers, trl, datasets, accelerate not installed in {bare}; "
    )
    broken = smoke_script(script, store=store, timeout=120, python=str(tmp_path / "nope"))
    assert (
        _codes(broken) == ["TRL418"] and "cannot run this interpreter" in broken.findings[0].message
    )


def test_a_hard_coded_gpu_stays_on_the_cpu_here_and_is_listed(tmp_path, store):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: nothing is moved")
    script = _script(
        tmp_path,
        """
        import torch
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
        x = torch.ones(2).to("cuda:0")
        print("ON", x.device, next(model.parameters()).device, torch.ones(1).to(torch.float16).dtype)
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL413"] and "ON cpu cpu torch.float16" in result.log_tail
    assert result.overrides == [
        {"config": "torch", "field": "device", "was": "cuda", "now": "cpu"},
        {"config": "torch", "field": "device", "was": "cuda:0", "now": "cpu"},
    ]


def test_a_checkpoint_placed_on_a_gpu_loads_on_the_cpu_here_and_is_listed(tmp_path, store):
    # abhaykrishna2010's notebooks reload the reward model they trained with
    # `device_map={"": Accelerator().local_process_index}` (GPU 0)
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: nothing is moved")
    script = _script(
        tmp_path,
        """
        from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification
        AutoModelForSequenceClassification.from_pretrained("distilroberta-base").save_pretrained("rm")
        a = AutoModelForSequenceClassification.from_pretrained("./rm", device_map={"": 0})
        b = AutoModelForCausalLM.from_pretrained("gpt2", device_map="cuda:0")  # a stand-in
        c = AutoModelForSequenceClassification.from_pretrained("./rm", device_map="auto")
        print("ON", a.device, b.device, c.device)
        # ashishjamarkattel's notebook tries its trained model in a text-generation pipeline
        from transformers import pipeline
        generate = pipeline("text-generation", model="lvwerra/gpt2-imdb-pos-v2", device="cuda")
        on_cpu = pipeline("text-generation", model="gpt2", device=-1)
        print("PIPELINE", generate.device, on_cpu.device, len(generate("I hate how", max_new_tokens=2)))
    """,
    )
    result = smoke_script(script, store=store, timeout=120, cwd=str(tmp_path))
    assert "ON cpu cpu cpu" in result.log_tail, result.log_tail
    assert "PIPELINE cpu cpu 1" in result.log_tail, result.log_tail
    assert result.overrides == [
        {"config": "from_pretrained", "field": "device_map", "was": "{'': 0}", "now": "cpu"},
        {"config": "pipeline", "field": "device", "was": "cuda", "now": "cpu"},
    ]


def test_a_folder_too_big_to_copy_runs_in_place_importable(tmp_path, store, monkeypatch):
    from migrate.smoke import workspace

    monkeypatch.setattr(workspace, "MAX_FILES", 1)
    (tmp_path / "helper.py").write_text("NAME = 'helper'\n")
    script = _script(tmp_path, "import helper\nprint('NAME', helper.NAME)\n")
    result = smoke_script(script, store=store, timeout=120)
    assert result.copy == "" and "NAME helper" in result.log_tail


def test_an_import_error_in_a_project_module_points_at_the_todo_there(tmp_path, store):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helper.py").write_text(
        "# TODO(trl-migrate TRL102): `PreTrainedModelWrapper` does not exist in TRL 1.13\n"
        "from trl import PreTrainedModelWrapper\n"
    )
    script = _script(tmp_path, "import helper\n")
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL411"] and result.findings[0].line == 1
    assert result.findings[0].message.endswith(
        f"; the rewrite left a TODO(trl-migrate TRL102) at "
        f"{result.shown(str(tmp_path / 'helper.py'))}:2 for a human"
    ), result.findings[0].message


def test_a_hub_login_is_skipped_offline_and_listed(tmp_path, store):
    """Scripts and notebooks often log in first (`login(token=...)`, `notebook_login()`): a smoke
    run cannot reach the hub, skips the login and says so, and the script goes on."""
    script = _script(
        tmp_path,
        """
        import huggingface_hub
        from huggingface_hub import login, notebook_login

        login(token="hf_not_a_real_token", add_to_git_credential=True)
        notebook_login()
        huggingface_hub.interpreter_login()
        print("LOGGED IN")
    """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert "LOGGED IN" in result.log_tail, result.findings
    assert "TRL416" not in _codes(result), result.findings
    assert result.overrides == [
        {"config": "huggingface_hub", "field": name, "was": "called", "now": "skipped (offline)"}
        for name in ("login", "notebook_login", "interpreter_login")
    ]


def test_an_error_raised_from_another_names_the_one_it_came_from(tmp_path, store):
    # the repository's own data files disagree on their columns: datasets wraps the cast error
    # in a generic "An error occurred while generating the dataset"
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_text('{"instruction": "hi", "output": "yo"}\n')
    (data / "b.jsonl").write_text('{"conversations": [{"from": "human", "value": "hi"}]}\n')
    script = _script(
        tmp_path,
        """
        from datasets import load_dataset

        load_dataset("json", data_files={"train": ["data/a.jsonl", "data/b.jsonl"]})
        """,
    )
    result = smoke_script(script, store=store, timeout=120)
    assert _codes(result) == ["TRL412"] and result.findings[0].line == 3
    message = result.findings[0].message
    assert message.startswith(
        "the script raised DatasetGenerationError: An error occurred while generating the "
        "dataset (from CastError: Couldn't cast ... because column names don't match)"
    ), message


def test_a_keyword_the_stack_dropped_is_explained_where_the_script_stops(tmp_path):
    from migrate import api

    # the keyword reaches TrainingArguments through a dict, where the rewrite cannot see it
    script = _script(
        tmp_path,
        """
        from transformers import TrainingArguments

        extra = {"warmup_ratio": 0.1}
        TrainingArguments(output_dir="out", **extra)
        """,
    )
    result = api.smoke_script(script, timeout=120)
    assert _codes(result) == ["TRL412"] and result.findings[0].line == 4
    assert result.findings[0].message == (
        "the script raised TypeError: TrainingArguments.__init__() got an unexpected keyword "
        "argument 'warmup_ratio'; TRL 1.13's stack no longer takes it: `warmup_ratio` (it is "
        "`warmup_steps` now): transformers 5.0 removed warmup_ratio and reads a warmup_steps "
        "float in [0, 1) as that ratio of the total steps (TrainingArguments.get_warmup_steps of "
        "5.25: ceil(total * warmup_steps) below 1, as 4.x did with ceil(total * warmup_ratio) "
        "when warmup_steps was 0); 1.0 and more count steps"
    ), result.findings[0].message


def test_code_for_a_newer_python_says_so(tmp_path):
    # an f-string reusing its quotes is valid from Python 3.12 on (aligntune's sft.py)
    import sys

    (tmp_path / "helpers.py").write_text('name = "x"\nlabel = f"{"-".join([name])}"\n')
    script = _script(tmp_path, "import helpers\n")
    result = smoke_script(script, timeout=120)
    message = result.findings[0].message
    if sys.version_info >= (3, 12):
        assert result.exit_code == 1 and "newer Python" not in message
        return
    here = ".".join(map(str, sys.version_info[:2]))
    assert _codes(result) == ["TRL412"] and message.startswith("the script raised SyntaxError: "), (
        message
    )
    assert (
        f"; helpers.py is valid in a newer Python than the {here} that ran it (libcst parses "
        "it): pass `--python` an interpreter of the version the project uses"
    ) in message


def test_an_exception_the_script_caught_before_training_is_why_no_step_ran(tmp_path, store):
    # LoganBolton/rl-moondream: `except Exception: traceback.print_exc()` around all of main();
    # its model download failed offline, and it exited 0 having trained nothing
    script = _script(
        tmp_path,
        TODO_LINE + "import traceback\n"
        "from huggingface_hub.errors import LocalEntryNotFoundError\n"
        "def load():\n"
        "    raise LocalEntryNotFoundError('cannot find the requested files')\n"
        "try:\n"
        "    load()\n"
        "except Exception:\n"
        "    traceback.print_exc()\n"
        "print('Training failed')\n",
    )
    result = smoke_script(script, store=store, timeout=60)
    name = result.shown(str(script))
    assert [f.message for f in result.findings] == [
        "no training step ran: the script built no Trainer; it caught "
        "huggingface_hub.errors.LocalEntryNotFoundError: cannot find the requested files "
        f"(raised at {name}:5) and went on: a download, which smoke runs forbid (offline); the "
        "rewrite left TODOs (TRL106) in it"
    ]
    # a script that prints no traceback: nothing claimed
    quiet = _script(tmp_path, "print('nothing to train')\n", "quiet.py")
    assert [f.message for f in smoke_script(quiet, store=store, timeout=60).findings] == [
        "no training step ran: the script built no Trainer"
    ]


def test_a_trainer_given_an_encoder_decoder_policy_stops_on_what_its_todo_says(tmp_path, store):
    # DhanushGD/RLHF-PPO: a flan-t5 policy kept under TRL102's TODO reaches RLOOTrainer, whose
    # generation finds no prompt in what T5 returns (argmax over an empty dimension)
    pytest.importorskip("trl")
    script = _script(
        tmp_path,
        "from datasets import Dataset\n"
        "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer\n"
        "from trl import RLOOConfig, RLOOTrainer\n"
        "# TODO(trl-migrate TRL102): no TRL 1.13 online-RL trainer (GRPO, RLOO) takes "
        "encoder-decoder models: stay on TRL <= 1.12\n"
        "model = AutoModelForSeq2SeqLM.from_pretrained('google/flan-t5-base')\n"
        "tok = AutoTokenizer.from_pretrained('google/flan-t5-base')\n"
        "rows = Dataset.from_dict({'prompt': ['a b c', 'd e f'] * 4})\n"
        "args = RLOOConfig(output_dir='out', per_device_train_batch_size=2, num_generations=2,\n"
        "                  max_completion_length=4, report_to='none')\n"
        "trainer = RLOOTrainer(model=model, args=args, processing_class=tok, train_dataset=rows,\n"
        "                      reward_funcs=lambda completions, **kw: [1.0] * len(completions))\n"
        "trainer.train()\n",
    )
    result = smoke_script(script, store=store, timeout=180, cwd=str(tmp_path))
    message = result.findings[0].message
    assert message.endswith(
        "; the rewrite left a TODO(trl-migrate TRL102) at line 4 that says TRL 1.13's trainers "
        "take no encoder-decoder model (this trainer was given one), for a human"
    ), message
