"""Which names of a file hold one config class: `args = GRPOConfig(...)`, or a slot of
`parser.parse_args_into_dataclasses()` where `parser = HfArgumentParser((Script, GRPOConfig))`
(or TrlParser). Rules that rename or report a config's fields read this: a name bound to a
config in one place and to something else in another (a transformers config, argparse's
namespace) is none of them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods import walk

PARSERS = ("HfArgumentParser", "TrlParser")


def is_parser(callee: str | None) -> bool:
    """Whether a call of `callee` (a dotted name) builds a dataclass argument parser: transformers'
    HfArgumentParser, TRL's TrlParser, or a repo's own class named like one (`TRLParser`, a
    subclass of HfArgumentParser that muqeeth/Adversarial_goodhart_rlhf copied from an older
    TRL). Only called on a call given a tuple or list of classes, whose result is unpacked from
    `parse_args_into_dataclasses()` and the like: an argparse parser takes no dataclasses."""
    last = (callee or "").rpartition(".")[2]
    return last in PARSERS or last.lower().endswith("parser")


# the parser methods that return one instance per class; `parse` is alignment-handbook's
# H4ArgumentParser (a subclass of HfArgumentParser that repos copy): a YAML file named first on
# the command line, else the flags
PARSES = (
    "parse_args_into_dataclasses",
    "parse_args_and_config",
    "parse_yaml_file",
    "parse_json_file",
    "parse_dict",
    "parse",
)
OTHER = ""  # what a name is bound to when it is not a config of interest


def config_vars(
    module: cst.Module, class_of: Callable[[cst.BaseExpression], str | None]
) -> dict[str, str]:
    """Name -> the class `class_of` gives the callee that builds it (None: not a config of
    interest), for the names the module binds only to that one class."""
    bound: dict[str, set[str]] = {}
    assigns = walk.find_all(module, cst.Assign)
    for assign in assigns:
        value = assign.value
        kind = class_of(value.func) if isinstance(value, cst.Call) else None
        for t in assign.targets:
            name = get_full_name_for_node(t.target)
            if name:
                bound.setdefault(name, set()).add(kind or OTHER)
    for slots, names in _unpacks(assigns, class_of):
        for slot, name in zip(slots, names):
            if slot is not None and name:
                kinds = bound.setdefault(name, set())
                kinds.discard(OTHER)  # this assignment binds it to the config
                kinds.add(slot)
    return {
        name: kinds.pop() for name, kinds in bound.items() if len(kinds) == 1 and OTHER not in kinds
    }


def parsed_beside(
    module: cst.Module,
    class_of: Callable[[cst.BaseExpression], str | None],
    kind: str,
    partners: Collection[str],
) -> dict[str, str]:
    """Name of a `kind` config -> the name of the one config of a class in `partners` that the
    same parser builds beside it (`training_args` for `model_args` in `script_args,
    training_args, model_args = HfArgumentParser((S, GRPOConfig, ModelConfig)).parse_...()`),
    for the names every unpack of the module pairs the same way."""
    pairs: dict[str, set[str]] = {}
    for slots, names in _unpacks(walk.find_all(module, cst.Assign), class_of):
        mine = [n for slot, n in zip(slots, names) if slot == kind and n]
        theirs = [n for slot, n in zip(slots, names) if slot in partners and n]
        for name in mine:  # none or several beside it: no partner (OTHER)
            pairs.setdefault(name, set()).add(theirs[0] if len(theirs) == 1 else OTHER)
    return {
        name: found.pop() for name, found in pairs.items() if len(found) == 1 and OTHER not in found
    }


def _unpacks(
    assigns: Sequence[cst.Assign], class_of: Callable[[cst.BaseExpression], str | None]
) -> Iterator[tuple[list[str | None], list[str | None]]]:
    """For each `a, b, c = parser.parse_args_into_dataclasses()` (or another PARSES method) of a
    parser variable bound to `HfArgumentParser((A, B, C))`, or of that call itself
    (`HfArgumentParser((A, B, C)).parse_args_into_dataclasses()`): the class of each slot
    (`_parser_slots`) and the name each target element binds (None: not a plain name)."""
    parsers: dict[str, list[str | None]] = {}  # parser variable -> the class of each slot
    for assign in assigns:
        slots = _parser_slots(assign.value, class_of)
        if slots is not None:
            for t in assign.targets:
                name = get_full_name_for_node(t.target)
                if name:
                    parsers[name] = slots
    for assign in assigns:
        value = assign.value
        if not (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in PARSES
        ):
            continue
        held = value.func.value  # the parser: a variable, or the call that builds it
        slots = (
            _parser_slots(held, class_of)
            if isinstance(held, cst.Call)
            else parsers.get(get_full_name_for_node(held) or "")
        )
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if slots is None or not isinstance(target, (cst.Tuple, cst.List)):
            continue
        yield (
            slots,
            [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements],
        )


def _parser_slots(
    value: cst.BaseExpression, class_of: Callable[[cst.BaseExpression], str | None]
) -> list[str | None] | None:
    """The class of each dataclass of `HfArgumentParser((A, B, GRPOConfig))` (None for one of
    no interest), when one is of interest; else None."""
    if not isinstance(value, cst.Call) or not value.args:
        return None
    seq = value.args[0].value
    if not is_parser(get_full_name_for_node(value.func)) or not isinstance(
        seq, (cst.Tuple, cst.List)
    ):
        return None
    slots = [class_of(e.value) for e in seq.elements]
    return slots if any(slots) else None
