"""TRL's own PPO example scripts and notebooks, every distinct version across its release tags,
migrated by `fix` and smoke-trained on the installed TRL 1.13, for each target.

    python benchmarks/examples.py --trl-repo ~/src/trl              # writes docs/benchmarks.md
    python benchmarks/examples.py --trl-repo ~/src/trl --targets rloo --no-write

It needs a git clone of github.com/huggingface/trl with its tags (the files are read with `git
show TAG:PATH` into a temporary folder; nothing of TRL's is kept). A script whose text is the
same at several tags is run once, under the first tag that has it. Results go into the
`## TRL's own PPO examples` section of docs/benchmarks.md and `<dest>/examples.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpus import machine, write_section  # noqa: E402
from codemods.base import Options  # noqa: E402
from migrate import api  # noqa: E402
from migrate.smoke import smoke_script  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
TITLE = "TRL's own PPO examples"
# Paths that held a PPO example at some tag; a path absent at a tag is skipped.
PATHS = (
    "examples/sentiment/scripts/gpt2-sentiment.py",
    "examples/sentiment/notebooks/gpt2-sentiment.ipynb",
    "examples/notebooks/gpt2-sentiment.ipynb",
    "examples/scripts/sentiment_tuning.py",
    "examples/scripts/ppo.py",
    "examples/scripts/ppo_multi_adapter.py",
    "examples/stack_llama/scripts/rl_training.py",
    "examples/research_projects/stack_llama/scripts/rl_training.py",
    "examples/scripts/ppo/ppo.py",
    "examples/scripts/ppo/ppo_tldr.py",
)
MODEL = ["--model_name_or_path", "EleutherAI/pythia-1b-deduped"]
# The command lines the scripts' own docstrings give, cut to what they require (any model id
# becomes the tiny stand-in; any dataset name gets a table entry or the broad fallback).
ARGS = {
    "examples/scripts/ppo/ppo.py": ["--output_dir", "out", *MODEL],
    "examples/scripts/ppo/ppo_tldr.py": ["--output_dir", "out", *MODEL],
}
SCRIPT_ARGS = [
    "--dataset_name",
    "trl-internal-testing/descriptiveness-sentiment-trl-style",
    "--dataset_train_split",
    "descriptiveness",
]
TLDR_ARGS = [
    "--dataset_name",
    "trl-internal-testing/tldr-preference-sft-trl-style",
    "--dataset_test_split",
    "validation",
]


@dataclasses.dataclass
class Example:
    tags: list[str]  # every tag with this exact text, oldest first
    path: str
    blob: str
    text: bytes


def collect(repo: Path, tags: list[str] | None) -> list[Example]:
    """Every distinct (path, text) of PATHS over the repository's version tags."""
    git = ["git", "-C", str(repo)]
    all_tags = subprocess.run(
        [*git, "tag", "--sort=v:refname"], check=True, capture_output=True, text=True
    ).stdout.split()
    chosen = [
        t for t in all_tags if t.startswith("v") and "rc" not in t and (not tags or t in tags)
    ]
    seen: dict[tuple[str, str], Example] = {}
    for tag in chosen:
        for path in PATHS:
            proc = subprocess.run(
                [*git, "rev-parse", "--verify", "-q", f"{tag}:{path}"],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                continue
            blob = proc.stdout.strip()
            key = (path, blob)
            if key in seen:
                seen[key].tags.append(tag)
                continue
            text = subprocess.run(
                [*git, "cat-file", "blob", blob], check=True, capture_output=True
            ).stdout
            seen[key] = Example([tag], path, blob, text)
    return list(seen.values())


def args_for(example: Example) -> list[str]:
    args = list(ARGS.get(example.path, []))
    if args and b"ScriptArguments" in example.text:
        args += TLDR_ARGS if example.path.endswith("ppo_tldr.py") else SCRIPT_ARGS
    return args


def run_one(
    example: Example, target: str, work: Path, store: str, timeout: float
) -> dict[str, Any]:
    name = f"{example.tags[0]}-{target}-{example.path.replace('/', '_')}"
    script = work / name
    script.write_bytes(example.text)
    started = time.perf_counter()
    report = api.fix_paths(
        [str(script)], options=Options(target=target, target_chosen=True), jobs=1
    )
    fix_s = time.perf_counter() - started
    result = report.results[0]
    todos = sorted({f.code for f in result.findings if f.fix.value == "manual"})
    out: dict[str, Any] = {
        "tags": example.tags,
        "path": example.path,
        "target": target,
        "fix_status": result.status.value,
        "fix_message": result.message,
        "todos": len([f for f in result.findings if f.fix.value == "manual"]),
        "todo_codes": todos,
        "fix_seconds": round(fix_s, 2),
    }
    smoke = smoke_script(str(script), args_for(example), store=store, timeout=timeout)
    print(
        f"[examples] {name}: {smoke.outcome} ({smoke.seconds:.1f} s)", file=sys.stderr, flush=True
    )
    first = smoke.findings[0] if smoke.findings else None
    out.update(
        {
            "outcome": smoke.outcome,
            "steps": smoke.steps_run,
            "seconds": round(smoke.seconds, 1),
            "finding": _stop(first),
        }
    )
    return out


def _stop(first: Any) -> str:
    """Where a run stopped: the first finding's code, line and message ("" when it trained)."""
    if not first:
        return ""
    where = first.where.split(":", 1)[-1] if first.line else ""
    return f"{first.code} {where} {first.message}".strip()


def elapsed_note(in_file: int, unmarked: int) -> str:
    parts = []
    if in_file:
        parts.append(
            f"{in_file} stopped elsewhere in a file where the rewrite left TODOs (the finding "
            "names them): the TODO's subject reached another line."
        )
    if unmarked:
        parts.append(
            f"{unmarked} stopped where no TODO of the file marks anything: each is a gap of "
            "trl-migrate or of the smoke stand-ins (a package the script imports that is not "
            "installed here, a reward or dataset shape the stand-ins do not provide), listed as "
            "they are."
        )
    return " ".join(parts)


def render(res: dict[str, Any]) -> str:
    rows = res["rows"]
    trained = sum(1 for r in rows if r["outcome"] == "passed")
    at_todo = sum(
        1 for r in rows if r["outcome"] != "passed" and "the rewrite left a TODO" in r["finding"]
    )
    in_file = sum(
        1
        for r in rows
        if r["outcome"] != "passed" and "the rewrite left TODOs in this file" in r["finding"]
    )
    unmarked = len(rows) - trained - at_todo - in_file
    lines = [
        f"## {TITLE}",
        "",
        f"`python benchmarks/examples.py --trl-repo <clone of huggingface/trl>` "
        f"on {res['date']}, {res['machine']}; "
        f"TRL {res['trl']} installed. Every distinct version of TRL's PPO example scripts and "
        f"notebooks across its release tags ({res['tags_scanned']} tags scanned, "
        f"{res['examples']} distinct files), migrated by `trl-migrate fix` and then smoke-trained "
        "for 2 steps by `trl-migrate smoke` (tiny offline stand-ins, real TRL 1.13). A row's "
        "first tag is the oldest release that shipped that exact text.",
        "",
        f"**{trained} of {len(rows)} runs trained** (2 steps, finite loss). {at_todo} stopped on a "
        "line where the rewrite left a TODO for a human (the finding says so). "
        f"{elapsed_note(in_file, unmarked)}",
        "",
        "| first tag (of n) | file | target | TODOs left | smoke | s | where it stopped |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        tags = f"{r['tags'][0]} ({len(r['tags'])})"
        todo = f"{r['todos']} ({', '.join(r['todo_codes'])})" if r["todos"] else "0"
        stop = "" if r["outcome"] == "passed" else r["finding"].replace("|", "\\|")[:160]
        cells = [tags, f"`{r['path']}`", r["target"], todo, r["outcome"], r["seconds"], stop]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--trl-repo", type=Path, required=True, help="a git clone of huggingface/trl with tags"
    )
    p.add_argument("--tags", default="", help="comma-separated tags (default: every vX.Y.Z tag)")
    p.add_argument("--targets", default="rloo,grpo")
    p.add_argument("--jobs", type=int, default=3, help="smoke runs at once")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--dest", type=Path, default=Path.home() / ".cache" / "trl-migrate")
    p.add_argument("--no-write", action="store_true")
    p.add_argument(
        "--results", type=Path, help="render a saved examples.json instead of running again"
    )
    args = p.parse_args(argv)
    if args.results:
        section = render(json.loads(args.results.read_text()))
        if args.no_write:
            print(section)
        else:
            write_section(DOC, TITLE, section)
        return
    import trl

    examples = collect(args.trl_repo, [t for t in args.tags.split(",") if t] or None)
    targets = [t for t in args.targets.split(",") if t]
    print(
        f"[examples] {len(examples)} distinct files x {len(targets)} targets",
        file=sys.stderr,
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="trl-migrate-examples-") as tmp:
        work, store = Path(tmp) / "scripts", str(Path(tmp) / "tiny-models")
        work.mkdir()
        jobs = [(e, t) for e in examples for t in targets]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each smoke run is a subprocess
            rows = list(pool.map(lambda et: run_one(et[0], et[1], work, store, args.timeout), jobs))
    tags = subprocess.run(
        ["git", "-C", str(args.trl_repo), "tag"], capture_output=True, text=True
    ).stdout.split()
    res = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "trl": trl.__version__,
        "tags_scanned": len([t for t in tags if t.startswith("v") and "rc" not in t]),
        "examples": len(examples),
        "rows": rows,
    }
    args.dest.mkdir(parents=True, exist_ok=True)
    (args.dest / "examples.json").write_text(json.dumps(res, indent=1))
    section = render(res)
    if args.no_write:
        print(section)
        return
    write_section(DOC, TITLE, section)
    print(
        f"[examples] wrote {DOC.relative_to(ROOT)}; raw results in {args.dest / 'examples.json'}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
