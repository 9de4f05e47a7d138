"""Fault injection shared by the CI tests and `benchmarks/corpus.py faults`: a write-heavy tree,
the bytes each file may hold, and a loop that SIGKILLs `trl-migrate fix` at random points.

The invariant checked after every kill: each file holds exactly its old bytes or exactly its new
bytes (never a prefix, never a mix, never missing) and no stray `.py` file appeared. Leftover
temporary files (`.name.XXXX.trl-migrate.tmp`) are counted: a kill between creating one and
renaming it over the original leaves it behind, and it must not disturb the next run.
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import codemods
from codemods.base import Options
from codemods.engine import process
from migrate.kernel.findings import Status

# One value-head script, in the byte variants a real repository holds.
_BODY = (
    "from trl import AutoModelForCausalLMWithValueHead\n"
    "import torch  # comment stays\n"
    "\n"
    "def load_{i}(path):\n"
    "    model = AutoModelForCausalLMWithValueHead.from_pretrained(path)\n"
    "    return model  # file {i}\n"
)


def variant(i: int) -> bytes:
    """File `i` of the tree: LF, CRLF, BOM, latin-1 cookie or no final newline, by turn.

    Ten distinct contents (five byte kinds, two sizes), so the expected rewrites are cheap.
    """
    k = i % 10
    text = _BODY.format(i=k) + f"x = {k}\n" * (8 * (k // 5))
    kind = i % 5
    if kind == 1:
        return text.replace("\n", "\r\n").encode()
    if kind == 2:
        return b"\xef\xbb\xbf" + text.encode()
    if kind == 3:
        return ("# -*- coding: latin-1 -*-\n" + text + "s = 'caf\u00e9'\n").encode("latin-1")
    if kind == 4:
        return text.rstrip("\n").encode()
    return text.encode()


@dataclasses.dataclass
class Tree:
    root: Path
    old: dict[Path, bytes]
    new: dict[Path, bytes]  # what `fix` writes, computed in-process by the same engine
    select: tuple[str, ...] = ()  # rule codes the runs use (all when empty)

    def restore(self) -> None:
        for path, data in self.old.items():
            if path.read_bytes() != data:
                path.write_bytes(data)

    def leftovers(self) -> list[Path]:
        return [p for p in self.root.rglob("*") if p.name.endswith(".trl-migrate.tmp")]

    def check(self) -> tuple[int, int]:
        """(files holding new bytes, files holding old bytes); AssertionError on anything else."""
        n_new = n_old = 0
        for path, old in self.old.items():
            assert path.exists(), f"{path} is missing"
            data = path.read_bytes()
            if data == self.new[path]:
                n_new += 1
            elif data == old:
                n_old += 1
            else:
                raise AssertionError(
                    f"{path} holds neither its old nor its new bytes ({len(data)} bytes)"
                )
        stray = {p for p in self.root.rglob("*.py")} - set(self.old)
        assert not stray, f"stray files appeared: {sorted(stray)[:5]}"
        return n_new, n_old


def make_tree(root: Path, n_files: int, *, select: tuple[str, ...] = ()) -> Tree:
    """`n_files` scripts under `root`, and what `fix --select SELECT` rewrites each to."""
    codes = tuple(r.code for r in codemods.select(select))
    old: dict[Path, bytes] = {}
    new: dict[Path, bytes] = {}
    rewrites: dict[bytes, bytes] = {}
    for i in range(n_files):
        path = root / f"pkg{i % 8}" / f"train_{i:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = variant(i)
        path.write_bytes(data)
        if data not in rewrites:
            result = process(str(path), data, codes=codes, options=Options())
            assert result.status is Status.CHANGED and result.new is not None, (
                path,
                result.message,
            )
            assert not result.needs_human, [f.message for f in result.findings]
            rewrites[data] = result.new
        old[path], new[path] = data, rewrites[data]
    return Tree(root, old, new, select)


def fix_command(tree: Tree, jobs: int = 2) -> list[str]:
    select = ["--select", ",".join(tree.select)] if tree.select else []
    return [
        sys.executable,
        "-m",
        "migrate",
        "fix",
        "--jobs",
        str(jobs),
        "--format",
        "json",
        *select,
        str(tree.root),
    ]


def _first_write(tree: Tree, proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Poll until some file holds new bytes (the write phase started) or the process ends."""
    paths = list(tree.old)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for path in paths:
            try:
                if (
                    path.stat().st_size != len(tree.old[path])
                    or path.read_bytes() != tree.old[path]
                ):
                    return True
            except OSError:
                continue
        time.sleep(0.0005)
    return False


@dataclasses.dataclass
class KillStats:
    kills: int = 0
    finished_before_kill: int = 0
    mixed: int = 0  # kills that left some files new and some old: the kill landed mid-write
    all_new: int = 0
    all_old: int = 0
    leftover_tmp: int = 0  # distinct temporary files left by kills (all ignored by the next run)
    run_seconds: float = 0.0  # one unkilled run, for the kill schedule

    def as_dict(self) -> dict[str, float | int]:
        return dataclasses.asdict(self)


def kill_loop(tree: Tree, *, kills: int, seed: int = 0, jobs: int = 2) -> KillStats:
    """SIGKILL `fix` `kills` times and check the tree after each; then finish the run cleanly.

    Half the kills land at a uniform random time over a whole run, half at a random time
    after the first file was replaced (the write phase, where a partial write could happen).
    The whole process group is killed, worker processes included.
    """
    rng = random.Random(seed)
    stats = KillStats()
    seen_tmp: set[Path] = set()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    subprocess.run(fix_command(tree, jobs), check=False, capture_output=True, env=env)
    stats.run_seconds = time.perf_counter() - started
    assert tree.check() == (len(tree.old), 0), "an unkilled run must rewrite every file"
    for k in range(kills):
        tree.restore()
        proc = subprocess.Popen(
            fix_command(tree, jobs),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        try:
            if k % 2 == 0:
                time.sleep(rng.uniform(0.0, stats.run_seconds * 1.05))
            elif _first_write(tree, proc, timeout=stats.run_seconds * 3):
                time.sleep(rng.uniform(0.0, 0.02))
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                stats.kills += 1
            else:
                stats.finished_before_kill += 1
            proc.wait()
        _reap_group(proc.pid)
        n_new, n_old = tree.check()
        stats.mixed += bool(n_new and n_old)
        stats.all_new += n_old == 0
        stats.all_old += n_new == 0
        seen_tmp.update(tree.leftovers())
        stats.leftover_tmp = len(seen_tmp)
    # Whatever state the kills left, one clean run finishes the job and a second finds nothing.
    done = subprocess.run(fix_command(tree, jobs), check=False, capture_output=True, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert tree.check() == (len(tree.old), 0)
    again = subprocess.run(
        [*fix_command(tree, jobs), "--check"], check=False, capture_output=True, env=env
    )
    assert again.returncode == 0, again.stdout.decode(errors="replace")[-2000:]
    return stats


def _reap_group(pgid: int) -> None:
    """Wait (briefly) until no process of the killed group is left."""
    for _ in range(200):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.005)
