"""TRL106 over real loops: every legacy PPO loop of TRL's own examples (all release tags) and of
the public repositories, rewritten or left with a TODO, counted by what decided it.

    python benchmarks/loops.py --trl-repo ~/src/trl          # writes docs/benchmarks.md
    python benchmarks/loops.py --trl-repo ~/src/trl --no-write

Each file is migrated in memory (`codemods.engine.process`, every rule, RLOO) and each TRL106
outcome is one row: a loop rewritten into `reward_fn` + `train()`, a loop left with the reason
its TODO names, or a `step()` the rewrite cannot follow. The reasons are grouped by their text
with quoted code blanked out, so "the reward reads the loop counter `epoch`" and "... `step`"
count as one shape. The public files come from `benchmarks/public.py materialize`.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import examples, public  # noqa: E402
from benchmarks.corpus import machine, write_section  # noqa: E402
from codemods import RULES  # noqa: E402
from codemods.base import Options  # noqa: E402
from codemods.engine import process  # noqa: E402

TITLE = "Legacy loops (TRL106)"
DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
REWRITTEN = "rewritten into reward_fn + train()"
UNFOLLOWED = "a step() the rewrite cannot follow (in an `if`, a `while`, a `try`, a function)"


def outcomes(name: str, data: bytes) -> list[str]:
    """One entry per legacy loop (or unfollowed step) in the file."""
    result = process(name, data, codes=[r.code for r in RULES], options=Options())
    out = []
    for f in result.findings:
        if f.code != "TRL106":
            continue
        if f.message.startswith("the PPO loop became"):
            out.append(REWRITTEN)
        elif "this one was left as it is (" in f.message:
            reason = f.message.split("this one was left as it is (", 1)[1].split("); write", 1)[0]
            blanked = re.sub(r"`[^`]*`", "`…`", reason)
            out.append("TODO: " + re.sub(r"`…`(, `…`)+", "`…`", blanked))
        elif "sits where the loop rewrite cannot follow it" in f.message:
            out.append("TODO: " + UNFOLLOWED)
        elif "runs once, outside a loop, and the rewrite cannot follow it (" in f.message:
            reason = f.message.split("cannot follow it (", 1)[1].split("); RLOO", 1)[0]
            reason = re.sub(r"`[^`]*`", "`…`", reason)
            out.append(
                "TODO: a step() run once, outside a loop: " + re.sub(r"`…`(, `…`)+", "`…`", reason)
            )
    return out


def count(files: list[tuple[str, bytes]]) -> dict[str, Any]:
    shapes: collections.Counter[str] = collections.Counter()
    with_loops = 0
    for name, data in files:
        got = outcomes(name, data)
        with_loops += bool(got)
        shapes.update(got)
    return {"files": len(files), "with_loops": with_loops, "shapes": dict(shapes)}


def render(res: dict[str, Any]) -> str:
    lines = [
        f"## {TITLE}",
        "",
        f"`python benchmarks/loops.py --trl-repo <clone of huggingface/trl>` on {res['date']}, "
        f"{res['machine']}. Every legacy loop that TRL106 met, rewritten (`reward_fn` + "
        "`train()`) or left for a human, counted by the reason its TODO names (quoted code "
        "blanked). The shapes behind these counts, with a fixture and the repository each was "
        "seen in, are the catalogue in `tests/fixtures/loops/README.md`.",
        "",
    ]
    for group in res["groups"]:
        shapes = group["shapes"]
        total = sum(shapes.values())
        done = shapes.get(REWRITTEN, 0)
        lines += [
            f"### {group['name']}",
            "",
            f"{group['files']} files, {group['with_loops']} with a legacy loop: **{done} of "
            f"{total} loops rewritten**.",
            "",
            "| outcome | loops |",
            "|---|---|",
        ]
        for shape, n in sorted(shapes.items(), key=lambda kv: (kv[0] != REWRITTEN, -kv[1], kv[0])):
            lines.append(f"| {shape.replace('|', '/')} | {n} |")
        lines.append("")
    if res.get("before"):
        lines += [res["before"], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--trl-repo", type=Path, required=True)
    p.add_argument("--public", type=Path, default=Path.home() / ".cache" / "trl-migrate" / "public")
    p.add_argument("--before", default="", help="a sentence on an earlier run, printed under")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    trl = [
        (f"{e.tags[0]}:{e.path}", e.text)
        for e in examples.collect(args.trl_repo, None)
        if e.path.endswith((".py", ".ipynb"))
    ]
    repos = [
        (str(path.relative_to(args.public)), path.read_bytes())
        for path in public.ppo_paths(args.public)
    ]
    res = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "groups": [
            {"name": "TRL's own examples, every release tag", **count(trl)},
            {"name": "public repositories (benchmarks/public_repos.json)", **count(repos)},
        ],
        "before": args.before,
    }
    text = render(res)
    print(text)
    if not args.no_write:
        write_section(DOC, TITLE, text)


if __name__ == "__main__":
    main()
