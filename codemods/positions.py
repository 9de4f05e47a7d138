"""Where a few nodes start in a module's code, at the cost of one plain code generation.

libcst's PositionProvider computes the range of every node of a tree: a regex split of every
token and a range object for every node, about seven times the cost of writing the code out. A
pass needs the start of the handful of nodes it reports, so this generates the code once, keeps
count of lines only when one of those nodes begins, and gives the same (line, column) as
PositionProvider's `start` (the syntactic start: leading whitespace and comments not counted).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from collections.abc import Collection, Iterator

import libcst as cst
from libcst._nodes.internal import CodegenState

from codemods import walk

_NEWLINE = re.compile(r"\r\n?|\n")
# Set in the test suite: each module's code written here is checked against libcst's.
CHECK = os.environ.get("TRL_MIGRATE_CHECK_BINDINGS") == "1"


def _last_newline(module: cst.Module) -> str | None:
    """The token the module's last Newline node writes (None: it has none)."""
    tree = walk.tree_of(module)
    at = tree.by_type().get(cst.Newline)
    if not at:
        return None
    last = tree.nodes[at[-1]]
    return module.default_newline if last.value is None else last.value  # type: ignore[attr-defined]


class Written:
    """The code of the trees one file's passes make, each top-level statement written once: a
    pass keeps the statements it does not touch (the same node objects), so a new tree's code
    is the kept statements' code plus that of the few it rebuilt."""

    def __init__(self) -> None:
        self._code: dict[int, tuple[cst.CSTNode, str]] = {}  # id(statement) -> its code
        # (id(statement), indentation) -> (statement, its tokens), for the statements inside the
        # top-level ones (the methods of a class): of the last code written, and of this one
        self._inner: dict[tuple[int, tuple[str, ...]], tuple[cst.CSTNode, list[str]]] = {}
        # (module, id(statement) -> (body index, first line)) of the last tree placed
        self._lines: tuple[cst.Module, dict[int, tuple[int, int]]] | None = None

    def code(self, module: cst.Module) -> str:
        if not module.body:
            return module.code  # libcst may add a newline to an empty module: it decides
        parts = [module.code_for_node(line) for line in module.header]
        with self._nested():
            parts += self._statements(module)
        parts += [module.code_for_node(line) for line in module.footer]
        self._lines = None
        text = "".join(parts)
        if not module.has_trailing_newline:
            # libcst drops the last token when it is the default newline; the last token of a
            # module with a body is always its last Newline node's
            last = _last_newline(module)
            if last is None:
                return module.code
            if last == module.default_newline and text.endswith(last):
                text = text[: -len(last)]
        if CHECK and text != module.code:
            raise AssertionError("positions.Written differs from libcst's code of the module")
        return text

    def starts(
        self, module: cst.Module, nodes: Collection[cst.CSTNode]
    ) -> dict[int, tuple[int, int]]:
        """`starts(module, nodes)`, writing out only the top-level statements that hold one of
        `nodes`: where each statement begins follows from the code of those before it, which
        `code` keeps."""
        if not nodes:
            return {}
        if not module.body:
            return starts(module, nodes)
        # (a module without a final newline: the one libcst drops follows every node's start)
        lines = self._statement_lines(module)
        tree = walk.tree_of(module)
        parents, nodes_at = tree.parents, tree.nodes
        wanted: dict[int, list[cst.CSTNode]] = {}  # body index -> nodes under that statement
        for node in nodes:
            at = tree.index.get(id(node))
            if at is None or at == 0:
                if at == 0:
                    return starts(module, nodes)  # the module itself: the whole code
                continue  # a node the rule built: no position
            while parents[at] != 0:
                at = parents[at]
            top = lines.get(id(nodes_at[at]))
            if top is None:
                return starts(module, nodes)  # in the module's header or footer lines
            wanted.setdefault(top[0], []).append(node)
        holding: set[int] = set()  # the nodes that hold one of `nodes`, these included
        for node in nodes:
            at = tree.index.get(id(node))
            while at is not None and at != 0 and id(nodes_at[at]) not in holding:
                holding.add(id(nodes_at[at]))
                at = parents[at]
        found: dict[int, tuple[int, int]] = {}
        with self._nested(holding):
            for index, inside in wanted.items():
                stmt = module.body[index]
                state = _StartFinder(
                    default_indent=module.default_indent,
                    default_newline=module.default_newline,
                    targets={id(n) for n in inside},
                    _line=lines[id(stmt)][1],
                )
                state.run(stmt)
                found.update(state.found)
        if CHECK and found != starts(module, nodes):
            raise AssertionError("positions.Written.starts differs from a whole-module count")
        return found

    @contextlib.contextmanager
    def _nested(self, holding: Collection[int] | None = None) -> Iterator[None]:
        """While the body's statements are written: a statement of any depth that the last
        code held, the same node at the same indentation, gives the tokens it gave then. A
        pass that changes one method of a 2,000-line class rebuilds the class node, and this
        writes only that method again, not every other one. With `holding` (ids of the nodes
        that hold a node whose start is sought), a position count reuses the tokens of the
        statements outside them, and records nothing."""
        previous = self._inner
        fresh: dict[tuple[int, tuple[str, ...]], tuple[cst.CSTNode, list[str]]] = {}
        plain = cst.CSTNode._codegen
        inside = frozenset(holding or ())

        def codegen(node: cst.CSTNode, state: CodegenState, **kwargs: object) -> None:
            counting = holding is not None and type(state) is _StartFinder
            if kwargs or not (counting or type(state) is CodegenState):  # `elif`
                plain(node, state, **kwargs)
                return
            key = (id(node), tuple(state.indent_tokens))
            hit = previous.get(key)
            held = counting and (id(node) in inside or id(node) in getattr(state, "targets", ()))
            if hit is not None and hit[0] is node and not held:
                state.tokens.extend(hit[1])
                if not counting:
                    fresh[key] = hit
                return
            start = len(state.tokens)
            plain(node, state)
            if not counting:
                fresh[key] = (node, state.tokens[start:])

        patched = [cls for cls in _STATEMENTS if "_codegen" not in cls.__dict__]
        for cls in patched:
            cls._codegen = codegen  # type: ignore[method-assign, assignment]
        try:
            yield
        finally:
            for cls in patched:
                del cls._codegen
        if holding is None:
            self._inner = fresh

    def _statement_lines(self, module: cst.Module) -> dict[int, tuple[int, int]]:
        """id(statement) -> (its index in the body, its first line) for `module`'s body."""
        if self._lines is not None and self._lines[0] is module:
            return self._lines[1]
        line = 1 + sum(_line_breaks(module.code_for_node(h)) for h in module.header)
        out: dict[int, tuple[int, int]] = {}
        for index, (stmt, code) in enumerate(zip(module.body, self._statements(module))):
            out[id(stmt)] = (index, line)
            line += _line_breaks(code)
        self._lines = (module, out)
        return out

    def statement_code(self, module: cst.Module, stmt: cst.CSTNode) -> str:
        """The code of `stmt`, a statement of `module`'s body: kept from the last tree written
        or placed where it holds that statement."""
        hit = self._code.get(id(stmt))
        return hit[1] if hit is not None and hit[0] is stmt else module.code_for_node(stmt)

    def _statements(self, module: cst.Module) -> list[str]:
        """The code of each statement of `module`'s body, written only where the last tree
        asked about did not have that statement; `module`'s become the ones kept."""
        kept = self._code
        fresh: dict[int, tuple[cst.CSTNode, str]] = {}
        codes = []
        for stmt in module.body:
            hit = kept.get(id(stmt))
            code = hit[1] if hit is not None and hit[0] is stmt else module.code_for_node(stmt)
            fresh[id(stmt)] = (stmt, code)
            codes.append(code)
        self._code = fresh
        return codes


# The statements whose code the writer keeps between trees (`Written._nested`): compound ones,
# and the lines of simple ones; libcst defines `_codegen` only on CSTNode, so a class attribute
# on these, removed after, reaches them alone.
_STATEMENTS: tuple[type[cst.CSTNode], ...] = (
    cst.SimpleStatementLine,
    cst.FunctionDef,
    cst.ClassDef,
    cst.If,
    cst.For,
    cst.While,
    cst.With,
    cst.Try,
    cst.TryStar,
    cst.Match,
)


def _line_breaks(code: str) -> int:
    return len(_NEWLINE.findall(code))


def starts(module: cst.Module, nodes: Collection[cst.CSTNode]) -> dict[int, tuple[int, int]]:
    """id(node) -> (1-based line, 0-based column) of each of `nodes` found in `module`."""
    if not nodes:
        return {}
    state = _StartFinder(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        targets={id(n) for n in nodes},
    )
    state.run(module)
    return state.found


class _AllFound(Exception):
    """Raised inside a code generation once every sought start is known: the rest of the
    statement (the methods after the one sought, in a 1,000-line test class) is not written."""


@dataclasses.dataclass
class _StartFinder(CodegenState):
    targets: set[int] = dataclasses.field(default_factory=set)
    found: dict[int, tuple[int, int]] = dataclasses.field(default_factory=dict)
    _stack: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    _counted: int = 0  # tokens already folded into _line and _column
    _line: int = 1
    _column: int = 0
    _sought: frozenset[int] = frozenset()  # the targets asked for (not those added on the way)

    def run(self, node: cst.CSTNode) -> None:
        """Write `node`'s code until every target's start is known."""
        self._sought = frozenset(self.targets)
        with contextlib.suppress(_AllFound):
            node._codegen(self)

    def _here(self) -> tuple[int, int]:
        """The position after the tokens written so far (counted since the last call)."""
        for token in self.tokens[self._counted :]:
            parts = _NEWLINE.split(token)
            if len(parts) == 1:
                self._column += len(token)
            else:
                self._line += len(parts) - 1
                self._column = len(parts[-1])
        self._counted = len(self.tokens)
        return self._line, self._column

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self._stack.append(self._here())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            start = self._stack.pop()
            self.found.setdefault(id(node), start)  # a syntactic start, when recorded, wins
            if not self._stack and self._sought <= self.found.keys():
                raise _AllFound

    @contextlib.contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        if id(node) not in self.targets:
            yield
            return
        here = self._here()
        if start_node is not None:
            self.targets.add(id(start_node))  # generated inside this block
        yield
        self.found[id(node)] = self.found[id(start_node)] if start_node is not None else here
