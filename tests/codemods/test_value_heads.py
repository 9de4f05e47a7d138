"""TRL102 value-heads: before/after tables, no-op cases, second run changes nothing."""

from __future__ import annotations

import pytest

from migrate.findings import Fix, Severity
from tests.codemods.helpers import assert_fixes, assert_noop, dedent

SELECT = ("TRL102",)
VH_TODO = "# TODO(trl-migrate TRL102): "


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("import os\n", id="unrelated"),
        pytest.param("from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('x')\n", id="plain-model"),
        pytest.param("class AutoModelForCausalLMWithValueHead:\n    pass\nAutoModelForCausalLMWithValueHead.from_pretrained('x')\n", id="own-class-same-name"),
        pytest.param("from mylib import AutoModelForCausalLMWithValueHead\nAutoModelForCausalLMWithValueHead.from_pretrained('x')\n", id="other-library"),
        pytest.param("s = 'AutoModelForCausalLMWithValueHead.from_pretrained'\n", id="string"),
        pytest.param("model.pretrained_model.device\n", id="unknown-object-attribute"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name, trust_remote_code=True, device_map={"": 0})
            """,
            """
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained(config.model_name, trust_remote_code=True, device_map={"": 0})
            """,
            id="keeps-hf-kwargs",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead as VH, SFTTrainer
            model = VH.from_pretrained("gpt2", summary_dropout_prob=0.1, v_head_initializer_range=0.2, v_head_init_strategy="normal")
            """,
            """
            from trl import SFTTrainer
            from transformers import AutoModelForCausalLM
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="alias-and-value-head-kwargs-dropped",
        ),
        pytest.param(
            """
            from trl.models.modeling_value_head import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", load_in_8bit=True, peft_config=lora_config)
            """,
            """
            from transformers import AutoModelForCausalLM, BitsAndBytesConfig
            from peft import get_peft_model

            model = get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_8bit=True)), lora_config)
            """,
            id="peft-and-8bit",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl.experimental.ppo import AutoModelForCausalLMWithValueHead
            base = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
            model = AutoModelForCausalLMWithValueHead.from_pretrained(base)
            print(model.pretrained_model.device, model.current_device)
            """,
            """
            from transformers import AutoModelForCausalLM
            base = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
            model = base
            print(model.device, model.device)
            """,
            id="wraps-loaded-model",
        ),
        pytest.param(
            """
            from trl import AutoModelForCausalLMWithValueHead
            model = AutoModelForCausalLMWithValueHead.from_pretrained(AutoModelForCausalLM.from_pretrained("gpt2"))
            """,
            """
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="wraps-inline-call",
        ),
        pytest.param(
            """
            import trl
            model = trl.AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
            """,
            """
            import trl
            import transformers

            model = transformers.AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="module-attribute",
        ),
        pytest.param(
            """
            def load(name):
                from trl import AutoModelForCausalLMWithValueHead
                return AutoModelForCausalLMWithValueHead.from_pretrained(name)
            """,
            """
            def load(name):
                from transformers import AutoModelForCausalLM
                return AutoModelForCausalLM.from_pretrained(name)
            """,
            id="lazy-import-stays-local",
        ),
        pytest.param(
            """
            from transformers import AutoModelForCausalLM
            from trl import AutoModelForCausalLMWithValueHead
            policy = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
            ref = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
            """,
            """
            from transformers import AutoModelForCausalLM
            policy = AutoModelForCausalLM.from_pretrained("gpt2")
            ref = AutoModelForCausalLM.from_pretrained("gpt2")
            """,
            id="already-imported-replacement",
        ),
    ],
)
def test_fixes(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_seq2seq_becomes_seq2seq_lm_with_a_todo():
    before = dedent(
        """
        from trl import AutoModelForSeq2SeqLMWithValueHead
        model = AutoModelForSeq2SeqLMWithValueHead.from_pretrained("t5-small")
        """
    )
    after = dedent(
        f"""
        from transformers import AutoModelForSeq2SeqLM
        {VH_TODO}no TRL 1.13 online-RL trainer (GRPO, RLOO) takes encoder-decoder models: stay on TRL <= 1.12 for this policy or move to a decoder-only model
        model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert [(f.line, f.severity, f.fix) for f in findings] == [
        (2, Severity.WARNING, Fix.MANUAL),
        (2, Severity.ERROR, Fix.APPLIED),
    ]


def test_uses_that_need_a_human_keep_the_import_with_todos():
    before = dedent(
        """
        from trl import AutoModelForCausalLMWithValueHead, PreTrainedModelWrapper
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", reward_adapter="org/rm-adapter")
        values = model.v_head(hidden)
        if isinstance(model, PreTrainedModelWrapper):
            pass
        """
    )
    after = dedent(
        f"""
        {VH_TODO}`PreTrainedModelWrapper` does not exist in TRL 1.13; finish the TODOs on its remaining uses, then delete this import
        from trl import PreTrainedModelWrapper
        from transformers import AutoModelForCausalLM
        {VH_TODO}`reward_adapter="org/rm-adapter"` was dropped: TRL 1.13 has no multi-adapter reward; pass a reward model or a reward function to the trainer's reward_funcs
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        {VH_TODO}the value head is gone in TRL 1.13 (GRPO/RLOO need no critic); if a value model is really needed, load AutoModelForSequenceClassification(..., num_labels=1)
        values = model.v_head(hidden)
        {VH_TODO}`PreTrainedModelWrapper` does not exist in TRL 1.13: use `transformers.PreTrainedModel` for type and isinstance checks
        if isinstance(model, PreTrainedModelWrapper):
            pass
        """
    )
    findings = assert_fixes(before, after, select=SELECT)
    manual = sorted((f.line, f.col) for f in findings if f.fix is Fix.MANUAL)
    assert manual == [(1, 52), (2, 9), (3, 10), (4, 22)]
