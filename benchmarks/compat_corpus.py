"""`compat` over the public corpus: every manifest and notebook read (failed files, and why),
what `--fix` leaves that it could fix, and which codes each repo gets. Each repo is checked on
a temporary copy, so the corpus stays as it was.

    python benchmarks/compat_corpus.py run --corpus ~/.cache/trl-migrate/public --out after.json
    (cd <older checkout> && python /path/to/benchmarks/compat_corpus.py run ... --out before.json)
    python benchmarks/compat_corpus.py render before.json after.json   # the docs section
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TITLE = "compat over the public corpus"


def run(corpus: Path) -> dict[str, Any]:
    sys.path.insert(0, os.getcwd())  # the checkout this runs from is the one measured
    from compat.api import check_path

    rows = []
    for repo in sorted(p for p in corpus.iterdir() if p.is_dir()):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / repo.name
            shutil.copytree(repo, copy, symlinks=True)
            before = check_path(str(copy), installed=False)
            check_path(str(copy), installed=False, fix=True)
            after = check_path(str(copy), installed=False)
        failed = [f"{r.path}: {r.message}" for r in before.results if r.status.value == "failed"]
        rows.append(
            {
                "repo": repo.name.replace("+", "/"),
                "sources": len(before.sources),
                "failed": failed,
                "codes": dict(collections.Counter(f.code for f in before.findings)),
                "fixable_before": sum(f.fix.value == "available" for f in before.findings),
                "fixable_after": sum(f.fix.value == "available" for f in after.findings),
                "manual_after": sum(f.fix.value == "manual" for f in after.findings),
                "left": sorted({f.code for f in after.findings if f.fix.value == "available"}),
                "manual_codes": dict(
                    collections.Counter(f.code for f in after.findings if f.fix.value == "manual")
                ),
            }
        )
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {"commit": rev.stdout.strip(), "rows": rows}


def render(before: dict[str, Any], after: dict[str, Any]) -> str:
    old = {r["repo"]: r for r in before["rows"]}
    rows = after["rows"]

    def total(data: dict[str, Any], key: str) -> int:
        return sum(len(r[key]) if isinstance(r[key], list) else r[key] for r in data["rows"])

    lines = [
        f"## {TITLE}",
        "",
        "`python benchmarks/compat_corpus.py run --corpus <materialized corpus>` at "
        f"{before['commit']} (before) and {after['commit']} (after), declared sources only "
        f"(`--no-installed`), each repo on a temporary copy: {len(rows)} repos, "
        f"{total(after, 'sources')} sources (requirements files, pyproject.toml, setup.py/cfg, "
        "environment.yml, Pipfile, locks, notebooks).",
        "",
        "| | before | after |",
        "|---|---|---|",
        f"| sources that failed to read | {total(before, 'failed')} | {total(after, 'failed')} |",
        f"| findings `--fix` could fix | {total(before, 'fixable_before')} "
        f"| {total(after, 'fixable_before')} |",
        f"| fixable findings left after `--fix` | {total(before, 'fixable_after')} "
        f"| {total(after, 'fixable_after')} |",
        f"| findings for a human after `--fix` | {total(before, 'manual_after')} "
        f"| {total(after, 'manual_after')} |",
        f"| TRL207 notes (offload) | {_code(before, 'TRL207')} | {_code(after, 'TRL207')} |",
        f"| TRL205 (requests) | {_code(before, 'TRL205')} | {_code(after, 'TRL205')} |",
        "",
        "Per repo where anything differs or is left (failed files, what --fix left):",
        "",
        "| repo | sources | failed before -> after | fixable left before -> after | manual left |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        b = old.get(r["repo"], {"failed": [], "fixable_after": 0})
        if not (b["failed"] or r["failed"] or b["fixable_after"] or r["fixable_after"]):
            continue
        lines.append(
            f"| {r['repo']} | {r['sources']} | {len(b['failed'])} -> {len(r['failed'])} | "
            f"{b['fixable_after']} -> {r['fixable_after']} | {r['manual_after']} |"
        )
    manual: collections.Counter[str] = collections.Counter()
    for r in rows:
        manual.update(r.get("manual_codes", {}))
    if manual:
        lines += [
            "",
            "What is left for a human after `--fix`, by code: "
            + ", ".join(f"{code} {n}" for code, n in sorted(manual.items()))
            + " (TRL201 on lock files and hash pins: regenerate them with their tool; TRL204: "
            "URL or VCS requirements with no version to judge).",
        ]
    fails = [f for r in rows for f in r["failed"]]
    if fails:
        lines += ["", "Still failing:", ""] + [f"- `{f[:200]}`" for f in fails]
    return "\n".join(lines) + "\n"


def _code(data: dict[str, Any], code: str) -> int:
    return sum(r["codes"].get(code, 0) for r in data["rows"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--corpus", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    d = sub.add_parser("render")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    args = p.parse_args()
    if args.cmd == "run":
        args.out.write_text(json.dumps(run(args.corpus.expanduser()), indent=1))
    else:
        print(render(json.loads(args.before.read_text()), json.loads(args.after.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
