"""The effective-settings checker (migrate/effective/) over every PPO config `fix` rewrites: our
era fixtures, every version of TRL's own PPO examples, and our corpus of public repositories.
Counts the settings that change and those no finding names, per setting.

    python benchmarks/effective.py --trl-repo /work/.mirror/huggingface+trl/repo    #
    docs/benchmarks.md
    python benchmarks/effective.py --codemods-from /tmp/old-checkout --no-write     # another
    version's rules

`--codemods-from` runs the rewrite of another checkout of trl-migrate (say, the commit before a
change) and judges it with this checkout's checker, for before/after figures in one run.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import public  # noqa: E402
from benchmarks.corpus import machine, write_section  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
TITLE = "Effective training settings"
FIXTURES = ROOT / "tests" / "fixtures" / "eras"
NOT_JUDGED = (
    "Also judged: the sampling settings of a legacy loop that TRL106 rewrote (what its "
    "`trainer.generate(...)` calls passed, or left to the model's generation config, against the "
    "new config's sampling fields and `generation_kwargs`), and the dtype each model loads in "
    "(float32 on transformers 4, the checkpoint's dtype on transformers 5). Not judged: the "
    "reward a rewritten loop computes (tests/smoke/test_loop_catalogue_rewards.py runs each "
    "catalogued loop's reward and its `reward_fn` on the same completions), the dtype of "
    "`pipeline(...)` models, and configs built from `**kwargs` (no literal keywords to compare)."
)
# Runs `fix` of the checkout given as argv[1] over the files named on stdin (one JSON list), for
# the target argv[2]; prints, per file, the rewritten text and the findings' messages and codes.
_REWRITE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import codemods
from codemods.base import Options
from codemods.engine import process
codes = [r.code for r in codemods.RULES]
out = []
for path in json.load(sys.stdin):
    data = open(path, "rb").read()
    r = process(path, data, codes=codes, options=Options(target=sys.argv[2], target_chosen=True))
    new = (r.new or data).decode("utf-8", "replace")
    findings = [[f.code, f.message] for f in r.findings]
    out.append({"path": path, "new": new, "status": r.status.value, "findings": findings})
print(json.dumps(out))
"""


def rewrite(paths: list[Path], target: str, checkout: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", _REWRITE, str(checkout), target],
        input=json.dumps(list(map(str, paths))),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def judge(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from migrate import effective
    from migrate.kernel.findings import Finding, Severity

    calls = changed = uncovered = 0
    by_setting: collections.Counter[str] = collections.Counter()
    missed: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for row in rows:
        original = Path(row["path"]).read_text(errors="replace")
        findings = [
            Finding(code, Severity.INFO, row["path"], 0, 0, msg) for code, msg in row["findings"]
        ]
        try:
            reports = effective.check(original, row["new"], findings)
        except (SyntaxError, RuntimeError, ValueError):
            continue
        for r in reports:
            calls += 1
            for d in r.differences:
                changed += 1
                by_setting[d.setting] += 1
                if not d.covered:
                    uncovered += 1
                    missed[d.setting] += 1
                    examples.setdefault(
                        d.setting, f"{Path(row['path']).name}:{r.line} {d.old!r} -> {d.new!r}"
                    )
    return {
        "files": len(rows),
        "calls": calls,
        "changed": changed,
        "uncovered": uncovered,
        "by_setting": dict(by_setting),
        "missed": dict(missed),
        "examples": examples,
    }


def example_files(repo: Path | None, dest: Path) -> list[Path]:
    if repo is None:
        return []
    from benchmarks.examples import collect

    out = []
    for ex in collect(repo, None):
        if not ex.path.endswith(".py"):
            continue
        target = dest / ex.tags[0] / ex.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(ex.text)
        out.append(target)
    return out


def render(res: dict[str, Any]) -> str:
    lines = [
        f"## {TITLE}",
        "",
        (
            f"Measured {res['date']} on {res['machine']} (`python benchmarks/effective.py`). For "
            "each PPO config "
            "call `fix` rewrites (a `PPOConfig(...)` call, or a config a command-line parser "
            "builds), "
            "`migrate/effective/` computes the old run's settings (the era's defaults from every "
            "TRL wheel and "
            "the call's literals, through what that era's trainer did) and the new run's (the "
            "rewritten call "
            "built as a real TRL 1.13 config), and checks that every setting that differs is named "
            "by a finding."
        ),
        "",
        "| files | rules | PPO files | config calls | settings that differ | not named by a "
        "finding |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for g in res["groups"]:
        for label, r in (("before", g.get("before")), ("now", g["now"])):
            if r:
                lines.append(
                    f"| {g['name']} ({g['target']}) | {label} | {r['files']} | {r['calls']} | "
                    f"{r['changed']} | "
                    f"{r['uncovered']} |"
                )
    lines += ["", "Settings not named by a finding (now), with one example each:", ""]
    missed: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for g in res["groups"]:
        missed.update(g["now"]["missed"])
        for k, v in g["now"]["examples"].items():
            examples.setdefault(k, v)
    lines += [f"- `{k}`: {n} (`{examples[k]}`)" for k, n in missed.most_common()] or ["- none"]
    if res.get("before_commit"):
        lines += [
            "",
            f"'before' is the rewrite of commit {res['before_commit']}, judged by the same "
            "checker.",
        ]
    lines += ["", NOT_JUDGED]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--trl-repo", type=Path, help="a clone of huggingface/trl with its tags")
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument(
        "--codemods-from", type=Path, help="another checkout whose rules give the 'before' figures"
    )
    p.add_argument("--before-commit", default="", help="what --codemods-from is, for the table")
    p.add_argument("--targets", default="rloo")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp)
        public.materialize(args.mirrors, dest / "public")
        sets = [
            ("era fixtures", sorted(FIXTURES.glob("*.py"))),
            ("TRL's PPO examples", example_files(args.trl_repo, dest / "examples")),
            (
                "public repositories",
                [q for q in public.ppo_paths(dest / "public") if q.suffix == ".py"],
            ),
        ]
        groups = []
        for target in args.targets.split(","):
            for name, paths in sets:
                if not paths:
                    continue
                g: dict[str, Any] = {
                    "name": name,
                    "target": target,
                    "now": judge(rewrite(paths, target, ROOT)),
                }
                if args.codemods_from:
                    g["before"] = judge(rewrite(paths, target, args.codemods_from))
                groups.append(g)
                print(
                    name,
                    target,
                    {k: g[k]["uncovered"] for k in ("before", "now") if k in g},
                    flush=True,
                )
    res = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "groups": groups,
        "before_commit": args.before_commit,
    }
    text = render(res)
    if not args.no_write:
        write_section(DOC, TITLE, text)
    print(text)


if __name__ == "__main__":
    main()
