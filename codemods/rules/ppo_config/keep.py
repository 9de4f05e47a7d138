"""TRL103: fields the new config drops stay readable where the config goes out of sight.

`config = PPOConfig(model_name="gpt2", ...)` becomes `RLOOConfig(...)` without `model_name`, and
this file's reads of `config.model_name` become `"gpt2"`. Code the rule cannot see reads it
too: another module's `from config import config` then `config.model_name`, or a function of
another module handed the config (`build_dataset(config)`, which reads `args.model_name`). On
TRL 1.13 each is an AttributeError, with no finding. So where the config goes out of sight (a
module-level config other files of the run import by name, `project.run_facts`; or a
config handed, in the scope that built it, to a function imported from another file of the run,
`RunFacts.local`; or one its function returns, `return config`, whose callers anywhere may read
it: Lee-CBG/BAP_Attack_n_Defend's `create_ppo_config(name, ...)`), the assignment is followed by
`config.model_name = "gpt2"`: the old field's value, readable as before. The new config ignores
the attribute (its fields, `to_dict()` and the trainer never read it).

Only fields the call gives, with a value it shows, are kept: a literal, or a name or attribute
read (evaluated again right after the call, before anything can change it); a renamed one reads
its new name (`config.num_ppo_epochs = config.num_iterations`: AimeeAyat/ATML-PA5's
`train_ppo.py` prints the `PPO_CONFIG.num_ppo_epochs` its `config.py` sets).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from codemods import walk
from codemods.rules.ppo_config.plan import Plan


@dataclasses.dataclass
class Kept:
    """The attribute assignments that follow one config assignment."""

    var: str
    fields: list[tuple[str, str]]  # (field, value code)
    why: str  # where the config goes


def plan(  # type: ignore[no-untyped-def]
    owner, module: cst.Module, assigns: dict[int, tuple[str, Plan, set[str]]]
) -> dict[int, Kept]:
    """id(config Assign) -> what follows it. `assigns`: id(Assign) -> (variable, plan, the
    keywords the call gave)."""
    if not assigns:
        return {}
    defined = {s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    top = {
        id(small) for s in module.body if isinstance(s, cst.SimpleStatementLine) for small in s.body
    }
    # (scope, variable) -> the first call handing it to code of another file of the run
    handed = owner.handed_to(module, owner.state.facts.local - defined)
    # (scope, variable) -> the function that returns it (`return config`): its callers, here or
    # in any other file, may read the field
    returned: dict[tuple[int | None, str], str] = {}
    for func in walk.find_all(module, cst.FunctionDef):
        for ret in walk.find_all(func, cst.Return):
            if isinstance(ret.value, cst.Name):
                key = (owner.function_of(ret), ret.value.value)
                returned.setdefault(key, func.name.value)
    scopes = {
        id(a): owner.function_of(a) for a in walk.find_all(module, cst.Assign) if id(a) in assigns
    }
    out: dict[int, Kept] = {}
    for at, (var, made, given) in assigns.items():
        fields = [
            (name, f"{var}.{text}" if how == "attr" else text)
            for name, (how, text) in sorted(made.reads.items())
            if how in ("value", "expr", "attr") and name in given
        ]
        if not fields:
            continue
        callee = handed.get((scopes.get(at), var))
        giver = returned.get((scopes.get(at), var))
        if callee is not None:
            why = f"`{callee}({var})` hands it to code of another file of this run"
        elif giver is not None:
            why = f"`{giver}()` returns it, so its callers may read it"
        elif at in top and var in owner.state.facts.exported:
            why = f"other files of this run import `{var}` from this module"
        else:
            continue
        out[at] = Kept(var, fields, why)
    return out


def statements(kept: Kept) -> list[cst.BaseStatement]:
    return [cst.parse_statement(f"{kept.var}.{name} = {text}\n") for name, text in kept.fields]
