"""TRL105 across files: the dataset a PPO trainer is given comes from `build_dataset()` of
another file of the run (Kwaai-AI-Lab/kwaai-alignment, shangluyang/rlhf, rmorain/sentiment-tuning,
singhnikhil01/Outsmart-AI-detection-System all keep the gpt2-sentiment builder in `dataset.py` or
`utils.py`). The tokenizing map is rewritten in that file, which need not import trl at all; the
trainer's file says where the work went instead of leaving a TODO it cannot act on."""

from __future__ import annotations

import os

import pytest

from codemods import project
from migrate import api
from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import dedent

DATASET = dedent(
    """
    from datasets import load_dataset


    def build_dataset(tokenizer, name="imdb"):
        ds = load_dataset(name, split="train")

        def tokenize(sample):
            sample["input_ids"] = tokenizer.encode(sample["review"])[:8]
            sample["query"] = tokenizer.decode(sample["input_ids"])
            return sample

        ds = ds.map(tokenize, batched=False)
        ds.set_format(type="torch")
        return ds
    """
)
TRAIN = dedent(
    """
    from trl import PPOConfig, PPOTrainer
    from dataset import build_dataset

    config = PPOConfig(learning_rate=1e-5)
    dataset = build_dataset(tokenizer)
    trainer = PPOTrainer(config, model, None, tokenizer, dataset=dataset)
    """
)


def _repo(tmp_path, **files: str) -> None:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _findings(report, name: str, code: str = "TRL105"):
    result = next(r for r in report.results if r.path.endswith(name))
    return [f for f in result.findings if f.code == code]


def test_the_builder_of_another_file_gets_the_prompt_column(tmp_path):
    _repo(tmp_path, **{"dataset.py": DATASET, "train.py": TRAIN})
    report = api.fix_paths([str(tmp_path)])
    assert (tmp_path / "dataset.py").read_text() == DATASET.replace(
        '        sample["query"] = tokenizer.decode',
        '        sample["query"] = sample["prompt"] = tokenizer.decode',
    )
    special, built = _findings(report, "dataset.py")
    assert special.message.startswith('`tokenizer.decode(sample["input_ids"])` keeps the special')
    assert (built.line, built.fix) == (9, Fix.APPLIED)
    assert built.message == (
        'the decoded text is also stored as "prompt", the column RLOOTrainer reads ("query" '
        "stays: the files that import this dataset may read it)"
    )
    [said] = _findings(report, "train.py")
    assert (said.line, said.severity, said.fix) == (5, Severity.INFO, Fix.APPLIED)
    assert said.message == (
        "`dataset` comes from `build_dataset(...)`, defined in dataset.py: RLOOTrainer reads a "
        '"prompt" text column, and TRL105 gives the dataset one where that function tokenizes '
        "it (see that file's findings)"
    )
    assert "TODO(trl-migrate TRL105)" not in (tmp_path / "train.py").read_text()
    again = api.fix_paths([str(tmp_path)])
    assert all(r.status.value != "changed" for r in again.results)


def test_a_module_attribute_call_and_a_split_are_followed(tmp_path):
    train = TRAIN.replace("from dataset import build_dataset", "import dataset").replace(
        "build_dataset(tokenizer)", 'dataset.build_dataset(tokenizer)["train"]'
    )
    train = train.replace("dataset = dataset.build", "ds = dataset.build").replace(
        "dataset=dataset)", "dataset=ds)"
    )
    _repo(tmp_path, **{"dataset.py": DATASET, "train.py": train})
    report = api.fix_paths([str(tmp_path)])
    assert 'sample["prompt"]' in (tmp_path / "dataset.py").read_text()
    assert [f.severity for f in _findings(report, "train.py")] == [Severity.INFO]


def test_a_builder_whose_map_is_not_recognised_gets_the_todo_in_its_own_file(tmp_path):
    dataset = DATASET.replace(
        '        sample["query"] = tokenizer.decode(sample["input_ids"])\n', ""
    ).replace('tokenizer.encode(sample["review"])[:8]', 'my_ids(sample["review"])')
    _repo(tmp_path, **{"dataset.py": dataset, "train.py": TRAIN})
    report = api.fix_paths([str(tmp_path)])
    [todo] = _findings(report, "dataset.py")
    assert (todo.fix, todo.line) == (Fix.MANUAL, 11)
    assert (
        (tmp_path / "dataset.py")
        .read_text()
        .splitlines()[10]
        .startswith(
            '    # TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column (text or chat '
            "messages) from `ds`"
        )
    )
    assert [f.severity for f in _findings(report, "train.py")] == [Severity.INFO]


@pytest.mark.parametrize(
    "train",
    [
        pytest.param(
            TRAIN.replace("PPOTrainer(config, model, None, tokenizer,", "SFTTrainer(model=model,"),
            id="not-a-ppo-trainer",
        ),
        pytest.param(
            TRAIN.replace(
                "trainer = PPOTrainer",
                'dataset = dataset.filter(lambda x: x["label"])\ntrainer = PPOTrainer',
            ),
            id="bound-again-after-the-builder",
        ),
    ],
)
def test_a_builder_not_handing_a_ppo_trainer_its_dataset_is_left_alone(tmp_path, train):
    _repo(tmp_path, **{"dataset.py": DATASET, "train.py": train})
    api.fix_paths([str(tmp_path)])
    assert (tmp_path / "dataset.py").read_text() == DATASET


def test_run_facts_name_the_builder_and_the_call(tmp_path):
    _repo(tmp_path, **{"data/dataset.py": DATASET, "data/train.py": TRAIN})
    files = [(str(p), p.read_bytes()) for p in sorted((tmp_path / "data").iterdir())]
    facts = project.run_facts(files)
    builder = os.path.abspath(tmp_path / "data/dataset.py")
    assert facts[builder].builders == frozenset({"build_dataset"})
    assert facts[os.path.abspath(tmp_path / "data/train.py")].deferred == frozenset(
        {("build_dataset", builder)}
    )


@pytest.mark.parametrize(
    "builder",
    [
        pytest.param(
            "def build_dataset(tokenizer):\n    return load_tokenized(tokenizer)\n",
            id="returns-another-call",
        ),
        pytest.param(
            "def build_dataset(tokenizer, ds=None):\n    return ds.map(my_tokenize)\n",
            id="returns-a-parameter",
        ),
    ],
)
def test_a_builder_whose_dataset_the_file_does_not_bind_gets_the_todo_on_itself(tmp_path, builder):
    _repo(tmp_path, **{"dataset.py": builder, "train.py": TRAIN})
    report = api.fix_paths([str(tmp_path)])
    [todo] = _findings(report, "dataset.py")
    assert (todo.fix, todo.line) == (Fix.MANUAL, 1)
    assert todo.message.startswith(
        'RLOOTrainer reads a "prompt" column (text or chat messages) from what `build_dataset` '
        "returns (another file of the run gives it to a PPO trainer)"
    )
    assert (tmp_path / "dataset.py").read_text().startswith("# TODO(trl-migrate TRL105): ")
    again = api.fix_paths([str(tmp_path)])
    assert all(r.status.value != "changed" for r in again.results)
