"""setup.py read with `ast`, never executed: install_requires, extras_require, python_requires.

Lists may be literals in the call or module-level names assigned once to a literal. Only plain
string literals (no escapes, no implicit concatenation) can be edited in place.
"""

from __future__ import annotations

import ast

from compat.model import Declared, SourceRead, Where, lines_with_offsets
from compat.sources import pep508

_KEYS = ("install_requires", "extras_require", "python_requires", "tests_require")


def read(src: SourceRead) -> None:
    try:
        tree = ast.parse(src.text, filename=src.display)
    except SyntaxError as e:
        src.error(e.lineno or 0, f"not valid Python: {e.msg}", col=e.offset or 0)
        src.fatal = True
        return
    names = _module_assignments(tree)
    starts = [start for _, start, _ in lines_with_offsets(src.text)]
    for call in _setup_calls(tree):
        for kw in call.keywords:
            if kw.arg in _KEYS:
                _keyword(src, kw.arg, _resolve(kw.value, names), names, starts)


def _setup_calls(tree: ast.AST) -> list[ast.Call]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name == "setup":
                out.append(node)
    return out


def _module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            found[node.targets[0].id] = node.value
    return found


def _resolve(node: ast.expr, names: dict[str, ast.expr]) -> ast.expr:
    return names.get(node.id, node) if isinstance(node, ast.Name) else node


def _keyword(
    src: SourceRead, key: str, value: ast.expr, names: dict[str, ast.expr], starts: list[int]
) -> None:
    if key == "python_requires":
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            _string(src, value, starts, python=True)
        return
    if isinstance(value, ast.Dict):
        for item in value.values:
            _keyword(src, "install_requires", _resolve(item, names), names, starts)
        return
    if isinstance(value, (ast.List, ast.Tuple)):
        for elt in value.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                _string(src, elt, starts, python=False)


def _literal_offset(src: SourceRead, node: ast.Constant, starts: list[int]) -> int | None:
    """File offset of the string's first character inside its quotes, when the source is plain."""
    if node.end_lineno is None or node.end_col_offset is None or node.lineno != node.end_lineno:
        return None
    line_start = starts[node.lineno - 1]
    line_text = src.text[line_start:].split("\n", 1)[0]
    raw_line = line_text.encode("utf-8")
    begin = len(raw_line[: node.col_offset].decode("utf-8", "replace"))
    end = len(raw_line[: node.end_col_offset].decode("utf-8", "replace"))
    literal = line_text[begin:end]
    prefix = literal[: len(literal) - len(literal.lstrip("uU"))]
    body = literal[len(prefix) :]
    for quote in ('"""', "'''", '"', "'"):
        if (
            body.startswith(quote)
            and body.endswith(quote)
            and body[len(quote) : -len(quote)] == node.value
        ):
            return line_start + begin + len(prefix) + len(quote)
    return None


def _string(src: SourceRead, node: ast.Constant, starts: list[int], *, python: bool) -> None:
    value = str(node.value)
    offset = _literal_offset(src, node, starts)
    note = "" if offset is not None else "a string with escapes or split across lines"
    if python:
        spec = value.strip()
        lead = len(value) - len(value.lstrip())
        where = Where(offset + lead, offset + lead + len(spec)) if offset is not None else None
        src.declared.append(
            Declared(
                "python", f"python {spec}", spec, "pep440", node.lineno, where=where, note=note
            )
        )
        return
    pep508.declare(src, value, node.lineno, col=node.col_offset + 1, offset=offset, note=note)
