"""TRL102 value-heads: `AutoModelFor*WithValueHead` become the plain transformers model classes.

TRL 1.13 removed `AutoModelForCausalLMWithValueHead`, `AutoModelForSeq2SeqLMWithValueHead` and
`PreTrainedModelWrapper` (trl.experimental.ppo, deleted by huggingface/trl#7020). Loading calls
keep their model kwargs; value-head-only kwargs are dropped, `peft_config` moves to
`peft.get_peft_model`, 8/4-bit flags become a `BitsAndBytesConfig`, wrapping a loaded model
yields that model, and `.pretrained_model` becomes the model itself. What needs a decision
(`.v_head`, isinstance checks, reward adapters, encoder-decoder policies) gets a TODO. A variable
bound once to value-head classes and used only as `cls.from_pretrained(...)` is rewritten too.
"""

from __future__ import annotations

from codemods.base import Rule
from codemods.rules.value_heads.finish import FinishValueHeadImports
from codemods.rules.value_heads.rewrite import RewriteValueHeads


class ValueHeads(Rule):
    code = "TRL102"
    summary = "Replace value-head model wrappers with plain transformers models."
    before = (
        "from trl import AutoModelForCausalLMWithValueHead\n"
        "model = AutoModelForCausalLMWithValueHead.from_pretrained(name, "
        'v_head_init_strategy="normal")\n'
        "device = model.pretrained_model.device\n"
    )
    after = (
        "from transformers import AutoModelForCausalLM\n"
        "model = AutoModelForCausalLM.from_pretrained(name)\n"
        "device = model.device\n"
    )
    transformers = (RewriteValueHeads, FinishValueHeadImports)
    triggers = ("ValueHead", "PreTrainedModelWrapper", "SUPPORTED_ARCHITECTURES")
