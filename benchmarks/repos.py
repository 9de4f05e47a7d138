"""`trl-migrate upgrade` on whole public PPO repositories, as their users would run it: does each
of their PPO training entry points train on TRL 1.13 afterwards?

    python benchmarks/public.py materialize --whole          # the trees, at the recorded commits
    python benchmarks/repos.py                               # every repo; writes docs/benchmarks.md
    python benchmarks/repos.py --only dukeyuan/finetuning --no-write

Each repository of `public_repos.json` is copied out of its materialized tree into a temporary
folder and upgraded there with `python -m migrate upgrade --format json` (a fresh process per
repo, as a user runs it). `public_entry_points.json` says, for every repository, which files are
its PPO training entry points and how the repository itself launches them (read by hand: the
benchmark's ground truth, independent of what `upgrade` finds). Each entry point is then looked
up in the report: found or not (and where `upgrade` found it), the arguments it ran with, the
outcome, stand-ins and overrides. Raw reports go to `<work>/repos.json`; the table to the
`## Public repositories: upgrade` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpus import machine, write_section  # noqa: E402
from benchmarks.public import load  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
TITLE = "Public repositories: upgrade"
TRUTH = ROOT / "benchmarks" / "public_entry_points.json"


def truth(path: Path = TRUTH) -> dict[str, dict[str, Any]]:
    """repo -> its hand-read entry points (`entry_points`, `no_entry_point`, `note`)."""
    if not path.exists():
        return {}
    return {r["repo"]: r for r in json.loads(path.read_text())["repos"]}


def upgrade_repo(
    slug: str, tree: Path, work: Path, *, timeout: float, extra: list[str]
) -> dict[str, Any]:
    """Copy `tree` to `work/slug` and run `upgrade` on the copy; the JSON report and timings."""
    where = work / slug
    if where.exists():
        shutil.rmtree(where)
    shutil.copytree(tree, where, ignore=shutil.ignore_patterns(".git"), symlinks=True)
    started = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "migrate",
            "upgrade",
            str(where),
            "--format",
            "json",
            "--timeout",
            str(timeout),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    seconds = time.perf_counter() - started
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return {
        "slug": slug,
        "exit": proc.returncode,
        "seconds": round(seconds, 1),
        "report": report,
        "stderr": proc.stderr[-3000:],
        "root": str(where),
    }


def _rel(path: str, root: str) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return path


def rows(runs: list[dict[str, Any]], known: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per hand-read entry point of every repository run, joined with `upgrade`'s
    report."""
    out = []
    for run in runs:
        repo = run["slug"].replace("+", "/", 1)
        report = run["report"] or {}
        smokes = {_rel(s["path"], run["root"]): s for s in report.get("smoke", [])}
        listed = {_rel(e["path"], run["root"]): e for e in report.get("entry_points", [])}
        entries = known.get(repo, {}).get("entry_points") or []
        if not entries:
            out.append({"repo": repo, "script": "", "outcome": "no entry point (hand-read)"})
            continue
        for entry in entries:
            script = entry["script"]
            smoke = smokes.get(script)
            found = listed.get(script, {})
            row: dict[str, Any] = {
                "repo": repo,
                "script": script,
                "launch": entry.get("launch", ""),
                "found": found.get("found_in", "") or ("yes" if smoke else ""),
                "args": " ".join(smoke.get("args", [])) if smoke else "",
                "outcome": "not smoked",
                "why": "",
                "stand_ins": ", ".join(smoke.get("stand_ins", [])) if smoke else "",
                "overrides": "",
            }
            if smoke:
                row["outcome"] = smoke["outcome"]
                smoke_findings = [
                    f
                    for f in _findings(report, run["root"], script)
                    if f["code"].startswith("TRL4") and f["code"] not in ("TRL410", "TRL420")
                ]
                first = smoke_findings[0] if smoke_findings else None
                row["code"] = first["code"] if first else ""
                row["message"] = f"{first['code']} {first['message']}" if first else ""
                row["why"] = row["message"][:220]
                # a TODO that names the key or attribute the script stopped on, on another line
                row["todo_named"] = bool(first and re.search(_NAMES, first["message"]))
                row["todo"] = bool(
                    first and "TODO(trl-migrate" in first["message"] and not row["todo_named"]
                )
                row["todo_in_file"] = bool(
                    first
                    and (
                        "TODOs in this file" in first["message"]
                        or "left TODOs (" in first["message"]
                    )
                )
                row["overrides"] = ", ".join(
                    f"{o['field']} {o['was']}->{o['now']}" for o in smoke.get("overrides", [])
                )
                row["filled"] = " ".join(smoke.get("filled", []))
            elif not run["report"]:
                row["why"] = "upgrade crashed: " + (run["stderr"].strip().splitlines() or [""])[-1]
            else:
                unparsed = next(
                    (
                        f.get("message", "")
                        for f in report.get("files", [])
                        if _rel(f["path"], run["root"]) == script and f["status"] == "failed"
                    ),
                    None,
                )
                row["why"] = (
                    f"the file does not parse ({unparsed})"
                    if unparsed is not None
                    else report.get("smoke_note", "")
                    or _unreached(report, run["root"], script)
                    or "not an entry point of upgrade"
                )
            out.append(row)
    return out


# the stop is on a key or attribute a TODO of the file names, or a cause it states
# (smoke/outcome.py)
_NAMES = re.compile(r"TODO\(trl-migrate [^)]*\) at [^;]*? that (?:names|says) ")


def _unreached(report: dict[str, Any], root: str, script: str) -> str:
    """What `upgrade` says of a rewritten file no entry point reaches (its `unreached` list)."""
    return next(
        (u["why"] for u in report.get("unreached", []) if _rel(u["path"], root) == script), ""
    )


def _findings(report: dict[str, Any], root: str, script: str) -> list[dict[str, Any]]:
    return [
        f
        for entry in report.get("files", [])
        if _rel(entry["path"], root) == script
        for f in entry.get("findings", [])
    ]


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(table: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    entries = [r for r in table if r["script"]]
    trained = sum(r["outcome"] == "passed" for r in entries)
    smoked = sum(r["outcome"] not in ("not smoked",) for r in entries)
    stops = Counter(bucket(r) for r in entries if r["outcome"] != "passed")
    at_todo, named, in_file = stops.pop("todo", 0), stops.pop("named", 0), stops.pop("in_file", 0)
    found = sum(bool(r["found"]) for r in entries)
    others = stops
    listed = "; ".join(f"{n} {kind}" for kind, n in sorted(others.items(), key=lambda x: -x[1]))
    # a run that trained its steps and then stopped (saving to a path of the original machine)
    after = sum("after training" in r.get("message", "") for r in entries)
    then = (
        f" {after} of those that did not train ran their training steps and stopped after them."
        if after
        else ""
    )
    lines = [
        f"## {TITLE}",
        "",
        f"`python benchmarks/repos.py` on {meta['date']}, {meta['machine']}; "
        f"{meta['repos']} public repositories (benchmarks/public_repos.json, code read at the "
        "recorded commits, never committed), their PPO training entry points read by hand "
        "(benchmarks/public_entry_points.json). Each repository was copied to a temporary folder "
        f"and upgraded there with `trl-migrate upgrade --format json` ({meta['timeout']:g} s per "
        f"smoke run); {meta['seconds']:.0f} s in all.",
        "",
        f"**{trained} of {len(entries)} entry points trained** (2 steps on tiny offline "
        f"stand-ins, real TRL 1.13). `upgrade` found {found} of them as entry points and "
        f"smoke-ran {smoked}; of those that did not train, {at_todo} stopped on a line where the "
        f"rewrite left a TODO naming the reason, {named} on a column, key, attribute or "
        f"cause that a TODO of the file names (on another line), {in_file} elsewhere in a "
        f"file where it left TODOs (listed in the finding); the others: {listed}.{then}",
        "",
        "| repo | entry point | found by upgrade | args used (filled) | outcome | where it stopped "
        "| stand-ins | smoke caps |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        if not r["script"]:
            continue
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    r["repo"],
                    r["script"],
                    r["found"],
                    (f"`{r['args']}`" if r["args"] else "")
                    + (f" (`{r['filled']}`)" if r.get("filled") else ""),
                    r["outcome"],
                    r["why"],
                    r["stand_ins"],
                    r.get("overrides", ""),
                )
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def bucket(row: dict[str, Any]) -> str:
    """Where an entry point that did not train stopped: "todo" (on a TODO's line), "named" (on
    what a TODO names), "in_file" (elsewhere in a file with TODOs, for no cause its finding
    states), else its `stop_kind`. A stop whose finding states a cause outside the rewrite (a
    file the repository lacks, a CUDA device) counts under that cause even where the file has
    TODOs: the TODOs are listed, but they are not why it stopped."""
    if row.get("todo"):
        return "todo"
    if row.get("todo_named"):
        return "named"
    kind = stop_kind(row)
    if row.get("todo_in_file") and kind == "stopped elsewhere":
        return "in_file"
    return kind


def stop_kind(row: dict[str, Any]) -> str:
    """Why an entry point that neither trained nor stopped in a file with TODOs stopped, in a
    few words (the benchmark's summary line)."""
    why = row.get("message") or row.get("why", "")
    if row["outcome"] == "not smoked":
        return "not run (no entry point upgrade runs, or a file that does not parse)"
    if "TRL415" in why:
        return "ran past the timeout"
    if "not in the repository" in why or "No such file or directory" in why:
        return "stopped on a file the repository does not hold (data, a checkpoint, a config)"
    if "needs a CUDA device" in why:
        return "stopped on a CUDA device this machine lacks"
    if "written for pandas 2" in why:
        return "stopped on pandas 3's text columns (the repository's code predates them)"
    if "valid in a newer Python" in why:
        return "stopped on the repository's code for a newer Python than this machine's"
    if "SyntaxError" in why:
        return "stopped on a syntax error in the repository's own code"
    if "before any line the rewrite changed had run" in why:
        return "stopped before any line the rewrite changed had run"
    if "comes from the stand-in for" in why:
        return "stopped on what a stand-in for a module not installed here gave"
    if "reads the environment variable" in why:
        return "stopped on an environment variable this machine does not set"
    if "reads its command line by hand" in why:
        return "stopped on a command-line argument that no launch line of the repository gives"
    if "the rewrite dropped it" in why:
        return "stopped on a name the rewrite dropped (a bug of trl-migrate)"
    if (
        "a file the rewrite did not touch" in why
        or "TRL417" in why
        or "the repository's own code, not the rewrite" in why
        or "the repository's own data, not the rewrite" in why
    ):
        return "stopped in the repository's own code or data"
    if "TRL411" in why and not stack_stop(row):
        return "stopped on a module not installed here"
    return "stopped elsewhere"


# The libraries whose APIs the rewrite moves (issue #16): a stop on one of their imports or
# attributes is one the rewrite may have left.
STACK = ("trl", "transformers", "accelerate", "peft")
_STOP = re.compile(
    r"cannot import name '([\w.]+)' from '([\w.]+)'|No module named '([\w.]+)'"
    r"|module '?([\w.]+)'? has no attribute '?(\w+)'?"
)


def stack_stop(row: dict[str, Any]) -> str:
    """What an entry point stopped on when that is an import or module attribute of the
    training stack (`trl.PPOConfig`, `trl.core`), else ""."""
    found = _STOP.search(row.get("why", ""))
    if found is None:
        return ""
    name, module, missing, owner, attr = found.groups()
    path = f"{module}.{name}" if module else missing or f"{owner}.{attr}"
    return path if path.split(".")[0] in STACK else ""


def stack_stops(then: list[dict[str, Any]], now: list[dict[str, Any]]) -> str:
    """Per entry point that stopped on the training stack's imports in either run: what it
    stopped on then and now (issue #16's table)."""
    before = {(r["repo"], r["script"]): r for r in then if r["script"]}
    lines = [
        "| repo | entry point | stopped on before | now | at a TODO that names it |",
        "|---|---|---|---|---|",
    ]
    for row in now:
        old = before.get((row["repo"], row["script"]))
        was, is_ = stack_stop(old) if old else "", stack_stop(row)
        if not (was or is_):
            continue
        after = f"`{is_}`" if is_ else (row["why"][:100] or row["outcome"])
        todo = "yes" if row.get("todo") or row.get("todo_in_file") else "no"
        lines.append(
            f"| {row['repo']} | {row['script']} | `{was or '-'}` | {_cell(after)} | {todo} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--dest", type=Path, default=Path.home() / ".cache" / "trl-migrate" / "public")
    p.add_argument("--work", type=Path, default=None, help="where the copies go (default: temp)")
    p.add_argument("--only", action="append", default=[], help="owner/name; repeatable")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=180.0)
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--results", type=Path, default=None, help="render saved results instead")
    p.add_argument(
        "--before",
        type=Path,
        default=None,
        help="the saved results of an earlier checkout, summed up beside this run's",
    )
    p.add_argument("--before-label", default="an earlier checkout")
    args = p.parse_args(argv)
    known = truth()
    repos = [r for r in load() if not args.only or r.repo in args.only]
    started = time.perf_counter()
    work = args.work or Path(tempfile.mkdtemp(prefix="trl-migrate-repos-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.results:
        saved = json.loads(args.results.read_text())
        runs, meta = saved["runs"], saved["meta"]
    else:
        todo = [(r.slug, args.dest / r.slug) for r in repos if (args.dest / r.slug).is_dir()]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = list(
                pool.map(
                    lambda t: upgrade_repo(t[0], t[1], work, timeout=args.timeout, extra=[]),
                    todo,
                )
            )
        meta = {
            "date": datetime.date.today().isoformat(),
            "machine": machine(),
            "repos": len(runs),
            "timeout": args.timeout,
            "seconds": time.perf_counter() - started,
        }
        (work / "repos.json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=1))
        print(f"raw results: {work / 'repos.json'}", file=sys.stderr)
    section = render(rows(runs, known), meta)
    if args.before:
        then = [r for r in rows(json.loads(args.before.read_text())["runs"], known) if r["script"]]
        section = section.replace(
            "\n\n| repo |",
            f"\n\nThe same benchmark on {args.before_label}: "
            f"{sum(r['outcome'] == 'passed' for r in then)} of {len(then)} trained, "
            f"{sum(r['outcome'] != 'not smoked' for r in then)} smoke-run, "
            f"{sum(bool(r.get('todo')) for r in then if r['outcome'] != 'passed')} stopped on a "
            "TODO's line.\n\n| repo |",
            1,
        )
        section += (
            "\nEntry points that stopped on an import or attribute of TRL, transformers, "
            f"accelerate or peft, on {args.before_label} and now (what they stop on now when "
            "it is something else):\n\n" + stack_stops(then, rows(runs, known))
        )
    if args.no_write:
        print(section)
    else:
        write_section(DOC, TITLE, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
