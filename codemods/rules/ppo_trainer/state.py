"""What TRL104's pass knows of its file, shared by its concept mixins (call.py, references.py), and
the
messages they write."""

from __future__ import annotations

from typing import Any

import libcst as cst

from codemods.ppo_class import PPOClassPass

LOOP_METHODS = ("step", "generate", "log_stats", "dataloader")  # the legacy loop: TRL106


REMOVED_CALL_TODO = (
    "`{owner}.generate_completions()` was removed: {cls} has no such method. To see sample "
    "completions, set "
    "`log_completions=True` in the config (logged every logging_steps), or call "
    "`{owner}.evaluate()` for eval metrics"
)


REWARD_TODO = (
    "{cls} needs `reward_funcs`: legacy PPO got rewards from your loop. Write `def "
    "reward_fn(prompts, "
    "completions, **kwargs) -> list[float]` with your reward computation and pass "
    "`reward_funcs=reward_fn`"
)


class TrainerPass(PPOClassPass):
    """The base of TRL104's pass and its mixins: the attributes `visit_Module` sets."""

    trainer_vars: set[str]  # names bound to PPO trainers (ppo.FileFacts)
    loop_vars: set[str]  # trainer variables a legacy loop uses (TRL106's)
    # (scope, parameter) of this file's functions a trainer is handed to (`lm_generation(t)`)
    param_trainers: set[tuple[int | None, str]]
    in_loops: set[int]  # ids of `<trainer>.<attr>` nodes inside such a loop
    loaded: dict[str, set[str]]
    # names assigned a PEFT model (their reference is their own adapter) -> the call that made it
    peft_models: dict[str, str]
    dtypes: dict[str, str]  # names a load gave another dtype than float32 -> that keyword
    assignments: dict[str, cst.Call]  # variable -> the call assigned to it
    kwargs: dict[str, Any]  # codemods/data/ppo_mapping.json "trainer"
    positional: dict[str, Any]
    methods: dict[str, Any]
    _dropped: set[int]  # `trainer.generate_completions()` statements, and their callees

    def _assigned_var(self, call: cst.Call) -> str | None:
        raise NotImplementedError
