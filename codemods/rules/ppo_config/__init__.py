"""TRL103 ppo-config: `PPOConfig(...)` / `PPOv2Config(...)` of every era become `RLOOConfig(...)`
(or `GRPOConfig(...)` with `--target grpo`), field by field from `codemods/data/ppo_mapping.json`.

TRL 1.13 removed PPO (huggingface/trl#7020). Renames keep the user's expressions; values that
change form (`total_episodes`, `steps`, `batch_size`) are computed when the inputs are literals,
else a TODO gives the formula; value-model fields are dropped with a warning. A call that cannot
be rewritten whole (positional or `**d` arguments, unknown keywords, an era it cannot tell) stays
as it is with a TODO; a `**d` of a dict literal the file builds for that call alone is written
out as its keywords first (`unpacked`). Also `HfArgumentParser((..., PPOConfig))` and reads of
the config's fields.
"""

from __future__ import annotations

from codemods.base import Rule
from codemods.rules.ppo_config.finish import PPOConfigImports
from codemods.rules.ppo_config.rewrite import RewritePPOConfig
from codemods.rules.ppo_config.unpacked import InlineConfigDict


class PPOConfigRule(Rule):
    code = "TRL103"
    summary = (
        "Rewrite PPOConfig/PPOv2Config of every era as RLOOConfig (or GRPOConfig), field by field."
    )
    before = (
        "from trl import PPOConfig\n"
        'config = PPOConfig(output_dir="out", total_episodes=10000, num_ppo_epochs=4, '
        "kl_coef=0.05, response_length=53)\n"
    )
    after = (
        "from trl import RLOOConfig\n"
        'config = RLOOConfig(output_dir="out", max_steps=5000, num_iterations=4, beta=0.05, '
        "max_completion_length=53, "
        "max_grad_norm=0.0, learning_rate=5e-05, temperature=0.7, disable_dropout=True)\n"
    )
    transformers = (InlineConfigDict, RewritePPOConfig, PPOConfigImports)
    triggers = ("PPOConfig", "PPOv2Config")
