"""TRL103: a PPO config that feeds the repo's own PPO trainer, not TRL's.

Repos copy TRL's PPO trainer into their tree to change it (reward shaping, custom losses) and
keep building its config with TRL's `PPOConfig`. That trainer reads PPO's value-function
settings (`args.vf_coef`, `args.cliprange_value`, `args.gamma`, `args.lam`), which RLOOConfig
does not have: rewritten to RLOOConfig, the config would break the trainer at its first step.
So in a file that defines such a trainer, or hands its config to a PPO trainer that is not
TRL's, TRL103 leaves the config to a human with a TODO that says why.
"""

from __future__ import annotations

import libcst as cst

from codemods import walk
from codemods.base import RuleTransformer

# The settings only a trainer with a value model reads (PPO's GAE and value loss).
VALUE_FIELDS = ("cliprange_value", "gamma", "lam", "vf_coef")


def own_trainer(owner: RuleTransformer, module: cst.Module) -> str | None:
    """Why the PPO configs of `module` feed the repo's own PPO trainer (a sentence fragment
    naming it), or None when nothing says so."""
    for cls in walk.find_all(module, cst.ClassDef):
        # Computed with (an operand of arithmetic), not handed on as `PPOConfig(gamma=...)`: a
        # wrapper that builds TRL's config from its own settings is not a trainer of its own.
        read = sorted(
            {
                side.attr.value
                for op in walk.find_all(cls, cst.BinaryOperation)
                for side in (op.left, op.right)
                if isinstance(side, cst.Attribute) and side.attr.value in VALUE_FIELDS
            }
        )
        if len(read) >= 2:
            fields = ", ".join(f"`{f}`" for f in read)
            return f"`{cls.name.value}`, defined in this file, reads {fields}"
    own = {cls.name.value for cls in walk.find_all(module, cst.ClassDef)}
    for call in walk.find_all(module, cst.Call):
        name = _called(call.func)
        if name is None or "PPO" not in name or not name.endswith("Trainer") or name in own:
            continue  # a class of this file: judged by what it reads, above
        qualified = owner.qualified_names(call.func)
        # Imported, and not from trl: a class of this file is judged by what it reads (above;
        # one that subclasses TRL's trainer is TRL107's).
        if not qualified or any(q == "trl" or q.startswith("trl.") for q in qualified):
            continue
        origin = qualified[0].rpartition(".")[0] or qualified[0]
        return f"`{name}` of `{origin}` is built here"
    return None


def _called(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None
