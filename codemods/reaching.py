"""Which of several bindings of a name a statement reads, where that is plain from the text.

A name bound more than once in one function body (or at the top level), every binding a
statement of the same block, is read by a later statement of that block from the last binding
above it: a notebook sets `gen_kwargs` above its training loop and again below it for a
sample after training; a script builds `training_args` for one trainer, then again for the
next. Bound any other way as well (a loop target, an unpacking, `+=`, `with ... as`, a walrus,
`del`, `global`/`nonlocal`), or in a nested block, the name is left alone: which binding a
statement reads is then a question of the run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from typing import Generic, TypeVar

import libcst as cst

from codemods import edits, walk

T = TypeVar("T")


@dataclasses.dataclass
class Rebound(Generic[T]):
    """A name one block binds several times, each a statement of its own: `owner`, the module
    or the block holding them; per binding, its statement and what the caller read off the
    assignment (None: nothing of interest)."""

    owner: cst.CSTNode
    bindings: list[tuple[cst.BaseStatement, cst.Assign, T | None]]


def rebound(
    module: cst.Module,
    scope_of: Callable[[cst.CSTNode], int | None],
    blocks: Sequence[tuple[cst.CSTNode, Sequence[cst.BaseStatement]]],
    read: Callable[[cst.Assign], T | None],
    *,
    excluded: Collection[str] = (),
) -> dict[tuple[int, str], Rebound[T]]:
    """By (function body, name): the names `blocks` (owner, statements) bind more than once,
    each binding `name = value` as a statement of one block and every `name =` of that
    function body among them, none bound any other way and none in `excluded`; only those where
    `read` gives something for one binding at least."""
    counts: dict[tuple[int | None, str], int] = {}
    for assigned in walk.find_all(module, cst.AssignTarget):
        if isinstance(assigned.target, cst.Name):
            key = (scope_of(assigned), assigned.target.value)
            counts[key] = counts.get(key, 0) + 1
    skip = set(excluded) | bound_otherwise(module)
    out: dict[tuple[int, str], Rebound[T]] = {}
    for owner, body in blocks:
        found: dict[tuple[int, str], Rebound[T]] = {}
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (
                    not isinstance(small, cst.Assign)
                    or len(small.targets) != 1
                    or not isinstance(small.targets[0].target, cst.Name)
                ):
                    continue
                name = small.targets[0].target.value
                scope = scope_of(small)
                if name in skip or scope is None:
                    continue
                entry = found.setdefault((scope, name), Rebound(owner, []))
                entry.bindings.append((stmt, small, read(small)))
        for key, entry in found.items():
            n = len(entry.bindings)
            if n > 1 and counts.get(key) == n and any(v is not None for _, _, v in entry.bindings):
                out[key] = entry
    return out


def last_above(entry: Rebound[T], node: cst.CSTNode, tree: walk.Tree) -> cst.Assign | None:
    """The binding of `entry` that the statement of its block holding `node` reads: the last
    one above that statement; None where none is above, or where `node` is in no statement of
    the block (or in a binding's own)."""
    at = tree.index.get(id(node))
    owner = tree.index.get(id(entry.owner))
    if at is None or owner is None:
        return None
    up = at  # the statement of the block holding `node`
    while up >= 0 and tree.parents[up] != owner:
        up = tree.parents[up]
    if up < 0:
        return None
    last: cst.Assign | None = None
    for stmt, assign, _ in entry.bindings:
        start = tree.index.get(id(stmt))
        if start is None or start >= up:
            return None if start == up else last
        last = assign
    return last


def read_above(entry: Rebound[T], node: cst.CSTNode, tree: walk.Tree) -> T | None:
    """What `read` gave for the binding `last_above` finds; None where there is none."""
    assign = last_above(entry, node, tree)
    return next((v for _, a, v in entry.bindings if a is assign), None)


def bound_otherwise(root: cst.CSTNode) -> set[str]:
    """Names bound under `root` other than by a plain `name = ...`: a parameter, a loop or
    comprehension target, an `as`, a walrus, `+=`, an annotated assignment, an unpacking (`a, b
    = ...`), `del`, `global`, `nonlocal`, a `def` or a `class`."""
    targets: list[cst.CSTNode] = []
    for kind in (cst.For, cst.CompFor, cst.NamedExpr, cst.AugAssign, cst.AnnAssign, cst.Del):
        targets += [node.target for node in walk.find_all(root, kind)]  # type: ignore[attr-defined]
    targets += [node.name for node in walk.find_all(root, cst.AsName)]
    targets += [node.name for node in walk.find_all(root, cst.Param)]
    out = {name for target in targets for name in _stored_names(target)}
    # a plain `name = ...` is one of the bindings `rebound` counts; an unpacking is not
    for assigned in walk.find_all(root, cst.AssignTarget):
        if not isinstance(assigned.target, cst.Name):
            out.update(_stored_names(assigned.target))
    out |= {d.name.value for d in walk.find_all(root, cst.FunctionDef)}
    out |= {d.name.value for d in walk.find_all(root, cst.ClassDef)}
    for names in [
        *(g.names for g in walk.find_all(root, cst.Global)),
        *(n.names for n in walk.find_all(root, cst.Nonlocal)),
    ]:
        out |= {n.name.value for n in names}
    return out


def _stored_names(target: cst.CSTNode) -> list[str]:
    """The bare names a target stores to, itself or through tuples, lists and starred
    elements (not a subscript's or an attribute's: those change an object, bind no name)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _stored_names(element.value)]
    return []


def blocks_of(module: cst.Module) -> list[tuple[cst.CSTNode, Sequence[cst.BaseStatement]]]:
    """The blocks whose statements `rebound` reads: the module's, its `if __name__ ==
    "__main__":` blocks' and every function's own body."""
    out: list[tuple[cst.CSTNode, Sequence[cst.BaseStatement]]] = [(module, module.body)]
    out += [
        (g.body, g.body.body) for g in main_guards(module) if isinstance(g.body, cst.IndentedBlock)
    ]
    out += [
        (fn.body, fn.body.body)
        for fn in walk.find_all(module, cst.FunctionDef)
        if isinstance(fn.body, cst.IndentedBlock)
    ]
    return out


def main_guards(module: cst.Module) -> list[cst.If]:
    """The module's top-level `if __name__ == "__main__":` statements."""
    out: list[cst.If] = []
    for stmt in module.body:
        if (
            isinstance(stmt, cst.If)
            and isinstance(stmt.test, cst.Comparison)
            and len(stmt.test.comparisons) == 1
            and isinstance(stmt.test.comparisons[0].operator, cst.Equal)
            and {
                edits.code(stmt.test.left).strip(),
                edits.code(stmt.test.comparisons[0].comparator).strip(),
            }
            in ({"__name__", '"__main__"'}, {"__name__", "'__main__'"})
        ):
            out.append(stmt)
    return out
