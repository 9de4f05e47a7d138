"""What TRL102 decides before it rewrites: value-head class variables and where `peft_config` may be
None.

A value-head class variable is a name bound once in its scope to value-head classes (`cls = VH`,
`cls = VH if c else Seq2SeqVH`) and used only as `cls.from_pretrained(...)`: its classes and its
calls can then be rewritten like direct uses. Anything else about it keeps today's TODOs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import libcst as cst

from codemods import walk
from codemods.base import RuleTransformer

# How a `peft_config=` argument moves: into get_peft_model(...), dropped (literal None), behind an
# `if cfg is not None:` statement (a name the file also binds to None), or not at all (a TODO).
WRAP, DROP, GUARD, UNSURE = "wrap", "drop", "guard", "unsure"


@dataclasses.dataclass
class Leaf:
    cls: str  # the value-head class this node names
    var: str  # the variable it is bound to
    conditional: bool  # part of `a if c else b`


@dataclasses.dataclass
class Facts:
    calls: dict[int, str] = dataclasses.field(
        default_factory=dict
    )  # id(`var.from_pretrained(...)`) -> var
    leaves: dict[int, Leaf] = dataclasses.field(
        default_factory=dict
    )  # id(class node in the assignment) -> leaf
    statements: dict[int, tuple[str, int]] = dataclasses.field(
        default_factory=dict
    )  # id(call) -> (target, id(statement)) for `name = call`
    none_names: set[str] = dataclasses.field(
        default_factory=set
    )  # names the file binds to None somewhere
    none_targets: set[int] = dataclasses.field(
        default_factory=set
    )  # ids of the names of `name = None` (the literal): what `referents` of a read may be
    # name -> the dict literal it is bound to (names bound more than once are left out), and
    # names whose items are set (`name[k] = v`): what a `**name` handed to the wrapper may hold
    dicts: dict[str, cst.Dict] = dataclasses.field(default_factory=dict)
    dict_writes: set[str] = dataclasses.field(default_factory=set)


def _leaves(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.IfExp):
        return [*_leaves(expr.body), *_leaves(expr.orelse)]
    return [expr]


def may_be_none(expr: cst.BaseExpression) -> bool:
    return any(isinstance(e, cst.Name) and e.value == "None" for e in _leaves(expr))


class _Collect(walk.Visitor):
    def __init__(
        self, vh_class: Callable[[cst.CSTNode], str | None], classes: tuple[str, ...]
    ) -> None:
        self.vh_class, self.classes = vh_class, classes
        self.candidates: list[tuple[cst.Name, cst.BaseExpression]] = []  # (target, value)
        self.by_name: dict[int, cst.Call] = {}  # id(Name in `Name.from_pretrained(...)`) -> call
        self.facts = Facts()
        self._bound_once: set[str] = set()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        stmt = node.body[0] if len(node.body) == 1 else None
        if (
            isinstance(stmt, cst.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0].target, cst.Name)
            and isinstance(stmt.value, cst.Call)
        ):
            self.facts.statements[id(stmt.value)] = (stmt.targets[0].target.value, id(node))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._binding([t.target for t in node.targets], node.value)
        for t in node.targets:
            if isinstance(t.target, cst.Name):
                name = t.target.value
                if name in self._bound_once or not isinstance(node.value, cst.Dict):
                    self.facts.dicts.pop(name, None)
                    self._bound_once.add(name)
                    if not isinstance(node.value, cst.Dict):
                        self.facts.dict_writes.add(name)  # bound to something else too
                    continue
                self._bound_once.add(name)
                self.facts.dicts[name] = node.value
            elif isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                self.facts.dict_writes.add(t.target.value.value)
        target = node.targets[0].target
        if (
            len(node.targets) == 1
            and isinstance(target, cst.Name)
            and not isinstance(node.value, cst.Call)
            and all(self.vh_class(e) in self.classes for e in _leaves(node.value))
        ):
            self.candidates.append((target, node.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._binding([node.target], node.value)

    def _binding(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        if may_be_none(value):
            self.facts.none_names.update(t.value for t in targets if isinstance(t, cst.Name))
        if isinstance(value, cst.Name) and value.value == "None":
            self.facts.none_targets.update(id(t) for t in targets if isinstance(t, cst.Name))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "from_pretrained"
            and isinstance(func.value, cst.Name)
        ):
            self.by_name[id(func.value)] = node


def peft_move(call: cst.Call, facts: Facts) -> str:
    """How `call`'s `peft_config=` moves (WRAP when it has none)."""
    arg = next(
        (a for a in call.args if a.keyword is not None and a.keyword.value == "peft_config"), None
    )
    if arg is None:
        return WRAP
    value = arg.value
    if isinstance(value, cst.Name) and value.value == "None":
        return DROP
    if isinstance(value, cst.Name) and value.value in facts.none_names:
        return GUARD if id(call) in facts.statements else UNSURE
    return UNSURE if may_be_none(value) else WRAP


def collect(
    owner: RuleTransformer,
    module: cst.Module,
    vh_class: Callable[[cst.CSTNode], str | None],
    classes: tuple[str, ...],
) -> Facts:
    """Value-head class variables the rewrite may follow, and the `peft_config` facts."""
    seen = _Collect(vh_class, classes)
    walk.visit(module, seen)
    facts = seen.facts
    for target, value in seen.candidates:
        bound, reads = owner.bindings_and_reads(target)
        if len(bound) != 1 or bound[0] is not target:
            continue  # rebound in its scope (or bound by something other than this assignment)
        calls = [seen.by_name.get(id(read)) for read in reads]
        if any(c is None or peft_move(c, facts) == UNSURE for c in calls):
            continue  # used other than `.from_pretrained(...)`, or a peft_config it cannot move
        facts.calls.update((id(c), target.value) for c in calls if c is not None)
        conditional = isinstance(value, cst.IfExp)
        facts.leaves.update(
            (id(e), Leaf(vh_class(e) or "", target.value, conditional)) for e in _leaves(value)
        )
    return facts
