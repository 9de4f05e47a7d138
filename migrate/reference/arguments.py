"""Required command-line arguments a smoke run was not given, filled with stand-ins.

A training script that parses its own command line (argparse, HfArgumentParser, TrlParser: all
argparse underneath) stops at "the following arguments are required" when the launch line that
would give them is unknown. Here each missing one gets a value that reaches the tiny offline
stand-ins instead: model and tokenizer names -> a name the patched `from_pretrained` maps to a
tiny model, dataset names -> a name the patched `load_dataset` serves, data files -> a small
JSON-lines file, output folders -> a folder of the run, a required `--config` -> the repository's
own config file whose name matches the script's. Every filled argument is recorded
(FILLED) and shown in the report with the command line used.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

FILLED: list[str] = []  # "--flag value" pairs (and positionals) the harness added, in order
MODEL = "gpt2"  # any hub id: the smoke stand-ins map it to a tiny local model
DATASET = "trl-migrate/stand-in"  # any hub id: load_dataset serves an in-memory dataset
ROWS = [
    {
        "prompt": f"Question {i}: what is {i} plus {i}?",
        "query": f"Question {i}: what is {i} plus {i}?",
        "question": f"what is {i} plus {i}?",
        "text": f"Question {i}: what is {i} plus {i}? Answer: {2 * i}.",
        "response": f"{2 * i}",
        "answer": f"{2 * i}",
        "completion": f" {2 * i}.",
        "chosen": f"The answer is {2 * i}.",
        "rejected": "I do not know.",
        "label": i % 2,
    }
    for i in range(16)
]


class _Missing(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _data_file(kind: str) -> str:
    """A small data file of the run in the format `kind` suggests (json lines by default)."""
    folder = os.path.join(os.getcwd(), "trl-migrate-stand-in-data")
    os.makedirs(folder, exist_ok=True)
    if kind == "csv":
        path = os.path.join(folder, "data.csv")
        keys = list(ROWS[0])
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(",".join(keys) + "\n")
            for row in ROWS:
                fh.write(",".join(str(row[k]).replace(",", " ") for k in keys) + "\n")
        return path
    path = os.path.join(folder, "data.json" if kind == "json" else "data.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        if kind == "json":
            json.dump(ROWS, fh)
        else:
            fh.writelines(json.dumps(row) + "\n" for row in ROWS)
    return path


CONFIG_NAMES = ("config", "cfg", "conf", "config_file", "config_path", "yaml", "yaml_config")
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
# words of a script's name that say nothing of which config file is its
_PLAIN_WORDS = {"", "train", "training", "run", "main", "script", "py"}
_SKIPPED_FOLDERS = {".git", ".venv", "venv", "node_modules", "__pycache__", "site-packages"}


def _words(name: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", name.lower()))


def config_file(script: str, root: str) -> str | None:
    """The repository's own config file for `script` when one stands out: among the .yaml,
    .yml and .json files under `root` (three folders deep), the one whose name shares the most
    words with the script's (`rlhf/train_ppo.py` -> `configs/config_rlhf_ppo.yaml`, not
    `config_rlhf_grpo.yaml`); None when none shares a word or two tie."""
    wanted = _words(os.path.splitext(os.path.basename(script))[0]) - _PLAIN_WORDS
    if not wanted:
        return None
    scored: list[tuple[int, str]] = []
    base = os.path.abspath(root)
    for folder, dirs, files in os.walk(base):
        depth = os.path.relpath(folder, base).count(os.sep) + (folder != base)
        dirs[:] = sorted(
            d
            for d in dirs
            if depth < 3 and d not in _SKIPPED_FOLDERS and not d.startswith(("trl-migrate", "."))
        )
        for name in sorted(files):
            if name.endswith(CONFIG_SUFFIXES):
                score = len(wanted & _words(os.path.splitext(name)[0]))
                if score:
                    scored.append((score, os.path.join(folder, name)))
    if not scored:
        return None
    best = max(score for score, _ in scored)
    top = [path for score, path in scored if score == best]
    return top[0] if len(top) == 1 else None


def value_for(action: Any) -> str:
    """A stand-in value for one argparse action, from its choices, type and name."""
    if action.choices:
        return str(next(iter(action.choices)))
    name = (action.dest or "").lower()
    if name in CONFIG_NAMES and sys.argv and sys.argv[0]:
        # where the run stands, then the project's import roots (harness.PATHS_ENV)
        roots = os.environ.get("TRL_MIGRATE_SMOKE_PATHS", "").split(os.pathsep)
        for root in [os.getcwd(), *(r for r in roots if r)]:
            found = config_file(sys.argv[0], root)
            if found is not None:
                return found
    kind = getattr(action, "type", None)
    if kind is int or any(w in name for w in ("num_", "steps", "epochs", "size", "count")):
        return "1"
    if kind is float or any(w in name for w in ("rate", "lr", "coef", "beta", "ratio")):
        return "0.1"
    if any(w in name for w in ("output", "save", "log_dir", "logging_dir", "out_dir", "ckpt_dir")):
        return os.path.join(os.getcwd(), "trl-migrate-output")
    if "data" in name and any(w in name for w in ("file", "path", "dir", "json", "csv")):
        return _data_file("csv" if "csv" in name else "json" if name.endswith("json") else "jsonl")
    if "data" in name:
        return DATASET
    if any(w in name for w in ("model", "tokenizer", "checkpoint", "ckpt", "policy", "reward")):
        return MODEL
    if name.endswith(("_file", "_path")):
        return _data_file("jsonl")
    return "stand-in"


def _required(message: str) -> list[str]:
    """The names argparse lists after 'the following arguments are required: '."""
    marker = "the following arguments are required:"
    if marker not in message:
        return []
    return [n.strip() for n in message.split(marker, 1)[1].split(",") if n.strip()]


def _fill(parser: Any, names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        for action in parser._actions:  # argparse keeps them here; no public accessor
            shown = action.option_strings or [action.metavar or action.dest]
            if name in shown or name in action.option_strings or name == action.dest:
                value = value_for(action)
                if action.option_strings:
                    long = max(action.option_strings, key=len)
                    count = action.nargs if isinstance(action.nargs, int) else 1
                    out += [long, *([value] * count)] if action.nargs != 0 else [long]
                else:
                    out.append(value)
                break
    return out


def _record(extra: list[str]) -> None:
    FILLED.extend(extra)
    print(
        "[trl-migrate smoke] required arguments not given, filled with stand-ins: "
        + " ".join(extra),
        file=sys.stderr,
    )


def patch_argparse() -> None:
    """Make every ArgumentParser fill the required arguments it was not given (once per parse)
    and record them in FILLED."""
    import argparse

    original = argparse.ArgumentParser.parse_known_args

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        argv = list(sys.argv[1:] if args is None else args)
        error = self.error

        def raise_missing(message: str) -> None:
            if _required(message):
                raise _Missing(message)
            error(message)

        self.error = raise_missing
        try:
            return original(self, argv, namespace)
        except _Missing as e:
            extra = _fill(self, _required(e.message))
            if not extra:
                error(e.message)
            _record(extra)
        finally:
            self.error = error
        return original(self, [*argv, *extra], namespace)

    argparse.ArgumentParser.parse_known_args = parse_known_args  # type: ignore[method-assign]


class _Param:
    """An argparse-action-shaped view of one function parameter, for value_for."""

    def __init__(self, name: str, annotation: Any) -> None:
        self.dest, self.choices, self.type = (
            name,
            None,
            annotation if annotation in (int, float) else None,
        )


def fire_fill(component: Any, argv: list[str]) -> list[str]:
    """`--name value` for each parameter of `component` (a function) without a default that
    `argv` does not give, by flag or by position."""
    import inspect

    if not callable(component) or inspect.isclass(component):
        return []
    try:
        params = list(inspect.signature(component).parameters.values())
    except (TypeError, ValueError):
        return []
    flags = {a.lstrip("-").split("=")[0].replace("-", "_") for a in argv if a.startswith("--")}
    positional = 0
    skip = False
    for a in argv:  # values of flags are not positionals
        if skip:
            skip = False
            continue
        if a.startswith("--"):
            skip = "=" not in a
            continue
        positional += 1
    out: list[str] = []
    for i, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        if p.name in flags or (i < positional and p.kind != p.KEYWORD_ONLY):
            continue
        out += [f"--{p.name}", value_for(_Param(p.name, p.annotation))]
    return out


def patch_fire(fire: Any) -> None:
    """`fire.Fire(main)`: required parameters of `main` that the command line lacks are filled
    (and recorded) before fire parses it."""
    original = fire.Fire

    def Fire(component=None, command=None, name=None, serialize=None):  # type: ignore[no-untyped-def]  # noqa: N802
        argv = list(sys.argv[1:] if command is None else command)
        if isinstance(command, str):
            import shlex

            argv = shlex.split(command)
        extra = fire_fill(component, argv)
        if extra:
            _record(extra)
        return original(component, [*argv, *extra], name, serialize)

    fire.Fire = Fire
