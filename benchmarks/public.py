"""Our corpus of public PPO repositories: `public_repos.json` names each repository, the commit
it was read at and its PPO files; the code itself is never committed. At benchmark time the
files are read out of local git mirrors of those repositories (one bare clone per repository,
`<mirrors>/<owner>+<name>/repo` or `<mirrors>/<owner>+<name>`), at the recorded commit.

    python benchmarks/public.py materialize --mirrors /work/.mirror --dest
    ~/.cache/trl-migrate/public
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "benchmarks" / "public_repos.json"


@dataclasses.dataclass(frozen=True)
class Repo:
    repo: str  # owner/name
    commit: str
    ppo_files: tuple[str, ...]
    launchers: tuple[str, ...]
    requirements: tuple[str, ...]
    era: str
    vendored_trl: bool
    note: str

    @property
    def slug(self) -> str:
        return self.repo.replace("/", "+")


def load(path: Path = LIST) -> list[Repo]:
    raw = json.loads(path.read_text())
    return [
        Repo(
            repo=r["repo"],
            commit=r["commit"],
            ppo_files=tuple(r["ppo_files"]),
            launchers=tuple(r.get("launchers", ())),
            requirements=tuple(r.get("requirements", ())),
            era=r["era"],
            vendored_trl=bool(r.get("vendored_trl")),
            note=r.get("note", ""),
        )
        for r in raw["repos"]
    ]


def git_dir(mirrors: Path, repo: Repo) -> Path | None:
    for candidate in (mirrors / repo.slug / "repo", mirrors / repo.slug):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    return None


def materialize(mirrors: Path, dest: Path, *, whole: bool = False) -> dict[str, list[str]]:
    """Write each repository's PPO files (or, with `whole`, its whole tree) at the recorded
    commit under `dest/<owner>+<name>/`; returns what was written and what was missing."""
    written: list[str] = []
    missing: list[str] = []
    for repo in load():
        gd = git_dir(mirrors, repo)
        if gd is None:
            missing.append(f"{repo.repo} (no mirror)")
            continue
        out = dest / repo.slug
        git = ["git", "--git-dir", str(gd)]
        paths = (
            subprocess.run(
                [*git, "ls-tree", "-r", "--name-only", repo.commit],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.splitlines()
            if whole
            else list(repo.ppo_files)
        )
        for rel in paths:
            target = out / rel
            if target.exists():
                written.append(str(target))
                continue
            blob = subprocess.run(
                [*git, "show", f"{repo.commit}:{rel}"], capture_output=True, check=False
            )
            if blob.returncode != 0:
                if rel in repo.ppo_files:
                    missing.append(f"{repo.repo}:{rel}")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob.stdout)
            written.append(str(target))
    return {"written": written, "missing": missing}


def ppo_paths(dest: Path) -> list[Path]:
    """The PPO files of every materialized repository, in list order."""
    return [dest / r.slug / f for r in load() for f in r.ppo_files if (dest / r.slug / f).exists()]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("part", choices=["materialize"])
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--dest", type=Path, default=Path.home() / ".cache" / "trl-migrate" / "public")
    p.add_argument(
        "--whole", action="store_true", help="every file of each repository, not only its PPO files"
    )
    args = p.parse_args(argv)
    done = materialize(args.mirrors, args.dest, whole=args.whole)
    print(json.dumps({"written": len(done["written"]), "missing": done["missing"]}, indent=1))


if __name__ == "__main__":
    main()
