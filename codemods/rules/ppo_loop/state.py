"""What TRL106's concept modules share: the generation settings tables, the refusal that stops a
rewrite, and the type of a block."""

from __future__ import annotations

from typing import Any, TypeVar

import libcst as cst

from codemods import ppo

# generate() keyword -> target config field, and keyword -> the value TRL 1.13 uses itself
# (codemods/data/ppo_mapping.json "generation", with the sources).
GEN_FIELDS: dict[str, str] = ppo.mapping()["generation"]["fields"]
GEN_DROPPED: dict[str, Any] = ppo.mapping()["generation"]["dropped"]
REWARD_FN = "reward_fn"


Block = TypeVar("Block", cst.Module, cst.IndentedBlock)


class Refused(Exception):
    """The loop is not the recognised shape; the message says which part."""


# The generation-settings key under which TRL106 hands `_with_generation` the number of batches
# a loop stopped after (`if i >= N: break`); it becomes `max_steps` there, from the config's own
# optimizer steps per generation.
BATCHES = "<batches>"
