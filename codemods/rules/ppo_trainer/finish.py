"""TRL104's last pass: the `PPOTrainer` import becomes the target trainer's once nothing uses it."""

from __future__ import annotations

from codemods import ppo, ppo_imports
from codemods.base import FileState


class PPOTrainerImports(ppo_imports.FinishPPOImports):
    OWNED = (*ppo.TRAINER_NAMES, *ppo.TRAINER_HELPERS)

    @staticmethod
    def needed(state: FileState) -> set[str]:
        return state.shared.trainer_imports

    STILL_USED = (
        "finish the TODOs on its remaining uses, then import RLOOTrainer (or "
        "GRPOTrainer) "
        "from trl instead"
    )

    def successors(self) -> str:
        return "RLOOTrainer (or GRPOTrainer)"
