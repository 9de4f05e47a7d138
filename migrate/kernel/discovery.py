"""Which files a command looks at: paths as given, folders walked honouring .gitignore.

Folders are walked recursively, skipping DEFAULT_EXCLUDES and whatever the .gitignore files
(of the folder, its subfolders and its enclosing git repository) and .git/info/exclude ignore.
A path named on the command line is always taken, excluded or not.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Sequence

import pathspec

DEFAULT_EXCLUDES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "build",
        "dist",
        "site-packages",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
    }
)
PYTHON_SUFFIXES = (".py", ".ipynb")


@dataclasses.dataclass(frozen=True)
class Candidate:
    path: str  # as the user will read it: the argument joined with the walked part
    explicit: bool  # named on the command line


@dataclasses.dataclass(frozen=True)
class Missing:
    path: str
    message: str


def _spec_for(folder: str) -> pathspec.PathSpec | None:
    lines: list[str] = []
    for name in (".gitignore", os.path.join(".git", "info", "exclude")):
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    return _spec(lines) if lines else None


def _spec(lines: list[str]) -> pathspec.PathSpec:
    """The spec of a .gitignore's lines. A line git cannot read as a pattern (one ending in an
    unescaped backslash) matches nothing in git; it is left out here too instead of stopping the
    walk (nganngants/smes_ppo's .gitignore has one)."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # pathspec's GitIgnorePatternError
        return pathspec.GitIgnoreSpec.from_lines([ln for ln in lines if _valid(ln)])


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _git_root(folder: str) -> str | None:
    current = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _ancestor_specs(folder: str) -> list[tuple[str, pathspec.PathSpec]]:
    """The ignore specs of the enclosing repository's folders above `folder` (exclusive)."""
    root = _git_root(folder)
    if root is None:
        return []
    specs = []
    current = os.path.abspath(folder)
    chain = []
    while current != root:
        current = os.path.dirname(current)
        chain.append(current)
    for base in reversed(chain):
        spec = _spec_for(base)
        if spec is not None:
            specs.append((base, spec))
    return specs


def _ignored(abspath: str, is_dir: bool, specs: Sequence[tuple[str, pathspec.PathSpec]]) -> bool:
    for base, spec in specs:
        rel = os.path.relpath(abspath, base).replace(os.sep, "/")
        if spec.match_file(rel + "/" if is_dir else rel):
            return True
    return False


def walk(
    folder: str,
    *,
    suffixes: Sequence[str] = PYTHON_SUFFIXES,
    excludes: Iterable[str] = DEFAULT_EXCLUDES,
    extra: Sequence[tuple[str, pathspec.PathSpec]] = (),
    match: Callable[[str], bool] | None = None,
) -> Iterator[str]:
    """Files under `folder` with one of `suffixes` (or, given `match`, whose path it accepts),
    in sorted order, ignored ones left out. `fix` walks for code, `compat` for requirement
    sources: the same folders are skipped for both.

    `extra`: more (anchor folder, spec) pairs to honour, such as configured excludes.
    """
    wanted = match or (lambda path: path.endswith(tuple(suffixes)))
    exclude = frozenset(excludes)
    base_specs = _ancestor_specs(folder)
    if _ignored(os.path.abspath(folder), True, base_specs):
        base_specs = []  # the user named an ignored folder: its contents are what they asked for
    base_specs = [*base_specs, *extra]
    stack: list[tuple[str, list[tuple[str, pathspec.PathSpec]]]] = [(folder, base_specs)]
    while stack:
        current, specs = stack.pop()
        spec = _spec_for(current)
        here = [*specs, (os.path.abspath(current), spec)] if spec is not None else specs
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in exclude or _ignored(os.path.abspath(entry.path), True, here):
                    continue
                subdirs.append(entry.path)
            elif wanted(entry.path) and not _ignored(os.path.abspath(entry.path), False, here):
                yield os.path.normpath(entry.path)
        stack.extend((d, here) for d in reversed(subdirs))


def discover(
    paths: Sequence[str],
    *,
    suffixes: Sequence[str] = PYTHON_SUFFIXES,
    excludes: Iterable[str] = DEFAULT_EXCLUDES,
    patterns: Sequence[str] = (),
    patterns_root: str | None = None,
) -> tuple[list[Candidate], list[Missing]]:
    """Expand command-line paths into candidate files, each once (by real path), in order.

    `patterns` are .gitignore-style excludes anchored at `patterns_root` (default: cwd).
    """
    extra = []
    seen: set[str] = set()
    found: list[Candidate] = []
    missing: list[Missing] = []
    if patterns:
        try:  # compiled once; each pattern alone only when one of them is not a pattern
            spec: pathspec.PathSpec = pathspec.GitIgnoreSpec.from_lines(patterns)
        except ValueError:  # pathspec's GitIgnorePatternError: report the bad, apply the rest
            bad = "not a valid exclude pattern (.gitignore syntax): it was not applied"
            missing.extend(Missing(p, bad) for p in patterns if not _valid(p))
            spec = _spec(list(patterns))
        extra.append((os.path.abspath(patterns_root or "."), spec))

    def add(path: str, explicit: bool) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            found.append(Candidate(path, explicit))

    for raw in paths:
        if os.path.isdir(raw):
            for path in walk(raw, suffixes=suffixes, excludes=excludes, extra=extra):
                add(path, False)
        elif os.path.lexists(raw):
            add(os.path.normpath(raw), True)
        else:
            missing.append(Missing(raw, "no such file or directory"))
    return found, missing


def vendored_trl(path: str) -> str | None:
    """The folder of a copy of TRL that `path` lies in (a `trl/` package with TRL's layout, not
    an installed one), which shadows the installed TRL for scripts run beside it; else None."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.basename(folder) == "trl" and _looks_like_trl(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _looks_like_trl(folder: str) -> bool:
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return False
    if "site-packages" in folder.split(os.sep) or "dist-packages" in folder.split(os.sep):
        return False
    if os.path.isfile(os.path.join(os.path.dirname(folder), "__init__.py")):
        # `pkg/trl/` in a package is imported as `pkg.trl` (optimum-habana's `optimum.habana.trl`,
        # code built on the installed TRL): it shadows nothing
        return False
    return any(
        os.path.exists(os.path.join(folder, part)) for part in ("core.py", "trainer", "models")
    )
