"""What the TRL releases each public repository declares change in `fix`'s PPO config rewrites.

    python benchmarks/declared.py [--dest ~/.cache/trl-migrate/public]

For every repository of `public_repos.json` (materialized with `benchmarks/public.py
materialize --whole`), the releases the requirement files nearest its PPO files admit
(compat.declared.nearest: the file's own folder up to the root),
and `fix --check` over it twice: once as if nothing were declared (every release admitted) and
once as `fix` runs, with the declaration. Printed: the repositories whose findings differ, with
the count of "default changed between releases" warnings and of findings that name the declared
release instead, and how many repositories declare one release, a range, or nothing. Nothing is
written.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WARNED = "if you ran another release"  # TRL103: the newest default kept, the others named
DECLARED = "the default of the releases that"  # TRL103: the declared releases' default kept


def counts(repo: str, options: object) -> dict[str, int]:
    from migrate import api

    report = api.fix_paths([repo], mode=api.CHECK, options=options, jobs=1)  # type: ignore[arg-type]
    found: collections.Counter[str] = collections.Counter()
    for result in report.results:
        for f in result.findings:
            found["warned"] += WARNED in f.message
            found["declared"] += DECLARED in f.message
    return dict(found)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dest", default=os.path.expanduser("~/.cache/trl-migrate/public"))
    args = parser.parse_args(argv)
    from codemods import ppo
    from codemods.base import Options
    from compat.declared import nearest

    repos = json.loads((HERE / "public_repos.json").read_text())["repos"]
    kinds: collections.Counter[str] = collections.Counter()
    for entry in repos:
        folder = os.path.join(args.dest, entry["repo"].replace("/", "+"))
        if not os.path.isdir(folder):
            print(f"{entry['repo']}: not materialized, skipped")
            continue
        declared = [
            nearest(os.path.join(folder, path), folder, "trl", ppo.releases())
            for path in entry["ppo_files"]
        ]
        found = next((d for d in declared if d is not None), None)
        kinds["none" if found is None else "one" if len(found.releases) == 1 else "range"] += 1
        if found is None:
            continue
        before = counts(folder, Options(trl_releases=ppo.releases(), trl_declared="every release"))
        after = counts(folder, Options())
        if before != after:
            print(f"{entry['repo']}: {found.said}: before {before}, with it {after}")
    print(
        f"{kinds['one']} repositories declare one release, {kinds['range']} a range, "
        f"{kinds['none']} none these resolve"
    )


if __name__ == "__main__":
    main()
