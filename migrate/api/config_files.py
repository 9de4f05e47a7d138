"""Config files on the repo's launch lines (`python ppo_tldr.py recipes/ppo_tldr.yaml`,
`--config ppo.yaml`) of rewritten scripts that parse them into their configs: the keys get the
launch flags' changes, and a file the script parses past its `set_defaults` gets the PPO values
TRL103 put there. The file is rewritten whole and checked by loading it, or left as it was."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from collections.abc import Sequence
from functools import cache, partial
from typing import Any

from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status

CLI_CHANGED = "Command-line flags change too"  # TRL103: a parsed PPO config was replaced


def launch_configs(
    path: str, entries: list[Any], results: Sequence[FileResult], target: str, *, write: bool
) -> tuple[list[Any], list[FileResult]]:
    """The config files that launch lines of `entries` hand rewritten scripts which parse them
    (codemods.launch_configs.config_paths): a key the new config spells differently is renamed,
    one that changed nothing is removed, one with no new spelling keeps a TODO comment (YAML;
    in JSON the finding is the TODO), with a finding at each; a file the script reads with
    `parse_yaml_file`/`parse_json_file`, which builds its configs from their classes' own
    defaults, gets the values the rewrite's `set_defaults(...)` keeps for the keys it leaves
    out. With `write` the file is rewritten (checked by loading it) or left as it was. The
    entries come back with the keys a smoke run leaves out of its copy (`config_left_out`)."""
    from codemods import launch_configs as configs
    from codemods import launch_flags as flags
    from codemods.base import todo_comment
    from migrate.kernel import config_text
    from migrate.kernel.files import atomic_write
    from migrate.smoke.entry_points import project_root

    rewritten = {
        os.path.abspath(r.path): r
        for r in results
        if r.status is Status.CHANGED and r.new is not None and not r.path.endswith(".ipynb")
    }
    root = project_root(path)
    readers: dict[str, list[tuple[Any, str, bool]]] = {}  # config -> (entry, text, --config?)
    for entry in entries:
        result = rewritten.get(os.path.abspath(entry.path))
        if not entry.launch or result is None or result.new is None:
            continue
        text = result.new.decode("utf-8", "replace")
        own = with_local_imports(os.path.abspath(entry.path), text, root)
        if "HfArgumentParser" not in own and "TrlParser(" not in own:
            continue
        for given, via_flag in configs.config_paths(entry.args, own):
            full = os.path.normpath(os.path.join(entry.cwd or root, given))
            readers.setdefault(full, []).append((entry, own, via_flag))
    left: dict[int, list[tuple[str, str]]] = {}  # id(entry) -> (config, key) left out
    # the repo's launch lines, read once, when a file may get defaults
    launches = cache(partial(_all_launches, root))

    out: list[FileResult] = []
    for full, users in sorted(readers.items()):
        if not os.path.isfile(full):
            continue
        try:
            original = open(full, "rb").read()  # noqa: SIM115 - read once, compared on write
            text = original.decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            out.append(FileResult(full, Status.FAILED, message=f"{full}: {e}"))
            continue
        suffix = os.path.splitext(full)[1].lower()
        data = config_text.load(text, suffix)
        if data is None:
            continue
        entry, own, _ = users[0]
        result = rewritten[os.path.abspath(entry.path)]
        script = (result.new or b"").decode("utf-8", "replace")
        declared = partial(declares, own)
        args = configs.as_args(data)
        replaced = _replaced(result)
        changes = flags.changes(args, target, declared) if replaced else []
        changes += flags.drift_changes(args, declared, script)
        edited = configs.rewrite(text, suffix, changes, todo_comment)
        new_text = edited.text if edited.text is not None else text
        # PPO's values the rewrite keeps with `set_defaults`, which a file parser never reads:
        # only where every reader is such a script (an SFT stage reading the same file would
        # meet keys it lacks) and none hands the file to TrlParser's `--config` (which reads
        # the file over the script's `set_defaults`, so those reach)
        defaults: dict[str, Any] = {}
        if all(
            _replaced(rewritten[os.path.abspath(e.path)]) and not via_flag
            for e, _, via_flag in users
        ) and not _read_by_others(launches(), full, {os.path.abspath(e.path) for e, _, _ in users}):
            now = config_text.load(new_text, suffix) or {}
            wanted = {k: v for k, v in _kept_defaults(result).items() if k not in now}
            with_them = config_text.with_defaults(new_text, suffix, wanted, defaults_note(target))
            if with_them is not None:
                new_text, defaults = with_them, wanted
        findings = _findings(
            full, changes, edited, defaults, write=write, json_file=suffix == ".json"
        )
        rel = os.path.relpath(full, root)
        for reader, _, _ in users:
            left.setdefault(id(reader), []).extend((rel, key) for key in edited.left)
        status = Status.UNCHANGED
        if write and new_text != text:
            try:
                atomic_write(full, new_text.encode("utf-8"), expected=original)
                status = Status.CHANGED
            except OSError as err:
                out.append(FileResult(full, Status.FAILED, findings, message=f"{full}: {err}"))
                continue
        if findings:
            out.append(FileResult(full, status, findings))
    entries = [
        dataclasses.replace(e, config_left_out=tuple(left[id(e)])) if left.get(id(e)) else e
        for e in entries
    ]
    return entries, out


def defaults_note(target: str) -> str:
    """The comment above the PPO values written into a config file."""
    from codemods.ppo import target_config

    return (
        "# trl-migrate (TRL103): PPO's values for the settings this file leaves out; the "
        f"script parses this file into its configs, which start from {target_config(target)}'s "
        "own defaults"
    )


def _all_launches(root: str) -> list[Any]:
    """Every launch line of the repo's launcher files (shell scripts, Makefiles, docs)."""
    from migrate.smoke.launchers import is_launcher_file, read_launches, repo_files

    return [
        launch
        for path in repo_files(root)
        if is_launcher_file(path)
        for launch in read_launches(path, root)
    ]


def _read_by_others(launches: Sequence[Any], config: str, scripts: set[str]) -> bool:
    """Whether a launch line of the repo hands `config` to a script outside `scripts` (an SFT
    or evaluation stage reading the same recipe), which would meet the keys added for them."""
    return any(
        config in {os.path.normpath(os.path.join(launch.cwd, a)) for a in launch.args}
        and os.path.abspath(launch.script) not in scripts
        for launch in launches
    )


def _replaced(result: FileResult) -> bool:
    """Whether the rewrite replaced a parsed PPO config in this script (TRL103's finding)."""
    return any(CLI_CHANGED in f.message for f in result.findings)


def _kept_defaults(result: FileResult) -> dict[str, Any]:
    """The literal `set_defaults(...)` values the rewrite added to the script (those of the
    script as it was are its own, and reached no file parser before either)."""

    def literal_defaults(source: bytes | None) -> dict[str, Any]:
        found: dict[str, Any] = {}
        try:
            tree = ast.parse(source or b"")
        except (SyntaxError, ValueError):
            return found
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "set_defaults"
            ):
                for kw in node.keywords:
                    if kw.arg is None:
                        continue
                    try:
                        found[kw.arg] = ast.literal_eval(kw.value)
                    except ValueError:
                        continue
        return found

    before = literal_defaults(result.old)
    return {
        k: v for k, v in literal_defaults(result.new).items() if k not in before or before[k] != v
    }


def _findings(
    full: str,
    changes: Sequence[Any],
    edited: Any,
    defaults: dict[str, Any],
    *,
    write: bool,
    json_file: bool,
) -> list[Any]:
    """One finding per changed key, at its line, and one for the values written in."""
    from codemods.launch_configs import unflagged

    done = write and edited.text is not None
    findings = []
    for change in changes:
        key = change.flag[2:]
        new = change.new[2:] if change.new else ""
        line = edited.lines.get(key, 1)
        why = unflagged(change.why)
        if change.drop:
            message = (
                f"`{key}` has no {change.owner} field: {why}"
                if change.code == "TRL103"
                else f"`{key}` is not a field of {change.owner} any more ({why}); it changed "
                "nothing in training"
            ) + (", so it was removed" if done else ": remove it from this file")
        elif change.value:
            message = f"`{key}: {change.was}` is `{new or key}: {change.value}` now ({why})" + (
                " (written in)" if done else ": change it in this file"
            )
        elif new:
            message = (
                f"`{key}` is `{new}` for the rewritten script's config"
                if change.code == "TRL103"
                else f"`{key}` is `{new}` now ({why})"
            ) + (" (written in)" if done else ": change it in this file")
        else:
            message = f"`{key}` is not a field of the rewritten script's config: {why}" + (
                " (JSON holds no comment: this finding is the TODO)" if json_file else ""
            )
        findings.append(change_finding(change, full, line, message, done=done))
    if defaults:
        shown = ", ".join(f"{k}: {v!r}" for k, v in defaults.items())
        said = (
            "the rewritten script parses this file into its configs, which start from their "
            "classes' own defaults: the `set_defaults(...)` that keeps PPO's values in the "
            "script does not reach them, "
        )
        findings.append(
            Finding(
                "TRL103",
                Severity.WARNING,
                full,
                1,
                0,
                said
                + (
                    f"so they were written in ({shown})"
                    if write
                    else f"put them in this file ({shown})"
                ),
                Fix.APPLIED if write else Fix.MANUAL,
            )
        )
    return findings


def change_finding(change: Any, path: str, line: int, message: str, *, done: bool) -> Finding:
    """The finding for one launch flag or config key (codemods.launch_flags.FlagChange) at its
    line: applied where a new spelling, a removal or a new value was written in, else for a
    human."""
    fixed = bool(change.new or change.drop or change.value) and done
    return Finding(
        change.code, Severity.WARNING, path, line, 0, message, Fix.APPLIED if fixed else Fix.MANUAL
    )


def with_local_imports(script: str, text: str, root: str) -> str:
    """`text` (the script's) and that of the repo's own modules it imports, where the dataclasses
    it parses flags into may be declared (zucchini-nlp/RLHF-GPT2: `configs.TrainArguments`)."""
    from migrate.smoke.entry_points import imports_of

    parts = [text]
    for path in sorted(imports_of(script, text, root)):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                parts.append(fh.read())
        except OSError:
            continue
    return "\n".join(parts)


def declares(text: str, name: str) -> bool:
    """Whether `text` declares a dataclass field `name` (`    warmup_ratio: float = ...`): a
    flag of the script's own, which TRL108's renames leave alone."""
    return re.search(rf"(?m)^\s+{re.escape(name)}\s*:", text) is not None
