"""`fix` on PPO-heavy files, one file at a time: seconds per file and per 1,000 lines, side by
side with a libcst parse alone and `ruff check` of the same files, measured in one run; and the
same bytes under five hash seeds.

    python benchmarks/ppo_files.py                      # writes docs/benchmarks.md
    python benchmarks/ppo_files.py --no-write --limit 20
    python benchmarks/ppo_files.py --rules-from /tmp/old   # another checkout's engine, same files
    python benchmarks/ppo_files.py --repeat 2 --rules-from /tmp/old   # saves ppo_files_before.json
    python benchmarks/ppo_files.py --repeat 2 --before <dest>/ppo_files_before.json  # side by side
    python benchmarks/ppo_files.py --repeat 4 --against /tmp/old   # side by side, one run

The files: every .py file of the TRL 0.4 - 1.12 wheels in `.wheels/` (`pip download --no-deps
trl==X`; fetched when missing) that mentions PPO or a value head and imports `trl` (examples,
tests, scripts), and the PPO files of our public-repository corpus (`benchmarks/public.py`,
read from local git mirrors; skipped with a note when none are there). Each file is timed
in-process (the engine's `process`, the verifying second pass included) after a warm-up file, so
interpreter start-up is not counted; the libcst parse is timed the same way. ruff runs once over
all the files (its per-file figure is that time over the count).

`--against <checkout>` times both engines in one run, on a machine whose speed drifts from one
minute to the next: each round runs each engine over every file in a fresh process, in the
order old, new, then new, old, and so on, and each file keeps its best time of the rounds.
`--rules-from` and `--before` time them in two runs, minutes apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import public  # noqa: E402
from benchmarks.corpus import WHEELS, machine, write_section  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
TITLE = "PPO files, one at a time"
# The releases whose files this benchmark times: the newest patch of every minor release that
# shipped a PPO config, and every fourth minor of 1.x (the set of its earlier runs; the defaults
# table, codemods/data/ppo_defaults.json, now holds every release).
VERSIONS = (
    "0.4.7",
    "0.5.0",
    "0.6.0",
    "0.7.11",
    "0.8.6",
    "0.9.6",
    "0.10.1",
    "0.11.4",
    "0.12.2",
    "0.13.0",
    "0.14.0",
    "0.15.2",
    "0.16.1",
    "0.17.0",
    "0.18.2",
    "0.19.1",
    "0.20.0",
    "0.21.0",
    "0.22.2",
    "0.23.1",
    "0.24.0",
    "0.25.1",
    "0.26.2",
    "0.27.2",
    "0.28.0",
    "0.29.1",
    "1.0.0",
    "1.4.0",
    "1.8.0",
    "1.12.0",
)
PPO = re.compile(rb"PPO|ValueHead")
SEEDS = ("0", "1", "7", "123", "4242")


def wheel_files(dest: Path) -> list[Path]:
    out = []
    for v in VERSIONS:
        wheel = WHEELS / f"trl-{v}-py3-none-any.whl"
        if not wheel.exists():
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    f"trl=={v}",
                    "-d",
                    str(WHEELS),
                ],
                check=True,
            )
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.endswith(".py"):
                    data = zf.read(name)
                    if PPO.search(data):
                        target = dest / v / name
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                        out.append(target)
    return out


def select(paths: list[Path]) -> list[Path]:
    """The files `fix` really parses: those that import trl (the engine's own gate)."""
    from codemods.engine import needs_parse, uses_trl
    from migrate.kernel.files import SourceError, decode_python

    chosen = []
    for p in paths:
        data = p.read_bytes()
        try:
            if needs_parse(data) and uses_trl(decode_python(data).text):
                chosen.append(p)
        except SourceError:
            continue
    return chosen


def time_files(paths: list[Path], base: Path, repeat: int = 1) -> list[dict[str, Any]]:
    import libcst as cst

    import codemods
    from codemods.base import Options
    from codemods.engine import process
    from migrate.kernel.files import decode_python

    codes = tuple(r.code for r in codemods.RULES)
    if paths:  # warm-up: the symbol table and the rules' data load once per process
        process(str(paths[0]), paths[0].read_bytes(), codes=codes, options=Options())
    rows = []
    for p in paths:
        data = p.read_bytes()
        text = decode_python(data).text
        parse_s = fix_s = float("inf")
        for _ in range(repeat):  # the best of `repeat` runs: the machine is shared
            started = time.perf_counter()
            # The engine reports the same error for this file; here only the time counts.
            with contextlib.suppress(Exception):
                cst.parse_module(text)
            parse_s = min(parse_s, time.perf_counter() - started)
            started = time.perf_counter()
            result = process(str(p), data, codes=codes, options=Options())
            fix_s = min(fix_s, time.perf_counter() - started)
        rows.append(
            {
                "path": str(p.relative_to(base)),
                "lines": text.count("\n") + 1,
                "fix_s": fix_s,
                "parse_s": parse_s,
                "status": result.status.value,
            }
        )
    return rows


def ruff_total(paths: list[Path]) -> dict[str, Any]:
    ruff = shutil.which("ruff")
    if ruff is None:
        return {}
    cmd = [ruff, "check", "--no-cache", "--isolated", "--exit-zero", "--quiet", *map(str, paths)]
    started = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False)
    spent = time.perf_counter() - started
    version = subprocess.run(
        [ruff, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {"seconds": spent, "version": version}


def determinism(paths: list[Path]) -> dict[str, Any]:
    """`fix --diff --format json` over the files under each seed; the outputs must be equal."""
    outs = []
    for seed in SEEDS:
        env = {**os.environ, "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "migrate",
                "fix",
                "--diff",
                "--format",
                "json",
                "--jobs",
                "2",
                *map(str, paths),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        report = json.loads(done.stdout)
        report["summary"].pop("seconds", None)
        outs.append(report)
    first = {f["path"]: json.dumps(f, sort_keys=True) for f in outs[0]["files"]}
    differing: list[str] = []
    where: dict[str, list[str]] = {}  # seed -> the files whose result differs from seed 0's
    for seed, report in zip(SEEDS, outs):
        if json.dumps(report, sort_keys=True) == json.dumps(outs[0], sort_keys=True):
            continue
        differing.append(seed)
        mine = {f["path"]: json.dumps(f, sort_keys=True) for f in report["files"]}
        where[seed] = sorted(p for p in set(first) | set(mine) if first.get(p) != mine.get(p))
    return {
        "seeds": list(SEEDS),
        "files": len(paths),
        "differing_seeds": differing,
        "differing_files": where,
    }


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"median": 0.0, "p95": 0.0, "max": 0.0, "total": 0.0}
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median": statistics.median(ordered),
        "p95": p95,
        "max": ordered[-1],
        "total": sum(ordered),
    }


def summarize(group: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    lines = sum(r["lines"] for r in rows)
    return {
        "group": group,
        "files": len(rows),
        "lines": lines,
        "fix": _stats([r["fix_s"] for r in rows]),
        "parse": _stats([r["parse_s"] for r in rows]),
        "fix_per_kloc": _stats([r["fix_s"] / r["lines"] * 1000 for r in rows]),
        "parse_per_kloc": _stats([r["parse_s"] / r["lines"] * 1000 for r in rows]),
        "slowest": sorted(
            ({"path": r["path"], "lines": r["lines"], "fix_s": round(r["fix_s"], 2)} for r in rows),
            key=lambda r: -r["fix_s"],
        )[:5],
    }


def render(res: dict[str, Any]) -> str:
    out = [
        f"## {TITLE}",
        "",
        f"Measured {res['date']} on {res['machine']} (`python benchmarks/ppo_files.py`). Each file "
        "is run "
        "through `fix` in-process, one at a time (the verifying second pass included, interpreter "
        "start-up "
        "not), beside a libcst parse of the same text and `ruff check` of the same files, in one "
        "run; "
        "the machine was shared, so read the ratios more than the seconds.",
        "",
        "| files | count | lines | fix median | fix p95 | fix max | fix total | parse total | fix "
        "/ parse | "
        "fix s per 1,000 lines (median / max) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for g in res["groups"]:
        f, p = g["fix"], g["parse"]
        ratio = f["total"] / p["total"] if p["total"] else 0
        out.append(
            f"| {g['group']} | {g['files']} | {g['lines']:,} | {f['median']:.2f} s | "
            f"{f['p95']:.2f} s | "
            f"{f['max']:.2f} s | {f['total']:.1f} s | {p['total']:.1f} s | {ratio:.1f}x | "
            f"{g['fix_per_kloc']['median']:.2f} / {g['fix_per_kloc']['max']:.2f} |"
        )
    r = res.get("ruff") or {}
    if r:
        n = sum(g["files"] for g in res["groups"])
        out += [
            "",
            f"`{r['version']}` (`ruff check --no-cache --isolated`, default rules) over the same "
            f"{n} files in "
            f"one process: {r['seconds']:.2f} s, {r['seconds'] / max(n, 1) * 1000:.0f} ms a file.",
        ]
    out += ["", "Slowest files:", ""]
    for g in res["groups"]:
        for s in g["slowest"][:3]:
            out.append(f"- {g['group']}: `{s['path']}` ({s['lines']:,} lines) {s['fix_s']:.2f} s")
    before = res.get("before")
    if before:
        how = (
            "`--against`, timed in this run, the two in fresh processes taking turns: old, "
            "new, new, old, ..."
            if before.get("alternated")
            else "`--rules-from`, timed on this machine in the run before this one"
            + (f", at {before['measured']}" if before.get("measured") else "")
        )
        out += [
            "",
            f"Side by side, each file the best of {res.get('repeat', 1)}: the engine and rules "
            f"of `{before['label']}` ({how}) against this checkout's, on the same files:",
            "",
            "| files | fix total before / now | before / now | median before / now | p95 before "
            "/ now | max before / now | fix / parse before / now |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        old_groups = {g["group"]: g for g in before["groups"]}
        for g in res["groups"]:
            o = old_groups.get(g["group"])
            if o is None:
                continue
            f, of = g["fix"], o["fix"]
            ratio = of["total"] / f["total"] if f["total"] else 0
            out.append(
                f"| {g['group']} | {of['total']:.1f} / {f['total']:.1f} s | {ratio:.2f}x | "
                f"{of['median']:.2f} / {f['median']:.2f} s | {of['p95']:.2f} / {f['p95']:.2f} s | "
                f"{of['max']:.2f} / {f['max']:.2f} s | "
                f"{of['total'] / o['parse']['total']:.0f}x / "
                f"{f['total'] / g['parse']['total']:.0f}x |"
            )
    d = res.get("determinism") or {}
    if d:
        files = sorted({f for fs in (d.get("differing_files") or {}).values() for f in fs})
        verdict = (
            "identical"
            if not d["differing_seeds"]
            else f"DIFFERENT under seeds {', '.join(d['differing_seeds'])}"
            + (f" (in {', '.join(os.path.basename(f) for f in files[:5])})" if files else "")
        )
        out += [
            "",
            f"Determinism: `fix --diff --format json` over all {d['files']} files under "
            "`PYTHONHASHSEED` = "
            f"{', '.join(d['seeds'])}: output {verdict} (the run's duration left out).",
        ]
    return "\n".join(out) + "\n"


def _label(checkout: Path) -> str:
    found = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h"],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or str(checkout)


def alternate(
    args: argparse.Namespace, against: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`--repeat` rounds, each timing this checkout's engine and `against`'s over every file
    in a fresh process, the two taking turns (old, new, new, old, ...): the per-group
    summaries, each file its best of the rounds, of this checkout and of `against`."""
    best: dict[str, dict[str, dict[str, dict[str, Any]]]] = {"new": {}, "old": {}}
    for round_ in range(max(args.repeat, 1)):
        for side in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "timings.json"
                cmd = [sys.executable, str(Path(__file__).resolve()), "--timings-to", str(out)]
                cmd += ["--mirrors", str(args.mirrors), "--dest", str(args.dest)]
                cmd += ["--limit", str(args.limit)]
                if side == "old":
                    cmd += ["--rules-from", str(against)]
                subprocess.run(cmd, check=True, cwd=ROOT)
                for group, rows in json.loads(out.read_text()):
                    kept = best[side].setdefault(group, {})
                    for row in rows:
                        seen = kept.setdefault(row["path"], row)
                        seen["fix_s"] = min(seen["fix_s"], row["fix_s"])
                        seen["parse_s"] = min(seen["parse_s"], row["parse_s"])
    now, then = (
        [summarize(group, list(rows.values())) for group, rows in best[side].items()]
        for side in ("new", "old")
    )
    return now, then


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument(
        "--dest", type=Path, default=Path.home() / ".cache" / "trl-migrate" / "ppo-files"
    )
    p.add_argument("--limit", type=int, default=0, help="only the first N files of each group")
    p.add_argument("--repeat", type=int, default=1, help="time each file N times, keep the best")
    p.add_argument(
        "--before",
        type=Path,
        help="the JSON a --rules-from run saved: rendered side by side with this run",
    )
    p.add_argument("--no-write", action="store_true")
    p.add_argument(
        "--against",
        type=Path,
        help="another checkout (say, the commit before a change): both engines timed in this "
        "run, in fresh processes taking turns (old, new, new, old, ...), --repeat rounds",
    )
    p.add_argument("--timings-to", type=Path, help=argparse.SUPPRESS)  # one round of --against
    p.add_argument(
        "--rules-from",
        type=Path,
        help="time the engine of another checkout of trl-migrate (say, the commit before a "
        "change; `git worktree add /tmp/old <commit>`): timings only, printed, docs untouched",
    )
    args = p.parse_args(argv)
    if args.rules_from:
        sys.path.insert(0, str(args.rules_from.resolve()))  # before codemods is first imported
    wheel = select(wheel_files(args.dest / "wheels"))
    public.materialize(args.mirrors, args.dest / "public")
    repos = select([p for p in public.ppo_paths(args.dest / "public") if p.suffix == ".py"])
    groups = [
        ("TRL wheels 0.4 - 1.12", wheel, args.dest / "wheels"),
        ("public repositories", repos, args.dest / "public"),
    ]
    if args.limit:
        groups = [(n, ps[: args.limit], base) for n, ps, base in groups]
    everything = [p for _, ps, _ in groups for p in ps]
    if args.timings_to:
        rounds = [(n, time_files(ps, base, 1)) for n, ps, base in groups if ps]
        args.timings_to.write_text(json.dumps(rounds))
        return
    if args.rules_from:
        saved = {
            "label": _label(args.rules_from),
            "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "groups": [summarize(n, time_files(ps, base, args.repeat)) for n, ps, base in groups],
        }
        out = args.dest / "ppo_files_before.json"
        out.write_text(json.dumps(saved, indent=1))
        print(json.dumps(saved, indent=1))
        print(f"saved to {out}; render it beside this checkout with --before {out}")
        return
    if args.against:
        now, then = alternate(args, args.against)
        before = {"label": _label(args.against), "alternated": True, "groups": then}
    else:
        now = [
            summarize(name, time_files(ps, base, args.repeat)) for name, ps, base in groups if ps
        ]
        before = json.loads(args.before.read_text()) if args.before else None
    res = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "groups": now,
        "repeat": args.repeat,
        "before": before,
        "ruff": ruff_total(everything),
        "determinism": determinism(everything),
    }
    (args.dest / "ppo_files.json").write_text(json.dumps(res, indent=1))
    text = render(res)
    if args.no_write:
        print(text)
    else:
        write_section(DOC, TITLE, text)
        print(text)


if __name__ == "__main__":
    main()
