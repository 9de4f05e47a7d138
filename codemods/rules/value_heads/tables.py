"""TRL102's tables: the value-head classes, their plain replacements, and the keyword arguments only
the wrapper understood."""

from __future__ import annotations

CAUSAL = "AutoModelForCausalLMWithValueHead"


SEQ2SEQ = "AutoModelForSeq2SeqLMWithValueHead"


REPLACEMENT = {CAUSAL: "AutoModelForCausalLM", SEQ2SEQ: "AutoModelForSeq2SeqLM"}


# Keyword arguments only the value-head wrapper understood (W:0.11.4 modeling_value_head.py
# `supported_args`, modeling_base.py `from_pretrained`): a plain model rejects them.
DROPPED_KWARGS = (
    "summary_dropout_prob",
    "v_head_initializer_range",
    "v_head_init_strategy",
)
# The wrapper handed it to PeftModel.from_pretrained when the path held a PEFT adapter; a plain
# model has no such argument, and loading the adapter through transformers freezes it.
PEFT_LOAD_KWARGS = ("is_trainable",)
# What a `**kwargs` handed to the wrapper may hold that a plain from_pretrained rejects.
WRAPPER_ONLY = (
    *DROPPED_KWARGS,
    *PEFT_LOAD_KWARGS,
    "peft_config",
    "reward_adapter",
    "reward_adapter_name",
    "load_in_8bit",
    "load_in_4bit",
)


REWARD_ADAPTER_KWARGS = ("reward_adapter", "reward_adapter_name")
# The class written in for them (codemods/data/inline.toml, under this path).
REWARD_ADAPTER = "RewardAdapter"
ADAPTER_PATH = "trl.PreTrainedModelWrapper.compute_reward_score"


QUANT_KWARGS = ("load_in_8bit", "load_in_4bit")
# The wrapper handed these to peft's `prepare_model_for_kbit_training`, which it ran on an 8/4-bit
# model before adding a `peft_config` adapter (W:0.11.4 modeling_base.py `_split_kwargs`, L229-233),
# and dropped otherwise. `layer_norm_names` belonged to old peft's int8 preparation; today's casts
# every weight that is not quantized to fp32 and takes no list.
KBIT_KWARGS = ("use_gradient_checkpointing", "gradient_checkpointing_kwargs", "layer_norm_names")


ENCODER_DECODER_TODO = (
    "no TRL 1.13 online-RL trainer (GRPO, RLOO) takes encoder-decoder models: stay on TRL <= 1.12 "
    "for this policy or move to a decoder-only model"
)


ENCODER_DECODER_BRANCH_TODO = (
    "`{var}` is `AutoModelForSeq2SeqLM` when the condition picks that branch, and that run cannot "
    "train: "
    "TRL 1.13's online-RL trainers (GRPO, RLOO) take causal LMs only; the `AutoModelForCausalLM` "
    "branch "
    "trains. Stay on TRL <= 1.12 for seq2seq policies or drop that branch"
)


# Calls whose result is already a loaded model (wrapping it in a value head yields the model):
# peft's prepare_model_for_kbit_training (and its old name) hands back the model it was given.
MODEL_FACTORIES = (
    "from_pretrained",
    "from_config",
    "get_peft_model",
    "prepare_model_for_kbit_training",
    "prepare_model_for_int8_training",
)
