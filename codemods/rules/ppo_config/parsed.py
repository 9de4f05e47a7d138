"""TRL103's move of script-only PPO config fields (`sft_model_path`, `reward_model_path`,
`dataset_num_proc`, ...) out of a config parsed with `HfArgumentParser`/`TrlParser` into a
dataclass written into the script, `PPOScriptArguments`.

TRL's PPO trainer never read these fields; scripts did (research section 2.3), and RLOOConfig /
GRPOConfig lack them. The written dataclass joins the parser's tuple, so `--reward_model_path x`
still parses, and reads follow it. Decided per parser, all or nothing, before the rewrite starts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ExpressionContext, ExpressionContextProvider

from codemods import edits, ppo, walk
from codemods.base import CHECK_BINDINGS, RuleTransformer
from codemods.config_vars import is_parser
from codemods.rules.ppo_config.parsed_edits import insert_at, unique_name

# `parse`: alignment-handbook's H4ArgumentParser, a subclass of HfArgumentParser that repos copy
# (Chelsi-create/RLHF_Poison): a YAML file named first on the command line, else the flags
PARSE_METHODS = ("parse_args_into_dataclasses", "parse_args_and_config", "parse")
CLASS_NAME, VAR_NAME = "PPOScriptArguments", "ppo_args"


@dataclasses.dataclass
class Move:
    """One parser whose config's script-only fields move to a written-in dataclass `cls`, bound to
    `var`."""

    cls: str
    var: str
    era: str
    at: int  # module body index the class goes to
    parser_seq: int  # id of the parser's tuple/list literal
    targets: list[int]  # ids of the unpack targets
    reads: dict[int, tuple[str, str]]  # id(Attribute) -> (config variable, field)
    fields: list[str]
    parser: cst.Call


@dataclasses.dataclass
class Parser:
    call: cst.Call
    top: int
    index: int = -1  # of the PPO config in the tuple
    era: str | None = None
    uses: list[tuple[cst.Assign, int]] = dataclasses.field(
        default_factory=list
    )  # (unpack, top-level index)


class Collected(walk.Visitor):
    """Parsers, their unpacks, every name spelled in the file, and `import dataclasses`
    statements."""

    def __init__(self, owner: RuleTransformer, module: cst.Module) -> None:
        self.owner = owner
        self.module = module
        self.top = 0
        self.depth = 0
        self.parsers: dict[str, list[Parser]] = {}
        self.unpacks: list[
            tuple[str, cst.Assign, int]
        ] = []  # (parser variable, statement, top index)
        self.names: dict[str, int] = {}  # spelling -> occurrences
        # spelling -> occurrences as a variable (not the attribute of `x.name`, nor a module
        # path's part: `from recipe_lib.parser import ...` is no use of a `parser` variable)
        self.variables: dict[str, int] = {}
        self._attrs: set[int] = set()
        self.classes: dict[str, set[str]] = {}  # classes defined in the file -> annotated fields
        self.class_nodes: dict[str, list[cst.ClassDef]] = {}
        self.dataclasses_import: tuple[int, bool] | None = None  # (top index, at module level)
        self.attributes: list[cst.Attribute] = []
        self.handed: dict[int, tuple[str, str]] = {}
        self.functions: dict[str, list[cst.FunctionDef]] = {}  # module-level functions
        self.calls: list[cst.Call] = []  # calls of a plain name: `build_dataset(config, ...)`

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth == 0:
            self.functions.setdefault(node.name.value, []).append(node)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self.calls.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.names[node.value] = self.names.get(node.value, 0) + 1
        if id(node) not in self._attrs:
            self.variables[node.value] = self.variables.get(node.value, 0) + 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attributes.append(node)
        self._attrs.add(id(node.attr))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        found = self.classes.setdefault(node.name.value, set())
        self.class_nodes.setdefault(node.name.value, []).append(node)
        for stmt in node.body.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                found.update(
                    s.target.value
                    for s in stmt.body
                    if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)
                )

    def visit_Import(self, node: cst.Import) -> None:
        plain = any(
            get_full_name_for_node(a.name) == "dataclasses" and a.asname is None for a in node.names
        )
        if plain and (self.dataclasses_import is None or self.depth == 0):  # module level wins
            self.dataclasses_import = (self.top, self.depth == 0)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            return
        target, call = node.targets[0].target, node.value
        func = get_full_name_for_node(call.func) or ""
        if isinstance(target, cst.Name) and is_parser(func):
            self.parsers.setdefault(target.value, []).append(Parser(call, self.top))
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value in PARSE_METHODS:
            self.unpacks.append((get_full_name_for_node(call.func.value) or "", node, self.top))


def collect(owner: RuleTransformer, module: cst.Module) -> Collected:
    """One pass over the file for everything TRL103's parser planners read (this module's moves,
    and codemods/flags.py's flag clashes and ModelConfig reads)."""
    seen = Collected(owner, module)
    for i, stmt in enumerate(module.body):
        seen.top = i
        walk.visit(stmt, seen)
    for var, assign, top in seen.unpacks:
        for p in seen.parsers.get(var, []):
            p.uses.append((assign, top))
    return seen


def plan(
    owner: RuleTransformer, seen: Collected, file_era: str | None
) -> tuple[list[Move], dict[int, tuple[str, str]]]:
    """The moves this file allows, and the reads through function parameters a failed move leaves
    (id -> (parameter, field)): they get a TODO. A parser outside the known shape gets no move
    (reads keep their TODO)."""
    moves: list[Move] = []
    handed: dict[int, tuple[str, str]] = {}
    taken = set(seen.names)
    for var, found in seen.parsers.items():
        if len(found) != 1:
            continue  # the name is bound to more than one parser
        seen.handed = {}
        move = _move(owner, seen, var, found[0], file_era, taken)
        if move is not None:
            taken.update((move.cls, move.var))
            moves.append(move)
        else:
            handed.update(seen.handed)
    return moves, handed


def _move(
    owner: RuleTransformer,
    seen: Collected,
    var: str,
    p: Parser,
    file_era: str | None,
    taken: set[str],
) -> Move | None:
    seq = p.call.args[0].value if p.call.args and not p.call.args[0].star else None
    if not isinstance(seq, (cst.Tuple, cst.List)) or any(
        isinstance(e, cst.StarredElement) for e in seq.elements
    ):
        return None
    hits = [
        (i, ppo.ppo_class(owner.names_from(e.value, "trl"), ppo.CONFIG_NAMES))
        for i, e in enumerate(seq.elements)
    ]
    hits = [(i, hit) for i, hit in hits if hit is not None]
    if len(hits) != 1:
        return None
    p.index, p.era = hits[0][0], hits[0][1][1] or file_era  # type: ignore[index]
    root = (get_full_name_for_node(seq.elements[p.index].value) or "").split(".")[0]
    if p.era is None or not (isinstance(seq.elements[p.index].value, cst.Name) or root == "trl"):
        return None  # no PPO config, an era it cannot tell, or a reference TRL103 will not rename
    if not p.uses or seen.variables.get(var, 0) != 1 + len(p.uses):
        return None  # the parser is used in a way other than an unpacked parse
    elements = {get_full_name_for_node(e.value) for e in seq.elements}
    if CLASS_NAME in elements and CLASS_NAME not in seen.classes:
        return None  # a class of that name from elsewhere: its fields (flags) are not known
    table = ppo.script_fields(p.era)
    configs: list[cst.Name] = []
    for assign, _ in p.uses:
        target = assign.targets[0].target
        if (
            not isinstance(target, (cst.Tuple, cst.List))
            or len(target.elements) != len(seq.elements)
            or any(isinstance(e, cst.StarredElement) for e in target.elements)
            or not isinstance(assign.value, cst.Call)
            or not _plain_parse(assign.value)
        ):
            return None
        config = target.elements[p.index].value
        if not isinstance(config, cst.Name):
            return None
        configs.append(config)
    reads = _reads(owner, seen.attributes, configs, table)
    passed = _through_functions(owner, seen, configs, table) if reads is not None else None
    if reads is None or passed is None:
        return None
    seen.handed = passed  # kept for a TODO if the move fails below
    if passed and not all(owner.at_module_level(c) for c in configs):
        return None  # the written object would not be a global the function can read
    reads |= passed
    if not reads:
        return None
    used = [f for f in table if f in {f for _, f in reads.values()}]
    for name in elements:  # a field that another dataclass of the parser defines already
        if set(used) & seen.classes.get(name or "", set()):
            return None
    at = insert_at(seen, p)
    if at is None:
        return None
    cls, new_var = unique_name(CLASS_NAME, taken), unique_name(VAR_NAME, taken)
    targets = [id(a.targets[0].target) for a, _ in p.uses]
    return Move(cls, new_var, p.era, at, id(seq), targets, reads, used, p.call)


def _plain_parse(call: cst.Call) -> bool:
    """No `return_remaining_strings`: the dataclasses are the whole result, so one can be
    appended."""
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > 1 or any(a.star for a in call.args):
        return False
    flag = next(
        (
            a
            for a in call.args
            if a.keyword is not None and a.keyword.value == "return_remaining_strings"
        ),
        None,
    )
    return flag is None or edits.literal(flag.value) is False


def referents(owner: RuleTransformer, name: cst.Name) -> set[int]:
    """ids of the nodes that bind what `name` may refer to where it stands (empty when unknown)."""
    return owner.referents(name)


def plain_load(owner: RuleTransformer, node: cst.Attribute) -> bool:
    """Whether `node` is read (not assigned or deleted), as libcst's ExpressionContextProvider
    tells, from the walked tree's parents instead of the provider's own walk of the module."""
    tree = owner.walked_tree()
    loaded = tree is not None and tree.context(node) == "load"
    if CHECK_BINDINGS:
        libcst_says = owner.get_metadata(ExpressionContextProvider, node, None)
        if loaded != (libcst_says == ExpressionContext.LOAD):
            raise AssertionError(f"walk.Tree.context and libcst disagree on {node}")
    return loaded


def _reads(
    owner: RuleTransformer,
    attributes: Sequence[cst.Attribute],
    configs: Sequence[cst.Name],
    table: dict,
) -> dict[int, tuple[str, str]] | None:
    """id(`cfg.field`) -> (cfg, field) for each read of a script-only field; None when one is
    written or
    the name may also be bound to something else there."""
    out: dict[int, tuple[str, str]] = {}
    for node in attributes:
        if node.attr.value not in table or not isinstance(node.value, cst.Name):
            continue
        bound = referents(owner, node.value)
        if not bound & {id(c) for c in configs}:
            continue
        if len(bound) > 1 or not plain_load(owner, node):
            return None
        out[id(node)] = (node.value.value, node.attr.value)
    return out


def _through_functions(
    owner: RuleTransformer, seen: Collected, configs: Sequence[cst.Name], table: dict
) -> dict[int, tuple[str, str]] | None:
    """Reads of script-only fields through a parameter of a module-level function that every call
    hands the parsed config (`def build_dataset(config): ... config.model_name`, called as
    `build_dataset(ppo_config)`); they can move only when the config is a module global, as the
    written object then is. None when such a parameter is written."""
    ids = {id(c) for c in configs}
    out: dict[int, tuple[str, str]] = {}
    for name, defs in seen.functions.items():
        calls = [c for c in seen.calls if c.func.value == name]  # type: ignore[attr-defined]
        if len(defs) != 1 or not calls or seen.variables.get(name, 0) != 1 + len(calls):
            continue
        params = list(defs[0].params.params)
        slots = {_config_slot(owner, call, params, ids) for call in calls}
        if len(slots) != 1 or None in slots:
            continue  # not every call hands the config over at the same place
        param = params[slots.pop()]  # type: ignore[index]
        for node in seen.attributes:
            if (
                node.attr.value not in table
                or not isinstance(node.value, cst.Name)
                or node.value.value != param.name.value
            ):
                continue
            bound = referents(owner, node.value)
            if id(param) not in bound:
                continue
            if len(bound) > 1 or not plain_load(owner, node):
                return None
            out[id(node)] = (param.name.value, node.attr.value)
    return out


def _config_slot(
    owner: RuleTransformer, call: cst.Call, params: list[cst.Param], ids: set[int]
) -> int | None:
    """The parameter index at which `call` passes the parsed config (one, by position or
    keyword)."""
    found = []
    for i, arg in enumerate(call.args):
        if arg.star or not isinstance(arg.value, cst.Name):
            continue
        if not referents(owner, arg.value) & ids:
            continue
        if arg.keyword is None:
            found.append(i if i < len(params) else None)
        else:
            found.append(
                next((k for k, p in enumerate(params) if p.name.value == arg.keyword.value), None)
            )
    return found[0] if len(found) == 1 else None


def handed_plans(owner: RuleTransformer, seen: Collected, reads: dict[str, Any]) -> dict[int, Any]:
    """id(`param.field`) -> the plan of the config every call of a module-level function hands
    to `param` (`build_dataset(args.ppo_config)` with `def build_dataset(config): ...
    config.model_name`), for configs built by a call (`reads`: expression -> plan). A function
    whose parameter is written, or whose calls hand over different configs, gets none."""
    out: dict[int, Any] = {}
    for name, defs in sorted(seen.functions.items()):
        calls = [c for c in seen.calls if c.func.value == name]  # type: ignore[attr-defined]
        if len(defs) != 1 or not calls or seen.variables.get(name, 0) != 1 + len(calls):
            continue
        params = list(defs[0].params.params)
        handed = set()
        for call in calls:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            found = [
                (i, reads[shown])
                for i, a in enumerate(positional)
                if i < len(params) and (shown := get_full_name_for_node(a.value)) in reads
            ]
            handed.add(tuple((i, id(plan)) for i, plan in found))
        if len(handed) != 1:
            continue  # the calls hand over different configs, or at different places
        slots = handed.pop()
        for i, _ in slots:
            param = params[i]
            plan = next(
                reads[shown]
                for a in calls[0].args
                if (shown := get_full_name_for_node(a.value)) in reads
                and id(reads[shown]) == dict(slots)[i]
            )
            nodes = [
                node
                for node in seen.attributes
                if isinstance(node.value, cst.Name)
                and node.value.value == param.name.value
                and id(param) in referents(owner, node.value)
            ]
            if any(not plain_load(owner, node) for node in nodes):
                continue  # the function writes a field: the config is not only read there
            out.update((id(node), plan) for node in nodes)
    return out
