"""`upgrade_path`: fix the code, fix the pins, and smoke-train the migrated entry points; the
entry points are the rewritten scripts that train when run."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from codemods.base import Options
from migrate.api.config_files import (
    CLI_CHANGED,
    change_finding,
    declares,
    launch_configs,
    with_local_imports,
)
from migrate.api.fix import DIFF, WRITE, FixReport, fix_paths
from migrate.kernel.findings import FileResult, Fix, Status


@dataclasses.dataclass
class UpgradeReport:
    """`upgrade`: the fix report, the compat report, one smoke result per migrated entry point."""

    path: str
    fix: FixReport
    compat: Any = None  # compat.api.CompatReport, or None when it could not run
    compat_error: str = ""
    smokes: list[Any] = dataclasses.field(default_factory=list)  # migrate.smoke.SmokeResult
    smoke_note: str = ""  # why no script was smoke-run, when none was
    entry_points: list[Any] = dataclasses.field(default_factory=list)  # smoke.EntryPoint
    unreached: list[Any] = dataclasses.field(default_factory=list)  # smoke.NoEntryPoint
    launches: list[FileResult] = dataclasses.field(default_factory=list)  # flags of launch lines
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 nothing left for a human; 1 TODOs, pins or smoke failures need one; 2 something could
        not run."""
        codes = [
            self.fix.exit_code,
            2 if self.compat_error else self.compat.exit_code if self.compat else 0,
        ]
        codes += [s.exit_code for s in self.smokes if s.outcome != "skipped"]
        codes += [2 if r.status is Status.FAILED else 1 for r in self.launches if r.needs_human]
        codes += [2 for r in self.launches if r.status is Status.FAILED]
        return 2 if 2 in codes else 1 if 1 in codes else 0

    @property
    def launch_todos(self) -> int:
        """Flags of launch lines left for a human (no new spelling, or not written in)."""
        return sum(f.fix is Fix.MANUAL for r in self.launches for f in r.findings)

    def results(self) -> list[FileResult]:
        """Every file's findings from all three stages; a smoked script carries its smoke
        findings."""
        fixed = {r.path: r for r in self.fix.reported()}
        for smoke in self.smokes:
            own = smoke.file_result()
            base = fixed.get(smoke.path)
            fixed[smoke.path] = (
                own
                if base is None
                else dataclasses.replace(base, findings=base.findings + own.findings)
            )
        for launch in self.launches:
            base = fixed.get(launch.path)
            fixed[launch.path] = (
                launch
                if base is None
                else dataclasses.replace(base, findings=base.findings + launch.findings)
            )
        compat = list(self.compat.results) if self.compat else []
        return sorted(fixed.values(), key=lambda r: r.path) + compat

    def summary(self) -> dict[str, object]:
        from migrate.render import summarize

        out = summarize(self.results(), exit_code=self.exit_code)
        out["seconds"] = round(self.seconds, 3)
        out["smoked"] = {
            s.outcome: sum(x.outcome == s.outcome for x in self.smokes) for s in self.smokes
        }
        return out

    def to_json_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"fix": self.fix.summary()}
        if self.compat is not None:
            extra.update(self.compat.to_json_extra())
        extra["entry_points"] = [e.to_json() for e in self.entry_points]
        extra["unreached"] = [dataclasses.asdict(u) for u in self.unreached]
        extra["smoke"] = [s.to_json() for s in self.smokes]
        if self.smoke_note:
            extra["smoke_note"] = self.smoke_note
        return extra


def entry_points(path: str, results: Sequence[FileResult]) -> tuple[list[Any], list[Any]]:
    """The entry points that prove the files `fix` rewrote under `path` (migrate.smoke.
    entry_points.find: scripts and notebooks that run, with the repo's own launch lines, and
    the scripts that import a rewritten library module), and the rewritten files none reaches."""
    from migrate.smoke.entry_points import find, project_root

    changed = [r for r in results if r.status is Status.CHANGED]
    sources = {r.path: r.new or b"" for r in changed}
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    if not os.path.isdir(path):  # one file: it is the only candidate, its project the root
        found, missing = find(project_root(path), sources, list(sources), files=list(sources))
    else:
        found, missing = find(folder, sources, list(sources))
    return found, missing


def launch_flags(
    path: str, entries: list[Any], results: Sequence[FileResult], target: str, *, write: bool
) -> tuple[list[Any], list[FileResult]]:
    """Launch lines of the repo that pass a rewritten script's PPO config flags which the new
    config spells differently (`--num_ppo_epochs` -> `--num_iterations`) or lacks
    (`--total_episodes`), or transformers flags TRL108 renames (`--evaluation_strategy`,
    `--warmup_ratio`) to a script that parses flags into dataclasses. Each gets a finding at
    the launch line; in shell scripts, with `write`,
    the renamed flags are written in and each flag with no new spelling gets a TODO comment above
    the command (the file is rewritten whole, or left as it was). Flags that change nothing
    under the new config (`--local_rollout_forward_batch_size`, `--stop_token eos`) leave the
    line, as the rewrite drops the same keywords. The entry points come back with the new
    spelling, so the smoke run tries the launch line as it now reads, less the flags with no new
    spelling (`left_out`: the smoke run says the real launch stops on them). A script's own
    usage string (a launch line in its docstring) gets findings here for the transformers
    flags only: the rewrite's TODO on it names the PPO ones."""
    from codemods import launch_flags as flags
    from codemods.base import todo_comment
    from migrate.kernel.files import atomic_write
    from migrate.smoke.entry_points import project_root
    from migrate.smoke.launchers import SHELL_SUFFIXES

    parsed = {  # rewritten scripts that parse their flags into dataclasses
        os.path.abspath(r.path): r.new.decode("utf-8", "replace")
        for r in results
        if r.status is Status.CHANGED
        and r.new is not None
        and (b"HfArgumentParser(" in r.new or b"TrlParser(" in r.new)
    }
    changed = {  # ... whose PPO config was replaced
        os.path.abspath(r.path)
        for r in results
        if os.path.abspath(r.path) in parsed and any(CLI_CHANGED in f.message for f in r.findings)
    }
    root = project_root(path)
    out_entries: list[Any] = []
    by_file: dict[str, list[tuple[int, list[Any]]]] = {}
    for entry in entries:
        script = os.path.abspath(entry.path)
        found = []
        if entry.launch and script in parsed:
            text = parsed[script]
            own = with_local_imports(script, text, root)
            if script in changed:
                found = flags.changes(entry.args, target, partial(declares, own))
            found += flags.drift_changes(entry.args, partial(declares, own), text)
        if not found:
            out_entries.append(entry)
            continue
        source, _, line = entry.found_in.rpartition(":")
        # a script's own usage string: the rewrite's TODO on it names the PPO flags already
        said = [c for c in found if c.code != "TRL103"] if source.endswith(".py") else found
        if said:
            by_file.setdefault(source, []).append((int(line), said))
        kept, left_out = flags.left_out(flags.renamed(entry.args, found), found)
        out_entries.append(dataclasses.replace(entry, args=tuple(kept), left_out=tuple(left_out)))
    launches: list[FileResult] = []
    for source, lines in sorted(by_file.items()):
        full = os.path.join(root, source)
        shell = source.endswith(SHELL_SUFFIXES)
        try:
            original = open(full, "rb").read()  # noqa: SIM115 - read once, compared on write
            text = original.decode()
        except (OSError, UnicodeDecodeError) as e:
            launches.append(FileResult(full, Status.FAILED, message=f"{full}: {e}"))
            continue
        edit = write and shell
        findings = []
        physical = text.splitlines(keepends=True)
        todos: dict[int, list[tuple[str, str]]] = {}  # line -> (rule, TODO text)
        for line, found in lines:
            end = line
            while end <= len(physical) and physical[end - 1].rstrip("\r\n").endswith("\\"):
                end += 1
            for change in found:
                rewrite: Callable[[str], str] | None = None  # what each physical line becomes
                if change.drop and change.code == "TRL103":  # as the rewrite drops the keyword
                    message = f"`{change.flag}` has no {change.owner} flag: {change.why}" + (
                        ", so it was removed" if edit else ": remove it from this line"
                    )
                    rewrite = partial(_without, flag=change.flag)
                elif change.drop:
                    message = (
                        f"`{change.flag}` is not a flag of {change.owner} any more "
                        f"({change.why}); it changed nothing in training"
                    ) + (", so it was removed" if edit else ": remove it from this line")
                    rewrite = partial(_without, flag=change.flag)
                elif change.new and change.value:  # a switch: `--group_by_length [True]`
                    given = f"{change.flag} {change.was}".strip()
                    message = (f"`{given}` is `{change.new} {change.value}` now ({change.why})") + (
                        " (written in)" if edit else ": change it on this line"
                    )
                    rewrite = partial(
                        flags.with_switch, flag=change.flag, new=change.new, value=change.value
                    )
                elif change.value:
                    message = (
                        f"`{change.flag} {change.was}` is `{change.flag} {change.value}` now "
                        f"({change.why})"
                    ) + (" (written in)" if edit else ": change it on this line")
                    rewrite = partial(
                        flags.with_value, flag=change.flag, old=change.was, new=change.value
                    )
                elif change.new:
                    message = (
                        f"`{change.flag}` is `{change.new}` for the rewritten script's config"
                        if change.code == "TRL103"
                        else f"`{change.flag}` is `{change.new}` now ({change.why})"
                    ) + (" (written in)" if edit else ": change it on this line")
                    rewrite = partial(_swap_flag, old=change.flag, new=change.new)
                else:
                    message = (
                        f"`{change.flag}` is not a flag of the rewritten script's config: "
                        f"{change.why}"
                    )
                    todos.setdefault(line, []).append(
                        (change.code, f"`{change.flag}`: {change.why}")
                    )
                if edit and rewrite is not None:
                    for i in range(line - 1, min(end, len(physical))):
                        physical[i] = rewrite(physical[i])
                    _end_command(physical, line - 1, min(end, len(physical)))
                findings.append(change_finding(change, full, line, message, done=edit))
        status = Status.UNCHANGED
        if edit:
            for line in sorted(todos, reverse=True):
                indent = physical[line - 1][
                    : len(physical[line - 1]) - len(physical[line - 1].lstrip())
                ]
                physical[line - 1 : line - 1] = [
                    f"{indent}{todo_comment(code, m)}\n" for code, m in todos[line]
                ]
            new = "".join(physical).encode()
            if new != original:
                try:
                    atomic_write(full, new, expected=original)
                    status = Status.CHANGED
                except OSError as e:
                    launches.append(
                        FileResult(full, Status.FAILED, findings, message=f"{full}: {e}")
                    )
                    continue
        launches.append(FileResult(full, status, findings))
    return out_entries, launches


def _without(line: str, flag: str) -> str:
    """A physical line of a shell script without `flag` (and its value); a continuation line
    that held nothing else goes whole."""
    from codemods import launch_flags as flags

    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    kept = flags.without_flag(body, flag)
    if kept == body:
        return line
    if kept.strip() in ("", "\\"):
        return ""
    return kept + ending


def _end_command(physical: list[str], start: int, end: int) -> None:
    """After lines of a command went whole (a continuation line that held only a removed flag),
    the last line left must not end in a backslash: it would join the next command to this."""
    left = [i for i in range(start, end) if physical[i]]
    if not left or left[-1] == end - 1:
        return
    last = physical[left[-1]]
    body = last.rstrip("\r\n")
    if body.rstrip().endswith("\\"):
        physical[left[-1]] = body.rstrip()[:-1].rstrip() + last[len(body) :]


def _swap_flag(line: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w-]){re.escape(old)}(?=[\s=\\]|$)", new, line)


def upgrade_path(
    path: str,
    *,
    options: Options = Options(),
    dry_run: bool = False,
    smoke: bool = True,
    steps: int = 2,
    timeout: float = 300.0,
    installed: bool = True,
    jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
    python: str | None = None,
) -> UpgradeReport:
    """`fix` (writing; with `dry_run`, a diff only), then `compat` on `path` and the environment
    (pins fixed in place unless `dry_run`), then `smoke` of every entry point that runs
    rewritten code (with the interpreter `python`, default: this one).

    Never raises for a user's file or script: every problem is a finding in the report.
    """
    started = time.perf_counter()
    say = progress or (lambda message: None)
    say(f"fix: rewriting {path}" if not dry_run else f"fix --diff: {path}")
    report = UpgradeReport(
        path, fix_paths([path], mode=DIFF if dry_run else WRITE, options=options, jobs=jobs)
    )
    say("compat: checking pins and the environment")
    try:
        from compat.api import check_path
        from compat.resolve import resolver

        # The fixed pins are proven to resolve when a resolver is installed (`uv`); without
        # one, nothing is said here: `compat --resolve` says why it cannot run.
        report.compat = check_path(
            path, installed=installed, fix=not dry_run, resolve=resolver() is not None
        )
    except Exception as e:  # noqa: BLE001 - a compat failure is reported; the smoke stage still runs
        report.compat_error = f"{type(e).__name__}: {e}"
    report.entry_points, report.unreached = entry_points(path, report.fix.results)
    report.entry_points, report.launches = launch_flags(
        path, report.entry_points, report.fix.results, options.target, write=not dry_run
    )
    report.entry_points, configs = launch_configs(
        path, report.entry_points, report.fix.results, options.target, write=not dry_run
    )
    report.launches += configs
    scripts = report.entry_points
    if dry_run or not smoke:
        report.smoke_note = "dry run: nothing was written or run" if dry_run else "--no-smoke"
    elif not scripts:
        report.smoke_note = (
            "no entry point runs the rewritten code (a __main__ guard, a top-level .train(), "
            "a notebook, or a launch line of the repo, running it or a script that imports it)"
        )
    else:
        from migrate import smoke as smoking
        from migrate.api.hints import explain
        from migrate.smoke.entry_points import project_root

        missing = smoking.missing_packages() if python is None else []
        changed = [r for r in report.fix.results if r.status is Status.CHANGED]
        rewritten = frozenset(os.path.abspath(r.path) for r in changed)
        before = {os.path.abspath(r.path): r.old for r in changed if r.old is not None}
        root = project_root(path)
        for entry in scripts:
            if missing:
                report.smokes.append(
                    smoking.skipped(entry.path, missing, steps=steps, timeout=timeout)
                )
                continue
            say(f"smoke: {entry.path} ({entry.found_in})")
            report.smokes.append(
                explain(
                    smoking.smoke_script(
                        entry.path,
                        list(entry.args),
                        steps=steps,
                        timeout=timeout,
                        root=root,
                        cwd=entry.cwd or None,
                        module=entry.module,
                        entry=entry,
                        rewritten=rewritten,
                        before=before,
                        python=python,
                    )
                )
            )
    report.seconds = time.perf_counter() - started
    return report
