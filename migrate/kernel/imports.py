"""The modules a piece of Python source imports, read with `ast` (standard library only: the
smoke harness uses it inside the user's own interpreter)."""

from __future__ import annotations

import ast


def imported_modules(tree: ast.AST) -> set[str]:
    """Dotted names of every module `tree` imports, absolute imports only."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out
