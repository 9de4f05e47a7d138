"""Written-in helpers over the public corpus: how many definitions `fix` writes into the
repositories, one copy per file against one module per folder (codemods/shared.py), measured
on the whole trees of the corpus in `fix --check` mode (nothing is written).

    python benchmarks/public.py materialize --whole --mirrors /work/.mirror \\
        --dest ~/.cache/trl-migrate/public
    python benchmarks/helpers.py                # writes its section of docs/benchmarks.md
    python benchmarks/helpers.py --no-write
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import public  # noqa: E402
from benchmarks.corpus import machine, write_section  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
TITLE = "Written-in helpers: one module per folder"
DEST = Path.home() / ".cache" / "trl-migrate" / "public"


def measure(dest: Path) -> list[dict]:
    from codemods import inline
    from migrate import api
    from migrate.kernel.findings import Status

    def lines(keys) -> int:  # type: ignore[no-untyped-def]
        return sum(inline.shared_module([k]).count("\n") - 3 for k in keys)

    rows = []
    for repo in public.load():
        folder = dest / repo.slug
        if not folder.is_dir():
            continue
        report = api.fix_paths([str(folder)], mode="check", jobs=2)
        modules = [r for r in report.results if r.path.endswith(inline.SHARED_MODULE + ".py")]
        files = [
            r
            for r in report.results
            if r.status is Status.CHANGED and r.helpers and r not in modules
        ]
        importing = [r for r in files if r.new and inline.SHARED_MODULE.encode() in r.new]
        copies = [r for r in files if r not in importing]
        before = sum(len(r.helpers) for r in files)
        after = sum(len(r.helpers) for r in copies) + sum(len(m.helpers) for m in modules)
        rows.append(
            {
                "repo": repo.repo,
                "files": len(files),
                "modules": len(modules),
                "importing": len(importing),
                "before": before,
                "after": after,
                "lines_before": sum(lines(r.helpers) for r in files),
                "lines_after": sum(lines(r.helpers) for r in copies)
                + sum(lines(m.helpers) for m in modules),
                "folders": sorted(
                    os.path.relpath(os.path.dirname(m.path), folder) for m in modules
                ),
            }
        )
    return rows


def render(rows: list[dict], seconds: float) -> str:
    used = [r for r in rows if r["files"]]
    shared = [r for r in used if r["modules"]]
    total = {k: sum(r[k] for r in used) for k in ("files", "modules", "importing", "before")}
    total.update({k: sum(r[k] for r in used) for k in ("after", "lines_before", "lines_after")})
    out = [
        f"## {TITLE}",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {machine()} (`python benchmarks/helpers.py`, "
        f"{seconds:.0f} s). `fix --check` over the whole trees of the {len(rows)} public "
        "repositories of the corpus: the removed helpers `fix` writes in, one copy per file (each "
        "file alone) against one `trl_migrate_helpers.py` per folder where the folder's imports "
        "show its files will find it.",
        "",
        f"{total['files']} files of {len(used)} repositories get helpers written in. "
        f"{total['importing']} of them, in {total['modules']} folders of {len(shared)} "
        f"repositories, import them from a shared module; the others keep their own copies. "
        f"Definitions written: {total['before']} one per file, {total['after']} now "
        f"({total['lines_before']:,} lines against {total['lines_after']:,}).",
        "",
        "| repo | files with helpers | shared modules (folders) | files importing them | "
        "definitions: copies / now | lines: copies / now |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for r in shared:
        out.append(
            f"| {r['repo']} | {r['files']} | {r['modules']} ({', '.join(r['folders'])}) | "
            f"{r['importing']} | {r['before']} / {r['after']} | "
            f"{r['lines_before']:,} / {r['lines_after']:,} |"
        )
    out += [
        "",
        "Repositories not listed keep every copy: one file per folder needs helpers, or the "
        "folder gives no sign of how its files are imported (library modules of a package "
        "imported by absolute paths, notebooks).",
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dest", type=Path, default=DEST, help="materialized whole trees")
    p.add_argument("--no-write", action="store_true", help="print instead of writing docs")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    rows = measure(args.dest)
    section = render(rows, time.perf_counter() - started)
    if args.no_write:
        print(section)
    else:
        write_section(DOC, TITLE, section)
        print(section)


if __name__ == "__main__":
    main()
