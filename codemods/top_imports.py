"""The imports the passes ask for (`AddImportsVisitor.add_needed_import`), added to a module's
top import block with the result libcst's AddImportsVisitor gives, without its walk.

libcst's visitor is a matcher-decoratable transformer: making one (and the import gatherer it
makes in turn) reads every one of its ~1,600 attributes for matcher decorators, and its walk
checks matchers at every node. For the plain `import m` and `from m import x` the rules ask
for, what it does follows from the module's top statements alone:

- the top import block is the run of lines holding one `import` or `from ... import` each, after
  a leading docstring (or `__strict__ = ...` line);
- what that block imports already is not added again (a `from m import *` there covers `m`);
- names from a module the block already imports from (`from m import a`) go at the front of the
  first such line, sorted;
- the rest become new lines after the block: `import m` lines, then `from m import ...` lines,
  each sorted, with an empty line kept between them and the code that follows.

Requests with an alias or a relative module are left to libcst's visitor (`add` answers None).
One difference is ours: in a joined notebook, the lines of a first `!pip install` cell stay
above the imports (`leading_stand_ins`).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.codemod.visitors import ImportItem
from libcst.helpers import get_absolute_module_from_package_for_import

from codemods import edits


def add(module: cst.Module, items: Sequence[ImportItem], package: str | None) -> cst.Module | None:
    """`module` with `items` imported at its top, as AddImportsVisitor would; None for requests
    this does not handle."""
    if any(i.alias is not None or i.relative or i.module == "__future__" for i in items):
        return None
    plain = {i.module for i in items if i.obj_name is None}
    wanted: dict[str, set[str]] = {}
    for item in items:
        if item.obj_name is not None:
            wanted.setdefault(item.module, set()).add(item.obj_name)
    body = list(module.body)
    start = leading_stand_ins(module) or (1 if body and _opening_line(body[0]) else 0)
    block: list[cst.Import | cst.ImportFrom] = []  # the top import block, a line each
    for stmt in body[start:]:
        node = _import_of(stmt)
        if node is None:
            break
        block.append(node)
    end = start + len(block)
    # what the block imports already
    for node in block:
        if isinstance(node, cst.Import):
            plain.difference_update(a.evaluated_name for a in node.names if a.asname is None)
            continue
        source = get_absolute_module_from_package_for_import(package, node)
        if source is None or source not in wanted:
            continue
        if isinstance(node.names, cst.ImportStar):
            del wanted[source]  # `from m import *` covers every name of m
            continue
        wanted[source].difference_update(a.evaluated_name for a in node.names if a.asname is None)
        if not wanted[source]:
            del wanted[source]
    # names from a module the block imports from: at the front of its first line
    merged = False
    for index, node in enumerate(block, start):
        if not isinstance(node, cst.ImportFrom) or isinstance(node.names, cst.ImportStar):
            continue
        source = get_absolute_module_from_package_for_import(package, node)
        if source is None or source not in wanted:
            continue
        front = [cst.ImportAlias(name=cst.Name(n)) for n in sorted(wanted.pop(source))]
        body[index] = body[index].with_deep_changes(node, names=[*front, *node.names])
        merged = True
    if not plain and not wanted:
        return module.with_changes(body=body) if merged else module
    config = module.config_for_parsing
    added = [cst.parse_statement(f"import {m}", config=config) for m in sorted(plain)]
    added += [
        cst.parse_statement(f"from {m} import {', '.join(sorted(wanted[m]))}", config=config)
        for m in sorted(wanted)
    ]
    after = body[end:]
    # (a notebook's next cell needs no blank line above it)
    if after and not edits.notebook_stand_in(after[0]):
        first = after[0]
        if not first.leading_lines:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(),))
        elif first.leading_lines[0].comment is not None:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(), *first.leading_lines))
    return module.with_changes(body=[*body[:end], *added, *after])


def leading_stand_ins(module: cst.Module) -> int:
    """How many lines of a joined notebook that are not Python open the module: a first cell
    of `!pip install ...` and the boundary after it. The imports go below them, where libcst's
    visitor would put them above: an import above the cell that installs its package fails."""
    count = 0
    for stmt in module.body:
        if not edits.notebook_stand_in(stmt):
            break
        count += 1
    return count


def joined_notebook(module: cst.Module) -> bool:
    """Whether `module` is a notebook's cells joined (a top-level line stands for a cell
    boundary or an IPython line): where `add` places imports otherwise than libcst's visitor."""
    return any(edits.notebook_stand_in(stmt) for stmt in module.body)


def _import_of(stmt: cst.BaseStatement) -> cst.Import | cst.ImportFrom | None:
    """The import a line holds when it holds one import and nothing else."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return small
    return None


def _opening_line(stmt: cst.BaseStatement) -> bool:
    """A docstring line, or a `__strict__ = ...` one: no import goes above it."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if isinstance(small, cst.Expr):
        return isinstance(small.value, cst.SimpleString)
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == "__strict__"
    )
