"""Tree walks at a cost per node of one dict look-up: the visitor bases every rule builds on.

libcst's own visitors look up `visit_<Type>` and `leave_<Type>` by building the name and calling
`getattr` at every node, and `visit_<Type>_<field>` hooks for every field of every node (about
six look-ups a node); the matcher-decoratable transformer under libcst's codemods adds matcher
book-keeping on top. Rules here use none of field hooks or matcher decorators, so these bases
resolve each class's hooks once per node type and skip the rest. On a 1,300-line PPO test file
this is most of the cost of a pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

import libcst as cst

_Hooks = tuple[Callable[..., Any] | None, Callable[..., Any] | None]
_CACHE: dict[tuple[type, type], _Hooks] = {}
_N = TypeVar("_N", bound=cst.CSTNode)


def hooks(owner: type, node_type: type) -> _Hooks:
    """The (visit, leave) functions `owner` defines for `node_type`, looked up once."""
    key = (owner, node_type)
    found = _CACHE.get(key)
    if found is None:
        name = node_type.__name__
        found = (getattr(owner, f"visit_{name}", None), getattr(owner, f"leave_{name}", None))
        _CACHE[key] = found
    return found


class Visitor(cst.CSTVisitor):
    """A read-only walk: `visit_<Type>` may return False to skip the children."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = hooks(type(self), type(node))[0]
        return visit is None or visit(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        leave = hooks(type(self), type(original_node))[1]
        if leave is not None:
            leave(self, original_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None


class Transformer(cst.CSTTransformer):
    """A rewriting walk with the same hook look-up as `Visitor`."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = hooks(type(self), type(node))[0]
        return visit is None or visit(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[no-untyped-def, override]
        leave = hooks(type(self), type(original_node))[1]
        return updated_node if leave is None else leave(self, original_node, updated_node)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None


def find_all(root: cst.CSTNode, kind: type[_N] | tuple[type[_N], ...]) -> list[_N]:
    """Every node of `kind` under `root` (itself included), in source order: `libcst.matchers.
    findall` with a type for a matcher, at a fraction of its cost on a whole module. A module's
    nodes are listed once and kept until the next module (the passes of a file ask the same
    tree several times)."""
    if isinstance(root, cst.Module):
        return [n for n in _nodes(root) if isinstance(n, kind)]  # type: ignore[misc]
    found: list[_N] = []

    class _Collect(Visitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind):
                found.append(node)  # type: ignore[arg-type]
            return True

    root.visit(_Collect())
    return found


# The last module asked about, with its nodes in source order. The engine forgets it when a file
# is done: a kept tree would make the collector walk every node while the next file is parsed.
_LISTED: list[tuple[cst.Module, list[cst.CSTNode]]] = []


def _nodes(module: cst.Module) -> list[cst.CSTNode]:
    for kept, nodes in _LISTED:
        if kept is module:
            return nodes
    nodes = []

    class _All(Visitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nodes.append(node)
            return True

    module.visit(_All())
    _LISTED[:] = [(module, nodes)]
    return nodes


def forget() -> None:
    """Drop the node list kept for the last module (the engine calls it after each file)."""
    _LISTED.clear()


_FIELDS: dict[type, tuple[str, ...]] = {}


def node_ids(module: cst.Module) -> tuple[dict[int, int], frozenset[int], int]:
    """For every node of `module`, by id: the function body it sits in (0: the module; 1, 2,
    ... the function definitions in source order, as `bindings.Bindings` numbers them); the ids
    of the nodes inside import statements; and the number of scopes. Read straight off the
    nodes' fields, in field order (source order for statements), at a fifth of the cost of a
    libcst visitor walk."""
    scope_of: dict[int, int] = {}
    inner: list[int] = []
    scopes = 1
    stack: list[tuple[cst.CSTNode, int, bool]] = [(module, 0, False)]
    node_base = cst.CSTNode
    imports = (cst.Import, cst.ImportFrom)
    while stack:
        node, scope, in_import = stack.pop()
        kind = type(node)
        scope_of[id(node)] = scope
        if in_import:
            inner.append(id(node))
        elif kind in imports:
            in_import = True
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
        body_scope = scope
        if kind is cst.FunctionDef:
            body_scope = scopes
            scopes += 1
        children: list[tuple[cst.CSTNode, int, bool]] = []
        for name in names:
            value = getattr(node, name)
            here = body_scope if name == "body" else scope
            if isinstance(value, node_base):
                children.append((value, here, in_import))
            elif type(value) in (list, tuple):
                children.extend((v, here, in_import) for v in value if isinstance(v, node_base))
        stack.extend(reversed(children))
    return scope_of, frozenset(inner), scopes
