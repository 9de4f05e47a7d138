"""Fields a rewritten PPO config drops stay readable where the config goes out of the file's
sight (codemods/rules/ppo_config/keep.py): singhnikhil01/Outsmart-AI-detection-System's
`config.py` builds the config that `model.py` imports and reads `config.model_name` from, and
shangluyang/rlhf's notebook hands it to `build_dataset(config)` of `dataset.py`."""

from __future__ import annotations

import os

from migrate import api
from migrate.kernel.findings import Severity
from tests.codemods.helpers import dedent, run

CONFIG = dedent(
    """
    from trl import PPOConfig

    config = PPOConfig(
        model_name="gpt2",
        learning_rate=1.41e-5,
    )
    """
)
MODEL = dedent(
    """
    from transformers import AutoTokenizer
    from config import config

    tokenizer = AutoTokenizer.from_pretrained(config.model_name)
    """
)


def test_a_config_another_file_imports_keeps_its_dropped_fields(tmp_path):
    (tmp_path / "config.py").write_text(CONFIG)
    (tmp_path / "model.py").write_text(MODEL)
    report = api.fix_paths([str(tmp_path)])
    text = (tmp_path / "config.py").read_text()
    assert text.endswith(')\nconfig.model_name = "gpt2"\n')
    assert (tmp_path / "model.py").read_text() == MODEL
    result = next(r for r in report.results if r.path.endswith("config.py"))
    [kept] = [f for f in result.findings if "keeps the old value readable" in f.message]
    assert kept.severity is Severity.INFO and kept.line == 3
    assert kept.message == (
        "RLOOConfig has no `model_name`, and other files of this run import `config` from this "
        'module: `config.model_name = "gpt2"` keeps the old value readable there (RLOOConfig and '
        "its trainer ignore the attribute)"
    )
    again = api.fix_paths([str(tmp_path)])
    assert all(r.status.value != "changed" for r in again.results)


def test_a_config_no_other_file_imports_is_left_as_the_file_reads_it(tmp_path):
    (tmp_path / "config.py").write_text(CONFIG)
    api.fix_paths([str(tmp_path / "config.py")])
    assert "config.model_name" not in (tmp_path / "config.py").read_text()


def test_a_config_handed_to_a_function_of_another_file_keeps_its_dropped_fields(tmp_path):
    src = dedent(
        """
        from trl import PPOConfig
        from dataset import build_dataset

        config = PPOConfig(model_name="lvwerra/gpt2-imdb", query_dataset=name, learning_rate=1e-5)
        dataset = build_dataset(config)
        print(config.model_name)
        """
    )
    (tmp_path / "train.py").write_text(src)
    (tmp_path / "dataset.py").write_text("def build_dataset(args):\n    return args.model_name\n")
    report = api.fix_paths([str(tmp_path)])
    lines = (tmp_path / "train.py").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("config = RLOOConfig("))
    assert lines[at + 1 : at + 3] == [
        'config.model_name = "lvwerra/gpt2-imdb"',
        "config.query_dataset = name",
    ]
    assert lines[-1] == 'print("lvwerra/gpt2-imdb")'  # this file's own read: the value
    train = next(r for r in report.results if r.path.endswith("train.py"))
    assert any(
        "`build_dataset(config)` hands it to code of another file of this run" in f.message
        for f in train.findings
    )
    # alone, the file cannot know what build_dataset is: no attribute is kept
    out, _ = run(src, select=("TRL103",))
    assert "config.model_name =" not in out


def test_a_config_handed_to_a_function_of_the_same_file_is_followed_there_instead():
    src = dedent(
        """
        from trl import PPOConfig

        def build_dataset(cfg):
            return cfg.model_name

        config = PPOConfig(model_name="gpt2")
        dataset = build_dataset(config)
        """
    )
    out, _ = run(src, select=("TRL103",))
    assert "config.model_name =" not in out


def test_run_facts_resolve_the_modules_other_files_import(tmp_path):
    from codemods import project

    files = {
        "pkg/config.py": b"config = 1\n",
        "pkg/train.py": b"from .config import config\n",
        "other/config.py": b"x = 1\n",
        "run.py": b"from pkg.config import config as c, other\n",
        "solo.py": b"from config import nothing\n",  # two config.py: neither is chosen
    }
    paths = []
    for name, data in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append((str(path), data))
    found = {p: f.exported for p, f in project.run_facts(paths).items() if f.exported}
    assert found == {os.path.abspath(tmp_path / "pkg/config.py"): frozenset({"config", "other"})}


def test_a_notebook_handing_the_config_to_a_module_of_the_run_keeps_its_fields(tmp_path):
    import json

    cells = [
        "%pip install trl\nfrom trl import PPOConfig\nfrom dataset import build_dataset\n",
        'config = PPOConfig(model_name="gpt2", learning_rate=1e-5)\ndata = build_dataset(config)\n',
    ]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": c.splitlines(keepends=True),  # as notebooks store it
            }
            for c in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "run.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "dataset.py").write_text("def build_dataset(args):\n    return args.model_name\n")
    api.fix_paths([str(tmp_path)])
    out = json.loads((tmp_path / "run.ipynb").read_text())
    assert 'config.model_name = "gpt2"\n' in "".join(out["cells"][1]["source"])


def test_a_config_its_function_returns_keeps_its_dropped_fields():
    # Lee-CBG/BAP_Attack_n_Defend: utils/rlhf.py's create_ppo_config(name, configs) returns the
    # config, and bap_attack.py loads `from_pretrained(config_PPO.model_name)`: an AttributeError
    # on TRL 1.13 once `model_name` was dropped, with no finding
    src = dedent(
        """
        from trl import PPOConfig


        def create_ppo_config(name, configs):
            ppo_config = PPOConfig(
                model_name=name,
                learning_rate=configs.learning_rate,
            )
            return ppo_config


        def local(name):
            other = PPOConfig(model_name=name, learning_rate=1e-5)
            return other.learning_rate
        """
    )
    out, findings = run(src, select=("TRL103",))
    assert "    )\n    ppo_config.model_name = name\n    return ppo_config\n" in out
    assert "other.model_name" not in out  # returned: its learning rate, not the config
    [kept] = [f for f in findings if "keeps the old value readable" in f.message]
    assert kept.message == (
        "RLOOConfig has no `model_name`, and `create_ppo_config()` returns it, so its callers may "
        "read it: `ppo_config.model_name = name` keeps the old value readable there (RLOOConfig "
        "and its trainer ignore the attribute)"
    )
    assert run(out, select=("TRL103",))[0] == out


def test_a_renamed_field_another_file_reads_stays_readable_under_its_old_name(tmp_path):
    # AimeeAyat/ATML-PA5: train_ppo.py prints PPO_CONFIG.num_ppo_epochs and .mini_batch_size of
    # the v2 config its config.py builds; the rename to num_iterations left the old name an
    # AttributeError there
    (tmp_path / "config.py").write_text(
        dedent(
            """
            from trl import PPOConfig

            PPO_CONFIG = PPOConfig(output_dir="o", num_ppo_epochs=4, mini_batch_size=1)
            """
        )
    )
    reader = "from config import PPO_CONFIG\nprint(PPO_CONFIG.num_ppo_epochs)\n"
    (tmp_path / "train_ppo.py").write_text(reader)
    report = api.fix_paths([str(tmp_path)])
    text = (tmp_path / "config.py").read_text()
    assert text.endswith(
        ")\nPPO_CONFIG.mini_batch_size = 1\nPPO_CONFIG.num_ppo_epochs = PPO_CONFIG.num_iterations\n"
    )
    assert "num_iterations=4" in text
    assert (tmp_path / "train_ppo.py").read_text() == reader
    result = next(r for r in report.results if r.path.endswith("config.py"))
    [kept] = [f for f in result.findings if "readable there" in f.message]
    assert kept.message.startswith(
        "RLOOConfig has no `mini_batch_size`, `num_ppo_epochs`, and other files of this run "
        "import `PPO_CONFIG` from this module: `PPO_CONFIG.mini_batch_size = 1`, "
        "`PPO_CONFIG.num_ppo_epochs = PPO_CONFIG.num_iterations` keep the old values readable"
    )
    again = api.fix_paths([str(tmp_path)])
    assert all(r.status.value != "changed" for r in again.results)
