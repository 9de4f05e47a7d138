"""Which releases of a package a project's own requirement files admit: `trl==0.16.1` in its
requirements.txt, `trl = "^0.4.1"` in its pyproject.toml, a lock's resolved version.

`fix` asks this of TRL: where a PPO config's default changed between TRL releases, the rewrite
keeps the default of the releases the project declares instead of the newest (a script pinned
to `trl==0.7.10` ran with `batch_size` 256, not 0.7.11's 128). A script's declaration is that of
the nearest folder, from its own up to the project's root, whose sources (the folder's own and
its `requirements/` folder) declare a version: `rlhf/requirements.txt` pins the environment of
`rlhf/train_ppo.py`, and of no script outside `rlhf/`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from compat.sources import format_of, read_source
from compat.versions import Interval, SpecError, intersect, intervals_of, parse_clauses

# readers whose files declare what a project runs on (a notebook's `%pip install` line is one
# run's, not the project's)
_KINDS = (
    "requirements",
    "pyproject",
    "setup.cfg",
    "setup.py",
    "Pipfile",
    "conda",
    "uv.lock",
    "poetry.lock",
    "pylock",
)


@dataclasses.dataclass(frozen=True)
class Admitted:
    releases: tuple[str, ...]  # those of the given releases every declaration admits
    said: str  # the declarations, each with its file: "trl==0.16.1 (requirements.txt)"


def root_sources(root: str) -> list[str]:
    """The requirement sources at `root` and in its `requirements/` folder, sorted."""
    found = []
    for folder in (root, os.path.join(root, "requirements")):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and format_of(path) in _KINDS:
                found.append(path)
    return found


def admitted(
    root: str, package: str, releases: Sequence[str], *, base: str = ""
) -> Admitted | None:
    """The releases of `package` (of those in `releases`) that every declaration of it at
    `root` admits, with the declarations that say so (their files named from `base`, by default
    `root`); None when none declares a version, a specifier cannot be read, or the declarations
    admit none of `releases` together."""
    ranges: list[Interval] | None = None
    said: list[str] = []
    for path in root_sources(root):
        try:
            with open(path, "rb") as fh:
                if package.encode() not in fh.read().lower():
                    continue
        except OSError:
            continue
        src = read_source(path, os.path.relpath(path, base or root).replace(os.sep, "/"))
        for d in src.declared:
            if d.name != package:
                continue
            text, dialect = d.specifier, d.dialect
            if not text and d.url_version:
                text, dialect = f"=={d.url_version.lstrip('v')}", "pep440"
            if not text:
                continue
            try:
                found = intervals_of(parse_clauses(text, dialect))
            except (SpecError, InvalidVersion):
                return None
            ranges = found if ranges is None else intersect(ranges, found)
            said.append(f"{d.display} ({src.display})")
    if ranges is None:
        return None
    kept = tuple(r for r in releases if intersect([(Version(r), True, Version(r), True)], ranges))
    return Admitted(kept, "; ".join(said)) if kept else None


def nearest(
    path: str,
    root: str,
    package: str,
    releases: Sequence[str],
    seen: dict[str, Admitted | None] | None = None,
) -> Admitted | None:
    """What the nearest folder that declares `package` admits for the file `path`: its own
    folder's sources first, then each folder above it, up to and including `root`. `seen`:
    each folder's answer, kept across the files of one run (a folder is read once)."""
    folder = os.path.dirname(os.path.abspath(path))
    top = os.path.abspath(root)
    if os.path.commonpath([folder, top]) != top:
        return None
    seen = {} if seen is None else seen
    while True:
        if folder not in seen:
            seen[folder] = admitted(folder, package, releases, base=top)
        if seen[folder] is not None or folder == top:
            return seen[folder]
        folder = os.path.dirname(folder)


def matching(spec: str, releases: Sequence[str]) -> tuple[str, ...]:
    """The releases a PEP 440 specifier admits (a bare version is `==` it); raises SpecError
    (a ValueError) when `spec` cannot be read."""
    text = spec.strip()
    if text and text[0].isdigit():
        text = f"=={text}"
    try:
        ranges = intervals_of(parse_clauses(text, "pep440"))
    except InvalidVersion as e:
        raise SpecError(str(e)) from e
    return tuple(r for r in releases if intersect([(Version(r), True, Version(r), True)], ranges))
