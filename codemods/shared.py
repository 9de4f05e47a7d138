"""One module of helpers per folder, instead of one copy per file.

A removed helper (`LengthSampler`, `scores_in_label_order`, ...) that several files of one folder
had written in is written once, into `trl_migrate_helpers.py` beside them, and imported from
there, when the folder's own code shows how its files find their neighbours (a helper only one
file needs stays in that file):

- plain imports of a neighbour (`from utils import x`, with `utils.py` in the folder): the files
  run with the folder on `sys.path`, so `from trl_migrate_helpers import ...` finds the module
  the same way. A script (a `__main__` guard, or a top-level `trainer.train()`) in a folder
  without `__init__.py` counts too: Python puts a script's own folder first on `sys.path`.
- relative imports (`from .utils import x`) in a package (`__init__.py`): the file imports
  `from .trl_migrate_helpers import ...`.

A file that shows neither, a file another file of the run imports by a dotted path
(`from folder.script import x`, where the folder need not be on the path), and notebooks keep
their own copies, as does every file when the folder already holds a `trl_migrate_helpers.py`
that trl-migrate did not write. Nothing is guessed: the module is only used where the folder's
own imports prove it will be found.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections import Counter
from collections.abc import Mapping, Sequence

import libcst as cst

from codemods import inline


@dataclasses.dataclass(frozen=True)
class Home:
    """A folder's shared module: where it goes, how its files import it, what it holds."""

    path: str  # the module's path
    level: int  # 0: `from trl_migrate_helpers import`; 1: `from .trl_migrate_helpers import`
    files: tuple[str, ...]  # the files that import from it (paths as the run names them)
    keys: frozenset[str]  # the helpers it holds
    old: bytes | None  # its bytes now, when it exists (ours, from an earlier run)


def homes(
    needs: Mapping[str, Sequence[str]], sources: Mapping[str, bytes], *, minimum: int = 2
) -> list[Home]:
    """The shared modules to write. `needs`: file -> the helpers its rewrite wrote in (files
    the rewrite changed); `sources`: every Python file of the run -> its bytes (for the
    evidence). A folder's module holds the helpers at least `minimum` of its files that may
    import it need (and what our module there already holds); a helper only one file needs
    stays a copy in that file."""
    by_folder: dict[str, list[str]] = {}
    for path, wanted in needs.items():
        if wanted and path.endswith(".py"):
            by_folder.setdefault(os.path.dirname(os.path.abspath(path)), []).append(path)
    if not by_folder:
        return []
    trees = {os.path.abspath(p): _parse(data) for p, data in sources.items() if p.endswith(".py")}
    dotted = _dotted_imports(trees.values())
    out = []
    for folder, paths in sorted(by_folder.items()):
        module = os.path.join(folder, inline.SHARED_MODULE + ".py")
        old, held = _existing(module)
        if old is not None and held is None:
            continue  # a module of the user's by that name
        level, files = _importers(folder, sorted(paths), trees, dotted)
        counts = Counter(k for p in files for k in needs[p])
        keys = frozenset(k for k, n in counts.items() if n >= minimum) | frozenset(held or ())
        files = [p for p in files if keys & set(needs[p])]
        if not files or (not held and len(files) < minimum):
            continue
        out.append(Home(module, level, tuple(files), keys, old))
    return out


def _parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _existing(module: str) -> tuple[bytes | None, set[str] | None]:
    """The module's bytes and the helpers it holds when it is ours (None: not ours)."""
    try:
        with open(module, "rb") as fh:
            data = fh.read()
    except OSError:
        return None, None
    try:
        return data, inline.shared_keys(data.decode("utf-8"))
    except (UnicodeDecodeError, cst.ParserSyntaxError):  # unreadable: not ours
        return data, None


def _dotted_imports(trees) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(package, module) pairs the run's files import by a dotted path: `a.b` from
    `import a.b` or `from a.b import x`, and `from a import b`."""
    found: set[tuple[str, str]] = set()
    for tree in trees:
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if len(parts) >= 2:
                    found.add((parts[-2], parts[-1]))
    return found


def _importers(
    folder: str,
    paths: list[str],
    trees: Mapping[str, ast.Module | None],
    dotted: set[tuple[str, str]],
) -> tuple[int, list[str]]:
    """How the folder's files import the module (level), and which of `paths` may."""
    package = os.path.isfile(os.path.join(folder, "__init__.py"))
    neighbours = _neighbours(folder)
    plain, relative, scripts = set(), set(), set()
    for path, tree in trees.items():
        if os.path.dirname(path) != folder or tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                relative.add(path)
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] in neighbours:
                    plain.add(path)
            elif isinstance(node, ast.Import) and any(
                a.name.split(".")[0] in neighbours for a in node.names
            ):
                plain.add(path)
        if not package and _is_script(tree):
            scripts.add(path)
    name = os.path.basename(folder)
    chosen = []
    if plain and relative:
        return 0, []  # the folder's files are found both ways: no one answer
    level = 1 if relative else 0
    for path in paths:
        full = os.path.abspath(path)
        stem = os.path.splitext(os.path.basename(full))[0]
        if level == 0 and (name, stem) in dotted:
            continue  # imported as `folder.stem`: the folder need not be on sys.path
        if (level == 1 and package and full in relative) or (
            level == 0 and (full in plain or full in scripts)
        ):
            chosen.append(path)
    return level, chosen


def _neighbours(folder: str) -> set[str]:
    """The module names the folder's own files and subfolders give."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return set()
    out = set()
    for entry in entries:
        stem, ext = os.path.splitext(entry)
        if ext == ".py" and stem.isidentifier() and stem != inline.SHARED_MODULE:
            out.add(stem)
        elif not ext and entry.isidentifier() and os.path.isdir(os.path.join(folder, entry)):
            out.add(entry)
    return out


def _is_script(tree: ast.Module) -> bool:
    """The module is run, not imported: an `if __name__ == "__main__":` guard, or a trainer's
    `.train()` called at its top level."""
    for node in tree.body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "train"
        ):
            return True
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            test = node.test
            sides = [test.left, *test.comparators]
            if any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
                isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
            ):
                return True
    return False
