"""`compat --resolve`: fixed requirements proven to resolve with TRL 1.13 by a real resolver;
a conflict names the requirements that clash; no resolver or no index is said, not hidden."""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile

import pytest

from compat import check_path
from compat import resolve as resolving
from migrate.kernel.findings import Fix, Severity


@functools.cache
def _index_unreachable() -> str:
    """Why the index cannot be used here ("" when it can)."""
    uv = resolving.resolver()
    if uv is None:
        return "uv is not installed (it comes with the `test` extra)"
    with tempfile.TemporaryDirectory() as tmp:
        req = os.path.join(tmp, "r.in")
        with open(req, "w") as fh:
            fh.write("requests\n")
        try:
            done = subprocess.run(
                [uv, "pip", "compile", "--quiet", req],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "the package index did not answer in 60 s"
    return "" if done.returncode == 0 else f"the package index is unreachable: {done.stderr[-200:]}"


needs_index = pytest.mark.skipif("_index_unreachable()", reason="the package index is unreachable")


@pytest.mark.network
@needs_index
def test_fixed_pins_resolve_and_a_conflict_names_both_requirements(tmp_path):
    ok = tmp_path / "ok"
    ok.mkdir()
    (ok / "requirements.txt").write_text("trl==0.11.4\npeft==0.10.0\n")
    fixed = check_path(str(ok), installed=False, fix=True, resolve=True)
    assert not [f for f in fixed.findings if f.code in ("TRL209", "TRL210")]
    assert fixed.exit_code == 0

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "requirements.txt").write_text(
        'trl==1.13.0\nrequests\ntransformers==4.44.2 ; sys_platform == "darwin"\n'
    )
    report = check_path(str(bad), installed=False, resolve=True)
    (conflict,) = [f for f in report.findings if f.code == "TRL209"]
    assert (conflict.path, conflict.severity, conflict.fix) == (
        "requirements.txt",
        Severity.ERROR,
        Fix.MANUAL,
    )
    assert "on macos" in conflict.message  # the platform its marker names
    assert "transformers>=4.56.2" in conflict.message and "==4.44.2" in conflict.message
    assert report.exit_code == 1


def test_without_a_resolver_the_proof_is_said_to_be_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(resolving, "resolver", lambda: None)
    (tmp_path / "requirements.txt").write_text("trl>=1.13.0\nrequests\n")
    report = check_path(str(tmp_path), installed=False, resolve=True)
    (note,) = [f for f in report.findings if f.code == "TRL210"]
    assert note.severity is Severity.INFO and note.message.startswith(
        "resolution not proven: no resolver"
    )
    assert report.exit_code == 0


def test_an_unreachable_index_is_a_skip_not_a_conflict(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("trl>=1.13.0\nrequests\n")
    monkeypatch.setattr(
        resolving, "_compile", lambda *a: ("offline", "error: Failed to fetch: https://pypi.org")
    )
    report = check_path(str(tmp_path), installed=False, resolve=True)
    assert [f.code for f in report.findings] == ["TRL210"]
    assert "the package index is unreachable" in report.findings[0].message


def test_platforms_are_this_one_and_those_the_markers_name():
    from compat.model import SourceRead
    from compat.sources import requirements

    src = SourceRead(
        "r.txt",
        "r.txt",
        "requirements",
        text=(
            'a ; sys_platform == "darwin"\nb ; platform_system == "Windows"\nc ; sys_platform == "linux"\n'
        ),
    )
    requirements.read(src)
    assert resolving.platforms(src) == ["linux", "macos", "windows"]
