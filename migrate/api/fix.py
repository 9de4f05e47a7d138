"""`fix_paths`: discover files, run the rules (in worker processes when there are enough files to
repay the start-up), write the changed files atomically, and return a `FixReport`."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

import codemods
from codemods import inline, project, shared
from codemods.base import Options
from codemods.engine import NOT_TRL, process, scan, unified_diff
from migrate.kernel.discovery import discover, vendored_trl
from migrate.kernel.files import SourceError, atomic_write, create_file
from migrate.kernel.findings import FileResult, Finding, Fix, Severity, Status

WRITE, CHECK, DIFF = "write", "check", "diff"


# Below this many files to parse, a pool's start-up costs more than it saves.
PARALLEL_THRESHOLD = 16


@dataclasses.dataclass
class FixReport:
    results: list[FileResult]
    mode: str
    discovered: int  # files found before the prefilter
    parsed: int  # files that needed a parse
    seconds: float

    @property
    def exit_code(self) -> int:
        """0 nothing left to do; 1 changes to make or findings for a human; 2 some input failed."""
        if any(r.status is Status.FAILED for r in self.results):
            return 2
        if self.mode != WRITE and any(r.status is Status.CHANGED for r in self.results):
            return 1
        if any(r.needs_human for r in self.results):
            return 1
        return 0

    def reported(self) -> list[FileResult]:
        """The results worth listing: all but files skipped by the prefilter during a walk."""
        return [
            r for r in self.results if not (r.status is Status.SKIPPED and r.message == NOT_TRL)
        ]

    def summary(self) -> dict[str, Any]:
        from migrate.render import summarize

        out = summarize(self.reported(), discovered=self.discovered, parsed=self.parsed)
        out["skipped"] = sum(r.status is Status.SKIPPED for r in self.results)
        out["seconds"] = round(self.seconds, 3)
        out["mode"] = self.mode
        out["exit_code"] = self.exit_code
        return out


def fix_paths(
    paths: Sequence[str],
    *,
    mode: str = WRITE,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    options: Options = Options(),
    jobs: int | None = None,
    exclude: Sequence[str] = (),
    exclude_root: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FixReport:
    """Rewrite (or, with mode check/diff, only report on) every Python file under `paths`.

    Raises codemods.UnknownRuleError for a bad select/ignore entry; every per-file problem is
    a FAILED result instead.
    """
    if mode not in (WRITE, CHECK, DIFF):
        raise ValueError(f"mode must be one of write, check, diff; got {mode!r}")
    started = time.perf_counter()
    codes = tuple(r.code for r in codemods.select(select, ignore))
    candidates, missing = discover(paths, patterns=exclude, patterns_root=exclude_root)
    results = [FileResult(m.path, Status.FAILED, message=m.message) for m in missing]
    todo: list[tuple[str, bytes]] = []
    quiet: list[tuple[str, bytes]] = []  # read, and skipped unless a star import gives them TRL
    reported: set[str] = set()
    for cand in candidates:
        vendored = vendored_trl(cand.path)
        if vendored is not None:
            results.append(_vendored(cand.path, vendored, first=vendored not in reported))
            reported.add(vendored)
            continue
        done, data = scan(cand.path, cand.path, explicit=cand.explicit)
        if done is not None and done.message != NOT_TRL:
            results.append(done)
        else:
            (todo if done is None else quiet).append((cand.path, data))
    # A file that never names TRL may still get TRL names through a star import of another.
    passes = project.star_passes(todo + quiet) if "TRL101" in codes else {}
    facts = project.run_facts(todo + quiet)
    for path, data in quiet:
        full = os.path.abspath(path)
        # a file that builds the dataset another file hands a PPO trainer: TRL105 works there
        built = "TRL105" in codes and full in facts and facts[full].builders
        if full in passes or built:
            todo.append((path, data))
        else:
            results.append(FileResult(path, Status.SKIPPED, message=NOT_TRL))
    declared: dict[str, Options] = {}
    if options.trl_releases is None:
        ppo_files = [p for p, data in todo if _RELEASE_DEPENDENT.search(data)]
        declared = declared_trl(paths, ppo_files, options) if ppo_files else {}
    work = partial(
        _process_one,
        codes=codes,
        options=options,
        want_diff=mode == DIFF,
        passes=passes,
        facts=facts,
        declared=declared,
    )
    results.extend(_run(work, todo, jobs, progress))
    results, fallbacks = _share_helpers(
        results, dict(todo + quiet), work, jobs, want_diff=mode == DIFF
    )
    if mode == WRITE:
        results = _write_all(results, fallbacks)
    else:
        results = [_as_available(r) for r in results]
    results.sort(key=lambda r: r.path)
    return FixReport(results, mode, len(candidates), len(todo), time.perf_counter() - started)


# a file that builds or parses a PPO config, or an SFT, DPO or Reward config: their defaults
# depend on the TRL release it ran on
_RELEASE_DEPENDENT = re.compile(rb"PPO(?:v2)?Config|SFTConfig|DPOConfig|RewardConfig")


def declared_trl(
    paths: Sequence[str], files: Sequence[str], options: Options
) -> dict[str, Options]:
    """For each of `files` (absolute path) whose project declares TRL releases, `options` with
    them: the requirement files of the nearest folder, from the file's own up to the project's
    root, that declare a `trl` version (compat.declared.nearest), when one project holds all of
    `paths` (without a project marker, the folder `fix` runs from, where it holds them: `fix
    src/ppo.py` reads the same requirements.txt as `fix .`)."""
    from migrate.smoke.entry_points import project_root

    roots = {project_root(p, within=os.getcwd()) for p in paths}
    if len(roots) != 1:
        return {}
    root = roots.pop()
    from codemods import ppo
    from compat.declared import Admitted, nearest

    out: dict[str, Options] = {}
    seen: dict[str, Admitted | None] = {}
    for path in files:
        found = nearest(path, root, "trl", ppo.releases(), seen)
        if found is not None:
            out[os.path.abspath(path)] = dataclasses.replace(
                options, trl_releases=found.releases, trl_declared=found.said
            )
    return out


def trl_version(spec: str, options: Options) -> Options:
    """`options` for `--trl-version SPEC`: the TRL releases the user says the code ran on (a
    version, or a specifier such as `>=0.8,<0.12`). Raises ValueError naming the problem when
    the specifier cannot be read or no TRL release with a PPO config matches it."""
    from codemods import ppo
    from compat.declared import matching

    known = ppo.releases()
    try:
        releases = matching(spec, known)
    except ValueError as e:  # compat.versions.SpecError
        raise ValueError(f"--trl-version {spec}: not a version or a specifier ({e})") from e
    if not releases:
        raise ValueError(
            f"--trl-version {spec}: no TRL release with a PPO config ({known[0]} to {known[-1]}) "
            "matches it"
        )
    return dataclasses.replace(
        options, trl_releases=releases, trl_declared=f"trl {spec.strip()} (--trl-version)"
    )


def _vendored(path: str, folder: str, *, first: bool) -> FileResult:
    """A file of a copy of TRL inside the repo: not rewritten, and said once per copy."""
    version = ""
    try:
        with open(os.path.join(folder, "__init__.py"), encoding="utf-8", errors="replace") as fh:
            m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", fh.read())
        version = f" {m.group(1)}" if m else ""
    except OSError:
        pass
    shown = os.path.relpath(folder)
    message = f"vendored copy of TRL{version} at {shown}/: not rewritten"
    findings = []
    if first:
        findings.append(
            Finding(
                "TRL190",
                Severity.WARNING,
                path,
                0,
                0,
                f"{shown}/ is a copy of TRL{version} that shadows the installed TRL 1.13 for "
                "scripts run beside it: delete or rename it so the repo imports TRL 1.13 (code "
                "that needs its changes must be ported to TRL 1.13's trainers); its files are "
                "not rewritten",
                Fix.MANUAL,
            )
        )
    return FileResult(path, Status.SKIPPED, findings, message=message)


def _process_one(
    item: tuple[str, bytes] | tuple[str, bytes, inline.Helpers],
    *,
    codes: Sequence[str],
    options: Options,
    want_diff: bool,
    passes: dict[str, list[project.Passed]],
    facts: dict[str, project.RunFacts],
    declared: dict[str, Options],
) -> FileResult:
    path, data = item[0], item[1]
    helpers = item[2] if len(item) > 2 else None  # type: ignore[misc]
    full = os.path.abspath(path)
    return process(
        path,
        data,
        codes=codes,
        options=declared.get(full, options),
        want_diff=want_diff,
        passed=passes.get(full, ()),
        shared=helpers,
        facts=facts.get(full, project.NO_FACTS),
    )


def _share_helpers(
    results: list[FileResult],
    sources: dict[str, bytes],
    work,  # type: ignore[no-untyped-def]
    jobs: int | None,
    *,
    want_diff: bool,
) -> tuple[list[FileResult], dict[str, list[FileResult]]]:
    """Files of one folder that each had removed helpers written in are rewritten again to
    import them from one module beside them, which is added to the results (codemods/shared.py
    says when a folder qualifies). A folder where a second rewrite fails keeps its copies. Also
    returned: for each module, the first results of its files (with copies), written instead
    if the module cannot be."""
    needs = {r.path: r.helpers for r in results if r.status is Status.CHANGED and r.helpers}
    found = shared.homes(needs, sources)
    if not found:
        return results, {}
    redo = [
        (path, sources[path], inline.Helpers(home.keys, home.level))
        for home in found
        for path in home.files
    ]
    again = {r.path: r for r in _run(work, redo, jobs)}  # type: ignore[arg-type]
    first = {r.path: r for r in results}
    replaced: dict[str, FileResult] = {}
    fallbacks: dict[str, list[FileResult]] = {}
    for home in found:
        files = [again[p] for p in home.files]
        if any(r.status is not Status.CHANGED for r in files):
            continue
        replaced.update((r.path, r) for r in files)
        replaced[home.path] = _module_result(home, files, want_diff=want_diff)
        fallbacks[home.path] = [first[p] for p in home.files]
    kept = [replaced.pop(r.path, r) for r in results]
    return kept + list(replaced.values()), fallbacks


def _write_all(
    results: list[FileResult], fallbacks: dict[str, list[FileResult]]
) -> list[FileResult]:
    """Write every changed file. A folder's shared module goes first: if it cannot be written,
    its files are written with their own copies of the helpers instead."""
    out: dict[str, FileResult] = {}
    for module in [r for r in results if r.path in fallbacks]:
        done = _write(module)
        out[module.path] = done
        if done.status is Status.FAILED:
            out.update((r.path, r) for r in fallbacks[module.path])
    return [_write(out.get(r.path, r)) if r.path not in fallbacks else out[r.path] for r in results]


def _module_result(home: shared.Home, files: list[FileResult], *, want_diff: bool) -> FileResult:
    keys = sorted(home.keys)
    text = inline.shared_module(keys)
    new = text.encode("utf-8")
    if home.old == new:
        return FileResult(home.path, Status.UNCHANGED)
    names = ", ".join(f"`{inline.canonical(k)}`" for k in keys)
    users = ", ".join(os.path.basename(r.path) for r in files)
    finding = Finding(
        "TRL101",
        Severity.INFO,
        home.path,
        1,
        1,
        f"holds the removed helpers {names}, written once for the files of this folder that "
        f"use them ({users}), which import them from here instead of each holding a copy",
        Fix.APPLIED,
    )
    old_text = home.old.decode("utf-8") if home.old is not None else ""
    diff = unified_diff(home.path, old_text, text) if want_diff else ""
    return FileResult(
        home.path, Status.CHANGED, [finding], old=home.old, new=new, diff=diff, helpers=tuple(keys)
    )


def _run(
    work,
    todo: list[tuple[str, bytes]],
    jobs: int | None,  # type: ignore[no-untyped-def]
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    workers = min(jobs or os.cpu_count() or 1, len(todo))
    results: list[FileResult] = []
    if workers <= 1 or len(todo) < PARALLEL_THRESHOLD:
        for item in todo:
            results.append(work(item))
            if progress:
                progress(len(results), len(todo))
        return results
    # fork: workers inherit the imported rules and symbol table instead of importing them again.
    method = "fork" if sys.platform.startswith("linux") else None
    # Largest first, one file per task: a file's cost grows with its size (milliseconds to tens of
    # seconds), and contiguous chunks or big files handed out last leave one worker running alone.
    ordered = sorted(todo, key=lambda item: len(item[1]), reverse=True)
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method)
    ) as pool:
        for result in pool.map(work, ordered, chunksize=1):
            results.append(result)
            if progress:
                progress(len(results), len(todo))
    return results


def _write(result: FileResult) -> FileResult:
    if result.status is not Status.CHANGED or result.new is None:
        return result
    try:
        if result.old is None:  # a file the run adds (a folder's shared helpers)
            create_file(result.path, result.new)
        else:
            atomic_write(result.path, result.new, expected=result.old)
    except SourceError as e:
        failed = _as_available(result)  # nothing was applied: the file kept its old bytes
        return dataclasses.replace(failed, status=Status.FAILED, message=str(e))
    return result


def _as_available(result: FileResult) -> FileResult:
    findings = [f.with_fix(Fix.AVAILABLE) if f.fix is Fix.APPLIED else f for f in result.findings]
    return dataclasses.replace(result, findings=findings)


def copy_example(dest: str | None = None) -> str:
    """Copy the bundled example PPO project into `dest` (default: a new temporary folder)."""
    import shutil
    import tempfile
    from importlib import resources

    target = dest or tempfile.mkdtemp(prefix="trl-migrate-demo-")
    source = resources.files("migrate").joinpath("examples/ppo_project")
    with resources.as_file(source) as folder:
        shutil.copytree(folder, target, dirs_exist_ok=True)
    return target
