"""TRL103: command-line flags that clash once a parsed PPO config becomes RLOOConfig/GRPOConfig.

RLOOConfig and GRPOConfig bring flags the old PPO config lacked (`--trust_remote_code`, and for
legacy scripts every TrainingArguments flag). A field of the script's own dataclass with the
same name, in the same `HfArgumentParser`, makes the parser fail ("conflicting option string").
When the script's field has the config's default, it is dropped from the script's class and its
reads follow the config (`args.trust_remote_code` -> `ppo_config.trust_remote_code`): same flag,
same default. Where the parsed object is also handed on (`main(args, ppo_config)`), or its
default differs, the field is dropped too and `args.trust_remote_code =
ppo_config.trust_remote_code` follows the parse, so every reader still finds it; a default of
the script's that differs from the config's is given to the parser
(`parser.set_defaults(trust_remote_code=True)`, which a flag or config file still overrides).
Otherwise the field gets a TODO that says so.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import edits, ppo
from codemods.base import RuleTransformer
from codemods.rules.ppo_config import parsed

NO_DEFAULT = object()


@dataclasses.dataclass
class Clash:
    """A field of the script's dataclass `cls` that the new config also defines."""

    cls: str
    field: str
    node: cst.AnnAssign
    statement: cst.SimpleStatementLine
    config_var: str | None  # where its reads go; None: keep the field, with a TODO
    default: Any
    reads: list[cst.Attribute] = dataclasses.field(default_factory=list)
    # The parse statements after which `script.field = config.field` keeps the attribute for
    # readers the rule cannot follow (the parsed object handed to a function): id(Assign) ->
    # (script variable, config variable)
    aliases: dict[int, tuple[str, str]] = dataclasses.field(default_factory=dict)
    parser_var: str = ""  # the parser, given the script's default when the config's differs
    same_default: bool = True


def plan(owner: RuleTransformer, seen: parsed.Collected, target: str) -> list[Clash]:
    fields = ppo.config_fields(target)
    defaults = ppo.targets()["config_defaults"][target]
    out: list[Clash] = []
    for var, parsers in seen.parsers.items():
        if len(parsers) != 1:
            continue
        seq = parsers[0].call.args[0].value if parsers[0].call.args else None
        if not isinstance(seq, (cst.Tuple, cst.List)):
            continue
        index = next(
            (
                i
                for i, e in enumerate(seq.elements)
                if ppo.ppo_class(owner.names_from(e.value, "trl"), ppo.CONFIG_NAMES)
            ),
            None,
        )
        if index is None:
            continue
        unpacks = [a for v, a, _ in seen.unpacks if v == var]
        for i, element in enumerate(seq.elements):
            name = get_full_name_for_node(element.value) or ""
            nodes = seen.class_nodes.get(name, [])
            if i == index or len(nodes) != 1:
                continue
            for stmt, ann in _annotated(nodes[0]):
                if ann.target.value not in fields:  # type: ignore[attr-defined]
                    continue
                clash = Clash(name, ann.target.value, ann, stmt, None, _default(ann))  # type: ignore[attr-defined]
                wanted = defaults.get(clash.field, NO_DEFAULT)
                clash.same_default = (
                    wanted is not NO_DEFAULT
                    and clash.default == wanted
                    and type(clash.default) is type(wanted)
                )
                if seen.names.get(name, 0) == 2:  # the class and its place in the parser
                    if clash.same_default:
                        _redirect(owner, seen, clash, unpacks, i, index)
                    if clash.config_var is None or _escapes(seen, unpacks, i):
                        _alias(seen, clash, var, unpacks, i, index)
                out.append(clash)
    return out


def _escapes(seen: parsed.Collected, unpacks: list[cst.Assign], script_index: int) -> bool:
    """The parsed script object's name is spelled other than as `name.attribute` and in its
    unpack: handed to a function, returned, stored, where reads of the field cannot be
    followed. By spelling, so a parameter of the same name counts too."""
    names = set()
    for assign in unpacks:
        target = assign.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and script_index < len(target.elements):
            element = target.elements[script_index].value
            if isinstance(element, cst.Name):
                names.add(element.value)
    for name in names:
        as_value = sum(
            isinstance(a.value, cst.Name) and a.value.value == name for a in seen.attributes
        )
        if seen.names.get(name, 0) > as_value + len(unpacks):
            return True
    return False


def _alias(
    seen: parsed.Collected,
    clash: Clash,
    parser_var: str,
    unpacks: list[cst.Assign],
    script_index: int,
    config_index: int,
) -> None:
    """The field goes and each unpack is followed by `script.field = config.field`, so every
    reader of the script's object still finds it; a default other than the config's is given to
    the parser. All unpacks must name both objects plainly, and that default must be a literal."""
    if not clash.same_default and clash.default is NO_DEFAULT:
        return
    found = _named_unpacks(unpacks, script_index, config_index)
    if not found:
        return
    clash.config_var = found[0][2].value
    clash.aliases = {id(assign): (script.value, config.value) for assign, script, config in found}
    clash.parser_var = parser_var


def _named_unpacks(
    unpacks: list[cst.Assign], script_index: int, config_index: int
) -> list[tuple[cst.Assign, cst.Name, cst.Name]]:
    """Each unpack with the plain names it gives the script's object and the config (one config
    name for all); empty when one does not."""
    out: list[tuple[cst.Assign, cst.Name, cst.Name]] = []
    for assign in unpacks:
        target = assign.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)) or max(script_index, config_index) >= len(
            target.elements
        ):
            return []
        script, config = target.elements[script_index].value, target.elements[config_index].value
        if not isinstance(script, cst.Name) or not isinstance(config, cst.Name):
            return []
        if out and out[0][2].value != config.value:
            return []
        out.append((assign, script, config))
    return out


# ModelConfig fields TRL 1.13 renamed or moved: `--torch_dtype` is `--dtype`
# (W:1.0.0:trl/trainer/model_config.py),
# `--trust_remote_code` left ModelConfig for the training config (present in W:1.0.0, gone by
# W:1.7.1).
MODEL_CONFIG = "ModelConfig"
MODEL_FIELDS = {
    "torch_dtype": (False, "dtype"),
    "trust_remote_code": (True, "trust_remote_code"),
}  # (to the config?, name)


def model_config_reads(
    owner: RuleTransformer, seen: parsed.Collected
) -> dict[int, tuple[str | None, str, str]]:
    """id(`model_args.torch_dtype`) -> (variable to read instead, or None for the same one; new
    field;
    old spelling) for a ModelConfig parsed beside a PPO config."""
    out: dict[int, tuple[str | None, str, str]] = {}
    for var, parsers in seen.parsers.items():
        seq = parsers[0].call.args[0].value if len(parsers) == 1 and parsers[0].call.args else None
        if not isinstance(seq, (cst.Tuple, cst.List)):
            continue
        names = [owner.qualified_names(e.value) for e in seq.elements]
        ppo_at = next((i for i, q in enumerate(names) if ppo.ppo_class(q, ppo.CONFIG_NAMES)), None)
        model_at = next(
            (
                i
                for i, q in enumerate(names)
                if any(n.startswith("trl.") and n.endswith("." + MODEL_CONFIG) for n in q)
            ),
            None,
        )
        if ppo_at is None or model_at is None:
            continue
        for _, assign, _ in (u for u in seen.unpacks if u[0] == var):
            target = assign.targets[0].target
            if not isinstance(target, (cst.Tuple, cst.List)) or max(ppo_at, model_at) >= len(
                target.elements
            ):
                continue
            model, config = target.elements[model_at].value, target.elements[ppo_at].value
            if not isinstance(model, cst.Name) or not isinstance(config, cst.Name):
                continue
            for node in seen.attributes:
                if node.attr.value not in MODEL_FIELDS or not isinstance(node.value, cst.Name):
                    continue
                if parsed.referents(owner, node.value) != {id(model)} or not parsed.plain_load(
                    owner, node
                ):
                    continue
                to_config, field = MODEL_FIELDS[node.attr.value]
                out[id(node)] = (config.value if to_config else None, field, node.attr.value)
    return out


def _annotated(node: cst.ClassDef) -> list[tuple[cst.SimpleStatementLine, cst.AnnAssign]]:
    return [
        (s, s.body[0])
        for s in node.body.body  # type: ignore[union-attr]
        if isinstance(s, cst.SimpleStatementLine)
        and len(s.body) == 1
        and isinstance(s.body[0], cst.AnnAssign)
        and isinstance(s.body[0].target, cst.Name)
    ]


def _default(ann: cst.AnnAssign) -> Any:
    """The literal default of `x: T = v` or `x: T = field(default=v, ...)`; NO_DEFAULT otherwise."""
    value = ann.value
    if (
        isinstance(value, cst.Call)
        and (get_full_name_for_node(value.func) or "").rpartition(".")[2] == "field"
    ):
        arg = edits.kwarg(value, "default")
        value = arg.value if arg is not None else None
    if value is None:
        return NO_DEFAULT
    literal = edits.literal(value)
    return NO_DEFAULT if literal is edits.NOT_LITERAL else literal


def _redirect(
    owner: RuleTransformer,
    seen: parsed.Collected,
    clash: Clash,
    unpacks: list[cst.Assign],
    script_index: int,
    config_index: int,
) -> None:
    """Find every read of the field through the script's parsed object; all plain loads, or
    nothing."""
    found = _named_unpacks(unpacks, script_index, config_index)
    if not found:
        return
    config_var = found[0][2].value
    ids = {id(script) for _, script, _ in found}
    reads = []
    for node in seen.attributes:
        if node.attr.value != clash.field or not isinstance(node.value, cst.Name):
            continue
        bound = parsed.referents(owner, node.value)
        if not bound & ids:
            continue
        if len(bound) > 1 or not parsed.plain_load(owner, node):
            return
        reads.append(node)
    clash.config_var, clash.reads = config_var, reads
