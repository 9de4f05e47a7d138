"""TRL109 trainer-kwargs: no-op, fix and TODO cases, exact text, run twice; the table against
the wheels it was built from."""

from __future__ import annotations

import dataclasses
import re

import pytest

from codemods import inline
from codemods.rules.trainer_kwargs import table
from migrate.kernel.findings import Fix, Severity
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
        pytest.param(
            "from transformers import TrainingArguments\nfrom trl import SFTTrainer\n"
            "t = SFTTrainer(model, args=TrainingArguments('o'), train_dataset=ds)\n",
            id="sft-takes-training-arguments-in-1.13",
        ),
        pytest.param(
            "from trl import RewardConfig, RewardTrainer\n"
            "t = RewardTrainer(model, args=RewardConfig('o'), train_dataset=ds)\n",
            id="reward-config-already",
        ),
        pytest.param(
            "from transformers import TrainingArguments\nfrom trl import RewardTrainer\n"
            "args = TrainingArguments('o')\nif fast:\n    args = TrainingArguments('p')\n"
            "t = RewardTrainer(model, args=args, train_dataset=ds)\n",
            id="reward-training-arguments-bound-again-in-a-branch",
        ),
    ],
)
def test_noop(src):
    # a TRL config call is said to leave settings to changed defaults (tested below), unchanged
    assert [f for f in assert_noop(src, select=SELECT) if not _changed_defaults(f)] == []


def _changed_defaults(finding) -> bool:
    """A warning that writes nothing: defaults TRL 1.13 changed (tested on their own below)."""
    return (
        "to defaults TRL 1.13 changed" in finding.message
        or "appends the tokenizer's EOS token" in finding.message
    )


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
        pytest.param(
            """
            from transformers import TrainingArguments
            from trl import RewardTrainer

            training_args = TrainingArguments(
                output_dir="rm",
                max_steps=100,
            )
            trainer = RewardTrainer(model=model, args=training_args, train_dataset=pairs)
            """,
            """
            from transformers import TrainingArguments
            from trl import RewardConfig, RewardTrainer

            training_args = RewardConfig(
                output_dir="rm",
                max_steps=100,
                learning_rate=5e-05,
                bf16=False,
                gradient_checkpointing=False,
                logging_steps=500,
                disable_dropout=False,
            )
            trainer = RewardTrainer(model=model, args=training_args, train_dataset=pairs)
            """,
            id="reward-training-arguments-alone",
        ),
        pytest.param(
            """
            from transformers import TrainingArguments
            from trl import RewardTrainer
            trainer = RewardTrainer(model, TrainingArguments("rm", learning_rate=1e-5), max_length=256)
            """,
            """
            from transformers import TrainingArguments
            from trl import RewardConfig, RewardTrainer
            trainer = RewardTrainer(model, RewardConfig("rm", learning_rate=1e-5, max_length=256, bf16=False, gradient_checkpointing=False, logging_steps=500, disable_dropout=False))
            """,
            id="reward-training-arguments-with-max-length",
        ),
        pytest.param(
            """
            from transformers import Trainer, TrainingArguments
            from trl import RewardTrainer

            args = TrainingArguments("sft", num_train_epochs=2)
            Trainer(model=model, args=args, train_dataset=texts).train()

            args = TrainingArguments("rm", learning_rate=1e-5)
            RewardTrainer(model=model, args=args, train_dataset=pairs).train()
            args = TrainingArguments("eval")
            """,
            """
            from transformers import Trainer, TrainingArguments
            from trl import RewardConfig, RewardTrainer

            args = TrainingArguments("sft", num_train_epochs=2)
            Trainer(model=model, args=args, train_dataset=texts).train()

            args = RewardConfig("rm", learning_rate=1e-5, bf16=False, gradient_checkpointing=False, logging_steps=500, disable_dropout=False)
            RewardTrainer(model=model, args=args, train_dataset=pairs).train()
            args = TrainingArguments("eval")
            """,
            id="reward-training-arguments-bound-again-for-each-trainer",
        ),
    ],
)
def test_fixes(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_training_arguments_a_1_13_trainer_cannot_take_are_said_with_what_they_kept():
    src = dedent(
        """
        from transformers import TrainingArguments
        from trl import RewardTrainer
        trainer = RewardTrainer(model, args=TrainingArguments("rm"), train_dataset=pairs)
        """
    )
    _, findings = run(src, select=SELECT)
    eos = [f for f in findings if "appends the tokenizer's EOS token" in f.message]
    assert [f.message[:82] for f in eos] == [
        "TRL 1.13's RewardTrainer appends the tokenizer's EOS token to every chosen and rej"
    ]
    findings = [f for f in findings if f not in eos]
    said = [f.message for f in findings]
    assert said[0].startswith(
        "`TrainingArguments` became `RewardConfig`: RewardTrainer took a TrainingArguments up "
        "to TRL 0.12.2, and TRL 1.13's reads fields only RewardConfig has"
    )
    assert (
        "disable_dropout=False: RewardTrainer of TRL 0.4-0.13 trained with the model's" in (said[0])
    )
    assert said[1].startswith("`max_length` is not set: RewardTrainer of TRL 1.13 drops")
    assert all(f.severity is Severity.WARNING for f in findings) and len(findings) == 2


def test_training_arguments_that_unpack_values_are_converted_where_the_reward_trainer_is_built():
    src = dedent(
        """
        from transformers import TrainingArguments
        from trl import RewardTrainer
        training_args = TrainingArguments(output_dir="rm", **extra)
        trainer = RewardTrainer(model=model, args=training_args, train_dataset=pairs)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out.endswith(
        'training_args = TrainingArguments(output_dir="rm", **extra)\n'
        "trainer = RewardTrainer(model=model, args=trl_config_with(RewardConfig, training_args, "
        "disable_dropout=False), train_dataset=pairs)\n"
    )
    assert "def trl_config_with(config_class, args, **settings):" in out
    said = [f.message for f in findings if "appends the tokenizer's EOS token" not in f.message]
    assert said[0].startswith("RewardTrainer took a TrainingArguments up to TRL 0.12.2")
    assert "takes unpacked values (`**extra`)" in said[0] and "disable_dropout=False" in said[0]
    assert said[1].startswith("`max_length` is not set here (the unpacked values may hold it)")
    assert run(out, select=SELECT)[0] == out


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
    said = [f for f in findings if not _changed_defaults(f) and not f.message.startswith(OLD_DPO)]
    assert [f.fix for f in said] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_a_trainer_built_without_args_gets_a_todo_listing_the_settings():
    src = dedent(
        """
        from trl import SFTTrainer
        trainer = SFTTrainer(model, train_dataset=ds, max_seq_length=512)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out.splitlines()[-1] == "trainer = SFTTrainer(model, train_dataset=ds)"
    todo = [f for f in findings if f.fix is Fix.MANUAL]
    assert len(todo) == 1 and "set `max_length=512` on the SFTConfig" in todo[0].message
    assert "trl_config_with" not in out
    assert run(out, select=SELECT)[0] == out


HELPER = (inline.lookup("trl-migrate:config_with") or "").replace("__NAME__", "trl_config_with")


@pytest.mark.parametrize(
    ("args", "wrapped"),
    [
        pytest.param(
            "args=parsed", "args=trl_config_with(SFTConfig, parsed, max_length=512)", id="parsed"
        ),
        pytest.param(
            "args=make_args()",
            "args=trl_config_with(SFTConfig, make_args(), max_length=512)",
            id="built-elsewhere",
        ),
        pytest.param(
            "make_args()",
            "trl_config_with(SFTConfig, make_args(), max_length=512)",
            id="positional",
        ),
    ],
)
def test_a_config_the_rule_cannot_see_is_wrapped_where_the_trainer_is_built(args, wrapped):
    src = dedent(
        f"""
        from trl import SFTTrainer

        trainer = SFTTrainer(model, {args}, train_dataset=ds, max_seq_length=512)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == (
        "from trl import SFTConfig, SFTTrainer\n\n\n"
        + HELPER
        + f"\n\ntrainer = SFTTrainer(model, {wrapped}, train_dataset=ds)\n"
    )
    findings = [f for f in findings if not _changed_defaults(f)]
    assert [f.fix for f in findings] == [Fix.APPLIED]
    assert "`trl_config_with` (written into this file)" in findings[0].message
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("before", "args"),
    [
        pytest.param(
            "trainer = DPOTrainer(model, ref, args=TrainingArguments(**vars(training_args)), "
            "max_length=512)\n",
            "trl_config_with(DPOConfig, TrainingArguments(**vars(training_args)), max_length=512)",
            id="inline",
        ),
        pytest.param(
            "cfg = TrainingArguments(output_dir='o', **extra)\n"
            "trainer = DPOTrainer(model, ref, args=cfg, max_length=512)\n",
            "trl_config_with(DPOConfig, cfg, max_length=512)",
            id="bound",
        ),
    ],
)
def test_a_config_that_unpacks_values_is_converted_where_the_trainer_is_built(before, args):
    # zucchini-nlp/RLHF-GPT2: keywords added beside `**vars(training_args)` (learning_rate=,
    # bf16=, ...) were given twice, a TypeError; the built TrainingArguments is converted instead
    src = "from transformers import TrainingArguments\nfrom trl import DPOTrainer\n" + before
    out, findings = run(src, select=SELECT)
    lines = before.splitlines()
    kept = lines[:-1]
    assert out == (
        "from transformers import TrainingArguments\nfrom trl import DPOConfig, DPOTrainer\n\n\n"
        + HELPER
        + "\n\n"
        + "".join(line + "\n" for line in kept)
        + f"trainer = DPOTrainer(model, ref, args={args})\n"
    )
    unpacked = "**vars(training_args)" if "vars" in before else "**extra"
    assert [f.fix for f in findings] == [Fix.APPLIED]
    assert f"takes unpacked values (`{unpacked}`), which may hold any setting" in (
        findings[0].message
    )
    assert run(out, select=SELECT)[0] == out


def test_the_wrapped_config_keeps_old_meanings_of_none_and_packing():
    before = dedent(
        """
        from transformers import HfArgumentParser, TrainingArguments
        from trl import SFTTrainer

        parser = HfArgumentParser((ScriptArguments, TrainingArguments))
        script_args, training_args = parser.parse_args_into_dataclasses()
        trainer = SFTTrainer(
            model=base_model,
            train_dataset=train_dataset,
            packing=script_args.packing,
            max_seq_length=None,
            dataset_text_field=None,
            tokenizer=tokenizer,
            args=training_args,
        )
        """
    )
    after = (
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "from trl import SFTConfig, SFTTrainer\n\n\n"
        + HELPER
        + "\n\n"
        + dedent(
            """
            parser = HfArgumentParser((ScriptArguments, TrainingArguments))
            script_args, training_args = parser.parse_args_into_dataclasses()
            trainer = SFTTrainer(
                model=base_model,
                train_dataset=train_dataset,
                tokenizer=tokenizer,
                args=trl_config_with(SFTConfig, training_args, packing=script_args.packing, packing_strategy="wrapped", max_length=min(tokenizer.model_max_length, 1024)),
            )
            """
        )
    )
    findings = assert_fixes(before, after, select=SELECT)
    messages = [f.message for f in findings]
    assert any(
        "`max_seq_length=None` meant the tokenizer's limit, at most 1024" in m for m in messages
    )
    assert any("`dataset_text_field=None` left the config's" in m for m in messages)
    assert any(m.startswith("packing=script_args.packing: old TRL concatenated") for m in messages)


def test_max_seq_length_none_on_a_visible_config_keeps_the_1_13_default_with_a_warning():
    src = dedent(
        """
        from trl import SFTConfig, SFTTrainer
        config = SFTConfig("out")
        trainer = SFTTrainer(model, config, train_dataset=ds, max_seq_length=None)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == (
        'from trl import SFTConfig, SFTTrainer\nconfig = SFTConfig("out")\n'
        "trainer = SFTTrainer(model, config, train_dataset=ds)\n"
    )
    warned = [f for f in findings if f.severity is Severity.WARNING and not _changed_defaults(f)]
    assert len(warned) == 1 and "left at the 1.13 default (1024)" in warned[0].message
    assert run(out, select=SELECT)[0] == out


def test_a_none_setting_of_a_config_built_here_is_dropped_not_moved():
    # seen in TheSleepGod/RL: `dataset_text_field=None` beside a TrainingArguments the rule
    # turns into an SFTConfig was said to be dropped and, at error level, moved into it
    src = dedent(
        """
        from transformers import TrainingArguments
        from trl import SFTTrainer
        args = TrainingArguments(output_dir="out")
        trainer = SFTTrainer(model=m, args=args, train_dataset=ds, packing=False, dataset_text_field=None)
        """
    )
    out, findings = run(src, select=SELECT)
    said = [f.message for f in findings if "dataset_text_field" in f.message]
    assert len(said) == 1 and "`dataset_text_field=None` left the config's" in said[0]
    assert "dataset_text_field" not in out and "packing=False" in out


def test_the_written_helper_converts_as_trl_1_13_does():
    trl = pytest.importorskip("trl")
    if not trl.__version__.startswith("1.13."):
        pytest.skip(f"needs trl 1.13, found {trl.__version__}")
    from transformers import TrainingArguments

    space: dict = {}
    exec(HELPER, space)  # noqa: S102
    convert = space["trl_config_with"]
    ta = TrainingArguments(
        "out", learning_rate=3e-4, hub_token="secret", lr_scheduler_type="cosine", use_cpu=True
    )
    got = convert(trl.SFTConfig, ta, packing=True, max_length=256)
    # What TRL 1.13's SFTTrainer does with a TrainingArguments, plus the two settings.
    expected = trl.SFTConfig(
        **{**ta.to_dict(), "hub_token": ta.hub_token, "packing": True, "max_length": 256}
    )
    assert got.to_dict() == expected.to_dict()
    assert (got.learning_rate, got.hub_token, got.packing) == (3e-4, "secret", True)
    assert got.logging_steps == 500 and got.bf16 is False  # the TrainingArguments values

    config = trl.SFTConfig("out", learning_rate=1e-5, use_cpu=True)
    copied = convert(trl.SFTConfig, config, packing=True)
    assert copied is not config and (copied.learning_rate, copied.packing) == (1e-5, True)
    assert config.packing is False

    @dataclasses.dataclass
    class MyArgs(TrainingArguments):
        my_flag: int = 3

    mine = convert(trl.SFTConfig, MyArgs("out", use_cpu=True), dataset_text_field="body")
    assert mine.dataset_text_field == "body" and not hasattr(mine, "my_flag")


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


# Pranavbp525's and izaanz's SFT scripts wrap the model with get_peft_model and hand SFTTrainer
# the same LoraConfig: TRL 0.4-0.12 trained the PeftModel as it was (peft_config unused); TRL
# 1.13 raises "You passed a `PeftModel` instance together with a `peft_config`".
PEFT_TWICE = """
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, TrainingArguments
from trl import SFTTrainer
def main(args):
    model = AutoModelForCausalLM.from_pretrained("m")
    config = LoraConfig(r=8)
    model = get_peft_model(model, config)
    trainer = SFTTrainer(
        model=model,
        args=TrainingArguments("o"),
        train_dataset=ds,
        peft_config=config,
        max_seq_length=512,
    )
"""


def test_peft_config_beside_a_peft_model_is_dropped_where_the_old_trainer_left_it_unused():
    before = dedent(PEFT_TWICE)
    out, findings = run(before, select=("TRL109",))
    assert out.split("trainer = ")[1] == (
        "SFTTrainer(\n"
        "        model=model,\n"
        '        args=SFTConfig("o", max_length=512, learning_rate=5e-05, bf16=False, '
        "gradient_checkpointing=False, logging_steps=500),\n"
        "        train_dataset=ds,\n"
        "    )\n"
    )
    [dropped] = [f for f in findings if f.message.startswith("`peft_config=` dropped")]
    assert (dropped.line, dropped.severity, dropped.fix) == (12, Severity.INFO, Fix.APPLIED)
    assert run(out, select=("TRL109",))[0] == out


@pytest.mark.parametrize(
    ("change", "todo"),
    [
        pytest.param(
            (
                "    model = get_peft_model(model, config)\n",
                "    if args.lora:\n        model = get_peft_model(model, config)\n",
            ),
            True,
            id="in-a-branch",
        ),
        pytest.param(
            (
                "    model = get_peft_model(model, config)\n",
                "    model = get_peft_model(model, config)\n    model, extra = model, 1\n",
            ),
            False,
            id="rebound-by-an-unpacking",
        ),
        pytest.param(
            ("    trainer = ", "    model: object = base\n    trainer = "),
            False,
            id="rebound-with-an-annotation",
        ),
        pytest.param(
            ("get_peft_model(model, config)", "wrap(model, config)"), False, id="no-peft-model"
        ),
        pytest.param(("SFTTrainer(", "DPOTrainer("), False, id="dpo-merged-instead"),
        pytest.param(("        max_seq_length=512,\n", ""), False, id="era-unknown"),
    ],
)
def test_peft_config_beside_a_maybe_peft_model(change, todo):
    before = dedent(PEFT_TWICE).replace(*change)
    out, findings = run(before, select=("TRL109",))
    assert "peft_config=config" in out
    assert not any(f.message.startswith("`peft_config=` dropped") for f in findings)
    told = [f for f in findings if f.message.startswith("`model` may be a PeftModel here")]
    assert len(told) == (1 if todo else 0)
    assert run(out, select=("TRL109",))[0] == out


# -- defaults TRL 1.13 changed -----------------------------------------------------------------
REWARD_CONFIG = 'from trl import RewardConfig\nconfig = RewardConfig("rm", fp16=True)\n'


def _with_releases(src: str, releases: tuple[str, ...]) -> tuple[str, list]:
    import codemods
    from codemods.base import Options
    from codemods.engine import fix_text

    options = Options(trl_releases=releases, trl_declared=f"trl=={releases[0]} (requirements.txt)")
    return fix_text(src, path="t.py", rules=codemods.select(SELECT), options=options)


def test_settings_left_to_changed_defaults_are_said_when_the_release_is_not_known():
    out, findings = run(REWARD_CONFIG, select=SELECT)
    assert out == REWARD_CONFIG
    assert [f.message for f in findings] == [
        "`RewardConfig(...)` leaves settings to defaults TRL 1.13 changed, so the run trains "
        "differently: disable_dropout=True (False in TRL 0.7.11-0.13.0); "
        "gradient_checkpointing=True (False in TRL 0.7.11-0.21.0); learning_rate=0.0001 "
        "(5e-05 in TRL 0.7.11-0.23.1); logging_steps=10 (500 in TRL 0.7.11-0.18.2); set each to "
        "the value your TRL release used (or pass --trl-version, and the rewrite keeps that "
        "release's)"
    ]  # no bf16: fp16=True makes TRL 1.13's bf16 False too
    assert findings[0].severity is Severity.WARNING and findings[0].fix is Fix.NONE


def test_settings_left_to_changed_defaults_keep_the_declared_releases_values():
    out, findings = _with_releases(REWARD_CONFIG, ("0.11.4",))
    assert out == (
        "from trl import RewardConfig\n"
        'config = RewardConfig("rm", fp16=True, disable_dropout=False, '
        "gradient_checkpointing=False, learning_rate=5e-05, logging_steps=500)\n"
    )
    assert findings[0].message.startswith(
        "`RewardConfig(...)` left `disable_dropout`, `gradient_checkpointing`, `learning_rate`, "
        "`logging_steps` to defaults TRL 1.13 changed; kept at those of trl==0.11.4 "
        "(requirements.txt): disable_dropout=False (1.13: True)"
    )
    assert _with_releases(out, ("0.11.4",))[0] == out


@pytest.mark.parametrize(
    ("releases", "kept", "said"),
    [
        # 0.20: dropout off and logging every 10 already; the other two as before 1.13
        (("0.20.0",), "gradient_checkpointing=False, learning_rate=5e-05", ""),
        (("1.12.0",), "", ""),  # every one of them as in 1.13
        # 0.23.5 sits between the last release read with 5e-05 (0.23.1) and 0.24.0
        (("0.23.5",), "", "learning_rate=0.0001 (5e-05 in TRL 0.7.11-0.23.1)"),
        # two releases with different defaults: said, not kept
        (("0.11.4", "1.12.0"), "", "gradient_checkpointing=True (False in TRL 0.7.11-0.21.0)"),
    ],
)
def test_the_declared_releases_decide_what_is_kept(releases, kept, said):
    out, findings = _with_releases(REWARD_CONFIG, releases)
    if kept:
        assert out.endswith(f'RewardConfig("rm", fp16=True, {kept})\n')
    else:
        assert out == REWARD_CONFIG
    told = [f.message for f in findings if "leaves settings" in f.message]
    assert (said in told[0]) if said else not told


def test_a_config_that_unpacks_values_is_not_said_to_leave_defaults():
    src = "from trl import SFTConfig\nconfig = SFTConfig(**cfg)\n"
    assert assert_noop(src, select=SELECT) == []


def test_fix_keeps_the_defaults_of_the_trl_release_a_project_requires(tmp_path):
    """`fix` reads the project's requirement files for an SFT/DPO/Reward config too."""
    from migrate import api

    (tmp_path / "requirements.txt").write_text("trl==0.11.4\npeft\n")
    script = tmp_path / "train_rm.py"
    script.write_text(REWARD_CONFIG)
    report = api.fix_paths([str(tmp_path)])
    assert script.read_text() == (
        "from trl import RewardConfig\n"
        'config = RewardConfig("rm", fp16=True, disable_dropout=False, '
        "gradient_checkpointing=False, learning_rate=5e-05, logging_steps=500)\n"
    )
    (result,) = report.results
    assert "kept at those of trl==0.11.4 (requirements.txt)" in result.findings[0].message


# -- the columns of tokenized preference pairs (TRL <= 0.23's input_ids_chosen, ...) ---------

_ROWS = dedent(
    """
    from trl import RewardTrainer

    def tokenize(example):
        chosen = tokenizer(example["chosen"], truncation=True)
        rejected = tokenizer(example["rejected"], truncation=True{padding})
        return {{
            "input_ids_chosen": chosen["input_ids"],
            "attention_mask_chosen": chosen["attention_mask"],
            'input_ids_rejected': rejected["input_ids"],
            "attention_mask_rejected": rejected["attention_mask"],
        }}

    def evaluate(texts):
        return tokenizer(texts, padding=True, return_tensors="pt")

    ds = ds.map(tokenize).filter(lambda x: len(x["input_ids_chosen"]) <= 512)
    trainer = RewardTrainer(model=model, args=args, train_dataset=ds{extra})
    """
)


def test_reward_columns_renamed_where_the_rows_are_built_and_read():
    before = _ROWS.format(padding="", extra="")
    after = before.replace('"input_ids_chosen"', '"chosen_ids"').replace(
        "'input_ids_rejected'", "'rejected_ids'"
    )
    findings = assert_fixes(before, after, select=SELECT)
    [said] = [f for f in findings if "chosen_ids" in f.message]
    assert (said.line, said.severity, said.fix) == (7, Severity.INFO, Fix.APPLIED)
    assert said.message.startswith(
        "the columns `input_ids_chosen`/`input_ids_rejected` are now `chosen_ids`/`rejected_ids`"
    )
    assert "drops pairs longer than `max_length`" in said.message


def test_a_batch_of_the_trainers_dataloader_reads_the_halves_of_input_ids():
    # seen in BaleChen/LaGE: a first batch printed before train() read the old collator's keys;
    # renamed like the columns it would stop on KeyError: 'chosen_ids'
    before = dedent(
        """
        from trl import RewardTrainer

        def main():
            ds = ds0.map(lambda x: {"input_ids_chosen": c(x), "input_ids_rejected": r(x)})
            trainer = RewardTrainer(model=model, args=args, train_dataset=ds)
            for batch in trainer.get_train_dataloader():
                break
            shown = tok.batch_decode(batch["input_ids_chosen"]), batch["input_ids_rejected"]
            row = ds[0]["input_ids_chosen"]
        """
    )
    halves = (
        'batch["input_ids"][: len(batch["input_ids"]) // 2]',
        'batch["input_ids"][len(batch["input_ids"]) // 2 :]',
    )
    after = (
        before.replace('batch["input_ids_chosen"]', halves[0])
        .replace('batch["input_ids_rejected"]', halves[1])
        .replace('"input_ids_chosen"', '"chosen_ids"')
        .replace('"input_ids_rejected"', '"rejected_ids"')
    )
    findings = assert_fixes(before, after, select=SELECT)
    said = [f for f in findings if "is a batch of the trainer's dataloader" in f.message]
    assert [(f.line, f.severity) for f in said] == [(8, Severity.INFO), (8, Severity.INFO)]
    assert "the chosen sequences in the first half" in said[0].message


def test_a_batch_read_alone_says_nothing_of_columns():
    before = (
        "from trl import RewardTrainer\n"
        "trainer = RewardTrainer(model=m, args=a, train_dataset=d)\n"
        "for batch in trainer.get_eval_dataloader():\n"
        "    print(batch['input_ids_rejected'])\n"
    )
    after = before.replace(
        "batch['input_ids_rejected']", 'batch["input_ids"][len(batch["input_ids"]) // 2 :]'
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert not [f for f in findings if "are now `chosen_ids`" in f.message]
    assert [f.line for f in findings if "is a batch of the trainer's" in f.message] == [4]


def test_reward_columns_keep_a_u_prefix_and_a_collator_given_as_none():
    before = (
        "from trl import RewardTrainer\n"
        "row = {u'input_ids_chosen': c, 'input_ids_rejected': r}\n"
        "RewardTrainer(model=m, args=a, train_dataset=d, data_collator=None)\n"
    )
    after = before.replace("u'input_ids_chosen'", "u'chosen_ids'").replace(
        "'input_ids_rejected'", "'rejected_ids'"
    )
    assert_fixes(before, after, select=SELECT)


def test_reward_columns_dict_keywords_and_assigned_keys():
    before = dedent(
        """
        import trl

        def rows(c, r):
            out = dict(input_ids_chosen=c, attention_mask_chosen=[1] * len(c))
            out["input_ids_rejected"] = r
            return out

        t = trl.RewardTrainer(model, args, train_dataset=data)
        """
    )
    after = before.replace("dict(input_ids_chosen=", "dict(chosen_ids=").replace(
        'out["input_ids_rejected"]', 'out["rejected_ids"]'
    )
    assert_fixes(before, after, select=SELECT)


@pytest.mark.parametrize(
    ("padding", "todo"),
    [
        pytest.param(
            ', padding="max_length", max_length=512', "pads the tokenized pairs", id="max-length"
        ),
        pytest.param(", padding=True", "pads texts tokenized together", id="longest"),
        pytest.param(", padding=False", None, id="not-padded"),
        pytest.param(', padding="do_not_pad"', None, id="do-not-pad"),
    ],
)
def test_reward_columns_padding_said_in_the_function_that_builds_rows(padding, todo):
    before = _ROWS.format(padding=padding, extra="")
    renamed = before.replace('"input_ids_chosen"', '"chosen_ids"').replace(
        "'input_ids_rejected'", "'rejected_ids'"
    )
    out, findings = run(before, select=SELECT)
    pads = [f for f in findings if "`padding=" in f.message]
    if todo is None:
        assert out == renamed and pads == []
        return
    # one TODO, on the call that pads the rows; the evaluation's padding is not the rows'
    [pad] = pads
    assert (pad.line, pad.severity, pad.fix) == (5, Severity.WARNING, Fix.MANUAL)
    assert todo in pad.message and "the trainer pads each batch itself" in pad.message
    line = "    rejected = tokenizer("
    assert out == renamed.replace(line, f"    # TODO(trl-migrate TRL109): {pad.message}\n{line}")
    assert run(out, select=SELECT)[0] == out


def test_reward_columns_padding_in_a_kwargs_dict():
    before = dedent(
        """
        from trl import RewardTrainer
        def fmt(sample):
            kwargs = {"padding": "max_length", "truncation": True, "max_length": 512}
            c = tok(sample["chosen"], **kwargs)
            return {"input_ids_chosen": c["input_ids"][0], "input_ids_rejected": c["input_ids"][0]}
        RewardTrainer(model=m, args=a, train_dataset=d.map(fmt))
        """
    )
    out, findings = run(before, select=SELECT)
    [pad] = [f for f in findings if "`padding=" in f.message]
    assert pad.message.startswith('`padding="max_length"` pads the tokenized pairs')
    assert '"chosen_ids": c' in out and "# TODO(trl-migrate TRL109): `padding=" in out


@pytest.mark.parametrize(
    ("src", "why"),
    [
        pytest.param(
            _ROWS.format(padding="", extra=", data_collator=collate"),
            "`data_collator=collate` builds the batches of TRL <= 0.23's RewardTrainer",
            id="own-collator",
        ),
        pytest.param(
            _ROWS.format(padding="", extra="").replace(
                "trainer = RewardTrainer(",
                "class Mine(RewardTrainer):\n"
                "    def compute_loss(self, model, inputs, return_outputs=False):\n"
                '        return model(inputs["input_ids_chosen"])\n\n'
                "trainer = Mine(",
            ),
            "`Mine` reads the batch keys of TRL <= 0.23's RewardTrainer",
            id="subclass-reads-old-keys",
        ),
    ],
)
def test_reward_columns_kept_with_a_todo_where_batches_are_the_scripts_own(src, why):
    out, findings = run(src, select=SELECT)
    [todo] = [f for f in findings if f.fix is Fix.MANUAL]
    assert todo.message.startswith(why)
    assert "first half of the batch" in todo.message
    assert out.count('"input_ids_chosen"') == src.count('"input_ids_chosen"')
    assert f"# TODO(trl-migrate TRL109): {todo.message}" in out
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from transformers import Trainer\n"
            "class RewardTrainer(Trainer):\n"
            "    def compute_loss(self, model, inputs):\n"
            '        return model(inputs["input_ids_chosen"])\n'
            "row = {'input_ids_chosen': ids}\n"
            "RewardTrainer(model=m, train_dataset=d)\n",
            id="the-scripts-own-reward-trainer",
        ),
        pytest.param(
            "from trl import RewardTrainer\nrow = {'input_ids_chosen': ids}\n",
            id="no-trainer-built",
        ),
        pytest.param(
            "from trl import RewardTrainer\n"
            "row = {'chosen_ids': ids}\n"
            "RewardTrainer(model=m, args=a, train_dataset=d)\n",
            id="new-columns-already",
        ),
        pytest.param(
            "from trl import RewardTrainer\n"
            "# rows used to carry 'input_ids_chosen'\n"
            "row = {'input_' + 'ids_chosen': ids}\n"
            "RewardTrainer(model=m, args=a, train_dataset=d)\n",
            id="old-name-in-a-comment-only",
        ),
        pytest.param(
            "from trl import RewardTrainer\n"
            "row = {f'input_ids_chosen': ids, b'input_ids_rejected': ids}\n"
            "RewardTrainer(model=m, args=a, train_dataset=d)\n",
            id="not-plain-strings",
        ),
    ],
)
def test_reward_columns_noop(src):
    assert [f for f in assert_noop(src, select=SELECT) if "chosen_ids" in f.message] == []


# -- configs parsed from the command line: the defaults TRL 1.13 changed ----------------------

_PARSED = dedent(
    """
    from transformers import HfArgumentParser
    from trl import ModelConfig, RewardConfig
    parser = HfArgumentParser((ScriptArguments, RewardConfig, ModelConfig))
    script_args, config, model_config = parser.parse_args_into_dataclasses()
    """
)


def _declared(release: str):
    import codemods
    from codemods.base import Options
    from codemods.engine import fix_text

    options = dataclasses.replace(
        Options(), trl_releases=(release,), trl_declared=f"trl=={release}"
    )
    return lambda src: fix_text(src, path="t.py", rules=codemods.select(SELECT), options=options)


def test_parsed_config_changed_defaults_said():
    out, findings = run(_PARSED, select=SELECT)
    assert out == _PARSED
    [note, said] = findings
    # Multimood's reward script: pairs over 1024 tokens are dropped now, over 512 in TRL 0.12-0.13
    assert (note.line, note.severity, note.fix) == (3, Severity.WARNING, Fix.NONE)
    assert note.message.startswith(
        "`max_length` of the parsed RewardConfig, where the command line leaves it out: "
        "RewardTrainer of TRL 1.13 drops every pair longer than max_length tokens (1024 when "
        "unset); TRL 0.12-0.13 dropped those over 512"
    )
    assert (said.line, said.severity, said.fix) == (3, Severity.WARNING, Fix.NONE)
    assert said.message.startswith(
        "the parsed config starts from TRL 1.13's defaults where the command line leaves a "
        "field out, and these changed, so the run trains differently: RewardConfig: bf16=True "
        "(False in TRL 0.7.11-0.18.2); disable_dropout=True (False in TRL 0.7.11-0.13.0); "
    )
    assert "or `parser.set_defaults(...)` them" in said.message


def test_parsed_config_keeps_the_declared_release_defaults():
    fix = _declared("0.11.4")
    out, findings = fix(_PARSED)
    assert out == _PARSED.replace(
        "script_args, config",
        "parser.set_defaults(bf16=False, disable_dropout=False, gradient_checkpointing=False, "
        "learning_rate=5e-05, logging_steps=500)\nscript_args, config",
    )
    [note] = [f for f in findings if f.message.startswith("`max_length` of the parsed")]
    [said] = [f for f in findings if f is not note]
    assert (said.line, said.severity, said.fix) == (3, Severity.WARNING, Fix.APPLIED)
    assert "`parser.set_defaults(...)` keeps those of trl==0.11.4" in said.message
    assert "learning_rate=5e-05 (1.13: 0.0001)" in said.message
    again, more = fix(out)
    assert again == out and [f.message for f in more] == [note.message]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        pytest.param(
            _PARSED + "parser.set_defaults(learning_rate=1e-5)\n",
            ["bf16", "disable_dropout", "gradient_checkpointing", "logging_steps"],
            id="set-by-the-script-already",
        ),
        pytest.param(_PARSED + "parser.set_defaults(**defaults)\n", None, id="set-unpacked"),
        pytest.param(
            "from transformers import HfArgumentParser\nfrom trl import SFTConfig\n"
            "(config,) = HfArgumentParser(SFTConfig).parse_args_into_dataclasses()\n",
            ["bf16", "gradient_checkpointing", "learning_rate", "logging_steps"],
            id="no-parser-variable",
        ),
        pytest.param(
            "from transformers import HfArgumentParser\nfrom mylib import RewardConfig\n"
            "parser = HfArgumentParser((RewardConfig,))\n",
            None,
            id="another-librarys-config",
        ),
    ],
)
def test_parsed_config_fields_said(src, expected):
    out, findings = run(src, select=SELECT)
    assert out == src
    if expected is None:
        assert findings == []
        return
    [said] = [f for f in findings if not f.message.startswith("`max_length` of the parsed")]
    assert sorted(re.findall(r"(\w+)=[^ ]+ \([^)]*TRL", said.message)) == expected


def test_the_reward_trainer_appending_eos_is_said_unless_the_release_did():
    """quangtuan-0504/Multimood trains its reward model on chosen/rejected text: TRL 0.24 on
    append EOS to each (RewardTrainer's `add_eos`), 0.23 and earlier did not."""
    src = "from trl import RewardConfig, RewardTrainer\nt = RewardTrainer(model=m, args=RewardConfig('o'), train_dataset=pairs)\n"
    _, findings = run(src, select=SELECT)
    [eos] = [f for f in findings if "EOS" in f.message]
    assert eos.message == (
        "TRL 1.13's RewardTrainer appends the tokenizer's EOS token to every chosen and rejected "
        "text it tokenizes, which TRL 0.23.1 and earlier did not: if this script ran on those, "
        "the reward model now scores each text with an EOS at its end (a PPO or RLOO run that "
        "decodes completions without one reads its score elsewhere) (a dataset already "
        "tokenized, or of conversations, is left as it is)"
    )
    assert (eos.severity, eos.fix) == (Severity.WARNING, Fix.NONE)
    newer = src.replace("RewardConfig('o')", "RewardConfig('o', pad_token='<pad>')")
    assert not [f for f in run(newer, select=SELECT)[1] if "EOS" in f.message]
    declared = _declared("0.24.0")
    assert not [f for f in declared(src)[1] if "EOS" in f.message]


# -- SFTTrainer appends EOS (TRL 0.17 on) ------------------------------------------------------

_SFT = "from trl import SFTTrainer\nt = SFTTrainer(model, train_dataset=ds{extra})\n"


@pytest.mark.parametrize(
    ("src", "releases", "said"),
    [
        pytest.param(
            _SFT.format(extra=""),
            None,
            "which TRL 0.16.1 and earlier did not: if this script ran on those",
            id="release-unknown",
        ),
        pytest.param(
            _SFT.format(extra=", dataset_text_field='text'"),
            None,
            "as TRL 0.17.0 on did, and the TRL release this call was written for (its keywords "
            "ran up to 0.12) did not",
            id="old-keywords",
        ),
        pytest.param(
            _SFT.format(extra=""),
            "0.15.2",
            "as TRL 0.17.0 on did, and trl==0.15.2 did not",
            id="declared-before",
        ),
        pytest.param(_SFT.format(extra=""), "0.19.1", None, id="declared-after"),
        pytest.param(
            "from trl import SFTConfig, SFTTrainer\n"
            "t = SFTTrainer(model, args=SFTConfig('o', completion_only_loss=True), "
            "train_dataset=ds)\n",
            None,
            None,
            id="config-field-of-a-release-that-appends",
        ),
        pytest.param(
            "from trl import SFTConfig, SFTTrainer\n"
            "t = SFTTrainer(model, args=SFTConfig('o', bf16=True), train_dataset=ds)\n",
            None,
            "which TRL 0.16.1 and earlier did not",
            id="training-arguments-field-tells-nothing",
        ),
        pytest.param(
            "from mylib import SFTTrainer\nt = SFTTrainer(model, train_dataset=ds)\n",
            None,
            None,
            id="another-librarys-trainer",
        ),
    ],
)
def test_sft_trainer_appending_eos_is_said(src, releases, said):
    out, findings = (_declared(releases) if releases else lambda s: run(s, select=SELECT))(src)
    eos = [f for f in findings if "EOS token" in f.message]
    if said is None:
        assert eos == []
        return
    [f] = eos
    assert (f.line, f.severity, f.fix) == (2, Severity.WARNING, Fix.NONE)
    assert f.message.startswith(
        "TRL 1.13's SFTTrainer appends the tokenizer's EOS token to every text (and completion) "
        "it tokenizes, "
    )
    assert said in f.message and "now also learns to end each example with EOS" in f.message
    assert run(out, select=SELECT)[0] == out


OLD_DPO = "this DPOTrainer call was written for TRL 0.12 or older: "
CUT = "its trainer cut a pair that did not fit in `max_length` (512 by default in TRL 0.5-0.11)"
REF = "with no `ref_model`, TRL 0.6-0.28 froze a copy of the policy as it was handed in"


@pytest.mark.parametrize(
    ("call", "said"),
    [
        pytest.param("DPOTrainer(model, args=args, beta=0.1, tokenizer=tok)", (CUT, REF), id="all"),
        pytest.param(
            "DPOTrainer(model, args=args, beta=0.1, max_length=256)", (REF,), id="max-length-given"
        ),
        pytest.param("DPOTrainer(model, ref, args=args, beta=0.1)", (CUT,), id="a-reference"),
        pytest.param(
            "DPOTrainer(model, None, args=args, beta=0.1, peft_config=lora)",
            (CUT,),
            id="peft-reference-is-the-adapter-off",
        ),
        pytest.param("DPOTrainer(model, ref, args=args, beta=0.1, max_length=8)", (), id="none"),
    ],
)
def test_an_old_dpo_trainer_call_says_what_its_trainer_did_by_default(call, said):
    # JAGADISHSUNILPEDNEKAR/RLHF-training-pipeline (the eighth-round audit): a 0.8-era
    # `DPOTrainer(args=TrainingArguments(...), beta=0.1)` on GPT-2, converted with no word of
    # the 512/128 prompt-first cut, the BOS before each prompt, or the reference reloaded in fp32
    src = (
        "from transformers import TrainingArguments\nfrom trl import DPOTrainer\n"
        f"args = TrainingArguments('o')\nt = {call}\n"
    )
    _, findings = run(src, select=SELECT)
    [note] = [f for f in findings if f.message.startswith(OLD_DPO)] or [None]
    if not said:
        assert note is None
        return
    assert note.severity is Severity.WARNING and note.fix is Fix.NONE
    parts = note.message[len(OLD_DPO) :].split("; with no `ref_model`")
    assert (CUT in parts[0]) is (CUT in said)
    assert (REF in note.message) is (REF in said)
    if CUT in said:
        assert parts[0].endswith(
            "TRL 1.13 cuts prompt and completion together to their first 1024 tokens, with no "
            "prompt limit, and adds BOS only where the tokenizer does: `max_length=512` on the "
            "DPOConfig keeps the old bound (the prompt-first cut has no setting)"
        )


def test_an_adapter_loaded_in_a_branch_before_an_sft_trainer_given_peft_config_is_a_todo():
    # YangRui2015/RiC's online rounds: `model = PeftModel.from_pretrained(model, path,
    # is_trainable=True)` under `if peft_name is not None:`, then `SFTTrainer(model=model, ...,
    # peft_config=lora_config)`: TRL 0.8 trained the loaded adapter, TRL 1.13 raises on the pair
    src = dedent(
        """
        from peft import PeftModel
        from trl import SFTTrainer
        def train(model, args, ds, lora, peft_name):
            if peft_name is not None:
                model = PeftModel.from_pretrained(model, peft_name, is_trainable=True)
            t = SFTTrainer(model=model, args=args, train_dataset=ds, peft_config=lora, max_seq_length=8)
        """
    )
    out, findings = run(src, select=SELECT)
    assert (
        "# TODO(trl-migrate TRL109): `model` may be a PeftModel here (`PeftModel.from_pretrained` "
        "in a branch above): SFTTrainer of TRL 0.4-0.12 then left `peft_config` unused"
    ) in out
    assert run(out, select=SELECT)[0] == out


BATCHED = """
from trl import SFTTrainer


def formatting_prompts_func(examples):
    output_texts = []
    for i in range(len(examples["q"])):
        output_texts.append(f"### Q: {examples['q'][i]} ### A: {examples['a'][i]}")
    return output_texts


def as_comprehension(batch):
    return [f"{q}\\n\\n{a}" for q, a in zip(batch["q"], batch["a"])]


def one(example):
    return f"{example['q']} {example['a']}"


t1 = SFTTrainer(model, args=args, train_dataset=ds, formatting_func=formatting_prompts_func)
t2 = SFTTrainer(model, args=args, train_dataset=ds, formatting_func=as_comprehension)
t3 = SFTTrainer(model, args=args, train_dataset=ds, formatting_func=one)
"""


def test_a_batched_formatting_function_is_handed_a_batch_of_one_example():
    # raschedh/ppo_reasoning: a formatting function written for TRL <= 0.20, which mapped it
    # over batches and wanted a list; TRL 1.13 calls it per example and wants one text
    src = dedent(BATCHED)
    out, findings = run(src, select=SELECT)
    for name in ("formatting_prompts_func", "as_comprehension"):
        assert (
            f"formatting_func=lambda example: {name}({{key: [value] for key, value in "
            "example.items()})[0])\n" in out
        )
    assert "formatting_func=one)\n" in out
    said = [f for f in findings if "builds a list of texts from a batch" in f.message]
    assert [f.line for f in said] == [19, 20] and {f.fix for f in said} == {Fix.APPLIED}
    assert run(out, select=SELECT)[0] == out
    # the wrapped function gives each example the text its batch of one gave
    scope: dict = {}
    exec(out.split("\nt1 = ")[0], scope)
    for name in ("formatting_prompts_func", "as_comprehension"):
        line = next(ln for ln in out.splitlines() if f"lambda example: {name}" in ln)
        wrapped = eval(line.split("formatting_func=", 1)[1][:-1], scope)
        example = {"q": "why?", "a": "because"}
        assert wrapped(example) == scope[name]({"q": ["why?"], "a": ["because"]})[0]
        assert isinstance(wrapped(example), str)


_KBIT = """from peft import LoraConfig
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from trl import SFTTrainer
bnb = BitsAndBytesConfig(load_in_4bit=True)
model = AutoModelForCausalLM.from_pretrained("m", {load})
{prepared}trainer = SFTTrainer(model=model, train_dataset=ds, peft_config={peft}{extra})
"""
KBIT_SAID = (
    "`model` is loaded in 8/4 bits (AutoModelForCausalLM.from_pretrained{maybe}) and given with "
    "`peft_config`: SFTTrainer of TRL 0.21.0 and older{ran} prepared such a model for k-bit "
    "training before adding the adapter (peft's `prepare_model_for_kbit_training`: the weights "
    "that are not quantized, layer norms and embeddings, cast to float32, and gradient "
    "checkpointing on as the config's `gradient_checkpointing` says, always on up to 0.7.1); "
    "TRL 1.13 does neither and casts the adapter's weights to bf16: {when}, write `model = "
    "peft.prepare_model_for_kbit_training(model, use_gradient_checkpointing=...)` before "
    "building the trainer"
)


def _kbit(load="quantization_config=bnb", peft="LoraConfig(r=8)", extra="", prepared=""):
    return _KBIT.format(load=load, peft=peft, extra=extra, prepared=prepared)


@pytest.mark.parametrize(
    ("src", "releases", "maybe", "ran", "when"),
    [
        # seen in the corpus's SFT stages (stack-llama copies, izaanz, BaleChen): a QLoRA load
        # handed to SFTTrainer with peft_config, which TRL <= 0.21 prepared for k-bit training
        pytest.param(
            _kbit(),
            None,
            "",
            "",
            "if this script ran on one of those, to train as it did",
            id="release-unknown",
        ),
        pytest.param(
            _kbit(load="load_in_8bit=True", extra=", dataset_text_field='text'"),
            None,
            "",
            " (this call's keywords ran up to 0.12)",
            "to train as it did",
            id="old-keywords-8bit-flag",
        ),
        pytest.param(
            _kbit(load="load_in_4bit=args.q4"),
            "0.19.1",
            " when the flag is true",
            " (the project's trl==0.19.1 among them)",
            "to train as it did",
            id="declared-flag-read-at-run-time",
        ),
    ],
)
def test_a_kbit_model_given_peft_config_to_sft_is_said_to_lose_its_preparation(
    src, releases, maybe, ran, when
):
    out, findings = (_declared(releases) if releases else lambda s: run(s, select=SELECT))(src)
    said = [f for f in findings if "k-bit training" in f.message]
    [f] = said
    assert (f.line, f.severity, f.fix) == (6, Severity.WARNING, Fix.NONE)
    assert f.message == KBIT_SAID.format(maybe=maybe, ran=ran, when=when)
    assert "prepare_model_for_kbit_training" not in out  # said, not written
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("src", "releases"),
    [
        pytest.param(_kbit(load="torch_dtype=torch.bfloat16"), None, id="not-quantized"),
        pytest.param(_kbit(load="load_in_4bit=False"), None, id="flag-false"),
        pytest.param(_kbit(peft="None"), None, id="peft-config-none"),
        pytest.param(
            _kbit().replace(", peft_config=LoraConfig(r=8)", ""), None, id="no-peft-config"
        ),
        pytest.param(
            _kbit(prepared="model = prepare_model_for_kbit_training(model)\n"),
            None,
            id="prepared-by-the-script",
        ),
        pytest.param(_kbit(), "0.22.0", id="declared-release-without-it"),
        pytest.param(
            _kbit(load="quantization_config=bnb").replace(
                'model = AutoModelForCausalLM.from_pretrained("m", quantization_config=bnb)',
                "model = load_policy()",
            ),
            None,
            id="model-not-loaded-here",
        ),
    ],
)
def test_no_kbit_preparation_note_where_nothing_was_prepared(src, releases):
    _, findings = (_declared(releases) if releases else lambda s: run(s, select=SELECT))(src)
    assert not [f for f in findings if "k-bit training" in f.message]


def test_a_moved_value_bound_below_the_config_goes_through_the_trainers_copy():
    # rcalix1/TransferLearning's Math_SFT_GPT2 notebook: the config in cell 4, `model_kwargs` in
    # cell 8, the trainer in cell 11: moved into the config, the name was read before it was bound
    before = dedent(
        """
        from trl import SFTConfig, SFTTrainer
        args = SFTConfig("o", max_length=512)
        model_kwargs = dict(torch_dtype="auto")
        t = SFTTrainer(model="m", args=args, train_dataset=ds, model_init_kwargs=model_kwargs)
        """
    )
    out, findings = run(before, select=SELECT)
    assert 'args = SFTConfig("o", max_length=512)\n' in out
    assert (
        't = SFTTrainer(model="m", args=trl_config_with(SFTConfig, args, '
        "model_init_kwargs=model_kwargs), train_dataset=ds)\n"
    ) in out
    [said] = [f for f in findings if f.message.startswith("`SFTTrainer(model_init_kwargs=...)`")]
    assert (
        "the config passed as `args` is built above where a name this value reads is bound"
        in said.message
    )
    assert run(out, select=SELECT)[0] == out
    # bound above the config: moved into it, as before
    above = before.replace(
        'args = SFTConfig("o", max_length=512)\nmodel_kwargs = dict(torch_dtype="auto")\n',
        'model_kwargs = dict(torch_dtype="auto")\nargs = SFTConfig("o", max_length=512)\n',
    )
    out, _ = run(above, select=SELECT)
    assert 'args = SFTConfig("o", max_length=512, model_init_kwargs=model_kwargs)' in out


@pytest.mark.parametrize(
    ("fp16", "pinned"),
    [
        # bkd7911/RIT_LLM: on a machine without CUDA the old run trained in fp32; TRL 1.13 makes
        # an unset bf16 `not fp16`, True there
        pytest.param("True if torch.cuda.is_available() else False", True, id="expression"),
        pytest.param("False", True, id="false"),
        pytest.param("True", False, id="true"),
    ],
)
def test_bf16_is_kept_beside_an_fp16_that_may_be_false(fp16, pinned):
    src = f"import torch\nfrom trl import RewardConfig\nc = RewardConfig(output_dir='o', fp16={fp16})\n"
    out, _ = _declared("0.15.2")(src)
    assert ("bf16=False" in out) is pinned, out


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from trl import SFTTrainer\nfrom trl.trainer import ConstantLengthDataset\n"
            "ds = ConstantLengthDataset(tok, raw, seq_length=1024)\n"
            "t = SFTTrainer(model, train_dataset=ds, peft_config=None)\n",
            id="bound-to-a-name",
        ),
        pytest.param(
            "from trl import SFTTrainer\nfrom trl.trainer import ConstantLengthDataset\n"
            "def create_datasets(tok, args):\n"
            "    return ConstantLengthDataset(tok, a), ConstantLengthDataset(tok, b)\n"
            "train_dataset, eval_dataset = create_datasets(tok, args)\n"
            "t = SFTTrainer(model, train_dataset=train_dataset, eval_dataset=eval_dataset)\n",
            id="built-by-a-function-of-the-file",
        ),
    ],
)
def test_a_constant_length_dataset_handed_to_sft_trainer_is_a_todo(src):
    """stack_llama_2's sft_llama2.py and its copies: TRL 1.13's SFTTrainer refuses a torch
    IterableDataset (TypeError) where the old one trained on it as it was."""
    out, findings = run(src, select=SELECT)
    [todo] = [f for f in findings if "ConstantLengthDataset" in f.message]
    assert todo.fix is Fix.MANUAL and todo.message.startswith(
        "`train_dataset` is a ConstantLengthDataset (a torch IterableDataset of packed token ids)"
    )
    assert out.count("# TODO(trl-migrate TRL109): `train_dataset` is a ConstantLengthDataset") == 1
    assert run(out, select=SELECT)[0] == out


def test_a_datasets_dataset_handed_to_sft_trainer_is_no_constant_length_todo():
    src = (
        "from trl import SFTTrainer\nfrom trl.trainer import ConstantLengthDataset\n"
        "ds = load_dataset('x')\nt = SFTTrainer(model, train_dataset=ds)\n"
    )
    assert not [f for f in run(src, select=SELECT)[1] if "ConstantLengthDataset" in f.message]
