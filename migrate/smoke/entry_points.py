"""Which files of a repository prove its migration when run: the entry points.

An entry point is a file a user runs (a `__main__` guard, top-level training, a notebook, or a
file one of the repo's own launch lines runs) that was rewritten or imports a rewritten module
of the repo. A rewritten library module is proven through the entry points that import it
(directly or through up to three modules, or six for a file a launch line of the repo runs);
one that none reaches is reported with the reason.
Reading only (`ast` and the launch lines); nothing runs here.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import re
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence

from migrate.kernel.imports import imported_modules
from migrate.smoke.launchers import (
    NOT_PROJECT_DIRS,
    Launch,
    is_launcher_file,
    module_file,
    read_launches,
    usage_launches,
)

PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
MAX_DEPTH = 3  # import hops from an entry point to the rewritten module it proves
# ... and from a file one of the repo's launch lines runs: a CLI reaches its library through a
# command registry and the package's __init__ modules (BITnene465/shaft: five)
LAUNCH_DEPTH = 6


@dataclasses.dataclass(frozen=True)
class EntryPoint:
    """A file to smoke-run, with how the repository runs it."""

    path: str  # as the user reads it (the same spelling as the fix report)
    found_in: str  # "run_ppo.sh:4", "__main__ guard", "top-level .train()", "notebook"
    args: tuple[str, ...] = ()
    cwd: str = ""  # absolute folder it runs from ('' = the project root)
    launch: str = ""  # the launch line as written, one line
    module: str = ""  # run as `python -m module`
    via: tuple[str, ...] = ()  # rewritten modules of the repo it imports (and so proves)
    also: tuple[str, ...] = ()  # other launch lines that run it ("file:line")
    unresolved: tuple[str, ...] = ()  # launch arguments dropped (a variable with no value)
    # flags of the launch line the rewritten config lacks ("--total_episodes 1000"): each has a
    # TODO; the smoke run goes on without them and says the real launch stops on them
    left_out: tuple[str, ...] = ()
    # keys of a config file the launch line hands it (path from the project root, key) that
    # the rewritten script's parser no longer takes: each has a TODO; the smoke run leaves them
    # out of its copy of the file and says the real launch stops on them
    config_left_out: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()
        }


@dataclasses.dataclass(frozen=True)
class NoEntryPoint:
    path: str
    why: str


def project_root(path: str, within: str | None = None) -> str:
    """The nearest folder at or above `path` with a project marker (.git, pyproject.toml,
    setup.py, setup.cfg); else `within` where it holds `path` (the folder a user runs from: a
    copy of a repository without `.git`, fixed one file at a time as `fix src/ppo.py`), else
    `path`'s own folder (or `path`, a folder)."""
    start = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    current = start
    while True:
        if any(os.path.exists(os.path.join(current, m)) for m in PROJECT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if within is not None:
        top = os.path.abspath(within)
        if os.path.commonpath([start, top]) == top:
            return top
    return start


def runs_training(source: bytes | str) -> str:
    """How a file runs when executed: "__main__ guard", "top-level .train()", "top-level
    trainer" (a `...Trainer(...)` built outside any function: a script whose PPO loop the
    rewrite left for a human still builds it), "top-level PPO loop" (`.step(...)` in a loop
    outside any function), "top-level main()" or "top-level train_...()" (a call of the
    script's own or its package's training function, outside any function), or ''."""
    try:
        tree: ast.Module | None = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = _parse_by_statement(source)
    if tree is None:
        return ""
    found = ""
    todo: list[tuple[ast.AST, bool]] = [(node, False) for node in tree.body]
    while todo:
        node, in_loop = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and _is_main_test(node.test):
            return "__main__ guard"
        if isinstance(node, ast.Call):
            name = _called(node.func)
            if name == "train" and isinstance(node.func, ast.Attribute):
                return "top-level .train()"
            if name.endswith("Trainer"):
                found = found or "top-level trainer"
            elif name == "step" and in_loop and isinstance(node.func, ast.Attribute):
                found = found or "top-level PPO loop"
            elif name == "main" or name.startswith("train_"):
                # `main()` with no guard, `rl.train_and_save(...)` of the repo's own package
                found = found or f"top-level {name}()"
        loop = in_loop or isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        todo.extend((child, loop) for child in ast.iter_child_nodes(node))
    return found


def _parse_by_statement(source: bytes | str) -> ast.Module | None:
    """The top-level statements of a file this interpreter cannot parse whole but libcst can
    (syntax of a newer Python: an f-string reusing its quotes is 3.12's), each parsed alone,
    those this interpreter cannot parse left out. Such a file is still an entry point: its run
    then stops on the SyntaxError, with the advice to run a newer Python (ivanluk914's
    notebook was reported as having none)."""
    import libcst as cst

    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    try:
        module = cst.parse_module(text)
    except Exception:  # noqa: BLE001 - not Python for libcst either
        return None
    body: list[ast.stmt] = []
    for stmt in module.body:
        try:
            body.extend(ast.parse(module.code_for_node(stmt).strip() + "\n").body)
        except (SyntaxError, ValueError):
            continue
    return ast.Module(body=body, type_ignores=[])


def _called(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _is_main_test(test: ast.expr) -> bool:
    text = ast.unparse(test)
    return "__name__" in text and "__main__" in text


def module_names(path: str, root: str) -> list[str]:
    """Dotted names `path` imports as, from `root` and from `root/src`."""
    names = []
    rel_path = os.path.abspath(path)
    for base in (root, os.path.join(root, "src")):
        rel = os.path.relpath(rel_path, base)
        if rel.startswith(".."):
            continue
        parts = rel[: -len(".py")].split(os.sep) if rel.endswith(".py") else []
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            names.append(".".join(parts))
    return names


def imports_of(path: str, source: bytes | str, root: str) -> set[str]:
    """Absolute paths of the repo's own files that `path` imports (absolute imports from the
    root, `src/` or the file's folder, and relative imports)."""
    if path.endswith(".ipynb"):
        source = _notebook_text(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return _project_files(tree, path, root)


@functools.cache
def nested_projects(root: str, depth: int = 3) -> tuple[str, ...]:
    """Folders below `root` (relative, sorted) that hold a project of their own (a setup.py,
    setup.cfg or pyproject.toml): their packages import as after `pip install -e <folder>`,
    which is how a repo uses them (PrasannS/rlhf-length-biases: `rlhfutils/setup.py` holds the
    `rlhfutils` package the scripts import)."""
    found: list[str] = []
    top = os.path.abspath(root)  # cached per root; find() and reached() walk it afresh
    for folder, dirs, files in os.walk(top):
        rel = os.path.relpath(folder, top)
        level = 0 if rel == "." else rel.count(os.sep) + 1
        dirs[:] = sorted(
            d for d in dirs if level < depth and not d.startswith(".") and d not in NOT_PROJECT_DIRS
        )
        if level and {"setup.py", "setup.cfg", "pyproject.toml"} & set(files):
            found.append(rel)
    return tuple(found)


def _project_files(tree: ast.AST, path: str, root: str) -> set[str]:
    """The repo's own files the parsed `tree` of `path` imports (see imports_of)."""
    folder = os.path.dirname(os.path.abspath(path))
    nested = [os.path.join(root, rel, src) for rel in nested_projects(root) for src in ("", "src")]
    bases = (root, os.path.join(root, "src"), folder, *nested)
    wanted: list[tuple[str, ...]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [(b, a.name) for a in node.names for b in bases if not _stdlib(a.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = folder
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
                mod = node.module or ""
                wanted += [(base, f"{mod}.{a.name}" if mod else a.name) for a in node.names]
                if mod:
                    wanted.append((base, mod))
            elif node.module and not _stdlib(node.module):
                wanted += [(b, node.module) for b in bases]
                wanted += [(b, f"{node.module}.{a.name}") for a in node.names for b in bases]
    # Importing a.b.c runs a/__init__.py and a/b/__init__.py first.
    wanted += [
        (base, ".".join(name.split(".")[:i]))
        for base, name in wanted
        for i in range(1, name.count(".") + 1)
    ]
    out: set[str] = set()
    for base, name in wanted:
        parts = name.split(".")
        for candidate in (
            os.path.join(base, *parts) + ".py",
            os.path.join(base, *parts, "__init__.py"),
        ):
            if os.path.isfile(candidate):
                out.add(os.path.normpath(candidate))
    return out


def find(
    root: str,
    sources: Mapping[str, bytes],
    rewritten: Sequence[str],
    *,
    files: Iterable[str] | None = None,
) -> tuple[list[EntryPoint], list[NoEntryPoint]]:
    """The entry points that prove the `rewritten` files (user spellings, keys of `sources`
    with their new text), and the rewritten files none reaches, with why.

    `files`: every .py, .ipynb and launcher file under `root` (default: walked, honouring
    .gitignore); `sources` overrides the text of any of them.
    """
    from migrate.kernel.discovery import walk

    nested_projects.cache_clear()  # the tree as it is now
    listed = list(files) if files is not None else list(walk(root, match=_interesting))
    root = os.path.abspath(root)
    spelled = {os.path.abspath(p): p for p in [*listed, *sources]}
    text: dict[str, bytes] = {}

    def read(path: str) -> bytes:
        if path not in text:
            user = spelled.get(path, path)
            if user in sources:
                text[path] = sources[user]
            else:
                try:
                    with open(path, "rb") as fh:
                        text[path] = fh.read()
                except OSError:
                    text[path] = b""
        return text[path]

    pys = sorted(p for p in spelled if p.endswith((".py", ".ipynb")))
    importers: dict[str, set[str]] = {}
    for py in pys:
        for dep in imports_of(py, read(py), root):
            importers.setdefault(dep, set()).add(py)
    launches = _launches(root, [p for p in spelled if is_launcher_file(p)])
    by_script: dict[str, list[Launch]] = {}
    for launch in launches:
        target = launch.script or module_file(launch.module, launch.cwd or root)
        if target:
            by_script.setdefault(os.path.abspath(target), []).append(launch)

    for target, listed_launches in list(by_script.items()):
        listed_launches.sort(key=_ppo_first)
        # a PPO script's launch lines that pick another of its modes (`--train-using sft`) do
        # not run its PPO code: not a way to prove it (its own guard still is)
        if any(_other_mode(launch) for launch in listed_launches) and _PPO.search(read(target)):
            kept = [launch for launch in listed_launches if not _other_mode(launch)]
            if kept:
                by_script[target] = kept
            else:
                del by_script[target]

    ran: dict[str, str] = {}  # path -> how it runs: each file is parsed for it once

    def how_run(path: str) -> str:
        if path not in ran:
            if path in by_script:
                ran[path] = _where(by_script[path][0], root)
            elif path.endswith(".ipynb"):
                ran[path] = "notebook" if _notebook_trains(read(path)) else ""
            else:
                ran[path] = runs_training(read(path)) if path.endswith(".py") else ""
        return ran[path]

    found: dict[str, set[str]] = {}  # entry point -> rewritten modules it proves
    missing: list[NoEntryPoint] = []
    for user in rewritten:
        path = os.path.abspath(user)
        if how_run(path):
            # runnable by its own guard, and the repo's launch lines run a file that imports it
            # (README: `python scripts/run_ppo.py`, which calls `src/trainer_ppo.py`'s
            # `train_ppo()`): proven both ways
            launched = (
                []
                if path in by_script
                else [
                    p
                    for p in _importers_that_run(path, importers, how_run, by_script)
                    if p in by_script
                ]
            )
            for entry in launched:
                found.setdefault(entry, set()).add(path)
            found.setdefault(path, set())
            continue
        reached = _importers_that_run(path, importers, how_run, by_script)
        if reached:
            for entry in reached:
                found.setdefault(entry, set()).add(path)
            continue
        direct = sorted(spelled.get(p, p) for p in importers.get(path, ()))
        missing.append(NoEntryPoint(user, _why_none(direct)))
    entries = []
    for path in sorted(found, key=lambda p: spelled.get(p, p)):
        via = tuple(sorted(spelled.get(p, p) for p in found[path]))
        # no launch line of the repo runs it: the usage string it carries says how it is run
        own = (
            []
            if path in by_script or not path.endswith(".py")
            else usage_launches(path, read(path), root)
        )
        made = _entry(spelled.get(path, path), root, by_script.get(path, own), how_run(path), via)
        if not made.module and not made.launch and path.endswith(".py"):
            made = _as_module(made, path, read(path), root)
        entries.append(made)
    return entries, missing


def _as_module(entry: EntryPoint, path: str, source: bytes, root: str) -> EntryPoint:
    """A module of a package that imports its siblings relatively (`from . import config`) runs
    only as `python -m pkg.mod` (by path it raises "attempted relative import with no known
    parent package"): so it is run, from the root, as the user must
    (stephendongg/rlhf-clinical-redteaming: `src/cli.py`)."""
    tree = _parse_by_statement(source)
    if tree is None or not any(
        isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree)
    ):
        return entry
    names = module_names(path, root)
    if not names or not os.path.isfile(os.path.join(os.path.dirname(path), "__init__.py")):
        return entry
    # under a `src/` that is no package itself, the package starts below it (`pkg.cli`)
    src_layout = len(names) > 1 and not os.path.isfile(os.path.join(root, "src", "__init__.py"))
    return dataclasses.replace(entry, module=names[-1] if src_layout else names[0])


def _interesting(path: str) -> bool:
    return path.endswith((".py", ".ipynb")) or is_launcher_file(path)


def _stdlib(module: str) -> bool:
    """A standard-library module always wins over a repo file of the same name (`time.py`)."""
    return module.split(".")[0] in sys.stdlib_module_names


def _notebook_text(source: bytes | str) -> str:
    """The code cells of a notebook as one script ('' when it cannot be read)."""
    from migrate.kernel import notebooks
    from migrate.kernel.files import SourceError

    try:
        raw = source.decode("utf-8") if isinstance(source, bytes) else source
        return notebooks.runnable(raw).text
    except (UnicodeDecodeError, SourceError, ValueError):
        return ""


def _notebook_trains(source: bytes) -> bool:
    return bool(runs_training(_notebook_text(source)))


def _launches(root: str, paths: Iterable[str]) -> list[Launch]:
    """Every launch line of the repo: shell scripts first, then Makefiles, then docs, each
    group in path order."""

    def rank(path: str) -> tuple[int, str]:
        name = os.path.basename(path)
        kind = 0 if name.endswith((".sh", ".bash")) else 1 if "akefile" in name else 2
        return kind, path

    out: list[Launch] = []
    seen: set[tuple[str, int]] = set()
    for path in sorted((os.path.abspath(p) for p in paths), key=rank):
        for launch in read_launches(path, root):
            # A README's `bash run.sh` yields run.sh's own lines again: each line once.
            if (launch.source, launch.line) not in seen:
                seen.add((launch.source, launch.line))
                out.append(launch)
    return out


def _importers_that_run(  # type: ignore[no-untyped-def]
    path: str, importers: Mapping[str, set[str]], how_run, launched: Collection[str] = ()
) -> list[str]:
    """Runnable files that import `path` within MAX_DEPTH hops, the nearest ones; and the files
    a launch line of the repo runs (`launched`) that import it within LAUNCH_DEPTH hops, nearer
    runnable files or not: the way the repo says to run it."""
    seen = {path}
    frontier = [path]
    nearest: list[str] = []
    runs: list[str] = []
    for depth in range(LAUNCH_DEPTH):
        nxt = []
        level: list[str] = []
        for module in frontier:
            for importer in sorted(importers.get(module, ())):
                if importer in seen:
                    continue
                seen.add(importer)
                nxt.append(importer)
                if how_run(importer):
                    level.append(importer)
        if level and not nearest and depth < MAX_DEPTH:
            nearest = level
        runs += [p for p in level if p in launched and p not in nearest]
        frontier = nxt
    return nearest + runs


def _why_none(importers: list[str]) -> str:
    if importers:
        shown = ", ".join(importers[:3]) + (" ..." if len(importers) > 3 else "")
        return (
            f"no entry point reaches it: imported by {shown}, none of which runs (no __main__ "
            "guard, no top-level .train(), no launch line of the repo)"
        )
    return (
        "no entry point reaches it: nothing in the repo imports it, it has no __main__ guard or "
        "top-level .train(), and no launch line of the repo runs it"
    )


# the modes a multi-algorithm script is launched in besides PPO (`--train-using sft`,
# `--mode dpo`, `algo=reward`)
OTHER_MODES = frozenset(
    {"sft", "dpo", "kto", "orpo", "cpo", "simpo", "reward", "rm", "distill", "pretrain", "pt"}
)
_PPO = re.compile(rb"PPO|ppo")


# the flags (by a word of their name) that pick a multi-algorithm script's mode
_MODE_FLAGS = frozenset(
    {"mode", "stage", "using", "type", "algo", "algorithm", "method", "trainer", "task"}
)


def _mode_flag(flag: str) -> bool:
    """`--train-using`, `--stage`, `--rl_algo`: a word of the flag's name is a mode word."""
    return bool(_MODE_FLAGS & set(re.split(r"[^a-z0-9]+", flag)))


def _other_mode(launch: Launch) -> bool:
    """The line sets one of OTHER_MODES as a mode: the value of a mode flag (`--train-using
    sft`, `--stage=dpo`) or a bare word (`cli.py train dpo`); or names a config file for one
    (`qwen3_lora_sft.yaml`); and names no RL trainer anywhere. A path or model id that happens
    to read `sft` (`--sft_model_path sft`) is neither."""
    args = [a.lower() for a in launch.args]
    if any(
        w == "rl" or any(t in w for t in ("ppo", "rloo", "grpo"))
        for a in args
        for w in re.split(r"[^a-z0-9]+", a)
    ):
        return False
    modes: list[str] = []
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if eq and flag.startswith("-"):
            modes += [value] if _mode_flag(flag) else []
        elif not arg.startswith("-"):
            before = args[i - 1] if i else ""
            if not before.startswith("-") or _mode_flag(before):
                modes.append(arg)
    configs = {
        w
        for a in args
        if a.endswith((".yaml", ".yml", ".json"))
        for w in re.split(r"[^a-z0-9]+", os.path.basename(a))
    }
    return bool(OTHER_MODES & {*modes, *configs})


def _ppo_first(launch: Launch) -> int:
    """The order a file's launch lines are tried in (a stable sort keeps the repo's own order
    within each rank): the lines that name PPO, then those that train, then the rest. A CLI's
    docs run `aligntune info` before `aligntune train ... --type ppo`."""
    words = launch.text.lower()
    return 0 if "ppo" in words else 1 if "train" in words or "rl" in words.split() else 2


def _where(launch: Launch, root: str) -> str:
    return f"{os.path.relpath(launch.source, root)}:{launch.line}"


def _entry(
    user: str, root: str, launches: list[Launch], how: str, via: tuple[str, ...]
) -> EntryPoint:
    if not launches:
        return EntryPoint(user, how, via=via)
    first = launches[0]
    return EntryPoint(
        user,
        _where(first, root),
        args=first.args,
        cwd=first.cwd,
        launch=first.text,
        module=first.module,
        via=via,
        also=tuple(_where(launch, root) for launch in launches[1:]),
        unresolved=first.unresolved,
    )


def from_launcher(launcher: str, script: str | None = None) -> EntryPoint:
    """The entry point a launch file (`run_ppo.sh`, a Makefile, a README) runs: its first
    Python launch line, or the first that runs `script`. ValueError, naming the file, when it
    has none."""
    if not os.path.isfile(launcher):
        raise ValueError(f"{launcher}: no such file")
    root = project_root(launcher)
    launches = read_launches(launcher, root)
    wanted = os.path.abspath(script) if script else None
    for launch in launches:
        target = launch.script or module_file(launch.module, launch.cwd or root)
        if not target or (wanted and os.path.abspath(target) != wanted):
            continue
        shown = os.path.relpath(target) if not os.path.relpath(target).startswith("..") else target
        return _entry(shown, root, [launch], "", ())
    what = f" that runs {script}" if script else ""
    raise ValueError(
        f"{launcher}: no Python launch line{what} (python X.py, python -m pkg.mod, accelerate "
        "launch, deepspeed, torchrun)"
    )


@dataclasses.dataclass(frozen=True)
class Reached:
    """What the files a script runs (it, and the project files it imports) name: modules it
    imports, and string keys it reads (`example["instruction"]`), sorted."""

    imports: tuple[str, ...]
    keys: tuple[str, ...]


# Keys of tokenized rows and trainer batches: never a column of the text data a script loads.
_NOT_COLUMNS = frozenset(
    {"input_ids", "attention_mask", "token_type_ids", "labels", "position_ids", "pixel_values"}
)


def reached(script: str, root: str, *, limit: int = 200) -> Reached:
    """Every module name imported by `script` and by the project files it imports, transitively
    (at most `limit` files): what the smoke run may need stand-ins for; and the identifier-like
    string keys those files read by subscript: the columns stand-in rows should carry."""
    nested_projects.cache_clear()  # the tree as it is now
    seen: set[str] = set()
    todo = [os.path.abspath(script)]
    names: set[str] = set()
    keys: set[str] = set()
    while todo and len(seen) < limit:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            with open(path, "rb") as fh:
                source = fh.read()
        except OSError:
            continue
        if path.endswith(".ipynb"):
            source = _notebook_text(source).encode()
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        names |= imported_modules(tree)
        keys |= _read_keys(tree)
        todo += sorted(_project_files(tree, path, root) - seen)
    return Reached(tuple(sorted(names)), tuple(sorted(keys - _NOT_COLUMNS)))


def _read_keys(tree: ast.AST) -> set[str]:
    """The identifier-like string keys `tree` reads by subscript: `row["query"]`, a name bound
    to one string in the file (`src_col = "prompt_cs_generation"`, then `row[src_col]`), and
    the items of a list of them (`df[[src_col, "counterspeech"]]`, sahajps/coarl-counterspeech)."""
    strings: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            strings.setdefault(node.targets[0].id, set()).add(node.value.value)

    def key(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and len(strings.get(node.id, ())) == 1:
            return list(strings[node.id])
        return []

    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
            continue
        items = node.slice.elts if isinstance(node.slice, (ast.List, ast.Tuple)) else [node.slice]
        # a column may hold hyphens (vrizz/rlhf reads `row["new-instruction"]`)
        found |= {k for item in items for k in key(item) if k.replace("-", "_").isidentifier()}
    return found
