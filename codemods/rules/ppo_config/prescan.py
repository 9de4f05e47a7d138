"""What TRL103 reads before its pass: config variables built from dict literals or parsed by
`HfArgumentParser`/`TrlParser`, and the plan of a parsed (keyword-less) config."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo, walk
from codemods.config_vars import is_parser
from codemods.rules.ppo_config import parsed
from codemods.rules.ppo_config.mapping import plan_call
from codemods.rules.ppo_config.plan import Plan
from codemods.rules.ppo_config.state import ConfigPass

# Command-line parsers that build a dataclass from its field defaults: `args = tyro.cli(Cls)`.
FACTORY_PARSERS = frozenset({"tyro.cli"})


def _flag_renames(era: str | None) -> str:
    if era is None:
        return "see the TRL103 table in docs/rules.md"
    table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
    renames = [f"--{k} -> --{r['to']}" for k, r in table.items() if r["kind"] == "rename"]
    return ", ".join(renames) + "; the rest in docs/rules.md (TRL103)"


def _expand_dict_literal(call: cst.Call) -> cst.Call:
    """`PPOConfig(**{"a": 1})` -> `PPOConfig(a=1)` when every key is a string literal."""
    if not any(a.star == "**" and isinstance(a.value, cst.Dict) for a in call.args):
        return call
    args: list[cst.Arg] = []
    for arg in call.args:
        if arg.star == "**" and isinstance(arg.value, cst.Dict):
            elements = arg.value.elements
            keys = [
                edits.literal(e.key) if isinstance(e, cst.DictElement) else None for e in elements
            ]
            if not all(isinstance(k, str) and k.isidentifier() for k in keys):
                return call
            for key, element in zip(keys, elements):
                args.append(
                    edits.new_kwarg(key, element.value).with_changes(  # type: ignore[union-attr, arg-type]
                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                    )
                )
        else:
            args.append(arg)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


class _Prescan(walk.Visitor):
    """Which names hold a PPO config (from a call, or from HfArgumentParser), and how it is
    rewritten."""

    def __init__(self, owner: ConfigPass) -> None:
        self.owner = owner
        self.classes: list[str] = []
        # (dataclass, field) -> the plan of its `default_factory=lambda: PPOConfig(...)`
        self.factories: dict[tuple[str, str], Plan] = {}

    def visit_Module(self, node: cst.Module) -> None:
        """Module-level functions that return a new PPO config (`def get_config(name): return
        PPOConfig(model_name=name, ...)`): a name bound to their call holds that config."""
        self.returned: dict[str, tuple[Plan, cst.CSTNode]] = {}  # function -> (plan, its return)
        for fn in node.body:
            if not isinstance(fn, cst.FunctionDef):
                continue
            returns = walk.find_all(fn, cst.Return)
            call = returns[0].value if len(returns) == 1 else None  # type: ignore[attr-defined]
            if not isinstance(call, cst.Call):
                continue
            found = ppo.ppo_class(self.owner.names_from(call.func, "trl"), ppo.CONFIG_NAMES)
            if found is None:
                continue
            expanded = _expand_dict_literal(call)
            plan = plan_call(
                expanded,
                self.owner.era_of(expanded, found[1]),
                self.owner.target,
                before=self.owner.release_cap,
                declared=self.owner.declared,
            )
            if not plan.fail:
                self.returned[fn.name.value] = (plan, returns[0])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """`ppo_config: PPOConfig = field(default_factory=lambda: PPOConfig(...))` in a
        dataclass (TRL 0.5-0.7's `ppo.py`, parsed with `tyro.cli`)."""
        value = node.value
        if not self.classes or not isinstance(node.target, cst.Name):
            return
        if not isinstance(value, cst.Call):
            return
        factory = edits.kwarg(value, "default_factory")
        call = factory.value.body if factory and isinstance(factory.value, cst.Lambda) else None
        if not isinstance(call, cst.Call):
            return
        found = ppo.ppo_class(self.owner.names_from(call.func, "trl"), ppo.CONFIG_NAMES)
        if found is not None:
            expanded = _expand_dict_literal(call)
            plan = plan_call(
                expanded,
                self.owner.era_of(expanded, found[1]),
                self.owner.target,
                before=self.owner.release_cap,
                declared=self.owner.declared,
            )
            if not plan.fail:
                self.factories[(self.classes[-1], node.target.value)] = plan

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if not isinstance(value, cst.Call):
            return
        owner = self.owner
        if (
            (get_full_name_for_node(value.func) or "") in FACTORY_PARSERS
            and len(value.args) == 1
            and isinstance(value.args[0].value, cst.Name)
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
        ):  # `args = tyro.cli(ScriptArguments)`: `args.ppo_config` is the factory's config
            cls, holder = value.args[0].value.value, node.targets[0].target.value
            for (c, field), plan in sorted(self.factories.items()):
                if c == cls:
                    owner.reads[f"{holder}.{field}"] = plan
                    owner.built_at[f"{holder}.{field}"] = node
            return
        made = self.returned.get(value.func.value) if isinstance(value.func, cst.Name) else None
        if made is not None:  # `config = get_config(...)`: what the function returns
            for t in node.targets:
                name = get_full_name_for_node(t.target)
                if name:  # the call's expressions mean what they meant in the function
                    owner.reads[name], owner.built_at[name] = made
            return
        found = ppo.ppo_class(owner.names_from(value.func, "trl"), ppo.CONFIG_NAMES)
        if found is not None:
            expanded = _expand_dict_literal(value)
            plan = plan_call(
                expanded,
                owner.era_of(expanded, found[1]),
                owner.target,
                before=owner.release_cap,
                declared=owner.declared,
            )
            for t in node.targets:
                name = get_full_name_for_node(t.target)
                if name and not plan.fail:
                    owner.reads[name] = plan
                    owner.built_at[name] = node
            one = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
            if one and not plan.fail:
                given = {a.keyword.value for a in expanded.args if a.keyword is not None}
                var = node.targets[0].target.value  # type: ignore[attr-defined]
                owner.config_assigns[id(node)] = (var, plan, given)
                eras = owner.state.shared.config_eras
                eras[var] = plan.era if eras.get(var, plan.era) == plan.era else ""
            return
        func_name = get_full_name_for_node(value.func) or ""
        if is_parser(func_name):
            first = value.args[0].value if value.args else None
            items = first.elements if isinstance(first, (cst.Tuple, cst.List)) else []
            for i, el in enumerate(items):
                hit = ppo.ppo_class(owner.names_from(el.value, "trl"), ppo.CONFIG_NAMES)
                if hit is not None:
                    for t in node.targets:
                        name = get_full_name_for_node(t.target)
                        if name:
                            owner.parsers[name] = (i, hit[1] or owner.file_era)
            return
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in parsed.PARSE_METHODS:
            parser = owner.parsers.get(get_full_name_for_node(value.func.value) or "")
            target = node.targets[0].target if len(node.targets) == 1 else None
            if parser is None or not isinstance(target, (cst.Tuple, cst.List)):
                return
            index, era = parser
            if index < len(target.elements) and era is not None:
                name = get_full_name_for_node(target.elements[index].value)
                if name:
                    owner.reads[name] = _parsed_plan(era, owner.target)


def _parsed_plan(era: str, target: str) -> Plan:
    """Reads of a config parsed from the command line: renames, and TODOs for fields that are
    gone."""
    plan = Plan(era=era)
    table = ppo.mapping()["legacy_config" if era == ppo.LEGACY else "v2_config"]
    for name, row in table.items():
        if row["kind"] in ("same",):
            continue
        if row["kind"] == "rename":
            plan.reads[name] = ("attr", row["to"])
        elif name in ppo.script_fields(era):  # script-only: a parser TRL103 could not move
            plan.reads[name] = (
                "todo",
                f"{ppo.target_config(target)} has no `{name}`: add it to your own "
                "script-arguments dataclass (and to the command line you run)",
            )
        elif name in ("mini_batch_size", "forward_batch_size") and era == ppo.LEGACY:
            plan.reads[name] = ("attr", "per_device_train_batch_size")
        else:
            plan.reads[name] = (
                "todo",
                f"{ppo.target_config(target)} has no `{name}`; see docs/rules.md (TRL103)",
            )
    return plan
