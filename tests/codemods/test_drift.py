"""TRL108 drift: no-op, fix and TODO cases, exact text, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL108",)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "import trl\nfrom transformers import TrainingArguments\n"
            "args = TrainingArguments('out', eval_strategy='steps')\n",
            id="new-name",
        ),
        pytest.param("import trl\nfrom peft import prepare_model_for_kbit_training\n", id="kbit"),
        pytest.param("import trl\nrun(evaluation_strategy='steps')\n", id="not-a-training-args"),
        pytest.param(
            "import trl\nfrom accelerate.utils.deepspeed import DummyOptim\n", id="moved-already"
        ),
        pytest.param(
            "import trl\nfrom mylib import prepare_model_for_int8_training\n", id="own-function"
        ),
        pytest.param("import trl\nx = cfg.use_auth_token\n", id="attribute-read"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            import trl
            from transformers import TrainingArguments
            args = TrainingArguments(
                output_dir="out",
                evaluation_strategy="steps",  # every eval_steps
            )
            """,
            """
            import trl
            from transformers import TrainingArguments
            args = TrainingArguments(
                output_dir="out",
                eval_strategy="steps",  # every eval_steps
            )
            """,
            id="training-args",
        ),
        pytest.param(
            """
            from trl import SFTConfig
            cfg = SFTConfig("out", evaluation_strategy="epoch")
            """,
            """
            from trl import SFTConfig
            cfg = SFTConfig("out", eval_strategy="epoch")
            """,
            id="trl-config",
        ),
        pytest.param(
            """
            import trl
            from datasets import load_dataset
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(name, use_auth_token=True)
            ds = load_dataset("x", use_auth_token=hf_token)
            """,
            """
            import trl
            from datasets import load_dataset
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(name, token=True)
            ds = load_dataset("x", token=hf_token)
            """,
            id="use-auth-token",
        ),
        pytest.param(
            """
            import trl
            from peft import LoraConfig, prepare_model_for_int8_training
            model = prepare_model_for_int8_training(model)
            """,
            """
            import trl
            from peft import LoraConfig, prepare_model_for_kbit_training as prepare_model_for_int8_training
            model = prepare_model_for_int8_training(model)
            """,
            id="int8-alias",
        ),
        pytest.param(
            """
            import trl
            import peft
            model = peft.prepare_model_for_int8_training(model)
            """,
            """
            import trl
            import peft
            model = peft.prepare_model_for_kbit_training(model)
            """,
            id="int8-attribute",
        ),
        pytest.param(
            """
            import trl
            from accelerate.utils import DummyOptim, DummyScheduler, set_seed
            """,
            """
            import trl
            from accelerate.utils import set_seed
            from accelerate.utils.deepspeed import DummyOptim, DummyScheduler
            """,
            id="dummy-optim",
        ),
    ],
)
def test_fixes(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    assert findings and all(f.fix is Fix.APPLIED for f in findings)


def test_what_has_no_exact_replacement_gets_one_todo():
    src = "import trl\nfrom transformers import top_k_top_p_filtering\n"
    out, findings = run(src, select=SELECT)
    assert out.splitlines()[1].startswith(
        "# TODO(trl-migrate TRL108): `transformers.top_k_top_p_filtering` is gone: removed in "
        "transformers 4.40: filter logits with `transformers.TopKLogitsWarper(top_k)`"
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_both_keywords_given_is_a_todo_not_a_guess():
    src = (
        "import trl\nfrom transformers import TrainingArguments\n"
        "args = TrainingArguments('o', evaluation_strategy='no', eval_strategy='steps')\n"
    )
    out, findings = run(src, select=SELECT)
    assert (
        "evaluation_strategy='no'" in out
        and "\n# TODO(trl-migrate TRL108): `evaluation_strategy=` and `eval_strategy=` are both"
        in out
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]


def test_tokenizer_keyword_of_trainers_becomes_processing_class():
    before = dedent(
        """
        from transformers import Trainer, AutoTokenizer
        from trl import SFTTrainer
        tok = AutoTokenizer.from_pretrained(name)
        t = Trainer(model=m, args=a, tokenizer=tok)
        s = SFTTrainer(model=m, tokenizer=tok, train_dataset=ds)
        other(tokenizer=tok)
        """
    )
    after = before.replace(
        "Trainer(model=m, args=a, tokenizer=tok)", "Trainer(model=m, args=a, processing_class=tok)"
    ).replace("SFTTrainer(model=m, tokenizer=tok,", "SFTTrainer(model=m, processing_class=tok,")
    findings = assert_fixes(before, after, select=SELECT)
    assert len(findings) == 2


def test_a_file_that_does_not_use_trl_is_fixed_too_and_only_by_this_rule():
    from codemods import RULES
    from codemods.base import Options
    from codemods.engine import needs_parse, process
    from migrate.kernel.findings import Status

    sft = (
        b"from transformers import TrainingArguments\n"
        b"args = TrainingArguments('o', evaluation_strategy='no')\n"
    )
    assert needs_parse(sft)
    codes = [r.code for r in RULES]
    result = process("sft.py", sft, codes=codes, options=Options())
    assert result.status is Status.CHANGED and [f.code for f in result.findings] == ["TRL108"]
    assert result.new == sft.replace(b"evaluation_strategy=", b"eval_strategy=")
    # `tokenizer=` alone does not make a file that does not use TRL worth parsing,
    assert not needs_parse(b"t = Trainer(model=m, tokenizer=tok)\n")
    # and the PPO rules never act on a file that does not import trl.
    other = b"PPOTrainer(config)\nevaluation_strategy = 'no'\n"
    assert process("x.py", other, codes=codes, options=Options()).status is Status.UNCHANGED
