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
import re
from collections.abc import Collection, Iterator

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")


def starts(module: cst.Module, nodes: Collection[cst.CSTNode]) -> dict[int, tuple[int, int]]:
    """id(node) -> (1-based line, 0-based column) of each of `nodes` found in `module`."""
    if not nodes:
        return {}
    state = _StartFinder(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        targets={id(n) for n in nodes},
    )
    module._codegen(state)
    return state.found


@dataclasses.dataclass
class _StartFinder(CodegenState):
    targets: set[int] = dataclasses.field(default_factory=set)
    found: dict[int, tuple[int, int]] = dataclasses.field(default_factory=dict)
    _stack: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    _counted: int = 0  # tokens already folded into _line and _column
    _line: int = 1
    _column: int = 0

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
