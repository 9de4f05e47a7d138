"""Tree walks at a cost per node of one dict look-up: the visitor bases every rule builds on.

libcst's own visitors look up `visit_<Type>` and `leave_<Type>` by building the name and calling
`getattr` at every node, and `visit_<Type>_<field>` hooks for every field of every node (about
six look-ups a node); the matcher-decoratable transformer under libcst's codemods adds matcher
book-keeping on top. Rules here use none of field hooks or matcher decorators, so these bases
resolve each class's hooks once per node type and skip the rest. On a 1,300-line PPO test file
this is most of the cost of a pass.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import inspect
import keyword
import os
import re
from collections.abc import Callable, Collection
from typing import Any, TypeVar

import libcst as cst

# Set in the test suite: every Tree's node order is checked against libcst's own walk.
CHECK = os.environ.get("TRL_MIGRATE_CHECK_BINDINGS") == "1"

_Hooks = tuple[Callable[..., Any] | None, Callable[..., Any] | None]
_N = TypeVar("_N", bound=cst.CSTNode)


def hooks(owner: type, node_type: type) -> _Hooks:
    """The (visit, leave) functions `owner` defines for `node_type`, looked up once per class.
    The table lives on the class itself, not in a module-level cache: the classes rules define
    inside functions (one per call) then go with their last instance, and so do the closures and
    trees their hooks hold."""
    table = owner.__dict__.get(_TABLE)
    if table is None:
        table = {}
        setattr(owner, _TABLE, table)
    found = table.get(node_type)
    if found is None:
        name = node_type.__name__
        found = table[node_type] = (_own(owner, f"visit_{name}"), _own(owner, f"leave_{name}"))
    return found  # type: ignore[no-any-return]


_TABLE = "_walk_hooks"


def _own(owner: type, attr: str) -> Callable[..., Any] | None:
    """`owner`'s hook `attr`, or None where it is one of libcst's no-op stubs."""
    hook = getattr(owner, attr, None)
    if hook is None or hook is getattr(cst.CSTTransformer, attr, None):
        return None
    if hook is getattr(cst.CSTVisitor, attr, None):
        return None
    return hook  # type: ignore[no-any-return]


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
        listing, start, end = tree_of(root), 0, None
    else:
        kept = _kept(root)
        if kept is None:
            return _find_walking(root, kind)
        listing, start, end = kept
    nodes = listing.nodes
    at = listing.positions(kind)
    if end is not None:  # the positions inside root's subtree, nodes[start:end]
        at = at[bisect.bisect_left(at, start) : bisect.bisect_left(at, end)]
    return [nodes[i] for i in at]  # type: ignore[misc]


def _kept(root: cst.CSTNode) -> tuple[Tree, int, int] | None:
    """A kept tree that holds `root`, with where root's subtree sits in its node list (a node
    is immutable, so any tree that holds it lists the same subtree)."""
    for kept in _LISTED:
        at = kept.index.get(id(root))
        if at is not None and kept.nodes[at] is root:
            return kept, at, kept.ends[at]
    return None


def _find_walking(root: cst.CSTNode, kind: type[_N] | tuple[type[_N], ...]) -> list[_N]:
    found: list[_N] = []

    class _Collect(Visitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind):
                found.append(node)  # type: ignore[arg-type]
            return True

    root.visit(_Collect())
    return found


# The last modules asked about. The engine forgets them when a file is done: a kept tree would
# make the collector walk every node while the next file is parsed.
_LISTED: list[Tree] = []
_KEEP = 3  # a pass's tree, the one before, and the verifying run's


# What `Tree.stored` tells of a name: the nodes a name stored to may sit in (`a, (b, *c) =
# ...`), and those that store to what they hold, always or in their `target` field.
ASSIGNED, BOUND, DELETED = "assigned", "bound", "deleted"
_UNPACKING = (cst.Tuple, cst.List, cst.Element, cst.StarredElement)
_STORING = (cst.AsName, cst.CompFor, cst.NamedExpr)
_TARGETED = (cst.AnnAssign, cst.AugAssign, cst.For)
# the nodes that store to their `target` field alone (the expression context's view)
_TARGET_HOLDERS = (*_TARGETED, cst.CompFor, cst.NamedExpr)


def tree_of(module: cst.Module) -> Tree:
    """The `Tree` of `module`, made once and kept while the passes of one file ask for it."""
    for kept in _LISTED:
        if kept.module is module:
            return kept
    made = Tree(module, _LISTED[0] if _LISTED else None)
    _LISTED.insert(0, made)
    del _LISTED[_KEEP:]
    return made


def visit(root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`root.visit(visitor)` for a read-only `Visitor`: on a module, the hooks run over the
    module's node list, kept across the passes and prescans of one tree, in the order and with
    the child-skipping libcst's walk has (a walk builds a new node for every node it passes,
    a read-only one too). Other roots and visitors with their own on_visit walk as usual."""
    owner = type(visitor)
    kept = None
    if (
        not isinstance(visitor, Visitor)
        or owner.on_visit is not Visitor.on_visit
        or owner.on_leave is not Visitor.on_leave
        or (not isinstance(root, cst.Module) and (kept := _kept(root)) is None)
    ):
        root.visit(visitor)
        return
    if kept is None:
        listing = tree_of(root)  # type: ignore[arg-type]
        i, count = 0, len(listing.nodes)
    else:
        listing, i, count = kept
    nodes, ends, masks = listing.nodes, listing.ends, listing.masks
    wanted = hooked_mask(owner)
    table = owner.__dict__.get(_TABLE) or {}
    pending: list[tuple[int, Callable[..., Any], cst.CSTNode]] = []  # (end, leave hook, node)
    while i < count:
        while pending and pending[-1][0] <= i:
            _, leave, done = pending.pop()
            leave(visitor, done)
        if not masks[i] & wanted and i:
            # no node the visitor has a hook for is in this subtree: none of its hooks would
            # run in there (the module itself, position 0, is always entered: its hooks are
            # not in the mask)
            i = ends[i]
            continue
        node = nodes[i]
        kind = type(node)
        found = table.get(kind)
        if found is None:
            found = hooks(owner, kind)
            table = owner.__dict__[_TABLE]
        enter, leave_hook = found
        descend = enter is None or enter(visitor, node) is not False
        if leave_hook is not None:
            pending.append((ends[i], leave_hook, node))
        i = i + 1 if descend else ends[i]
    while pending:
        _, leave, done = pending.pop()
        leave(visitor, done)


def transform(
    module: cst.Module, transformer: cst.CSTTransformer, mask: int | None = None
) -> cst.Module:
    """`module.visit(transformer)` for a transformer whose hooks are `on_visit` and `on_leave`
    alone (no per-field hooks): the same calls in the same order, over the module's node list.

    `mask`: the node types the transformer has hooks for (`hooked_mask`), for a transformer
    whose `on_visit` and `on_leave` do nothing but keep the node for a subtree that holds none
    of them (the module aside): such a subtree is kept without calling either.

    libcst's walk builds a new node for every node whose children it visits, changed or not,
    and validates each one; here a node is rebuilt only when one of its children came back as
    another node (or a removal), by libcst's own `_visit_and_replace_children` handed the
    children's results, so removals, flattening and the checks on them are libcst's. A hook
    is thus handed `updated_node is original_node` wherever nothing under it changed."""
    listing = tree_of(module)
    nodes, ends, masks = listing.nodes, listing.ends, listing.masks
    on_visit, on_leave = transformer.on_visit, transformer.on_leave
    skip = mask is not None

    def walk_at(i: int) -> Any:
        node = nodes[i]
        updated = node
        if on_visit(node):
            results = []
            changed = False
            j, end = i + 1, ends[i]
            while j < end:
                if skip and not masks[j] & mask:  # type: ignore[operator]
                    results.append(nodes[j])  # nothing in there for the transformer
                    j = ends[j]
                    continue
                result = walk_at(j)
                results.append(result)
                if result is not nodes[j]:
                    changed = True
                j = ends[j]
            if changed:
                updated = node._visit_and_replace_children(_Replay(results))
        result = on_leave(node, updated)
        if result is not updated and not isinstance(
            result, (cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel)
        ):
            raise cst.CSTValidationError(
                "Expected a node of type CSTNode or a RemovalSentinel, "
                f"but got a return value of {type(result).__name__}"
            )
        return result

    result = walk_at(0)
    if isinstance(result, cst.RemovalSentinel):
        return module.with_changes(body=(), header=(), footer=())
    return result  # type: ignore[no-any-return]


class _Replay(cst.CSTTransformer):
    """Hands a node's `_visit_and_replace_children` the results its children's walk gave, in
    the order that walk met them (libcst visits the children in the same order)."""

    def __init__(self, results: list[Any]) -> None:
        self._results = iter(results)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        return next(self._results)

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None


def forget() -> None:
    """Drop the node lists kept for the last modules (the engine calls it after each file)."""
    _LISTED.clear()


# One bit per node type, handed out as types are met: a subtree's mask says which types it holds.
_BITS: dict[str, int] = {}


def type_bit(name: str) -> int:
    bit = _BITS.get(name)
    if bit is None:
        bit = _BITS[name] = 1 << len(_BITS)
    return bit


def hooked_mask(owner: type) -> int:
    """The node types `owner` has a visit_ or leave_ hook of its own for (not libcst's no-op
    stubs, the module aside), as a mask; kept on the class, as `hooks` keeps its table."""
    mask = owner.__dict__.get(_MASK)
    if mask is None:
        mask = 0
        # the names libcst's typed stubs declare are no hooks unless a class of ours (or one
        # of libcst's codemod bases) defines them again: read only those classes' own names
        # (`dir` of a visitor class lists some 1,600, and rules define classes per call)
        for cls in owner.__mro__:
            if cls.__module__ == "libcst._typed_visitor":
                continue
            for attr in cls.__dict__:
                if not attr.startswith(("visit_", "leave_")) or attr[6:] == "Module":
                    continue
                if _own(owner, attr) is not None:
                    mask |= type_bit(attr[6:])
        setattr(owner, _MASK, mask)
    return mask  # type: ignore[no-any-return]


_MASK = "_walk_hooked_mask"


# Per node type: its type bit and the fields libcst's walk visits, in that order; per value
# type: whether it is a node (an ABC's isinstance costs more than the rest of the walk).
_LAYOUT: dict[type, tuple[int, tuple[str, ...], str | None]] = {}
_IS_NODE: dict[type, bool] = {}


def _visit_order(kind: type) -> tuple[str, ...]:
    """The fields libcst's walk visits on a node of type `kind`, in its order: the field names
    its `_visit_and_replace_children` hands to libcst's visit helpers, in the order they appear
    there. Read from the code, not from one node: some fields are visited only when set
    (FormattedStringExpression's `format_spec`)."""
    fields = {f.name for f in dataclasses.fields(kind)}
    try:
        source = inspect.getsource(kind._visit_and_replace_children)  # type: ignore[attr-defined]
    except (OSError, TypeError):  # libcst installed without its sources: declaration order
        return tuple(f.name for f in dataclasses.fields(kind))
    order: list[str] = []
    for name in re.findall(r"""["'](\w+)["']""", source):
        if name in fields and name not in order:
            order.append(name)
    return tuple(order)


def libcst_order(root: cst.CSTNode) -> list[tuple[cst.CSTNode, int]]:
    """Every node under `root` with the end of its subtree, as libcst's own visitor meets them
    (what `Tree` reproduces at a fraction of the cost; kept for checking it)."""
    nodes: list[cst.CSTNode] = []
    ends: list[int] = []
    open_: list[int] = []

    class _All(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            open_.append(len(nodes))
            nodes.append(node)
            ends.append(0)
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            ends[open_.pop()] = len(nodes)

    root.visit(_All())
    return list(zip(nodes, ends))


def _layout(node: cst.CSTNode) -> tuple[int, tuple[str, ...], str | None]:
    kind = type(node)
    layout = _LAYOUT.get(kind)
    if layout is None:
        layout = _LAYOUT[kind] = (
            type_bit(kind.__name__),
            _visit_order(kind),
            _TEXT_FIELDS.get(kind.__name__),
        )
    return layout


# The nodes whose own fields hold source text a word can occur in (names, numbers, strings and
# their prefixes, comments). Everything else the code of a node holds is keywords, operators
# and whitespace, which libcst writes out itself.
_TEXT_FIELDS = {
    "Name": "value",
    "Integer": "value",
    "Float": "value",
    "Imaginary": "value",
    "SimpleString": "value",
    "FormattedStringText": "value",
    "FormattedString": "start",
    "TemplatedStringText": "value",
    "TemplatedString": "start",
    "Comment": "value",
}
# A word found in no node's text may still be in a keyword (`import`, `lambda`): such words
# are left to the code itself.
_KEYWORDS = " ".join([*keyword.kwlist, *keyword.softkwlist])


def plain_words(words: Collection[str]) -> bool:
    """Whether `Tree.holding` can answer for `words`: identifiers, none part of a keyword."""
    return all(w.isidentifier() and w not in _KEYWORDS for w in words)


class Tree:
    """Where a module's nodes sit, read once per tree straight off the nodes' fields, in the
    order libcst's walk visits them (source order), at a fifth of the cost of a libcst visitor
    walk.

    `nodes`: every node in that order, a node's subtree being `nodes[i:ends[i]]`; `index`:
    node id -> its position there; `parents`: per position, the parent's (-1 for the module);
    `masks`: per position, the node types in its subtree (one bit each, `type_bit`);
    `scope_at`: per position, the function body the node sits in (0: the module; 1, 2, ...
    the function definitions in source order, as `bindings.Bindings` numbers them);
    `imported`: per position, 1 inside an import statement.

    `previous`: the tree the module was made from (a pass's input). A subtree this module
    shares with it (the same node objects: what the pass left alone) is copied from its
    listing, shifted to where it sits now, instead of being read node by node again."""

    def __init__(self, module: cst.Module, previous: Tree | None = None) -> None:
        self.module = module
        self.nodes: list[cst.CSTNode] = []
        self._types: dict[type, list[int]] | None = None
        self._positions: dict[type | tuple[type, ...], list[int]] = {}
        self._holding: dict[frozenset[str], bytearray] = {}
        # the nodes holding text (`_TEXT_FIELDS`): their positions, and the text
        self.text_at: list[int] = []
        self.text: list[str] = []
        self.parents: list[int] = []
        self.scope_at: list[int] = []
        self.imported = bytearray()
        # per position, how many function bodies were numbered before the node was met
        self._counted: list[int] = []
        nodes, parents, text_at, text = self.nodes, self.parents, self.text_at, self.text
        scope_at, imported, counted = self.scope_at, self.imported, self._counted
        masks: list[int] = []
        ends: list[int] = []
        # positions whose mask and end reach their parent: every node read here, and the
        # first of each copied subtree (the rest of which came with theirs already)
        read: list[int] = []
        scopes = 1
        stack: list[tuple[cst.CSTNode, int, int, int]] = [(module, 0, 0, -1)]
        imports = (cst.Import, cst.ImportFrom)
        is_node = _IS_NODE
        layouts = _LAYOUT
        old = previous if previous is not None and _shares(module, previous) else None
        old_index: dict[int, int] = old.index if old is not None else {}
        while stack:
            node, scope, in_import, parent = stack.pop()
            index = len(nodes)
            at = old_index.get(id(node))
            if at is not None and old.nodes[at] is node and old.imported[at] == in_import:  # type: ignore[union-attr]
                scopes = self._copy(old, at, index, parent, scope, scopes, masks, ends)  # type: ignore[arg-type]
                read.append(index)
                continue
            kind = type(node)
            bit, names, field = layouts.get(kind) or _layout(node)
            if field is not None:
                text_at.append(index)
                text.append(getattr(node, field))
            nodes.append(node)
            parents.append(parent)
            masks.append(bit)
            ends.append(index + 1)
            scope_at.append(scope)
            imported.append(in_import)
            counted.append(scopes)
            read.append(index)
            if not in_import and kind in imports:
                in_import = 1
            body_scope = scope
            if kind is cst.FunctionDef:
                body_scope = scopes
                scopes += 1
            children: list[tuple[cst.CSTNode, int, int, int]] = []
            for name in names:
                value = getattr(node, name)
                here = body_scope if name == "body" else scope
                vtype = type(value)
                for v in value if vtype is list or vtype is tuple else (value,):
                    t = type(v)
                    node_like = is_node.get(t)
                    if node_like is None:
                        node_like = is_node[t] = issubclass(t, cst.CSTNode)
                    if node_like:
                        children.append((v, here, in_import, index))
            stack.extend(reversed(children))
        for index in reversed(read):
            up = parents[index]
            if up >= 0:
                masks[up] |= masks[index]
                if ends[index] > ends[up]:
                    ends[up] = ends[index]
        self.ends = ends
        self.masks = masks
        self.index: dict[int, int] = dict(zip(map(id, nodes), range(len(nodes))))
        self.scopes = scopes
        if CHECK:
            self._check(previous)

    def _copy(
        self,
        old: Tree,
        at: int,
        index: int,
        parent: int,
        scope: int,
        scopes: int,
        masks: list[int],
        ends: list[int],
    ) -> int:
        """Append the subtree at `old`'s position `at` as this tree's position `index` (under
        `parent`, in function body `scope`); returns the function count after it."""
        stop = old.ends[at]
        shift = index - at
        self.nodes.extend(old.nodes[at:stop])
        self.parents.append(parent)
        self.parents.extend([p + shift for p in old.parents[at + 1 : stop]])
        ends.extend([e + shift for e in old.ends[at:stop]])
        masks.extend(old.masks[at:stop])
        # function bodies numbered inside the subtree keep their order, from this tree's count
        base = old._counted[at]
        renumber = scopes - base
        self.scope_at.extend([v + renumber if v >= base else scope for v in old.scope_at[at:stop]])
        self._counted.extend([c + renumber for c in old._counted[at:stop]])
        self.imported.extend(old.imported[at:stop])
        first = bisect.bisect_left(old.text_at, at)
        last = bisect.bisect_left(old.text_at, stop)
        self.text_at.extend([p + shift for p in old.text_at[first:last]])
        self.text.extend(old.text[first:last])
        after = old._counted[stop] if stop < len(old.nodes) else old.scopes
        return scopes + after - base

    def _check(self, previous: Tree | None) -> None:
        """TRL_MIGRATE_CHECK_BINDINGS: the order is libcst's, and a tree made with copies from
        `previous` is the tree made without."""
        walked = libcst_order(self.module)
        if [id(n) for n, _ in walked] != [id(n) for n in self.nodes] or [
            e for _, e in walked
        ] != self.ends:
            raise AssertionError("walk.Tree's node order differs from libcst's walk")
        if previous is None:
            return
        fresh = Tree(self.module)
        for field in (
            "parents",
            "ends",
            "masks",
            "scope_at",
            "imported",
            "text_at",
            "text",
            "_counted",
        ):
            if getattr(fresh, field) != getattr(self, field):
                raise AssertionError(f"walk.Tree's copied {field} differ from a fresh reading")
        if fresh.scopes != self.scopes:
            raise AssertionError("walk.Tree's copied function count differs")

    def scope(self, node: cst.CSTNode) -> int | None:
        """The function body `node` sits in (see `scope_at`), None for a node not in the tree."""
        at = self.index.get(id(node))
        return None if at is None else self.scope_at[at]

    def stored(self, node: cst.CSTNode) -> str | None:
        """Whether `node` (a name of this tree) is a target a binding stores to: ASSIGNED for
        the target of an assignment or a loop, BOUND for that of an `as`, a walrus or a
        comprehension (whose iterable counts too, as it is not told apart here), DELETED for
        one of `del` (which libcst reads as an access), None for none of them."""
        child, up = self._target_holder(self.index[id(node)])
        if up < 0:
            return None
        parent = self.nodes[up]
        if isinstance(parent, cst.AssignTarget):
            return ASSIGNED
        if isinstance(parent, _STORING):
            return BOUND
        if isinstance(parent, cst.Del):
            return DELETED
        if isinstance(parent, _TARGETED) and parent.target is child:  # type: ignore[attr-defined]
            return ASSIGNED
        return None

    def _target_holder(self, at: int) -> tuple[cst.CSTNode, int]:
        """Out of the tuples, lists and starred elements around position `at`: the outermost
        of them (or the node itself) and the position of what holds it (-1: the module)."""
        nodes, parents = self.nodes, self.parents
        child, up = nodes[at], parents[at]
        while up >= 0 and isinstance(nodes[up], _UNPACKING):
            child, up = nodes[up], parents[up]
        return child, up

    def context(self, node: cst.CSTNode) -> str | None:
        """libcst's ExpressionContextProvider answer for `node`, an attribute or a subscript of
        this tree: "store" for a target an assignment, a loop, an `as` or a walrus stores to
        (through tuples, lists and starred elements), "del" for one of `del`, "load" for any
        other; None for a node not in the tree, or in the type parameters of a class or a
        function, which the provider does not visit."""
        at = self.index.get(id(node))
        if at is None:
            return None
        nodes, parents = self.nodes, self.parents
        held, up = self._target_holder(at)
        answer = "load"
        if up >= 0:
            parent = nodes[up]
            if isinstance(parent, cst.AssignTarget):
                answer = "store"
            elif isinstance(parent, cst.Del):
                answer = "del"
            elif isinstance(parent, cst.AsName):
                answer = "store" if parent.name is held else "load"
            elif isinstance(parent, _TARGET_HOLDERS):
                answer = "store" if parent.target is held else "load"  # type: ignore[attr-defined]
        up = parents[at]
        while up >= 0:
            if isinstance(nodes[up], cst.TypeParameters) and isinstance(
                nodes[parents[up]], (cst.ClassDef, cst.FunctionDef)
            ):
                return None
            up = parents[up]
        return answer

    def in_import(self, node: cst.CSTNode) -> bool:
        at = self.index.get(id(node))
        return at is not None and bool(self.imported[at])

    def holding(self, words: frozenset[str]) -> bytearray:
        """Per position in `nodes`: 1 where the node's code contains one of `words` (which must
        pass `plain_words`), the same answer as `w in code_for_node(node)` at the cost of one
        look at each name, number, string and comment of the tree."""
        hit = self._holding.get(words)
        if hit is None:
            hit = self._holding[words] = bytearray(len(self.nodes))
            parents = self.parents
            seen: dict[str, bool] = {}
            for at, text in zip(self.text_at, self.text):
                found = seen.get(text)
                if found is None:
                    found = seen[text] = any(w in text for w in words)
                while found and at >= 0 and not hit[at]:
                    hit[at] = 1
                    at = parents[at]
        return hit

    def positions(self, kind: type | tuple[type, ...]) -> list[int]:
        """The positions of the nodes of `kind` (a type or a tuple of them, subclasses
        included), in order; made on first ask of each kind (the passes of a tree ask for the
        same few kinds thousands of times, mostly under small subtrees)."""
        at = self._positions.get(kind)
        if at is None:
            picked = [at for t, at in self.by_type().items() if issubclass(t, kind)]
            at = picked[0] if len(picked) == 1 else list(heapq.merge(*picked))
            self._positions[kind] = at
        return at

    def by_type(self) -> dict[type, list[int]]:
        """Node type -> the positions of its nodes in `nodes`, made on first ask."""
        if self._types is None:
            self._types = {}
            for i, node in enumerate(self.nodes):
                self._types.setdefault(type(node), []).append(i)
        return self._types


def _shares(module: cst.Module, tree: Tree) -> bool:
    """Whether `module` holds any top-level statement of `tree` (then it came from it, and its
    reading can copy what they share; a fresh parse shares nothing)."""
    index = tree.index
    return any(id(stmt) in index for stmt in module.body)
