"""fix on real files: byte fidelity, atomic writes, bad input, exit codes, parallel and serial runs."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from migrate import api
from migrate.kernel.findings import Fix, Status

VH_BEFORE = 'from trl import AutoModelForCausalLMWithValueHead\nm = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n'
VH_AFTER = 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("gpt2")\n'


def write(path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def by_path(report):
    return {os.path.basename(r.path): r for r in report.results}


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(VH_BEFORE.encode(), VH_AFTER.encode(), id="lf"),
        pytest.param(
            VH_BEFORE.replace("\n", "\r\n").encode(),
            VH_AFTER.replace("\n", "\r\n").encode(),
            id="crlf",
        ),
        pytest.param(
            b"\xef\xbb\xbf" + VH_BEFORE.encode(), b"\xef\xbb\xbf" + VH_AFTER.encode(), id="bom"
        ),
        pytest.param(
            VH_BEFORE.rstrip("\n").encode(),
            VH_AFTER.rstrip("\n").encode(),
            id="no-trailing-newline",
        ),
        pytest.param(
            ("# -*- coding: latin-1 -*-\n" + VH_BEFORE + "s = 'caf\u00e9'\n").encode("latin-1"),
            ("# -*- coding: latin-1 -*-\n" + VH_AFTER + "s = 'caf\u00e9'\n").encode("latin-1"),
            id="latin-1-cookie",
        ),
        pytest.param(
            b"def load():\n\tfrom trl import AutoModelForCausalLMWithValueHead\n"
            b"\treturn AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')\n",
            b"def load():\n\tfrom transformers import AutoModelForCausalLM\n"
            b"\treturn AutoModelForCausalLM.from_pretrained('gpt2')\n",
            id="tabs",
        ),
    ],
)
def test_bytes_kept_except_the_rewrite(tmp_path, before, after):
    target = write(tmp_path / "script.py", before)
    report = api.fix_paths([str(tmp_path)])
    assert target.read_bytes() == after
    assert report.exit_code == 0
    second = api.fix_paths([str(tmp_path)], mode=api.CHECK)
    assert second.exit_code == 0
    assert target.read_bytes() == after


def test_mode_and_mtime_kept_for_untouched_and_mode_for_rewritten(tmp_path):
    changed = write(tmp_path / "a.py", VH_BEFORE.encode())
    os.chmod(changed, 0o754)
    untouched = write(tmp_path / "b.py", b"import trl\nprint(trl.__version__)\n")
    os.utime(untouched, (1_000_000, 1_000_000))
    api.fix_paths([str(tmp_path)])
    assert stat.S_IMODE(changed.stat().st_mode) == 0o754
    assert untouched.stat().st_mtime == 1_000_000  # never written
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_check_and_diff_write_nothing(tmp_path, capsys):
    target = write(tmp_path / "a.py", VH_BEFORE.encode())
    for mode in (api.CHECK, api.DIFF):
        report = api.fix_paths([str(target)], mode=mode)
        assert report.exit_code == 1
        assert target.read_bytes() == VH_BEFORE.encode()
        assert {f.fix for r in report.results for f in r.findings} == {Fix.AVAILABLE}
    diff = api.fix_paths([str(target)], mode=api.DIFF).results[0].diff
    assert f"--- a/{target}" in diff and "-m = AutoModelForCausalLMWithValueHead" in diff
    assert "+m = AutoModelForCausalLM.from_pretrained" in diff


def test_symlink_is_followed_and_stays_a_link(tmp_path):
    real = write(tmp_path / "real" / "a.py", VH_BEFORE.encode())
    link = tmp_path / "link.py"
    link.symlink_to(real)
    api.fix_paths([str(link)])
    assert link.is_symlink()
    assert real.read_bytes() == VH_AFTER.encode()


def bad_inputs(tmp_path):
    write(tmp_path / "syntax.py", b"import trl\ndef broken(:\n")
    write(tmp_path / "undecodable.py", b"import trl\nx = '\xff\xfe'\n")
    write(tmp_path / "binary.py", b"import trl\x00\x01\x02")
    unreadable = write(tmp_path / "unreadable.py", b"import trl\n")
    os.chmod(unreadable, 0)
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    write(tmp_path / "empty.py", b"")
    write(tmp_path / "good.py", VH_BEFORE.encode())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and symlinks")
def test_a_syntax_error_is_placed_where_python_places_it(tmp_path):
    # BaleChen/LaGE: a stray letter after a call on line 203; libcst read the error from the
    # next token and said line 204
    src = b"import trl\nx = 1\nstamp = strftime('%H:%M', gmtime())s\nname = stamp\n"
    write(tmp_path / "typo.py", src)
    result = api.fix_paths([str(tmp_path / "typo.py")]).results[0]
    assert result.status is Status.FAILED
    assert result.message == "syntax error at line 3, column 36: invalid syntax"
    assert (tmp_path / "typo.py").read_bytes() == src


def test_bad_inputs_fail_alone_with_clear_messages(tmp_path):
    bad_inputs(tmp_path)
    names = [
        "syntax.py",
        "undecodable.py",
        "binary.py",
        "unreadable.py",
        "loop.py",
        "empty.py",
        "good.py",
    ]
    report = api.fix_paths([str(tmp_path / n) for n in names])
    results = by_path(report)
    assert results["good.py"].status is Status.CHANGED
    assert (tmp_path / "good.py").read_bytes() == VH_AFTER.encode()
    assert results["syntax.py"].message == "syntax error at line 2, column 12: invalid syntax"
    assert results["undecodable.py"].message == "cannot decode as utf-8 (line 2, byte 0xff)"
    assert results["binary.py"].message == "binary file: NUL byte at offset 10"
    assert results["loop.py"].message == "symlink loop: the link points back to itself"
    if os.geteuid() != 0:  # root reads anything
        assert results["unreadable.py"].message == "permission denied: the file cannot be read"
    # An empty file is valid Python (every package has empty __init__.py files): skipped, not failed.
    assert (
        results["empty.py"].status is Status.SKIPPED and results["empty.py"].message == "empty file"
    )
    for name in ("syntax.py", "undecodable.py", "binary.py", "loop.py"):
        assert results[name].status is Status.FAILED
        assert (tmp_path / name).is_symlink() or (tmp_path / name).read_bytes()  # untouched
    assert report.exit_code == 2


def test_missing_path_is_a_failure_not_a_crash(tmp_path):
    report = api.fix_paths([str(tmp_path / "nope.py")])
    assert report.results[0].status is Status.FAILED
    assert report.results[0].message == "no such file or directory"
    assert report.exit_code == 2


def test_read_only_file_is_reported_and_kept(tmp_path):
    target = write(tmp_path / "a.py", VH_BEFORE.encode())
    os.chmod(target, 0o444)
    report = api.fix_paths([str(target)])
    assert report.results[0].status is Status.FAILED
    assert report.results[0].message == "file is read-only; not rewritten"
    assert target.read_bytes() == VH_BEFORE.encode()
    assert {f.fix for f in report.results[0].findings} == {Fix.AVAILABLE}


def test_write_failure_keeps_the_original(tmp_path, monkeypatch):
    target = write(tmp_path / "a.py", VH_BEFORE.encode())

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    report = api.fix_paths([str(target)])
    assert report.results[0].message == "write failed, original kept: No space left on device"
    assert target.read_bytes() == VH_BEFORE.encode()
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]


def test_parallel_and_serial_runs_agree(tmp_path):
    for i in range(40):
        write(
            tmp_path / f"pkg{i % 4}" / f"m{i}.py", (VH_BEFORE if i % 2 else "import os\n").encode()
        )
    serial = api.fix_paths([str(tmp_path)], mode=api.CHECK, jobs=1)
    parallel = api.fix_paths([str(tmp_path)], mode=api.CHECK, jobs=2)
    assert [(r.path, r.status, r.findings) for r in serial.results] == [
        (r.path, r.status, r.findings) for r in parallel.results
    ]
    assert serial.discovered == 40 and serial.parsed == 20


def test_prefilter_skips_files_without_trl_but_named_files_are_parsed(tmp_path):
    write(tmp_path / "ctrl.py", b"ctrl = 1\ndef broken(:\n")
    walked = api.fix_paths([str(tmp_path)])
    assert walked.parsed == 0 and walked.exit_code == 0
    named = api.fix_paths([str(tmp_path / "ctrl.py")])
    assert named.results[0].status is Status.FAILED  # named on the command line: always processed


def test_a_vendored_copy_of_trl_is_said_once_and_never_rewritten(tmp_path):
    from migrate import api
    from migrate.kernel.findings import Fix, Status

    vendored = tmp_path / "trl"
    (vendored / "trainer").mkdir(parents=True)
    (vendored / "__init__.py").write_text(
        '__version__ = "0.4.2.dev0"\nfrom trl.core import set_seed\n'
    )
    (vendored / "core.py").write_text("import trl\ndef set_seed(seed):\n    pass\n")
    (vendored / "trainer" / "ppo_trainer.py").write_text("from trl.core import set_seed\n")
    (tmp_path / "train.py").write_text("from trl.core import set_seed\nset_seed(0)\n")
    before = {p: p.read_bytes() for p in vendored.rglob("*.py")}
    report = api.fix_paths([str(tmp_path)])
    by_path = {r.path.replace(str(tmp_path), ""): r for r in report.results}
    copies = [r for p, r in by_path.items() if p.startswith("/trl/")]
    assert len(copies) == 3 and all(r.status is Status.SKIPPED for r in copies)
    assert all(r.message.startswith("vendored copy of TRL 0.4.2.dev0 at ") for r in copies)
    notes = [f for r in copies for f in r.findings]
    assert [(f.code, f.fix) for f in notes] == [("TRL190", Fix.MANUAL)]
    assert "shadows the installed TRL 1.13" in notes[0].message
    assert {p: p.read_bytes() for p in vendored.rglob("*.py")} == before
    assert by_path["/train.py"].status is Status.CHANGED  # the repo's own code is still fixed
    assert report.exit_code == 1


def test_an_installed_looking_or_unrelated_trl_folder_is_not_a_vendored_copy(tmp_path):
    from migrate.kernel.discovery import vendored_trl

    (tmp_path / "docs" / "trl").mkdir(parents=True)
    (tmp_path / "docs" / "trl" / "notes.py").write_text("import trl\n")  # no package layout
    assert vendored_trl(str(tmp_path / "docs" / "trl" / "notes.py")) is None
    site = tmp_path / "venv" / "lib" / "site-packages" / "trl"
    (site / "trainer").mkdir(parents=True)
    (site / "__init__.py").write_text("")
    assert vendored_trl(str(site / "__init__.py")) is None
