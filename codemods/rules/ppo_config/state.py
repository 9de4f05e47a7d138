"""What TRL103's pass knows of its file: the attributes its concept mixins share, set in
`RewritePPOConfig.visit_Module` before the walk."""

from __future__ import annotations

from typing import Any

import libcst as cst

from codemods.ppo_class import PPOClassPass
from codemods.rules.ppo_config.flags import Clash
from codemods.rules.ppo_config.parsed import Move
from codemods.rules.ppo_config.plan import Plan


class ConfigPass(PPOClassPass):
    """The base of TRL103's pass and of its mixins (reads.py, usage.py, fields.py)."""

    reads: dict[str, Plan]  # config variable -> the plan of the call that built it
    release_cap: str | None  # the first release the file cannot have run on (ppo.release_cap)
    declared: Any  # ppo.Declared: the releases the project declares, or None
    # config variable -> the statement that built it (its scope is asked for only on a read
    # that needs it: libcst's scope analysis costs about four parses of the module)
    built_at: dict[str, cst.CSTNode]
    param_plans: dict[int, Plan]  # id(`param.field`) in a function handed the config -> its plan
    parsers: dict[str, tuple[int, str | None]]  # HfArgumentParser variable -> (config index, era)
    moves: list[Move]  # script-only fields of parsed configs (parsed.py)
    handed: Any
    appends: dict[int, str]
    moved: dict[int, Any]
    clash_drop: dict[int, Clash]  # id(dataclass field statement) -> the clash it drops
    clash_todo: dict[int, Clash]
    clash_reads: dict[int, Clash]
    clash_alias: dict[int, list[tuple[str, str, Clash]]]  # id(unpack) -> `a.f = b.f` to follow it
    clash_defaults: dict[str, list[Clash]]  # parser variable -> fields given the script's default
    # id(`config = PPOConfig(...)`) -> (name, plan, the keywords the call gave)
    config_assigns: dict[int, tuple[str, Plan, set[str]]]
    kept: dict[int, Any]  # id(that Assign) -> keep.Kept: dropped fields kept as attributes
    model_reads: Any
    _targets: set[int]  # ids of assignment targets

    # rewrite.py
    def era_of(self, call: cst.Call, hint: str | None) -> str | None:
        raise NotImplementedError
