"""TRL106 ppo-loop: the legacy `for batch in ppo_trainer.dataloader: generate / reward / step` loop
becomes a reward function, `reward_funcs=reward_fn` on the trainer, and `trainer.train()`.

All or nothing: every statement of the loop must be recognised (the query tensors, one
`.generate(...)` with `return_prompt=False`, the decode of the responses, the user's own reward
computation, `.step(q, r, rewards)`, `.log_stats(...)`), and the trainer and its config (a call,
a command-line parse, a call inside the trainer's, or a config imported from another file of the
run, which gets a copy) must be built in the same block. Generation settings move to the config. A
`step` run once outside any loop (TRL's README quick start) is the loop over `range(1)` it
amounts to.
Reference responses (`generate_ref_response=True`) that only fed logging are dropped with a warning.
Otherwise the loop stays with one TODO holding a skeleton of the reward function and the trainer
call.
"""

from __future__ import annotations

from codemods.base import Rule
from codemods.rules.ppo_loop.rewrite import RewritePPOLoop


class PPOLoopRule(Rule):
    code = "TRL106"
    summary = (
        "Turn the legacy generate/reward/step loop into a reward function and trainer.train()."
    )
    before = (
        "from trl import RLOOConfig, RLOOTrainer\n"
        "config = RLOOConfig(beta=0.2)\n"
        "trainer = RLOOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds)\n"
        "for batch in trainer.dataloader:\n"
        '    query_tensors = batch["input_ids"]\n'
        "    response_tensors = trainer.generate(query_tensors, return_prompt=False, "
        "max_new_tokens=16)\n"
        '    batch["response"] = tok.batch_decode(response_tensors)\n'
        '    rewards = [score(q + r) for q, r in zip(batch["query"], batch["response"])]\n'
        "    trainer.step(query_tensors, response_tensors, rewards)\n"
    )
    after = (
        "from trl import RLOOConfig, RLOOTrainer\n"
        "config = RLOOConfig(beta=0.2, max_completion_length=16, num_train_epochs=1)\n"
        "\n"
        "\n"
        "def reward_fn(prompts, completions, **kwargs) -> list[float]:\n"
        '    completions = tok.batch_decode(kwargs["completion_ids"])  # as the loop decoded them\n'
        "    rewards = [score(q + r) for q, r in zip(prompts, completions)]\n"
        "    return [float(r) for r in rewards]\n"
        "\n"
        "\n"
        "trainer = RLOOTrainer(args=config, model=model, processing_class=tok, train_dataset=ds, "
        "reward_funcs=reward_fn)\n"
        "trainer.train()\n"
    )
    transformers = (RewritePPOLoop,)
    triggers = (".step(",)
