"""TRL104 ppo-trainer: `PPOTrainer(...)` / `PPOv2Trainer(...)` of every era become
`RLOOTrainer(...)`
(or `GRPOTrainer(...)`), keyword or positional, and their method and attribute uses follow.

TRL 1.13 removed PPO (huggingface/trl#7020). Policy -> `model`, reward model -> `reward_funcs`
(+ `reward_processing_classes`: a v2 reward model read the policy's token ids, so it shares the
policy tokenizer), tokenizer -> `processing_class`, optimizer -> `optimizers=(opt, sched)`;
reference and value models are dropped with findings. The legacy `generate`/`step` loop is
TRL106's; a legacy trainer without one gets a TODO for its reward function.
"""

from __future__ import annotations

from codemods.base import Rule
from codemods.rules.ppo_trainer.finish import PPOTrainerImports
from codemods.rules.ppo_trainer.rewrite import RewritePPOTrainer


class PPOTrainerRule(Rule):
    code = "TRL104"
    summary = (
        "Rewrite PPOTrainer/PPOv2Trainer of every era as RLOOTrainer (or GRPOTrainer), with "
        "its method uses."
    )
    before = (
        "from trl import PPOTrainer\n"
        "trainer = PPOTrainer(args=config, processing_class=tok, model=policy, ref_model=ref, "
        "reward_model=rm, "
        "value_model=vm, train_dataset=ds)\n"
        "trainer.train()\n"
        'trainer.save_pretrained("out")\n'
    )
    after = (
        "from trl import RLOOTrainer\n"
        "trainer = RLOOTrainer(args=config, processing_class=tok, model=policy, reward_funcs=rm, "
        "reward_processing_classes=tok, train_dataset=ds)\n"
        "trainer.train()\n"
        'trainer.save_model("out")\n'
    )
    transformers = (RewritePPOTrainer, PPOTrainerImports)
    triggers = ("PPOTrainer", "PPOv2Trainer", "PolicyAndValueWrapper", "OnlineTrainerState")
