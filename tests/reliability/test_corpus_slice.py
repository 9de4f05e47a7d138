"""A bounded slice of the real corpus (`benchmarks/corpus.py run` is the whole of it).

The installed trl package and PPO-era files of a cached TRL 0.11.4 wheel (its PPO trainer and
config, and the `ppo.py` / `ppo_multi_adapter.py` scripts it shipped), copied to a temp folder
and rewritten there: no crash, no change to a file that does not mention trl, every rewrite
re-parses, and a second pass proposes nothing. The whole wheels of 0.4.7 and 0.11.4 are `slow`.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import libcst as cst
import pytest

from migrate import api
from migrate.kernel.files import decode_python
from migrate.kernel.findings import Status

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".wheels"
MENTION = re.compile(rb"\btrl\b")


def installed_trl() -> Path:
    trl = pytest.importorskip("trl")
    return Path(trl.__file__).parent


def unpack(version: str, dest: Path, members: tuple[str, ...] = ()) -> Path:
    wheel = WHEELS / f"trl-{version}-py3-none-any.whl"
    if not wheel.exists():  # a clean clone (CI): fetch it from the package index, as the tools do
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "-q",
                "-d",
                str(WHEELS),
                f"trl=={version}",
            ],
            capture_output=True,
            timeout=300,
        )
    if not wheel.exists():
        pytest.skip(f"{wheel.name} is not cached and could not be downloaded (no package index?)")
    folder = dest / f"trl-{version}"
    with zipfile.ZipFile(wheel) as zf:
        names = [
            n for n in zf.namelist() if n.endswith(".py") and (not members or n.startswith(members))
        ]
        zf.extractall(folder, names)
    return folder


def assert_corpus_invariants(folders: list[Path]) -> api.FixReport:
    """Check `folders`, then rewrite the changed files in place (they are copies) and check again."""
    report = api.fix_paths([str(f) for f in folders], mode=api.CHECK, jobs=2)
    changed = [r for r in report.results if r.status is Status.CHANGED]
    for result in report.results:
        if result.status is Status.FAILED:
            assert result.message and not result.message.startswith("internal error"), (
                result.path,
                result.message,
            )
    for result in changed:
        assert result.old is not None and result.new is not None
        assert MENTION.search(result.old), f"{result.path}: changed, but it does not mention trl"
        text = decode_python(result.new).text
        cst.parse_module(text)
        ast.parse(text)
    if changed:
        written = api.fix_paths([r.path for r in changed], jobs=2)
        assert written.exit_code != 2, [(r.path, r.message) for r in written.results if r.message]
        for result in changed:
            assert Path(result.path).read_bytes() == result.new
        again = api.fix_paths([r.path for r in changed], mode=api.CHECK, jobs=2)
        assert [r.path for r in again.results if r.status is Status.CHANGED] == []
    return report


def test_installed_trl_and_ppo_files_of_trl_0_11(tmp_path):
    trl = shutil.copytree(
        installed_trl(), tmp_path / "trl-installed", ignore=shutil.ignore_patterns("__pycache__")
    )
    old = unpack("0.11.4", tmp_path, ("trl/commands/scripts/ppo", "trl/trainer/ppo_config.py"))
    report = assert_corpus_invariants([trl, old])
    changed = {Path(r.path).name for r in report.results if r.status is Status.CHANGED}
    assert {"ppo.py", "ppo_multi_adapter.py"} <= changed  # legacy step() scripts: real rewrites
    assert report.discovered > 150


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.4.7", "0.11.4"])
def test_whole_old_wheel(tmp_path, version):
    assert_corpus_invariants([unpack(version, tmp_path)])
