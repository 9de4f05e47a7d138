"""What a module's imports bind, read with `ast`: the answer to most qualified-name questions
without libcst's scope analysis.

libcst's ScopeProvider costs about four parses of the module, and every pass that changes the
tree makes the next pass's scope stale. Most questions the rules ask are "which dotted path does
this name or attribute chain come from", and for a name that only module-level imports bind
that answer does not depend on the scope it is asked in. `Bindings` answers exactly those
questions, with libcst's own rules for dotted and aliased imports; for everything else (a name
also bound by an assignment, a parameter, a local import, or used at module level before its
import) it answers None and the caller asks the scope. `TRL_MIGRATE_CHECK_BINDINGS=1` makes
every answer checked against libcst's (the test suite runs with it).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
from collections.abc import Iterator

# Per node type: its fields (`_fields`, in the order `ast.iter_child_nodes` reads them). The
# expression contexts (`Load`, `Store`, `Del`: a third of a module's nodes, with nothing to
# read) are left out of both listings below.
_FIELDS: dict[type, tuple[str, ...]] = {}
_CONTEXTS = (ast.Load, ast.Store, ast.Del)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes(node)` as a list, expression contexts aside."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = kind._fields
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST) and not isinstance(value, _CONTEXTS):
            out.append(value)
    return out


def ast_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` but the expression contexts, in no promised order: what
    `ast.walk` yields, at about two thirds of its cost (no generator per node)."""
    out = [tree]
    for node in out:  # grows as it goes
        out.extend(child_nodes(node))
    return out


@dataclasses.dataclass(frozen=True)
class _Import:
    """One import statement: its module (dots for a relative one) and its (name, asname)s."""

    module: str
    aliases: tuple[tuple[str, str | None], ...]


class Bindings:
    """The imports of one module's code by the scope they bind in, keyed as libcst keys its
    assignments (`import a.b` under `a.b`, `import a.b as c` under `c`, `from m import x` under
    `x`). Scope 0 is the module; 1, 2, ... are its function bodies in source order (the order
    `walk.Tree` numbers them in on the libcst side)."""

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree
        # the blocked roots every binding of which is a module-level one (`_module_level`),
        # read on the first question about one
        self._settled: _Settled | None = None
        self._by_key: list[dict[str, list[_Import]]] = [{}]
        self._parent: list[int] = [0]
        self._blocked: set[str] = set()  # root names some other binding makes unsafe
        # (scope, root name) read in that scope before an import there that changes the
        # answer: libcst's then depends on the order, left to it for reads through that scope
        self._early: set[tuple[int, str]] = set()
        # the same, for any import of the name in that scope (which import a read counts for)
        self._early_any: set[tuple[int, str]] = set()
        self._names: dict[str, int] = {}  # identifier -> Name nodes
        # string constants that libcst may read as code: those in an annotation or a type hint
        # (a subscript, the arguments of cast / TypeVar / NewType), where it parses a string
        # annotation; the rest (messages, keys, docstrings) it never reads
        self._strings: list[str] = []
        # the strings that are a whole annotation (`x: "Model"`), which libcst always parses as
        # code: (their position, their text); a name read in one is read for sure. Inside an
        # annotation's subscript it depends on what the subscript is (not a `Literal`), which
        # the scope tells.
        self._annotation_strings: list[tuple[tuple[int, int], str]] = []
        self._annotation_reads: dict[str, tuple[int, int]] | None = None  # name -> first read
        self._other: set[str] = set()  # names bound by anything but an import
        self._import_roots: set[str] = set()  # root names any import binds
        first_import: dict[tuple[int, str], tuple[int, int]] = {}
        last_import: dict[tuple[int, str], tuple[int, int]] = {}
        # what the imports of a root in one scope bind it to: one answer, or several
        bound_as: dict[tuple[int, str], set[tuple[tuple[str, tuple[str, ...]], ...]]] = {}
        loads: list[tuple[int, str, tuple[int, int]]] = []
        # (node, scope, inside a class body of that scope)
        stack: list[tuple[ast.AST, int, bool]] = [(tree, 0, False)]
        hints: set[int] = set()  # ids of the nodes inside an annotation or a type hint
        annotated: set[int] = set()  # ids of the annotations
        while stack:
            node, scope, in_class = stack.pop()
            if id(node) in hints:
                hints.update(id(c) for c in child_nodes(node))
            elif isinstance(node, _HINT_PARENTS):
                hints.update(id(c) for c in _hints_under(node))
            if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
                annotated.add(id(node.annotation))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
                annotated.add(id(node.returns))
            if isinstance(node, ast.Name):
                self._names[node.id] = self._names.get(node.id, 0) + 1
                if isinstance(node.ctx, ast.Load):
                    loads.append((scope, node.id, (node.lineno, node.col_offset)))
                else:
                    self._other.add(node.id)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                roots = {k.split(".")[0] for k in _keys(node)}
                self._import_roots |= roots
                if in_class:
                    self._blocked |= roots  # a class scope's import: rare, left to the scope
                else:
                    record = self._add_import(node, scope)
                    keys = list(_keys(node))
                    for root in roots:
                        pos = (node.lineno, node.col_offset)
                        first_import.setdefault((scope, root), pos)
                        last_import[(scope, root)] = pos
                        bound_as.setdefault((scope, root), set()).add(
                            tuple(
                                (k, tuple(sorted(_names_for(record, k))) if record else ())
                                for k in sorted(keys)
                                if k.split(".")[0] == root
                            )
                        )
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in hints:
                    self._strings.append(node.value)
                if id(node) in annotated:
                    self._annotation_strings.append(((node.lineno, node.col_offset), node.value))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a docstring (nothing under it binds or reads a name)
            self._other.update(_bound_names(node))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = len(self._by_key)
                self._by_key.append({})
                self._parent.append(scope)
                body = {id(b) for b in node.body}
                children = [
                    (c, inner, False) if id(c) in body else (c, scope, in_class)
                    for c in child_nodes(node)
                ]
            else:
                into_class = in_class or isinstance(node, ast.ClassDef)
                children = [(c, scope, into_class) for c in child_nodes(node)]
            stack.extend(reversed(children))
        self._blocked |= self._other
        self._last_import = last_import
        self._read_in: dict[str, set[int]] = {}  # name -> the scopes that read it
        for scope, name, _ in loads:
            self._read_in.setdefault(name, set()).add(scope)
        for scope, name, pos in loads:
            last = last_import.get((scope, name))
            if last is None or pos >= last:
                continue
            self._early_any.add((scope, name))
            # Read after one import and before another that binds it alike (`import types` in
            # two branches): the imports before it give what all of them give.
            if pos < first_import[(scope, name)] or len(bound_as[(scope, name)]) > 1:
                self._early.add((scope, name))

    @property
    def hints(self) -> list[str]:
        """The string constants of annotations and type hints (libcst may read them as code)."""
        return self._strings

    @property
    def scopes(self) -> int:
        return len(self._by_key)

    def _add_import(self, stmt: ast.Import | ast.ImportFrom, scope: int) -> _Import | None:
        if isinstance(stmt, ast.ImportFrom):
            if any(a.name == "*" for a in stmt.names):
                return None  # libcst binds nothing for a star import
            record = _Import(
                "." * stmt.level + (stmt.module or ""),
                tuple((a.name, a.asname) for a in stmt.names),
            )
        else:
            record = _Import("", tuple((a.name, a.asname) for a in stmt.names))
        for key in _keys(stmt):
            self._by_key[scope].setdefault(key, []).append(record)
        return record

    def qualified(
        self, full_name: str, scope: int, *, name_node: bool = True
    ) -> tuple[str, ...] | None:
        """The dotted paths `full_name` (a name or attribute chain as libcst spells it, read
        in function scope `scope`) may name through an import, sorted; None when only libcst's
        scope analysis can tell. A name no import binds gets (): libcst would give its local or
        builtin name, which no rule matches (rules match import paths).

        `name_node`: whether the node asked about is a Name. libcst answers for a read of a
        name (an access: a Name, or an attribute chain an import binds whole, `os.path` after
        `import os.path`) from the imports that ran before it in its own function; for any
        other node (`x.y`, a call) from every import of the function, whatever the order."""
        root = full_name.split(".", 1)[0]
        if root not in self._import_roots:
            return ()
        if scope >= len(self._by_key):
            return None
        if root in self._blocked:
            return self._module_level_names(full_name, root, scope, name_node=name_node)
        chain = [scope]
        while chain[-1] != 0:
            chain.append(self._parent[chain[-1]])
        if any((s, root) in self._early for s in chain) and (
            name_node or any(full_name in keys for keys in self._by_key)
        ):
            return None
        prefix: str | None = full_name
        while prefix:
            for s in chain:
                records = self._by_key[s].get(prefix)
                if records is not None:
                    out: set[str] = set()
                    for record in records:
                        out |= _names_for(record, full_name)
                    return tuple(sorted(out))
            cut = prefix.rfind(".")
            prefix = None if cut == -1 else prefix[:cut]
        # Unbound where it is read: libcst gives nothing, or the builtin of that name
        return None if hasattr(builtins, root) else ()

    def _module_level_names(
        self, full_name: str, root: str, scope: int, *, name_node: bool
    ) -> tuple[str, ...] | None:
        """`qualified` for a root that an import and other code both bind (`try: import pynvml`
        / `except ImportError: pynvml = None`), where every binding of it is a module-level
        one: libcst gives every import's path and, for the other bindings, the name itself
        (a module-level name's qualified name). A read of the bare name at module level sees
        only the bindings before it, so it gets an answer only when no read of the name comes
        before the statement of its last binding. None: the scope must tell."""
        local, early, _ = self._module_level()
        has_local = local.get(root)
        if has_local is None or (name_node and scope == 0 and root in early):
            return None
        out: set[str] = set()
        for record in self._by_key[0].get(root, ()):
            out |= _names_for(record, full_name)
        if has_local:
            out.add(full_name)
        return tuple(sorted(out))

    def assigned(self, full_name: str) -> tuple[str, ...] | None:
        """`qualified` for a Name that an assignment or a loop stores to, where an import binds
        the name too: libcst names the target by its own binding, a module-level name by
        itself. None where the binding may not be a module-level one."""
        return (full_name,) if self._module_level()[0].get(full_name) else None

    def _module_level(self) -> _Settled:
        if self._settled is None:
            self._settled = _module_level(self._tree, self._blocked & self._import_roots)
        return self._settled

    def bound_otherwise(self, full_name: str) -> bool:
        """Whether an import and other code both bind the root of `full_name`: a Name stored
        to there is an assignment of its own, which only the scope answers for."""
        root = full_name.split(".", 1)[0]
        return root in self._blocked and root in self._import_roots

    def unreferenced(self, bound: str) -> bool:
        """Whether no code but imports can read `bound`: no Name of it, no string holding it
        (a string annotation), no dotted use. False means: ask the scope."""
        if "." in bound or self._names.get(bound, 0):
            return False
        return not any(bound in s for s in self._strings)

    def referenced(self, bound: str, scope: int) -> bool | None:
        """Whether code reads the name `bound` as bound by the imports of scope `scope`: a
        read in that scope, or in a function inside it that no import of its own shadows, as
        libcst counts references to an import. None where only the scope can tell (a dotted
        name, another binding, a string that may be an annotation)."""
        if (
            bound in self._blocked
            and scope == 0
            and "." not in bound
            and not any(bound in s for s in self._strings)
        ):
            # an import and other code bind it: when every binding is a module-level one and
            # no read comes before the last, every read reads every binding, this import too
            local, early, read = self._module_level()
            return bound in read if bound in local and bound not in early else None
        if (
            "." in bound
            or bound in self._blocked
            or (scope, bound) in self._early_any
            or scope >= len(self._by_key)
            or bound not in self._by_key[scope]
        ):
            return None
        for s in self._read_in.get(bound, ()):
            if (s, bound) in self._early_any:
                return None  # read before its own import there: libcst looks further out
            while bound not in self._by_key[s] and s != 0:
                s = self._parent[s]
            if s == scope:
                return True
        if any(bound in s for s in self._strings):
            # a string the scope may read as code: read for sure when it is an annotation's,
            # after the import, and no function imports the name itself
            first = self._annotation_reads_of().get(bound)
            if (
                first is not None
                and scope == 0
                and first > self._last_import[(0, bound)]
                and not any(bound in keys for keys in self._by_key[1:])
            ):
                return True
            return None
        return False

    def _annotation_reads_of(self) -> dict[str, tuple[int, int]]:
        """The names the annotation strings read (`"AutoModelForCausalLMWithValueHead"`,
        `"Optional[PreTrainedModel]"`), each with the position of the first such string."""
        if self._annotation_reads is None:
            self._annotation_reads = {}
            for position, text in self._annotation_strings:
                try:
                    tree = ast.parse(text)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue  # libcst reads nothing in it either
                for node in ast_nodes(tree):
                    if isinstance(node, ast.Name):
                        self._annotation_reads.setdefault(node.id, position)
        return self._annotation_reads

    def only_imported(self, bound: str) -> bool:
        """Whether nothing but imports binds `bound` anywhere in the module."""
        return bound not in self._other

    def fallback(self, bound: str) -> bool | None:
        """Whether code other than an import binds `bound` in the module scope, where its
        imports are (the `except ImportError:` branch of a guarded import): known when
        nothing but imports binds it, or when every binding of it is a module-level one
        (see `_module_level_names`). None: the scope must tell."""
        if self.only_imported(bound):
            return False
        if "." in bound or bound not in self._import_roots:
            return None
        return self._module_level()[0].get(bound)


_NESTED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


# Of the roots an import and other code both bind (`_module_level`): those bound only at
# module level, each with whether code other than an import binds it; those of them read
# before their last binding; and those of them read at all.
_Settled = tuple[dict[str, bool], frozenset[str], frozenset[str]]


def _module_level(tree: ast.Module, roots: set[str]) -> _Settled:
    """Of `roots` (names an import binds, and other code too): those every binding of which
    lands in the module's own scope (module-level statements, at any depth of `if`, `try`,
    `with` or a loop, but not in a function, class, lambda or comprehension; imports binding
    the name itself, not a dotted path), each mapped to whether code other than an import
    binds it; and those of them read (anywhere) before the end of the statement that binds
    them last, and those read at all. libcst counts a binding as made once its statement is
    left, so a module-level read after that end sees every binding."""
    last: dict[str, tuple[int, int]] = {}  # root -> end of the statement of its last binding
    local = dict.fromkeys(roots, False)
    bad: set[str] = set()
    reads: dict[str, list[tuple[int, int]]] = {}
    # (node, whether a binding there is the module's, end of the statement it sits in)
    stack: list[tuple[ast.AST, bool, tuple[int, int]]] = [
        (stmt, True, (0, 0)) for stmt in reversed(tree.body)
    ]

    def bind(root: str, end: tuple[int, int]) -> None:
        if end > last.get(root, (0, 0)):
            last[root] = end

    while stack:
        node, top, end = stack.pop()
        if top and isinstance(node, ast.stmt):
            end = (node.end_lineno or 0, node.end_col_offset or 0)
        if isinstance(node, ast.Name):
            if node.id in roots:
                if isinstance(node.ctx, ast.Store):
                    if top:
                        local[node.id] = True
                        bind(node.id, end)
                    else:
                        bad.add(node.id)
                else:  # a load, or `del`: libcst counts both as reads
                    reads.setdefault(node.id, []).append((node.lineno, node.col_offset))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for key in _keys(node):
                root = key.split(".")[0]
                if root in roots:
                    if top and key == root:
                        bind(root, end)
                    else:
                        bad.add(root)
            continue
        named = [n for n in _bound_names(node) if n in roots]
        if named:
            if top and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for n in named:
                    local[n] = True
                    bind(n, end)
            elif top and isinstance(node, ast.ExceptHandler):  # `except E as name:`
                for n in named:
                    local[n] = True
                    bind(n, end)  # the end of the whole `try`
            else:
                bad.update(named)
        inner = top and not isinstance(node, _NESTED)
        stack.extend((c, inner, end) for c in reversed(child_nodes(node)))
    settled = {r: local[r] for r in roots if r in last and r not in bad}
    early = frozenset(r for r in settled if any(at < last[r] for at in reads.get(r, ())))
    return settled, early, frozenset(r for r in settled if r in reads)


# Nodes under which libcst may parse a string as code (more than libcst does, which checks
# that a subscript or call names `typing`): annotations, subscripts, cast / TypeVar / NewType.
_HINT_PARENTS: tuple[type, ...] = (
    ast.arg,
    ast.AnnAssign,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Subscript,
    ast.Call,
    getattr(ast, "TypeAlias", ast.Subscript),  # Python 3.12's `type X = ...`
)
_HINT_CALLS = ("cast", "TypeVar", "NewType")


def _hints_under(node: ast.AST) -> Iterator[ast.AST]:
    """The children of `node` (one of _HINT_PARENTS) that are annotations or type hints."""
    if isinstance(node, (ast.arg, ast.AnnAssign)):
        if node.annotation is not None:
            yield node.annotation
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if node.returns is not None:
            yield node.returns
    elif isinstance(node, ast.Call):
        func = node.func
        if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in (
            _HINT_CALLS
        ):
            yield from child_nodes(node)
    else:  # a subscript or a type alias
        yield from child_nodes(node)


def _keys(stmt: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The names an import binds as libcst records them: `import a.b.c` under `a.b.c`, `a.b`
    and `a`; an alias under itself."""
    for a in stmt.names:
        if a.name == "*":
            continue
        if a.asname:
            yield a.asname
            continue
        parts = a.name.split(".")
        for i in range(len(parts), 0, -1):
            yield ".".join(parts[:i])


def _names_for(record: _Import, full_name: str) -> set[str]:
    """libcst's ImportAssignment.get_qualified_names_for, on ast data: every alias of the
    statement whose bound name (or a dotted prefix of its module) starts `full_name`."""
    results = set()
    module = record.module
    for name, asname in record.aliases:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            real = ".".join(parts[:i])
            as_name = real
            if module and module.endswith("."):
                real = f"{module}{real}"
            elif module:
                real = f"{module}.{real}"
            if asname:
                as_name = asname
            if full_name.startswith(as_name):
                rest = full_name.split(as_name, 1)[1]
                if rest and not rest.startswith("."):
                    continue
                rest = rest.lstrip(".")
                results.add(f"{real}.{rest}" if rest else real)
                break
    return results


def _bound_names(node: ast.AST) -> Iterator[str]:
    """Names a node binds other than by import or a Name target."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest
    elif type(node).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):
        yield node.name  # type: ignore[attr-defined]
