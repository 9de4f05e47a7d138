"""What one file of a run learns from the others: TRL names it receives through a star import.

`from modules import *`, where `modules.py` (a file of the same run) does `from trl import
PPOConfig`, hands `PPOConfig` to the importing file without naming trl there. Each file is
rewritten on its own, so the importer's rules would not see that its `PPOConfig(...)` is TRL's,
while `modules.py`, which never uses the name, drops the import: the importer would break on
TRL 1.13 with no finding. `star_passes` finds those names with `ast` (cheap: only files whose
text holds `import *` are read), and the engine imports each one from trl explicitly below the
star import before the rules run (the same object the star gave, so nothing else changes); the
rules then rewrite its uses as in any other file.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Container, Iterable, Sequence

from codemods import inline, symbols
from migrate.kernel import notebooks
from migrate.kernel.files import SourceError


@dataclasses.dataclass(frozen=True)
class Passed:
    """A TRL name a file reads that a star import of another file of the run gives it."""

    line: int  # the star import's last line (1-based)
    col: int  # its first column (1-based)
    star: str  # the star import's module as written: "modules", ".utils"
    source: str  # the file that imports the name from trl
    name: str  # the name as bound (and read) in both files
    trl_module: str  # where that file imports it from
    trl_name: str  # its name there

    def statement(self) -> str:
        alias = f" as {self.name}" if self.name != self.trl_name else ""
        return f"from {self.trl_module} import {self.trl_name}{alias}"


def star_passes(files: Sequence[tuple[str, bytes]]) -> dict[str, list[Passed]]:
    """For each Python file of `files` that star-imports another file of `files`, the TRL names
    (removed in 1.13, see `_trl_exports`) that it reads, does not bind itself, and gets through
    that star import; files with none are left out."""
    paths = {os.path.abspath(p): data for p, data in files if p.endswith(".py")}
    trees: dict[str, ast.Module | None] = {}

    def tree(path: str) -> ast.Module | None:
        if path not in trees:
            try:
                trees[path] = ast.parse(paths[path])
            except (SyntaxError, ValueError):
                trees[path] = None
        return trees[path]

    exports: dict[str, dict[str, tuple[str, str]]] = {}  # a module's, read once
    out: dict[str, list[Passed]] = {}
    for path, data in paths.items():
        if b"import *" not in data and b"import*" not in data:
            continue
        module = tree(path)
        if module is None:
            continue
        stars = [s for s in module.body if isinstance(s, ast.ImportFrom) and s.names[0].name == "*"]
        given: dict[str, Passed] = {}  # a later star import of the same name wins
        for star in stars:
            source = _resolve(star, path, paths)
            found = tree(source) if source else None
            if source is None or found is None:
                continue
            written = ("." * star.level) + (star.module or "")
            if source not in exports:
                exports[source] = _trl_exports(found)
            for name, (trl_module, trl_name) in exports[source].items():
                given[name] = Passed(
                    star.end_lineno or star.lineno,
                    star.col_offset + 1,
                    written,
                    source,
                    name,
                    trl_module,
                    trl_name,
                )
        if not given:
            continue
        read = _read_not_bound(module)
        passed = [given[n] for n in sorted(given) if n in read]
        if passed:
            out[path] = passed
    return out


def _resolve(star: ast.ImportFrom, importer: str, known: Container[str]) -> str | None:
    """The file of the run that `star` imports: relative to the importer's package, or, for an
    absolute name, under the nearest folder above the importer that holds it (a script's own
    folder comes first on sys.path)."""
    parts = (star.module or "").split(".") if star.module else []
    here = os.path.dirname(importer)
    if star.level:
        for _ in range(star.level - 1):
            here = os.path.dirname(here)
        bases = [here]
    else:
        bases = []
        while True:
            bases.append(here)
            up = os.path.dirname(here)
            if up == here:
                break
            here = up
    for base in bases:
        stem = os.path.join(base, *parts) if parts else base
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if candidate in known and candidate != importer:
                return candidate
    return None


def _trl_exports(module: ast.Module) -> dict[str, tuple[str, str]]:
    """Bound name -> (trl module, name) for the top-level `from trl... import` of names TRL 1.13
    removed that a star import of `module` passes on (public, and in `__all__` when the module
    lists one), and whose import the rewrite of `module` may drop: a moved name stays bound
    there under its new import, and a written-in helper as its definition."""
    table = symbols.load()
    listed = _all(module)
    out: dict[str, tuple[str, str]] = {}
    for stmt in _top_level(module.body):
        if not isinstance(stmt, ast.ImportFrom) or stmt.level or not stmt.module:
            continue
        if stmt.module != "trl" and not stmt.module.startswith("trl."):
            continue
        for alias in stmt.names:
            bound = alias.asname or alias.name
            if alias.name == "*" or bound.startswith("_"):
                continue
            if listed is not None and bound not in listed:
                continue
            full = f"{stmt.module}.{alias.name}"
            sym = table.get(full)
            if sym is None and not table.module_gone(stmt.module):
                continue  # the same name still imports from there in TRL 1.13
            if sym is not None and sym.fate == symbols.MOVED or inline.lookup(full):
                continue  # the file keeps the name bound (a moved import, a written-in helper)
            out[bound] = (stmt.module, alias.name)
    return out


def _top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The module's statements, and those of its top-level `try` and `if` blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.Try):
            yield from _top_level(stmt.body)
        elif isinstance(stmt, ast.If):
            yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)


def _all(module: ast.Module) -> set[str] | None:
    for stmt in module.body:
        if (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
            and isinstance(stmt.value, (ast.List, ast.Tuple))
        ):
            return {e.value for e in stmt.value.elts if isinstance(e, ast.Constant)}  # type: ignore[misc]
    return None


def _read_not_bound(module: ast.Module) -> set[str]:
    """Names the module reads and binds nowhere itself (any scope: a binding anywhere may be
    what a read means, so such a name is not claimed for the star import)."""
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound


def with_passed(text: str, passed: Sequence[Passed]) -> str:
    """`text` with each star import of `passed` followed by explicit imports of the TRL names it
    passes (one line per name, in the star import's indentation, which is none)."""
    lines = text.splitlines(keepends=True)
    by_line: dict[int, list[Passed]] = {}
    for p in passed:
        by_line.setdefault(p.line, []).append(p)
    for line in sorted(by_line, reverse=True):
        end = lines[line - 1]
        newline = end[len(end.rstrip("\r\n")) :] or "\n"
        if not end.endswith(("\n", "\r")):
            lines[line - 1] = end + newline
        lines[line:line] = [p.statement() + newline for p in by_line[line]]
    return "".join(lines)


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """What one file's rules learn from the other files of the run."""

    exported: frozenset[str] = frozenset()  # module globals others import by name
    vh_readers: frozenset[str] = frozenset()  # local names of code that reads a value head
    local: frozenset[str] = frozenset()  # local names it imports from files of the run
    # its functions whose result another file hands a PPO trainer as its dataset
    builders: frozenset[str] = frozenset()
    # (name as called here, file that defines it): imported functions whose result this file
    # hands a PPO trainer as its dataset; TRL105 works on the dataset in that file
    deferred: frozenset[tuple[str, str]] = frozenset()


NO_FACTS = RunFacts()
VALUE_HEAD_MARKS = (b"v_head", b".pretrained_model")


def run_facts(files: Sequence[tuple[str, bytes]]) -> dict[str, RunFacts]:
    """`RunFacts` for each file of the run that has any (by absolute path), from one `ast`
    parse of each file (module look-up: `_Modules`):

    - `exported`: the names other files import from it by name (`from config import config`,
      `from .config import config`): a module global there is read by code its rules cannot see.
    - `local`: the names it binds by importing files of the run (code whose reads it cannot see).
    - `vh_readers`: those of them from a file whose code reads a value head (`.v_head`,
      `.pretrained_model`): a repo's own PPO trainer, which a value-head model handed to it
      still needs on TRL 1.13.
    - `builders` and `deferred`: a PPO trainer given `dataset=ds`, where `ds` was last bound to
      `build_dataset(...)` imported from another file of the run (`from dataset import
      build_dataset`, or `dataset.build_dataset(...)` after `import dataset`): the tokenizing
      TRL105 rewrites is in that file, whose `builders` names the function; the importer's
      `deferred` names the call."""
    modules = _Modules(files)
    readers = {p for p, data in modules.data.items() if any(m in data for m in VALUE_HEAD_MARKS)}
    exported: dict[str, set[str]] = {}
    local: dict[str, set[str]] = {}
    vh: dict[str, set[str]] = {}
    builders: dict[str, set[str]] = {}
    deferred: dict[str, set[tuple[str, str]]] = {}

    # names a package's `__init__.py` passes on from a reader it imports them from (`from
    # .trainer.ppo_trainer import GaudiPPOTrainer`), by package (the run's trees are read one at
    # a time below: a run over a whole environment reads thousands)
    passed_on: dict[str, set[str]] = {}
    for path, tree in modules.trees(packages=True):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                found = modules.find(path, node.module, node.level)
                if found in readers:
                    passed_on.setdefault(path, set()).update(
                        a.asname or a.name for a in node.names if a.name != "*"
                    )

    def bind(path: str, found: str, names: Iterable[str], originals: Iterable[str] = ()) -> None:
        local.setdefault(path, set()).update(names)
        if found in readers:
            vh.setdefault(path, set()).update(names)
        else:
            relayed = passed_on.get(found, set())
            vh.setdefault(path, set()).update(n for n, o in zip(names, originals) if o in relayed)

    for path, tree in modules.trees():
        functions: dict[str, tuple[str, str]] = {}  # local name -> (file, name there)
        imported: dict[str, str] = {}  # `import dataset`: local name -> file
        trainers: set[str] = set()  # how the module calls TRL's PPO trainers
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                trainers |= _ppo_trainer_names(node)
            if isinstance(node, ast.ImportFrom) and node.module:
                found = modules.find(path, node.module, node.level)
                aliases = [a for a in node.names if a.name != "*"]
                if found is not None:
                    exported.setdefault(found, set()).update(a.name for a in aliases)
                    bind(
                        path,
                        found,
                        [a.asname or a.name for a in aliases],
                        [a.name for a in aliases],
                    )
                    functions.update({a.asname or a.name: (found, a.name) for a in aliases})
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    found = modules.find(path, alias.name, 0)
                    if found is not None:
                        bind(path, found, [alias.asname or alias.name.split(".")[0]])
                        if alias.asname or "." not in alias.name:
                            imported[alias.asname or alias.name] = found
        for called, (found, name) in _dataset_builders(tree, trainers, functions, imported):
            builders.setdefault(found, set()).add(name)
            deferred.setdefault(path, set()).add((called, found))
    return {
        p: RunFacts(
            frozenset(exported.get(p, ())),
            frozenset(vh.get(p, ())),
            frozenset(local.get(p, ())),
            frozenset(builders.get(p, ())),
            frozenset(deferred.get(p, ())),
        )
        for p in {*exported, *vh, *local, *builders, *deferred}
    }


PPO_TRAINERS = frozenset({"PPOTrainer", "PPOv2Trainer"})
DATASET_KEYWORDS = ("dataset", "train_dataset", "eval_dataset")


def _dataset_builders(
    tree: ast.Module,
    trainers: set[str],
    functions: dict[str, tuple[str, str]],
    imported: dict[str, str],
) -> Iterable[tuple[str, tuple[str, str]]]:
    """(the call as written, (file, function)) for each dataset a PPO trainer of `tree` (called
    by one of `trainers`) is given whose last binding is a call of a function another file of
    the run defines (`ds = build_dataset(...)`, `ds = build_dataset(...)["train"]`)."""
    if not trainers:
        return
    last: dict[str, ast.expr] = {}
    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Assign)), key=lambda n: n.lineno
    ):
        for target in node.targets:
            if isinstance(target, ast.Name):
                last[target.id] = node.value
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _called(call.func) in trainers):
            continue
        for kw in call.keywords:
            if kw.arg not in DATASET_KEYWORDS or not isinstance(kw.value, ast.Name):
                continue
            value = last.get(kw.value.id)
            while isinstance(value, ast.Subscript):  # build_dataset(...)["train"]
                value = value.value
            if not isinstance(value, ast.Call):
                continue
            func = value.func
            if isinstance(func, ast.Name) and func.id in functions:
                yield func.id, functions[func.id]
            elif (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in imported
            ):
                yield f"{func.value.id}.{func.attr}", (imported[func.value.id], func.attr)


def _ppo_trainer_names(node: ast.Import | ast.ImportFrom) -> set[str]:
    """How an import lets the module call TRL's PPO trainers: `PPOTrainer` (or its alias)
    imported from trl, or `trl.PPOTrainer` after `import trl`; `PPOTrainer` itself after a star
    import, which may give it (`star_passes` says so for sure; the cost of a wrong guess is an
    INFO finding)."""
    if isinstance(node, ast.Import):
        if any(a.name == "trl" and not a.asname for a in node.names):
            return {f"trl.{t}" for t in PPO_TRAINERS}
        return set()
    if any(a.name == "*" for a in node.names):
        return set(PPO_TRAINERS)
    if (node.module or "").split(".")[0] == "trl":
        return {a.asname or a.name for a in node.names if a.name in PPO_TRAINERS}
    return set()


def _called(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


class _Modules:
    """The run's Python files as modules: a dotted name is found by its last parts
    (`pkg.config` -> `.../pkg/config.py`), one beside the importer first; a name several files
    could be is none of them. Relative imports go from the importer's folder."""

    def __init__(self, files: Sequence[tuple[str, bytes]]) -> None:
        self.data = {os.path.abspath(p): d for p, d in files if p.endswith(".py")}
        # notebooks import the run's modules too (they are never imported themselves)
        self.notebooks = {os.path.abspath(p): d for p, d in files if p.endswith(".ipynb")}
        self.by_key: dict[str, list[str]] = {}
        for path in self.data:
            parts = os.path.splitext(path)[0].split(os.sep)[1:]
            for i in range(len(parts)):
                self.by_key.setdefault(".".join(parts[i:]), []).append(path)
            if parts[-1] == "__init__":
                # a package, imported by its own name (`from optimum.habana.trl import X`): by
                # two parts or more, never under `trl` (TRL's own names are the symbol table's)
                package = parts[:-1]
                for i in range(len(package) - 1):
                    if package[i] != "trl":
                        self.by_key.setdefault(".".join(package[i:]), []).append(path)

    def trees(self, *, packages: bool = False):  # type: ignore[no-untyped-def]
        """(path, `ast` tree) of each file that imports anything; with `packages`, of each
        package's `__init__.py` only."""
        for path, data in [*self.data.items(), *self.notebooks.items()]:
            if b"import" not in data:
                continue
            if packages and os.path.basename(path) != "__init__.py":
                continue
            try:
                code = _notebook_code(data) if path.endswith(".ipynb") else data
                yield path, ast.parse(code)
            except (SyntaxError, ValueError, RecursionError, MemoryError, SourceError):
                continue

    def find(self, importer: str, module: str, level: int) -> str | None:
        here = os.path.dirname(importer)
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            stem = os.path.join(base, *module.split("."))
            found = [t for t in (stem + ".py", os.path.join(stem, "__init__.py")) if t in self.data]
        else:
            found = self.by_key.get(module, [])
            found = [f for f in found if os.path.dirname(f) == here] or found
        return found[0] if len(found) == 1 and found[0] != importer else None


def _notebook_code(data: bytes) -> str:
    """A notebook's code cells as one script (IPython lines become `pass`); raises SourceError
    or UnicodeDecodeError (a ValueError) for what is not a Python notebook."""
    return notebooks.runnable(data.decode("utf-8-sig")).text
