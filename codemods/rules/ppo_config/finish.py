"""TRL103's last pass: the `PPOConfig` import becomes the target config's once nothing uses it."""

from __future__ import annotations

from codemods import ppo, ppo_imports
from codemods.base import FileState


class PPOConfigImports(ppo_imports.FinishPPOImports):
    OWNED = ppo.CONFIG_NAMES

    @staticmethod
    def needed(state: FileState) -> set[str]:
        return state.shared.config_imports

    STILL_USED = (
        "finish the TODOs on its remaining uses, then import RLOOConfig (or GRPOConfig) "
        "from trl instead"
    )

    def successors(self) -> str:
        return "RLOOConfig (or GRPOConfig)"
