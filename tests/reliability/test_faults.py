"""Fault injection: SIGKILL mid-run, read-only files, folders and file systems, a full disk.

Whatever happens, every file holds its old bytes or its new bytes, never a part, and a problem
with one file is that file's clear failure. The long run (200 files, many kills) is
`python benchmarks/corpus.py faults`; here a bounded slice runs in CI.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from migrate import api
from migrate.kernel.findings import Fix, Status
from tests.reliability.faults import kill_loop, make_tree, variant

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals, modes and mounts")


@posix_only
def test_sigkill_at_random_points_never_leaves_a_partial_file(tmp_path):
    # 16 files reach the pool threshold, so worker processes are killed too. One rule keeps each
    # run short: what is under test is the writing, not the rules.
    tree = make_tree(tmp_path, 16, select=("TRL102",))
    stats = kill_loop(tree, kills=20, seed=7)
    assert stats.kills + stats.finished_before_kill == 20
    assert stats.kills >= 5  # most kills land mid-run; a few runs may finish first
    # kill_loop asserted after every kill that each file held its old or its new bytes, and
    # that one clean run afterwards rewrote everything and a check run found nothing left.


@contextlib.contextmanager
def tmpfs(size: str) -> Iterator[Path]:
    """A fresh tmpfs of `size` (a real file system with real limits), or skip where none mounts."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs Linux and root")
    where = Path(tempfile.mkdtemp(prefix="trl-migrate-tmpfs-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        check=False,
        capture_output=True,
    )
    if done.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)
        where.rmdir()


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_read_only_files_fail_alone_and_the_rest_are_rewritten(tmp_path):
    tree = make_tree(tmp_path, 6)
    locked = sorted(tree.old)[::2]
    for path in locked:
        os.chmod(path, 0o444)
    report = api.fix_paths([str(tmp_path)], jobs=1)
    by_path = {Path(r.path): r for r in report.results}
    for path in tree.old:
        if path in locked:
            assert by_path[path].status is Status.FAILED
            assert by_path[path].message == "file is read-only; not rewritten"
            assert {f.fix for f in by_path[path].findings} == {Fix.AVAILABLE}  # nothing was applied
            assert path.read_bytes() == tree.old[path]
        else:
            assert by_path[path].status is Status.CHANGED
            assert path.read_bytes() == tree.new[path]
    assert report.exit_code == 2
    assert not tree.leftovers()


@posix_only
def test_read_only_folder_fails_each_file_clearly(tmp_path):
    if os.geteuid() == 0:
        pytest.skip(
            "root writes into read-only folders; the read-only file system test covers root"
        )
    folder = tmp_path / "locked"
    target = _write(folder / "a.py", variant(0))
    other = _write(tmp_path / "b.py", variant(0))
    os.chmod(folder, 0o555)
    try:
        report = api.fix_paths([str(tmp_path)], jobs=1)
    finally:
        os.chmod(folder, 0o755)
    results = {Path(r.path).name: r for r in report.results}
    assert results["a.py"].status is Status.FAILED
    assert results["a.py"].message == "cannot create a temporary file beside it: Permission denied"
    assert target.read_bytes() == variant(0)
    assert results["b.py"].status is Status.CHANGED and other.read_bytes() != variant(0)
    assert report.exit_code == 2


def test_read_only_file_system_fails_each_file_clearly():
    with tmpfs("1m") as where:
        paths = [_write(where / "pkg" / f"m{i}.py", variant(i)) for i in range(3)]
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True, capture_output=True)
        report = api.fix_paths([str(where)], jobs=1)
        for result in report.results:
            assert result.status is Status.FAILED
            assert (
                result.message == "cannot create a temporary file beside it: Read-only file system"
            )
        assert [p.read_bytes() for p in paths] == [variant(i) for i in range(3)]
        assert report.exit_code == 2


def test_full_disk_keeps_every_original_and_leaves_no_temporary_file():
    """A real full file system: small rewrites still fit, large ones fail; all else intact."""
    with tmpfs("256k") as where:
        small = [_write(where / f"small{i}.py", variant(0)) for i in range(3)]
        big_src = variant(0) + b"".join(b"y%d = '%s'\n" % (i, b"z" * 90) for i in range(300))
        big = [_write(where / f"big{i}.py", big_src) for i in range(2)]
        ballast = where / "ballast.bin"
        free = shutil.disk_usage(where).free
        ballast.write_bytes(
            b"\0" * (free - 3 * 4096)
        )  # three pages left: room for a small file only
        report = api.fix_paths([str(where)], jobs=1)
        results = {Path(r.path).name: r for r in report.results}
        for path in big:
            assert results[path.name].status is Status.FAILED
            assert results[path.name].message in (
                "write failed, original kept: No space left on device",
                "cannot create a temporary file beside it: No space left on device",
            )
            assert path.read_bytes() == big_src
        for path in small:
            assert results[path.name].status is Status.CHANGED  # each replace frees the old pages
            assert path.read_bytes() != variant(0)
        assert not list(where.glob("*.tmp")) and not list(where.glob(".*.tmp"))
        assert report.exit_code == 2


def test_partial_write_then_disk_full_keeps_the_original(tmp_path, monkeypatch):
    """Portable version of the full disk: the temporary file takes half the bytes, then ENOSPC."""
    paths = [_write(tmp_path / f"m{i}.py", variant(i)) for i in range(4)]
    real_fdopen = os.fdopen

    class HalfFull:
        def __init__(self, fh):  # type: ignore[no-untyped-def]
            self.fh = fh

        def write(self, data: bytes) -> int:
            self.fh.write(data[: len(data) // 2])
            self.fh.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self.fh, name)

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            self.fh.close()

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: HalfFull(real_fdopen(fd, *a, **k)))
    report = api.fix_paths([str(tmp_path)], jobs=1)
    assert [r.message for r in report.results] == [
        "write failed, original kept: No space left on device"
    ] * 4
    assert [p.read_bytes() for p in paths] == [variant(i) for i in range(4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"m{i}.py" for i in range(4)]
