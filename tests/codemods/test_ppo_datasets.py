"""TRL105 ppo-datasets: no-op, fix, TODO, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_noop, dedent, run


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("ds = ds.map(tokenize)\n", id="datasets-no-trainer"),
        pytest.param(
            "from trl import RLOOTrainer\nds = ds.map(tok)\nt = RLOOTrainer(model=m, train_dataset=ds)\n",
            id="target-trainer",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=("TRL105",)) == []


def test_legacy_query_column_becomes_prompt():
    before = dedent(
        """
        from trl import PPOTrainer
        def tok(sample):
            sample["input_ids"] = tokenizer.encode(sample["review"])[:8]
            sample["query"] = tokenizer.decode(sample["input_ids"])
            return sample
        ds = ds.map(tok)
        t = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        """
    )
    out, _ = run(before, select=("TRL105",))
    assert 'sample["prompt"] = tokenizer.decode(sample["input_ids"])' in out
    assert run(out, select=("TRL105",))[0] == out


def test_unrecognised_dataset_gets_a_todo_where_it_is_built():
    before = "from trl import PPOTrainer\nds = load_tokenized()\nt = PPOTrainer(args=a, processing_class=tok, model=m, reward_model=r, value_model=v, train_dataset=ds)\n"
    out, findings = run(before, select=("TRL105",))
    assert out.splitlines()[1].startswith(
        '# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column'
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=("TRL105",))[0] == out
