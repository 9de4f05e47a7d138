"""TRL109 trainer-kwargs: no-op, fix and TODO cases, exact text, run twice; the table against
the wheels it was built from."""

from __future__ import annotations

import dataclasses

import pytest

from codemods.rules.trainer_kwargs import table
from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL109",)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from trl import SFTConfig, SFTTrainer\n"
            "t = SFTTrainer(model, args=SFTConfig('o', max_length=512), train_dataset=ds)\n",
            id="already-1.13",
        ),
        pytest.param(
            "from mylib import SFTTrainer\nt = SFTTrainer(model, max_seq_length=512)\n",
            id="another-library",
        ),
        pytest.param(
            "from trl import SFTTrainer\nmax_seq_length = 512\nf(max_seq_length=512)\n",
            id="not-a-trainer-call",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from transformers import TrainingArguments
            from trl import SFTTrainer

            args = TrainingArguments(
                output_dir="out",
                learning_rate=2e-4,
            )
            trainer = SFTTrainer(
                model=model,
                args=args,
                train_dataset=ds,
                dataset_text_field="text",
                max_seq_length=512,  # context
                packing=True,
            )
            """,
            """
            from transformers import TrainingArguments
            from trl import SFTConfig, SFTTrainer

            args = SFTConfig(
                output_dir="out",
                learning_rate=2e-4,
                dataset_text_field="text",
                max_length=512,  # context
                packing=True,
                packing_strategy="wrapped",
                bf16=False,
                gradient_checkpointing=False,
                logging_steps=500,
            )
            trainer = SFTTrainer(
                model=model,
                args=args,
                train_dataset=ds,
            )
            """,
            id="training-arguments-become-sft-config",
        ),
        pytest.param(
            """
            from trl import SFTConfig, SFTTrainer
            config = SFTConfig("out", packing=False)
            trainer = SFTTrainer(model, config, train_dataset=ds, max_seq_length=256)
            """,
            """
            from trl import SFTConfig, SFTTrainer
            config = SFTConfig("out", packing=False, max_length=256)
            trainer = SFTTrainer(model, config, train_dataset=ds)
            """,
            id="sft-config-positional-gains-the-field",
        ),
        pytest.param(
            """
            import transformers
            import trl
            dpo = trl.DPOTrainer(model, ref, args=transformers.TrainingArguments("dpo"), beta=0.2, train_dataset=pairs, max_length=512)
            """,
            """
            import transformers
            import trl
            from trl import DPOConfig

            dpo = trl.DPOTrainer(model, ref, args=DPOConfig("dpo", beta=0.2, max_length=512, learning_rate=5e-05, bf16=False, gradient_checkpointing=False, logging_steps=500), train_dataset=pairs)
            """,
            id="dpo-inline-training-arguments",
        ),
    ],
)
def test_fixes(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_a_setting_with_no_home_is_removed_with_a_todo():
    src = dedent(
        """
        from trl import DPOConfig, DPOTrainer
        dpo = DPOTrainer(model, ref, args=DPOConfig("o"), train_dataset=d, max_prompt_length=128)
        """
    )
    out, findings = run(src, select=SELECT)
    assert 'dpo = DPOTrainer(model, ref, args=DPOConfig("o"), train_dataset=d)\n' in out
    assert "# TODO(trl-migrate TRL109): `max_prompt_length=128` was removed: " in out
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "args",
    [
        pytest.param("args=parsed", id="parsed"),
        pytest.param("", id="no-args"),
        pytest.param("args=make_args()", id="built-elsewhere"),
    ],
)
def test_a_config_the_rule_cannot_see_gets_a_todo_listing_the_settings(args):
    src = dedent(
        f"""
        from trl import SFTTrainer
        trainer = SFTTrainer(model, {args}, train_dataset=ds, max_seq_length=512)
        """
    ).replace("(model, , ", "(model, ")
    out, findings = run(src, select=SELECT)
    assert "max_seq_length=512" not in out.splitlines()[-1]
    todo = [f for f in findings if f.fix is Fix.MANUAL]
    assert len(todo) == 1 and "set `max_length=512` on the SFTConfig" in todo[0].message
    assert run(out, select=SELECT)[0] == out


def test_different_values_on_trainer_and_config_are_a_todo():
    src = dedent(
        """
        from trl import SFTConfig, SFTTrainer
        config = SFTConfig("out", max_length=1024)
        trainer = SFTTrainer(model, args=config, train_dataset=ds, max_seq_length=512)
        """
    )
    out, findings = run(src, select=SELECT)
    assert 'config = SFTConfig("out", max_length=1024)\n' in out
    assert any(f.fix is Fix.MANUAL and "another value; keep one" in f.message for f in findings)


def test_the_table_names_real_fields_of_the_1_13_configs():
    trl = pytest.importorskip("trl")
    if not trl.__version__.startswith("1.13."):
        pytest.skip(f"needs trl 1.13, found {trl.__version__}")
    import inspect

    for trainer, row in table().items():
        config = getattr(trl, row["config"])
        fields = {f.name for f in dataclasses.fields(config)}
        params = set(inspect.signature(getattr(trl, trainer).__init__).parameters)
        for old, move in row["moved"].items():
            assert move["to"] in fields, (trainer, old)
            assert old not in params, (trainer, old)
        for old in row["gone"]:
            assert old not in params and old not in fields, (trainer, old)
        for name in row["pins"]:
            assert name in fields
