"""What TRL106 shares between its concept modules: the generation settings tables, the refusal that
stops a rewrite, and the pass's base class."""

from __future__ import annotations

from typing import TypeVar

import libcst as cst

# generate() keyword -> config field (W:0.11.4 ppo_trainer.generate passes them to model.generate;
# 1.13 GRPO/RLOO build GenerationConfig from these fields, grpo_trainer L1126-1141).
GEN_FIELDS = {
    "max_new_tokens": "max_completion_length",
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repetition_penalty": "repetition_penalty",
}


GEN_DROPPED = {
    "do_sample": True,
    "min_length": -1,
    "pad_token_id": None,
    "eos_token_id": None,
}  # what 1.13 does itself


REWARD_FN = "reward_fn"


Block = TypeVar("Block", cst.Module, cst.IndentedBlock)


class Refused(Exception):
    """The loop is not the recognised shape; the message says which part."""
