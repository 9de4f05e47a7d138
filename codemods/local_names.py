"""Which assignments a plain variable's reads see, read off a module's `walk.Tree`: libcst's
scope answer for the config and value-head rules' variable questions, without its scope
analysis (about four parses of the module, on every tree a pass changed).

Only names that plain assignments and a function's parameters bind are answered: targets of
`=`, `+=`, `x: T = ...` and `for`, at any depth of a function body or the module (not in a
class body, a lambda or a comprehension; a class attribute that nothing reads bare is the one
exception, for `bindings_and_reads`), never imported, defined, a lambda's parameter,
declared global or nonlocal, bound by `as`, a walrus or a pattern, deleted, or named in a
string annotation. For those, libcst's rules are short:

- a read sees the bindings of the nearest enclosing function (or the module) that binds the
  name; in its own scope, only those made before it, counted as libcst counts them (a binding
  is made once the assignment-like statement that holds it is left; a `for` target before the
  loop's iterable is read); when none is, the bindings the scope's parent sees;
- a binding's references are the reads that see it by those rules, and the reads of an
  inner function that binds the name made before one of its bindings there.

Anything else gets None, and the caller asks libcst's ScopeProvider. The tests (and
`TRL_MIGRATE_CHECK_BINDINGS=1`) check every answer against the scope's.
"""

from __future__ import annotations

import bisect
import builtins
from collections.abc import Collection

import libcst as cst

from codemods import walk

# libcst counts a binding as made when it leaves one of these (scope_provider's
# `_ASSIGNMENT_LIKE_NODES`, less `Parameters`, which every position of its function's body
# follows, and `CompFor`, always a comprehension's own)
_COUNTED: tuple[type[cst.CSTNode], ...] = (
    cst.AnnAssign,
    cst.AsName,
    cst.Assign,
    cst.AugAssign,
    cst.ClassDef,
    cst.FunctionDef,
    cst.Global,
    cst.Import,
    cst.ImportFrom,
    cst.NamedExpr,
    cst.Nonlocal,
    cst.WithItem,
    cst.TypeVar,
    cst.TypeAlias,
    cst.TypeVarTuple,
    cst.ParamSpec,
)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Parents whose `name` (or `rest`) binds in a way left to the scope: a definition's name, a
# parameter, `global`/`nonlocal`, a type parameter, a pattern's capture
_OTHER_BINDINGS = (
    cst.FunctionDef,
    cst.ClassDef,
    cst.Param,
    cst.NameItem,
    cst.TypeVar,
    cst.TypeVarTuple,
    cst.ParamSpec,
    cst.TypeAlias,
    cst.MatchAs,
    cst.MatchStar,
    cst.MatchMapping,
)
# Nodes libcst scopes otherwise than the function body they sit in: parameters are their
# function's, a comprehension's first `for` its enclosing scope's
_OWN_SCOPED = (cst.Param, cst.Parameters, cst.ParamStar, cst.ParamSlash, cst.CompFor)
_INNER, _UNSURE = "inner", "unsure"


class _Name:
    """One name's bindings and reads: (position, node), each read with its function body and
    whether it sits in a class body, lambda or comprehension inside it."""

    def __init__(self) -> None:
        # function body -> its bindings: assignment targets, and parameters (the Param node)
        self.bindings: dict[int, list[tuple[int, cst.CSTNode]]] = {}
        self.reads: list[tuple[int, cst.Name, int, bool]] = []
        self.read_at: dict[int, int] = {}  # id(read) -> its index in `reads`
        # assignment targets directly in a class body: (position, node, the class's position)
        self.in_classes: list[tuple[int, cst.Name, int]] = []


class LocalNames:
    """The plain variables of one tree (see the module's docstring). `hints`: the strings the
    module's annotations and type hints hold (a name in one is left to the scope)."""

    def __init__(self, tree: walk.Tree, hints: Collection[str]) -> None:
        self.tree = tree
        self._hints = hints
        self._names: dict[str, _Name | None] = {}
        self._by_value: dict[str, list[int]] | None = None
        self._parent: dict[int, int] | None = None  # function body -> its enclosing one
        self._points: dict[int, list[int]] | None = None  # function body -> counted ends
        self._unsure: set[int] = set()  # function bodies whose count is not known

    # -- the questions -------------------------------------------------------------------
    def referents(self, name: cst.Name) -> set[int] | None:
        """ids of the nodes binding what `name` (a node of the tree) may read: libcst's
        `{id(r.node) for a in scope.accesses[name] if a.node is name for r in a.referents}`
        (a builtin's binding has no node: id(None)). None: the scope must tell."""
        found = self._name(name.value)
        if found is None:
            return None
        at = found.read_at.get(id(name))
        if at is None:
            return set()  # not a read: no access of the scope is this node
        position, _, scope, inner = found.reads[at]
        seen = self._seen(found, name.value, position, scope, inner)
        return None if seen is None else {id(node) for _, node in seen}

    def bindings_and_reads(
        self, target: cst.Name
    ) -> tuple[list[cst.CSTNode], list[cst.Name]] | None:
        """For the target of a plain assignment: the bindings of its name in its own scope
        (libcst's `scope.assignments[name]`), and the reads that see this one (its
        `references`), in source order. None: the scope must tell."""
        found = self._names_of(target.value)
        if found is None:
            return None
        if found.in_classes:
            return self._class_attribute(found, target)
        self._counted()  # the bodies whose count is unsure with it
        scope = next(
            (s for s, bound in found.bindings.items() if any(n is target for _, n in bound)),
            None,
        )
        if scope is None or scope in self._unsure:
            return None
        bound = found.bindings[scope]
        made = self._count(scope, next(p for p, n in bound if n is target))
        parents = self._parents()
        refs = []
        for position, node, read_scope, inner in found.reads:
            holder = self._holder(found, read_scope)
            direct = holder == read_scope and not inner  # read in the scope that binds it
            if direct and read_scope in self._unsure:
                return None
            if holder == scope:
                if not direct or made < self._count(scope, position):
                    refs.append(node)
            elif (
                direct
                and read_scope != 0
                and self._holder(found, parents[read_scope]) == scope
                and any(
                    self._count(read_scope, p) >= self._count(read_scope, position)
                    for p, _ in found.bindings[read_scope]
                )
            ):
                # read before one of its own scope's bindings: libcst hands it to the
                # bindings the enclosing scopes give that name too
                refs.append(node)
        return [n for _, n in bound], refs

    @staticmethod
    def _class_attribute(
        found: _Name, target: cst.Name
    ) -> tuple[list[cst.CSTNode], list[cst.Name]] | None:
        """`bindings_and_reads` for a name some class body assigns (`trl_model_class = X` in
        a test class), answered where nothing anywhere reads the name bare (`self.x` is an
        attribute): the class's own assignments of it, and no reads."""
        if found.reads:
            return None
        owner = next((c for _, node, c in found.in_classes if node is target), None)
        if owner is None:
            return None
        return [node for _, node, c in found.in_classes if c == owner], []

    def sees_alike(self, one: cst.CSTNode, other: cst.CSTNode, name: str) -> bool | None:
        """Whether `name` means the same bindings at two nodes of the tree (statements or
        expressions sitting directly in a function body or at module level, outside any class
        body, lambda or comprehension): libcst's `scope[name]` of their scopes, compared by
        node, and True outright for the same scope. None: the scope must tell."""
        first, second = self._direct_scope(one), self._direct_scope(other)
        if first is None or second is None:
            return None
        if first == second:
            return True
        found = self._name(name)
        if found is None:
            return None
        holders = (self._holder(found, first), self._holder(found, second))
        if holders[0] is None or holders[1] is None:
            return None  # a builtin or nothing: left to the scope
        return holders[0] == holders[1]

    def at_module_level(self, node: cst.CSTNode) -> bool | None:
        """Whether libcst gives `node` the module's own scope (a class body, lambda or
        comprehension at module level has its own). None: the scope must tell."""
        at = self.tree.index.get(id(node))
        if at is None or isinstance(node, _OWN_SCOPED):
            return None
        where = self._where(at)
        if where == _UNSURE:
            return None
        return where is None and self.tree.scope_at[at] == 0

    def _direct_scope(self, node: cst.CSTNode) -> int | None:
        """The function body `node` sits directly in (0: the module), None elsewhere."""
        tree = self.tree
        at = tree.index.get(id(node))
        if at is None or isinstance(node, _OWN_SCOPED):
            return None
        parent = tree.nodes[tree.parents[at]] if at else None
        if isinstance(parent, cst.Param) and parent.name is node:
            return None  # a parameter's name is its function's
        return tree.scope_at[at] if self._where(at) is None else None

    # -- libcst's rules --------------------------------------------------------------------
    def _seen(
        self, found: _Name, name: str, position: int, scope: int, inner: bool
    ) -> list[tuple[int, cst.CSTNode]] | None:
        """The bindings a read at `position` of function body `scope` sees."""
        holder = self._holder(found, scope)
        if holder is None:
            return self._builtin(name)
        if holder != scope or inner:
            return found.bindings[holder]  # another scope's: every binding of it
        self._counted()
        if scope in self._unsure:
            return None
        count = self._count(scope, position)
        before = [b for b in found.bindings[scope] if self._count(scope, b[0]) < count]
        if before:
            return before
        # none made yet: libcst gives what the scope's parent sees
        if scope == 0:
            return self._builtin(name)
        outer = self._holder(found, self._parents()[scope])
        return self._builtin(name) if outer is None else found.bindings[outer]

    @staticmethod
    def _builtin(name: str) -> list[tuple[int, cst.CSTNode]]:
        return [(-1, None)] if hasattr(builtins, name) else []  # type: ignore[list-item]

    def _holder(self, found: _Name, scope: int) -> int | None:
        """The nearest function body from `scope` out (the module last) that binds the name."""
        parents = self._parents()
        while scope not in found.bindings:
            if scope == 0:
                return None
            scope = parents[scope]
        return scope

    def _count(self, scope: int, position: int) -> int:
        """libcst's assignment count of function body `scope` when it reaches `position`."""
        return bisect.bisect_right(self._counted().get(scope, []), position)

    # -- reading the tree --------------------------------------------------------------------
    def _name(self, name: str) -> _Name | None:
        """The name's bindings and reads, where no class body binds it (see `_names_of`)."""
        found = self._names_of(name)
        return None if found is None or found.in_classes else found

    def _names_of(self, name: str) -> _Name | None:
        if name in self._names:
            return self._names[name]
        found = self._names[name] = self._read(name)
        return found

    def _read(self, name: str) -> _Name | None:
        if any(name in hint for hint in self._hints):
            return None
        tree = self.tree
        nodes, parents, scope_at = tree.nodes, tree.parents, tree.scope_at
        if self._by_value is None:
            self._by_value = {}
            for at in tree.by_type().get(cst.Name, ()):
                self._by_value.setdefault(nodes[at].value, []).append(at)  # type: ignore[attr-defined]
        found = _Name()
        for at in self._by_value.get(name, ()):
            node = nodes[at]
            if tree.imported[at]:
                return None
            parent = nodes[parents[at]]
            if (isinstance(parent, cst.Attribute) and parent.attr is node) or (
                isinstance(parent, cst.Arg) and parent.keyword is node
            ):
                continue  # an attribute's or a keyword's name: no read, no binding
            if isinstance(parent, cst.Param) and parent.name is node:
                body = self._function_body(parents[parents[at]])
                if body is None:
                    return None  # a lambda's
                found.bindings.setdefault(body, []).append((parents[at], parent))
                continue
            if isinstance(parent, _OTHER_BINDINGS) and (
                node is getattr(parent, "name", None) or node is getattr(parent, "rest", None)
            ):
                return None  # a definition's or parameter's name, `global`, a capture
            where = self._where(at)
            stored = tree.stored(node)
            if where == _UNSURE or stored in (walk.BOUND, walk.DELETED):
                return None
            if stored == walk.ASSIGNED:
                if where == _INNER:
                    owner = self._class_body_of(at)
                    if owner is None:
                        return None  # in a lambda or a comprehension: left to the scope
                    found.in_classes.append((at, node, owner))  # type: ignore[arg-type]
                    continue
                found.bindings.setdefault(scope_at[at], []).append((at, node))  # type: ignore[arg-type]
            else:
                found.read_at[id(node)] = len(found.reads)
                found.reads.append((at, node, scope_at[at], where == _INNER))  # type: ignore[arg-type]
        return found

    def _function_body(self, parameters: int) -> int | None:
        """The function body the parameters at position `parameters` bind in; None for a
        lambda's."""
        tree = self.tree
        holder = tree.nodes[tree.parents[parameters]]
        if not isinstance(holder, cst.FunctionDef):
            return None
        return tree.scope_at[tree.index[id(holder.body)]]

    def _where(self, at: int) -> str | None:
        """Where position `at` sits in its function body: None in the body itself, _INNER in
        a class body, lambda or comprehension there, _UNSURE in a lambda's parameters."""
        tree = self.tree
        nodes, parents, scope_at = tree.nodes, tree.parents, tree.scope_at
        scope = scope_at[at]
        child, up = nodes[at], parents[at]
        outer_iter = False
        while up >= 0 and scope_at[up] == scope:
            node = nodes[up]
            if isinstance(node, cst.ClassDef):
                if child is node.body:
                    return _INNER
            elif isinstance(node, cst.Lambda):
                return _INNER if child is node.body else _UNSURE
            elif isinstance(node, cst.CompFor):
                # the first `for`'s iterable is read in the enclosing scope
                outer_iter = child is node.iter and isinstance(nodes[parents[up]], _COMPREHENSIONS)
                if not outer_iter:
                    return _INNER
            elif isinstance(node, _COMPREHENSIONS):
                if not (outer_iter and child is node.for_in):
                    return _INNER
                outer_iter = False
            child, up = node, parents[up]
        return None

    def _class_body_of(self, at: int) -> int | None:
        """The position of the class whose body holds position `at` with no lambda,
        comprehension or function between (its own scope is that class's), else None."""
        tree = self.tree
        nodes, parents = tree.nodes, tree.parents
        child, up = nodes[at], parents[at]
        while up >= 0:
            node = nodes[up]
            if isinstance(node, cst.ClassDef) and child is node.body:
                return up
            if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.CompFor, *_COMPREHENSIONS)):
                return None
            child, up = node, parents[up]
        return None

    def _parents(self) -> dict[int, int]:
        if self._parent is None:
            tree = self.tree
            self._parent = {}
            for at in tree.by_type().get(cst.FunctionDef, ()):
                body = tree.index[id(tree.nodes[at].body)]  # type: ignore[attr-defined]
                self._parent[tree.scope_at[body]] = tree.scope_at[at]
        return self._parent

    def _counted(self) -> dict[int, list[int]]:
        """Per function body, the positions (sorted) at which libcst's count goes up."""
        if self._points is None:
            tree = self.tree
            points: dict[int, list[int]] = {}
            kinds = tree.by_type()
            for kind, positions in kinds.items():
                loop = kind is cst.For
                if not loop and not issubclass(kind, _COUNTED):
                    continue
                for at in positions:
                    where = self._where(at)
                    scope = tree.scope_at[at]
                    if where == _UNSURE:
                        self._unsure.add(scope)
                    if where is not None:
                        continue
                    if loop:  # counted once the target is read, before the iterable
                        target = tree.index[id(tree.nodes[at].target)]  # type: ignore[attr-defined]
                        points.setdefault(scope, []).append(tree.ends[target])
                    else:
                        points.setdefault(scope, []).append(tree.ends[at])
            for at in kinds.get(cst.Parameters, ()):
                # left in its function's scope, before anything of the body is read
                body = self._function_body(at)
                if body is not None:
                    points.setdefault(body, []).append(tree.ends[at])
            for found in points.values():
                found.sort()
            self._points = points
        return self._points
