"""A throwaway copy of the user's project for a smoke run: the script runs inside it, from the
folder its launch line runs from, so relative paths (`data/train.json`, `configs/ppo.yaml`)
resolve as they do for the user, while whatever the run writes lands in the copy, never in the
repo. Small files are copied; large ones (data, checkpoints) are linked, read-only in spirit:
a script that writes over an existing large file would write through, so they are few (over
MAX_COPY bytes) and named in the log.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any

from migrate.kernel.discovery import DEFAULT_EXCLUDES

MAX_COPY = 8 * 1024 * 1024  # bytes: larger files are linked, not copied
MAX_FILES = 5_000  # a bigger tree is not copied: the run falls back to a bare folder
MAX_BYTES = 200 * 1024 * 1024  # nor one whose small files add up to more than this


def mirror(root: str, dest: str) -> bool:
    """Copy the project at `root` into `dest`, the usual VCS, build and venv folders skipped
    (ignored files are kept: local data a script reads is often ignored). False, with nothing
    copied, when it has over MAX_FILES files or MAX_BYTES of small files."""
    files = []
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDES)
        for name in names:
            path = os.path.join(folder, name)
            files.append(path)
            try:
                size = os.lstat(path).st_size
            except OSError:
                continue
            total += size if size <= MAX_COPY else 0
        if len(files) > MAX_FILES or total > MAX_BYTES:
            return False
    for path in files:
        rel = os.path.relpath(path, root)
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            if os.path.islink(path) or os.path.getsize(path) > MAX_COPY:
                os.symlink(os.path.realpath(path), target)
            else:
                shutil.copy2(path, target)
        except OSError:
            continue
    return True


def inside(path: str, root: str, dest: str) -> str:
    """`path` (under `root`) as the same place under `dest`; `path` itself when outside root."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel.startswith(".."):
        return os.path.abspath(path)
    return os.path.normpath(os.path.join(dest, rel))


def trim_configs(copy: str, left: Sequence[tuple[str, str]]) -> list[tuple[str, str, Any]]:
    """Leave `left`'s keys (config path from the project root, key) out of the copy's config
    files: keys the launch line's config sets that the rewritten script's parser no longer
    takes, each with a TODO in the repo. What was left out comes back with its value; a file
    that cannot be edited safely stays as it is (the run then stops on the key, as the real
    launch would)."""
    from migrate.kernel import config_text

    by_file: dict[str, list[str]] = {}
    for rel, key in left:
        by_file.setdefault(rel, []).append(key)
    out: list[tuple[str, str, Any]] = []
    for rel, keys in sorted(by_file.items()):
        path = os.path.join(copy, rel)
        suffix = os.path.splitext(path)[1].lower()
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        data = config_text.load(text, suffix) or {}
        trimmed = config_text.without(text, suffix, keys)
        if trimmed is None:
            continue
        if os.path.islink(path):
            os.unlink(path)  # a linked (large) file of the repo: written as a file of the copy
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(trimmed)
        out += [(rel, key, data.get(key)) for key in keys]
    return out
