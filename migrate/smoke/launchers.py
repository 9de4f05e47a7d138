"""The launch lines a repository itself uses: `python X.py ...`, `python -m pkg.mod ...`,
`accelerate launch`, `deepspeed`, `torchrun`, and the console scripts the repo's own package
declares (`rlaif-train --config x.yml`, from `[project.scripts]` of pyproject.toml, setup.cfg or
setup.py), read from shell scripts, Makefiles and the code fences of README/docs files, with `cd`,
line continuations and simple `VAR=value` expansion followed. Reading only: nothing here runs
anything.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import functools
import itertools
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

SHELL_SUFFIXES = (".sh", ".bash")
DOC_SUFFIXES = (".md", ".rst", ".txt")
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
FENCE_LANGS = frozenset({"", "bash", "sh", "shell", "console", "zsh", "shell-session", "text"})
# Launchers whose own options come before the script; the script is their first `.py` argument
# (or `-m module`).
WRAPPERS = frozenset({"accelerate", "deepspeed", "torchrun", "nohup", "time", "srun", "exec"})
PYTHON = re.compile(r"^(.*/)?python(\d(\.\d+)?)?$")
VARIABLE = re.compile(r"\$\{(\w+)(:-([^}]*))?\}|\$(\w+)")
ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_]\w*)=(.*)$")
CONTROL = frozenset({"&&", "||", ";", "|", "&", ">", ">>", "2>&1", "1>", "2>", "<"})
# Values a README leaves for the reader to fill: `<your-model>`, `...`, `[MODEL]`, `YOUR_PATH`.
PLACEHOLDER = re.compile(r"^(<[^>]*>|\.\.\.|\[[A-Z_]+\]|(YOUR|PATH_TO|path_to)_\w*)$|<[^>]+>")
HELP = frozenset({"-h", "--help", "--version"})
SUBSTITUTION = "\x00"  # marks a word that is a command substitution (`_command`)
# Python's own options that take a value (`python -W ignore x.py`).
PY_VALUED = frozenset({"-W", "-X", "-c"})


@dataclasses.dataclass(frozen=True)
class Launch:
    """One command line that runs a Python file or module."""

    source: str  # the file the line is in
    line: int  # 1-based line of the command's first line
    text: str  # the command as one line (continuations joined)
    script: str  # the file it runs, absolute, as written relative to `cwd` ('' for a module)
    module: str  # `python -m` module (`pkg.mod:func` for a console script), else ''
    args: tuple[str, ...]  # the script's own arguments, variables expanded
    cwd: str  # absolute folder the command runs from
    unresolved: tuple[str, ...] = ()  # arguments dropped: they held a variable with no value

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined."""
    buf: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not buf:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith("\\"):
            buf.append(stripped[:-1])
            continue
        buf.append(stripped)
        yield start, " ".join(part.strip() for part in buf)
        buf = []
    if buf:
        yield start, " ".join(part.strip() for part in buf)


def _doc_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines inside shell-like code fences, a leading `$ ` prompt taken off. A fence of another
    language (```mermaid, ```python) is skipped whole: its closing fence opens nothing."""
    fenced = shell = False
    lines = text.splitlines()
    body: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, 1):
        fence = FENCE.match(raw)
        if fence:
            if fenced and shell:
                joined = "\n".join(line for _, line in body)
                first = body[0][0] if body else number
                for offset, line in _logical_lines(joined):
                    yield first + offset - 1, line
                body = []
            fenced = not fenced
            shell = fenced and fence.group(2).lower() in FENCE_LANGS
            continue
        if shell:
            body.append((number, re.sub(r"^\s*[$>]\s+", "", raw)))


def _make_lines(text: str) -> Iterator[tuple[int, str]]:
    """Recipe lines (tab-indented), their `@`/`-` prefixes taken off."""
    raw = text.splitlines()
    for number, line in _logical_lines(text):
        if raw[number - 1].startswith(("\t", "    ")):
            yield number, line.strip().lstrip("@-").strip()


def _expand(token: str, env: dict[str, str]) -> tuple[str, bool]:
    """`token` with $VAR / ${VAR} / ${VAR:-default} replaced; False when one had no value."""
    ok = True

    def sub(m: re.Match[str]) -> str:
        nonlocal ok
        name = m.group(1) or m.group(4)
        if name in env:
            return env[name]
        if m.group(2):
            return m.group(3) or ""
        ok = False
        return m.group(0)

    return VARIABLE.sub(sub, token), ok


def _split(line: str) -> list[str] | None:
    try:
        return shlex.split(line, comments=True, posix=True)
    except ValueError:
        return None


def _command(tokens: list[str]) -> list[str]:
    """The first simple command of `tokens`: up to the first `&&`, `;`, `|`, redirection. A
    command substitution (`$(...)`, backquotes) is one word, whatever its tokens hold (the shell
    runs it when the line runs; `SUBSTITUTION` marks it)."""
    out: list[str] = []
    depth = 0  # open `$(` of a substitution being gathered
    quoted = False  # inside a backquoted one
    for token in tokens:
        if depth or quoted:
            out[-1] += " " + token
        elif "$(" in token or "`" in token:
            out.append(SUBSTITUTION + token)
        elif token in CONTROL or token.startswith((">", "2>", "1>")):
            break
        else:
            out.append(token)
            continue
        depth = max(depth + token.count("(") - token.count(")"), 0)
        quoted = quoted != bool(token.count("`") % 2)
    return out


def parse_command(
    tokens: Sequence[str],
    *,
    cwd: str,
    base: str,
    env: dict[str, str],
    scripts: Mapping[str, str] | None = None,
) -> tuple[str, str, list[str], list[str], str] | None:
    """(script, module, args, unresolved, folder it runs from) when `tokens` run Python code,
    else None. `script` is resolved against `cwd`, then the launcher's folder `base` (a script
    found there is taken to run from there). `scripts`: the repo's console scripts (name ->
    `pkg.mod:func`), which run that function (module `pkg.mod:func`)."""
    words = list(tokens)
    while words and (ASSIGN.match(words[0]) or words[0] in ("env", "sudo")):
        words.pop(0)
    if not words:
        return None
    head = os.path.basename(words[0])
    expanded: list[tuple[str, bool]] = [_expand(w, env) for w in words[1:]]
    i = 0
    script = module = ""
    if scripts and words[0] in scripts:
        module = scripts[words[0]]
    elif not (PYTHON.match(words[0]) or head in WRAPPERS):
        return None
    while i < len(expanded) and not module:
        word, ok = expanded[i]
        if word == "-m" and i + 1 < len(expanded) and PYTHON.match(words[0]):
            module = expanded[i + 1][0]
            i += 2
            break
        if word.endswith(".py") and ok:
            script = word
            i += 1
            break
        if word in PY_VALUED:
            i += 1
        i += 1
    if not (script or module):
        return None
    if any(w in HELP for w, _ in expanded[i:]):  # `python x.py --help` shows usage, trains nothing
        return None
    args: list[str] = []
    unresolved: list[str] = []
    rest = expanded[i:]
    j = 0
    while j < len(rest):
        word, ok = rest[j]
        j += 1
        if word.startswith(SUBSTITUTION):
            # what a command substitution adds is known only when the line runs: left out
            raw = words[i + j][len(SUBSTITUTION) :]  # as the line spells it
            if args and args[-1].startswith("-") and "=" not in args[-1]:
                unresolved.append(args.pop())  # the flag it gives the value of
            unresolved.append(raw)
            continue
        if ok and not word and not (args and args[-1].startswith("-") and "=" not in args[-1]):
            continue  # `${DEBUG:-}` with no value: the shell passes no word for it
        ok = ok and not PLACEHOLDER.match(word)
        if ok:
            args.append(word)
        elif args and args[-1].startswith("-") and "=" not in args[-1]:
            unresolved += [args.pop(), word]
        else:
            unresolved.append(word)
    path, runs_in = "", cwd
    if script:
        for folder in (cwd, base):
            candidate = os.path.normpath(os.path.join(folder, os.path.expanduser(script)))
            if os.path.isfile(candidate):
                path, runs_in = candidate, folder
                break
        else:
            path = os.path.normpath(os.path.join(cwd, script))
    return path, module, args, unresolved, runs_in


# Folders a walk of the repo never enters: tools' and environments' own trees.
NOT_PROJECT_DIRS = frozenset(
    {"node_modules", "site-packages", "build", "dist", "venv", "env", "__pycache__", "wandb"}
)


def repo_files(root: str) -> Iterator[str]:
    """Every file of the repo at `root`, folder by folder in sorted order, outside hidden
    folders and NOT_PROJECT_DIRS."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in NOT_PROJECT_DIRS)
        for name in sorted(files):
            yield os.path.join(folder, name)


def only_file(root: str, written: str) -> str:
    """The one file of the repo at `root` whose path ends with `written` (a file name, or a
    relative path), absolute; '' when none or several do."""
    tail = os.path.normpath(written).lstrip(os.sep)
    if tail.startswith(".."):
        return ""
    matches = (os.path.abspath(p) for p in repo_files(root) if p.endswith(os.sep + tail))
    found = list(itertools.islice(matches, 2))  # a second one is enough to say "several"
    return found[0] if len(found) == 1 else ""


def sweep_parameters(script: str, root: str) -> tuple[str, dict[str, Any]]:
    """(the sweep file, its parameters' first values) when a W&B sweep file of the repo runs
    `script` (`program: sweeps/sweep.py`, from the repo root or the file's folder, as `wandb
    agent` does): `values: [a, b]` gives a, `value: x` x, a range its `min`; else ("", {})."""
    import yaml

    target = os.path.realpath(script)
    for path in repo_files(root):
        if not path.endswith((".yaml", ".yml")):
            continue
        try:
            if os.path.getsize(path) > 65536:
                continue
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            if "program:" not in text:  # not a sweep: no need to parse it
                continue
            data = yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("program"), str):
            continue
        if not isinstance(data.get("parameters"), dict):
            continue
        bases = (root, os.path.dirname(path))
        if target not in {os.path.realpath(os.path.join(b, data["program"])) for b in bases}:
            continue
        return os.path.relpath(path, root), {
            key: _first_value(spec) for key, spec in data["parameters"].items()
        }
    return "", {}


def _first_value(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    if isinstance(spec.get("values"), list) and spec["values"]:
        return spec["values"][0]
    if "value" in spec:
        return spec["value"]
    if "min" in spec:
        return spec["min"]
    if isinstance(spec.get("parameters"), dict):  # nested: a dict of its own parameters
        return {k: _first_value(v) for k, v in spec["parameters"].items()}
    return None


def _shell_script(tokens: Sequence[str], *, cwd: str, base: str) -> str:
    """The shell script `bash x.sh` / `sh x.sh` / `./x.sh` runs, when it exists, else ''."""
    words = list(tokens)
    if words and words[0] in ("bash", "sh", "zsh", "source", "."):
        words = words[1:]
    if not words or not words[0].endswith(SHELL_SUFFIXES):
        return ""
    for folder in (cwd, base):
        candidate = os.path.normpath(os.path.join(folder, words[0]))
        if os.path.isfile(candidate):
            return candidate
    return ""


def read_launches(
    path: str, root: str, *, _seen: frozenset[str] = frozenset(), _cwd: str = ""
) -> list[Launch]:
    """Every Python launch line of the file `path` (a shell script, Makefile or doc), its
    `cd` and simple variable assignments followed in order. Docs and Makefiles run from `root`;
    a shell script from `root` as well (the usual `bash scripts/run.sh`), its `cd`s applied."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return []
    name = os.path.basename(path)
    doc = False
    if name.endswith(SHELL_SUFFIXES):
        lines = _logical_lines(text)
    elif name in ("Makefile", "makefile", "GNUmakefile"):
        lines = _make_lines(text)
    else:
        lines, doc = _doc_lines(text), True
    base = os.path.dirname(os.path.abspath(path))
    cwd = _cwd or os.path.abspath(root)
    env: dict[str, str] = {}
    out: list[Launch] = []
    for number, line in lines:
        tokens = _split(line)
        if not tokens:
            continue
        first = _command(tokens)
        if not first:
            continue
        words = first[1:] if first[0] == "export" else first
        assign = ASSIGN.match(words[0]) if len(words) == 1 else None
        if assign:
            value, ok = _expand(assign.group(2), env)
            if ok:
                env[assign.group(1)] = value
            continue
        if first[0] == "cd" and len(first) == 2:
            target, ok = _expand(first[1], env)
            if ok:
                cwd = _cd(cwd, base, target, doc=doc)
            rest = tokens[len(first) :]
            if rest and rest[0] == "&&":
                first = _command(rest[1:])
            else:
                continue
        nested = _shell_script(first, cwd=cwd, base=base)
        if nested and nested not in _seen:
            # `bash run_ppo.sh` in a README: the launch lines of that script, run from here.
            out += read_launches(nested, root, _seen=_seen | {os.path.abspath(path)}, _cwd=cwd)
            continue
        parsed = parse_command(first, cwd=cwd, base=base, env=env, scripts=console_scripts(root))
        if parsed is None:
            continue
        script, module, args, unresolved, runs_in = parsed
        if doc and script and not os.path.isfile(script):
            # a README's `python PPO.py ...`, written for a reader already in the folder that
            # holds the repo's one RL/PPO/PPO.py: that file, run from its folder
            only = only_file(root, os.path.relpath(script, runs_in))
            if only:
                script, runs_in = only, os.path.dirname(only)
        out.append(
            Launch(
                source=path,
                line=number,
                text=" ".join(first),
                script=script,
                module=module,
                args=tuple(args),
                cwd=runs_in,
                unresolved=tuple(unresolved),
            )
        )
    return out


# What comes before a command on a line of a usage string: indentation, the string's opening
# quotes, a shell prompt.
_LINE_START = re.compile(r"""^\s*[rRbBuU]?("{3}|'{3}|"|')?\s*([$>]\s+)?""")


def usage_launches(path: str, source: bytes | str, root: str) -> list[Launch]:
    """The launch lines of the Python file `path` in its own usage strings: its module docstring
    and the other strings standing as statements of its module body (TRL's examples keep
    `python examples/scripts/ppo/ppo.py --flag ...` there, after the imports). Only lines that
    run this file count: by its path, or by its name where the path is not in the repo (a copy of
    TRL's `ppo.py` names TRL's path). A line runs from the repo root, or from the file's folder
    where only that makes the path it names this file."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    target = os.path.abspath(path)
    base = os.path.dirname(target)
    cwd = os.path.abspath(root)
    raw = (source.decode("utf-8", "replace") if isinstance(source, bytes) else source).splitlines()
    out: list[Launch] = []
    for stmt in tree.body:
        if not (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            continue
        at = stmt.lineno  # where the next command is looked for among the file's own lines
        for _, line in _logical_lines(stmt.value.value):
            tokens = _split(re.sub(r"^\s*[$>]\s+", "", line))
            if not tokens:
                continue
            parsed = parse_command(_command(tokens), cwd=cwd, base=base, env={})
            if parsed is None or not parsed[0]:
                continue
            script, _, args, unresolved, runs_in = parsed
            if script != target:
                if os.path.isfile(script) or os.path.basename(script) != os.path.basename(target):
                    continue
                script, runs_in = target, cwd
            head = _command(tokens)[0]  # the command starts on the next line that begins with it
            end = stmt.end_lineno or stmt.lineno
            number = next(
                (
                    n
                    for n in range(at, min(end, len(raw)) + 1)
                    if _LINE_START.sub("", raw[n - 1]).startswith(head)
                ),
                at,
            )
            at = number + 1
            out.append(
                Launch(
                    source=target,
                    line=number,
                    text=" ".join(_command(tokens)),
                    script=script,
                    module="",
                    args=tuple(args),
                    cwd=runs_in,
                    unresolved=tuple(unresolved),
                )
            )
    return out


def _cd(cwd: str, base: str, target: str, *, doc: bool = False) -> str:
    """Where `cd target` goes from `cwd`. In a doc, a folder that is not in the repo is the
    clone's own folder (`git clone .../x.git && cd x`), which is the repo root here: `cwd`. A
    shell script may make the folder before it goes there (`mkdir -p out && cd out`)."""
    for folder in (cwd, base):
        candidate = os.path.normpath(os.path.join(folder, os.path.expanduser(target)))
        if os.path.isdir(candidate):
            return candidate
    return cwd if doc else os.path.normpath(os.path.join(cwd, target))


def is_launcher_file(path: str) -> bool:
    name = os.path.basename(path)
    return (
        name.endswith(SHELL_SUFFIXES)
        or name in ("Makefile", "makefile", "GNUmakefile")
        or name.lower().endswith(DOC_SUFFIXES)
        and not name.lower().startswith(("requirements", "license", "notice"))
    )


@functools.cache
def console_scripts(root: str) -> dict[str, str]:
    """The console scripts the package at `root` declares (name -> `pkg.mod:func`): from
    pyproject.toml's `[project.scripts]` (or Poetry's), setup.cfg's `console_scripts`, or a
    literal `entry_points={"console_scripts": [...]}` in setup.py. {} when none (or unreadable:
    the repo's lines then read as other commands)."""
    import tomlkit

    out: dict[str, str] = {}
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as fh:
            data = tomlkit.parse(fh.read()).unwrap()
        for table in (
            data.get("project", {}).get("scripts", {}),
            data.get("tool", {}).get("poetry", {}).get("scripts", {}),
        ):
            out.update({k: v for k, v in table.items() if isinstance(v, str)})
    except (OSError, ValueError, AttributeError, tomlkit.exceptions.TOMLKitError):
        pass
    cfg = configparser.ConfigParser()
    try:
        cfg.read(os.path.join(root, "setup.cfg"), encoding="utf-8")
        lines = cfg.get("options.entry_points", "console_scripts", fallback="")
    except configparser.Error:
        lines = ""
    try:
        with open(os.path.join(root, "setup.py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        tree = None
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    try:
                        listed = ast.literal_eval(value)
                    except ValueError:
                        continue
                    lines += "\n" + "\n".join(listed if isinstance(listed, list) else [])
    for line in lines.splitlines():
        name, eq, target = line.partition("=")
        if eq and name.strip() and ":" in target:
            out.setdefault(name.strip(), target.split("[")[0].strip())
    return {k: v.strip() for k, v in out.items() if re.fullmatch(r"[\w.]+:[\w.]+", v.strip())}


def module_file(module: str, root: str) -> str:
    """The file `python -m module` runs from `root` (or its `src/`), '' when none is there; for
    a console script's `pkg.mod:func`, the file of `pkg.mod` (a package's `__init__.py`, where
    `-m` runs its `__main__.py`)."""
    name, colon, _ = module.partition(":")
    package_file = "__init__.py" if colon else "__main__.py"
    parts = name.split(".")
    for base in (root, os.path.join(root, "src")):
        for candidate in (
            os.path.join(base, *parts) + ".py",
            os.path.join(base, *parts, package_file),
        ):
            if os.path.isfile(candidate):
                return os.path.normpath(candidate)
    return ""
