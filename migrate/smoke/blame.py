"""Whose a smoke run's stop is, where that is not the rewrite's: a name the repository's code
never binds, a module this machine or the repository lacks, a copy of TRL the repository holds,
an argument or environment variable no one gave, a stop before any line the rewrite changed had
run. Each check gives the words `outcome.judge` adds to the finding, and the finding then lists
no TODO of the file (they are not why it stopped); "" where the check cannot tell."""

from __future__ import annotations

import ast
import os
import re
from typing import Any

from migrate.smoke.result import SmokeResult, read_text

OWN_CODE = "the repository's own code, not the rewrite"  # a stop the rewrite did not make
# The training stack: a module of these that fails to import is TRL 1.13's environment (or
# the rewrite's business), never "not installed".
STACK = frozenset({"trl", "transformers", "accelerate", "peft", "datasets", "torch"})
MISSING_KEY = re.compile(r"""^(['"])(\w[\w.-]*)\1$""")  # KeyError's message: the key, quoted


def not_the_rewrite(result: SmokeResult, err: dict[str, Any]) -> str:
    """Why the script stopped, where the stop is known not to be the rewrite's (or is known to
    be, as a bug of ours): the first check that tells."""
    return (
        _unbound_name(result, err)
        or _on_a_stand_in(result, err)
        or _needs_argv(result, err)
        or _needs_environment(err)
        or _module_lacks(result, err)
        or _data_disagrees(result, err)
        or _pandas_strings(err)
        or _before_the_rewrite(result, err)
    )


# how datasets says two data files of one load hold other columns (JSON lines, JSON arrays)
_DISAGREE = re.compile(
    r"CastError: .*column names don't match|ArrowInvalid: Schema at index \d+ was different"
)


def _data_disagrees(result: SmokeResult, err: dict[str, Any]) -> str:
    """`load_dataset("json", data_files=[...])` of the repository's own files that do not share
    their columns (Jerry-XDL/AIDoctor mixes instruction/output rows with conversation rows):
    datasets cannot read them as one table. Stand-in rows never raise this, so the files are
    the repository's; said only where the stopping line is the original's."""
    cause = str(err.get("cause") or "")
    if err.get("exception") != "DatasetGenerationError" or not _DISAGREE.match(cause):
        return ""
    source = str(err.get("source") or "").strip()
    original = _original_text(result)
    if not source or original is None or source not in original:
        return ""
    return (
        "; the repository's data files do not share their columns, so datasets cannot read them "
        "as one table (the line that loads them is the original's): the repository's own data, "
        "not the rewrite"
    )


_UNALIGNED = re.compile(r"features can't be aligned .*expected either Value\('large_string'\)")


def _pandas_strings(err: dict[str, Any]) -> str:
    """`concatenate_datasets` of a `Dataset.from_pandas(...)` and a `.map(...)`'s rows under
    pandas 3, whose text columns datasets types `large_string` where `map` gives `string`
    (NhatHoang2002/CZ4042-minRLHF, written for pandas 2.0): the environment, not the rewrite."""
    if err.get("exception") != "ValueError" or not _UNALIGNED.search(str(err.get("message"))):
        return ""
    return (
        "; pandas 3 (what a fresh install brings) makes `Dataset.from_pandas` "
        "text columns `large_string`, which datasets cannot align with the `string` columns "
        "other datasets have: the repository's code was written for pandas 2 (`pip install "
        "'pandas<3'` runs it as written, or cast the columns): not the rewrite"
    )


_NOT_DEFINED = re.compile(r"^name '(\w+)' is not defined")


def _unbound_name(result: SmokeResult, err: dict[str, Any]) -> str:
    """What a NameError raised in the script, or in a file of its project, says of the code: a
    name that file (and its original, before the rewrite) binds nowhere (williamfowler's
    CS138_RLAIF_PPO_vs_DPO uses `tqdm` without importing it; Kwaai-AI-Lab's dataset.py reads
    an `args` it never defines), or a notebook that binds it only in a cell below the one that
    stopped (kir77ki/NLP imports torch a cell after it uses it: its cells ran in another order
    where they were written). A name the original binds and the rewritten script does not is the
    rewrite's doing, and said so. "" otherwise, or where a `*` import may bind anything."""
    found = _NOT_DEFINED.match(str(err.get("message") or ""))
    ran = result.ran or result.path
    raised = str(err.get("raised_in") or "").rpartition(":")[0]
    if err.get("exception") != "NameError" or found is None or not raised:
        return ""
    name = found.group(1)
    in_script = os.path.realpath(raised) == os.path.realpath(ran)
    other = None if in_script else result.original(raised)
    if not in_script and (other is None or result.rewritten is None):
        return ""  # raised outside the project, or where what the rewrite touched is not known
    folder = os.path.dirname(raised)
    lines = _binding_lines(read_text(raised), name, folder=folder, read=read_text)
    if lines is None:
        return ""
    notebook = in_script and ran.endswith(".smoke.py")
    what = "notebook" if notebook else "script" if in_script else "file"
    if not lines:
        original: str
        if other is not None:  # a file of the project the script went through (Kwaai-AI-Lab)
            what = f"file {result.shown(other)}"
            before = result.before.get(os.path.abspath(other))
            if before is not None:
                original = before.decode("utf-8", "replace")
            elif os.path.abspath(other) in (result.rewritten or ()):
                return ""  # rewritten, and what it held before is not known
            else:
                original = read_text(raised)
        else:  # what the script held before the rewrite, or holds (not rewritten, not known)
            original = _original_text(result) or ""
        bound_before = _binding_lines(
            original, name, folder=folder, read=lambda path: _before_text(result, path)
        )
        if bound_before is None:
            return ""  # a `*` import there may have bound it
        if bound_before:
            return (
                f"; the original {what} binds `{name}` and the rewritten one does not: the "
                "rewrite dropped it, a bug of trl-migrate (please report it)"
            )
        return f"; the {what} imports or defines `{name}` nowhere: {OWN_CODE}"
    stop = int(err.get("line") or 0)
    if notebook and stop and min(lines) > stop and _cell_starts(result, stop, min(lines)):
        return (
            f"; the notebook binds `{name}` first at script line {min(lines)}, a cell below the "
            f"one that stopped (its cells ran in another order where it was written): {OWN_CODE}"
        )
    return ""


def import_not_ours(result: SmokeResult, err: dict[str, Any]) -> str:
    """Why an import failed when neither TRL 1.13 nor the rewrite is at fault: a module not
    installed here that the training stack does not hold (omegaconf, gymnasium); a module of
    the repository that does not import from where the script runs (`from utils import x` in a
    subfolder's file), or that lacks the name imported from it in a file the rewrite did not
    touch; a copy of TRL the repository holds, which the script imports in place of TRL 1.13.
    "" otherwise (the TODO that names the import says the rest)."""
    base = result.copy or result.root
    message = str(err.get("message") or "")
    vendored = _vendored(base, err)
    if vendored:
        return (
            f"; the repository holds its own copy of `{vendored}` ({vendored}/ at its root), "
            f"which the script imports in place of the installed one: remove that copy to run "
            f"on TRL 1.13: {OWN_CODE}"
        )
    missing = re.match(r"No module named '([\w.]+)'", message)
    if err.get("exception") == "ModuleNotFoundError" and missing:
        name = missing.group(1)
        top = name.split(".")[0]
        if top in STACK:
            return ""
        found = _project_module(base, top) if base else ""
        if found and "." in name:
            return (
                f"; `{top}` is the repository's own package ({found}) and has no `{name}`: "
                f"{OWN_CODE}"
            )
        if found:
            return (
                f"; `{top}` is a module of the repository ({found}) that does not import from "
                f"where the script runs: {OWN_CODE}"
            )
        return (
            f"; `{top}` is not installed here and is not part of the training stack: install it "
            "(the smoke run stands in only for the modules docs/smoke.md lists, and only where "
            "the project's own files import them)"
        )
    named = re.match(r"cannot import name '(\w+)' from '([\w.]+)' \((.+)\)$", message)
    if named and base and result.rewritten is not None:
        name, module, path = named.groups()
        original = result.original(path)
        if original is not None and os.path.abspath(original) not in result.rewritten:
            return (
                f"; `{module}` is the repository's own ({result.shown(original)}), a file the "
                f"rewrite did not touch, and defines no `{name}`: {OWN_CODE}"
            )
    return ""


def _vendored(base: str, err: dict[str, Any]) -> str:
    """The training-stack package (`trl`) of the repository's own, at its root, that the failed
    import went through (its frames lie in `<root>/trl/`)."""
    if not base:
        return ""
    frames = [str(err.get("raised_in") or ""), *(err.get("project_frames") or [])]
    for frame in frames:
        path = frame.rpartition(":")[0]
        if not path:
            continue
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
        top = rel.split(os.sep)[0]
        if top in STACK and rel != top:
            return top
    return ""


def _project_module(base: str, top: str) -> str:
    """Where the repository at `base` holds a module or package named `top` (`utils.py`,
    `helpers/utils/`), relative to it; "" when it holds none."""
    skip = {".git", ".venv", "venv", "node_modules", "__pycache__", "site-packages"}
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("."))
        if f"{top}.py" in files:
            return os.path.relpath(os.path.join(folder, f"{top}.py"), base)
        if top in dirs:
            return os.path.relpath(os.path.join(folder, top), base) + "/"
    return ""


def _before_the_rewrite(result: SmokeResult, err: dict[str, Any]) -> str:
    """A stop before any line the rewrite changed had run: every frame of the script lies above
    the first changed line, and so does the end of the top-level statement it was running (a
    loop there may have run changed lines before). CodeX-Addy's copy of a course notebook
    asserts, in its first cell, that it runs on a SageMaker instance. Only for a script the
    rewrite changed whose original is known, and a stop that went through no other file of the
    project."""
    original = _original_text(result)
    ran = result.ran or result.path
    if original is None or os.path.abspath(result.path) not in (result.rewritten or ()):
        return ""
    frames = [f.rpartition(":") for f in err.get("project_frames") or []]
    target = os.path.realpath(ran)
    if not frames or any(os.path.realpath(f[0]) != target for f in frames):
        return ""
    lines = [int(f[2]) for f in frames if f[2].isdigit()]
    text = read_text(ran)
    old_lines, new_lines = original.splitlines(), text.splitlines()
    first = next(
        (i for i, (old, new) in enumerate(zip(old_lines, new_lines), 1) if old != new),
        min(len(old_lines), len(new_lines)) + 1 if len(old_lines) != len(new_lines) else 0,
    )
    if not lines or not first:
        return ""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return ""
    outer = lines[0]  # the module's own frame: the statement it was running
    running = [n for n in body if n.lineno <= outer <= (n.end_lineno or n.lineno)]
    last = max([*lines, *((n.end_lineno or n.lineno) for n in running)])
    if last >= first:
        return ""
    # a notebook's script lines are named as such, for Runnable.locate to give their cell
    at = f"at script line {first}" if ran.endswith(".smoke.py") else f"line {first}"
    return (
        f"; it stopped before any line the rewrite changed had run (the first is {at}): the "
        "rewrite is not why it stopped"
    )


def _needs_environment(err: dict[str, Any]) -> str:
    """`os.environ["NOISY_LM_DIR"]` of a variable this machine does not set (sayands/noisy-lms):
    the environment the repository runs in, which no stand-in can guess."""
    key = MISSING_KEY.match(str(err.get("message") or ""))
    source = str(err.get("source") or "")
    if err.get("exception") != "KeyError" or key is None or "environ[" not in source:
        return ""
    return (
        f"; the script reads the environment variable `{key.group(2)}`, which is not set here: "
        f"set it for the run (`{key.group(2)}=... trl-migrate smoke ...`)"
    )


_MODULE_ATTRIBUTE = re.compile(r"^module '([\w.]+)' has no attribute '(\w+)'")


def _module_lacks(result: SmokeResult, err: dict[str, Any]) -> str:
    """`module 'utils' has no attribute 'create_balanced_subset_and_validation'` where `utils` is
    a module of the repository that the rewrite did not touch (kmc0207/ppo-prompt): its own
    code, not the rewrite."""
    found = _MODULE_ATTRIBUTE.match(str(err.get("message") or ""))
    base = result.copy or result.root
    if err.get("exception") != "AttributeError" or found is None or not base:
        return ""
    if result.rewritten is None:
        return ""
    module, name = found.groups()
    path = _module_file(base, module)
    original = result.original(path) if path else None
    if original is None:
        return ""
    shown = result.shown(original)
    if os.path.abspath(original) not in result.rewritten:
        return (
            f"; `{module}` is the repository's own ({shown}), a file the rewrite did not touch, "
            f"and has no `{name}`: {OWN_CODE}"
        )
    before = result.before.get(os.path.abspath(original))
    if before is None:
        return ""
    if _binding_lines(before.decode("utf-8", "replace"), name) == []:
        return (
            f"; `{module}` is the repository's own ({shown}), and had no `{name}` before the "
            f"rewrite either: {OWN_CODE}"
        )
    if _binding_lines(read_text(path), name) == []:
        return (
            f"; `{module}` ({shown}) had `{name}` before the rewrite and has it no more: the "
            "rewrite dropped it, a bug of trl-migrate (please report it)"
        )
    return ""


def _module_file(base: str, module: str) -> str:
    """The file of the repository at `base` that holds dotted `module` (`pkg/mod.py`,
    `pkg/mod/__init__.py`), searched from the root and from each folder holding its top part."""
    found = _project_module(base, module.split(".")[0])
    if not found:
        return ""
    top = os.path.join(base, found.rstrip("/"))
    folder = os.path.dirname(top)
    rel = module.replace(".", os.sep)
    for candidate in (rel + ".py", os.path.join(rel, "__init__.py")):
        path = os.path.join(folder, candidate)
        if os.path.isfile(path):
            return path
    return ""


def _on_a_stand_in(result: SmokeResult, err: dict[str, Any]) -> str:
    """A line of the script that uses what it imported from a module the run stood in for (not
    installed here) and failed there: the no-op stand-in cannot give what the real module
    would (jakq277/STATS_FINAL unpacks `train, test = train_test_split(data)`, which the stand-in
    for sklearn answers with nothing to unpack). Only where the error was raised on the script's
    own line, not inside a library."""
    modules = [s for s in result.stand_ins if not s.startswith(("data ", "checkpoint "))]
    ran = result.ran or result.path
    raised = str(err.get("raised_in") or "").rpartition(":")[0]
    if not modules or not raised or os.path.realpath(raised) != os.path.realpath(ran):
        return ""
    try:
        tree = ast.parse(read_text(ran))
    except (SyntaxError, ValueError):
        return ""
    names: dict[str, str] = {}  # a name the script binds by importing -> the stood-in module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            owner = _stood_in(node.module, modules)
            for alias in node.names:
                if owner and alias.name != "*":
                    names[alias.asname or alias.name] = owner
        elif isinstance(node, ast.Import):
            for alias in node.names:
                owner = _stood_in(alias.name, modules)
                if owner:
                    names[alias.asname or alias.name.split(".")[0]] = owner
    try:
        source = ast.parse(str(err.get("source") or "").strip())
    except (SyntaxError, ValueError):
        return ""  # a line of a longer statement: not read
    used = {n.id for n in ast.walk(source) if isinstance(n, ast.Name)}
    hit = sorted(used & set(names))
    if not hit:
        return ""
    module = names[hit[0]]
    return (
        f"; `{hit[0]}` comes from the stand-in for `{module}` (not installed here), which "
        f"cannot give what the real module would: install `{module}` to run past this line"
    )


def _stood_in(module: str, modules: list[str]) -> str:
    """The stood-in module `module` is, or is a submodule of; "" for none."""
    return next((m for m in modules if module == m or module.startswith(m + ".")), "")


_ARGV = re.compile(r"\bsys\.argv\[(-?\d+)")


def _needs_argv(result: SmokeResult, err: dict[str, Any]) -> str:
    """A script that reads its command line by hand (`section = sys.argv[1]`, rmorain's
    general_sentiment_tuning.py) and was run without it: neither the rewrite nor TRL 1.13 is at
    fault, and no stand-in can guess the value."""
    read = _ARGV.search(str(err.get("source") or ""))
    if err.get("exception") != "IndexError" or read is None:
        return ""
    return (
        f"; the script reads its command line by hand (`sys.argv[{read.group(1)}]`), and the run "
        f"gave it {len(result.args)} argument{'' if len(result.args) == 1 else 's'}: pass them "
        "after `--` (or `--from-launcher` the script that runs it)"
    )


def _binding_lines(
    text: str,
    name: str,
    *,
    folder: str = "",
    read: Any = None,
    seen: frozenset[str] = frozenset(),
) -> list[int] | None:
    """The lines where `text` binds `name` (an import, an assignment, a `def`, a `for`, a
    parameter, ...); None where it does not parse or a `*` import may bind it. Given the
    `folder` the text's module lives in and a `read(path)` of the project's files, a `from
    helpers import *` of a project module that binds `name` nowhere is followed, not taken for
    a binding (Kwaai-AI-Lab's dataset.py star-imports modules.py, which never defines `args`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                star = _star_module(node, folder) if read is not None else ""
                if not star or star in seen:
                    return None
                held = read(star)
                if held is None:  # rewritten, and what it held before is not known
                    return None
                inner = _binding_lines(held, name, folder=folder, read=read, seen=seen | {star})
                if inner is None:
                    return None
                if inner:
                    lines.append(node.lineno)
                continue
            bound = [alias.asname or alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.Name):
            bound = [node.id] if isinstance(node.ctx, (ast.Store, ast.Del)) else []
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound = list(node.names)
        else:  # def, class, parameter, `except E as name`, a `case` capture
            one = getattr(node, "arg" if isinstance(node, ast.arg) else "name", None)
            bound = [one] if isinstance(one, str) and not isinstance(node, ast.alias) else []
        if name in bound:
            lines.append(getattr(node, "lineno", 0))
    return lines


def _before_text(result: SmokeResult, path: str) -> str | None:
    """What the project file at `path` (of the run's copy) held before the rewrite: as it is
    where the rewrite did not touch it; None where it did and what it held is not known."""
    original = os.path.abspath(result.original(path) or path)
    before = result.before.get(original)
    if before is not None:
        return before.decode("utf-8", "replace")
    return None if original in (result.rewritten or ()) else read_text(path)


def _star_module(node: ast.AST, folder: str) -> str:
    """The project file a `from X import *` reads, where X lies in `folder` (the script's own
    folder, first on its path; a relative import from there); "" for anything else."""
    if not isinstance(node, ast.ImportFrom) or not node.module or not folder:
        return ""
    base = folder
    for _ in range(max(node.level - 1, 0)):
        base = os.path.dirname(base)
    path = os.path.join(base, *node.module.split("."))
    for candidate in (path + ".py", os.path.join(path, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return ""


def _original_text(result: SmokeResult) -> str | None:
    """The script (a notebook's cells as one script) as it was before the rewrite: the file as
    it is when the rewrite did not touch it; None when not known."""
    if result.rewritten is None:
        return None
    path = os.path.abspath(result.path)
    if path not in result.rewritten:
        text = read_text(result.path)
    elif path in result.before:
        text = result.before[path].decode("utf-8", "replace")
    else:
        return None
    if not path.endswith(".ipynb"):
        return text
    from migrate.kernel.files import SourceError
    from migrate.kernel.notebooks import runnable

    try:
        return runnable(text).text
    except SourceError:
        return None


def _cell_starts(result: SmokeResult, after: int, upto: int) -> bool:
    """Whether a cell of the notebook that ran begins after script line `after`, by `upto`."""
    from migrate.kernel.files import SourceError
    from migrate.kernel.notebooks import runnable

    try:
        starts = runnable(read_text(result.path)).starts
    except SourceError:
        return False
    return any(after < start <= upto for start in starts)
