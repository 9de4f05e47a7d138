"""`--fix`: exact bytes after, untouched bytes identical, and fixing twice changes nothing."""

from __future__ import annotations

import os

import pytest

from compat import check_path
from migrate.kernel.findings import Fix, Status
from tests.compat.helpers import copy_fixture, snapshot

# fixture -> {file: [(old, new), ...]}: the only byte changes --fix may make, in order.
CHANGES = {
    "demo": {
        "requirements.txt": [
            ("trl==0.11.4\n", "trl==1.13.0\nrequests\n"),
            ("peft==0.10.0", "peft==0.13.0"),
            ("deepspeed==0.14.4", "deepspeed==0.18.6"),
            ("vllm==0.19.0", "vllm==0.19.1"),
        ]
    },
    "reqs": {
        "requirements.txt": [
            ("trl[peft] >= 0.11, < 0.12  #", "trl[peft] >= 1.13.0  #"),
            ("transformers>=4.40.0 \\", "transformers>=4.56.2 \\"),
            ("\naccelerate\n", "\naccelerate>=1.4.0\n"),
        ],
        "requirements-base.txt": [
            ("peft>=0.8.0", "peft>=0.13.0"),
            ("liger-kernel>=0.8.0,!=0.8.1", "liger-kernel>=0.8.2,!=0.8.1"),
        ],
        "constraints.txt": [("deepspeed<0.15", "deepspeed>=0.18.6")],
    },
    "cycle": {"more.txt": [("peft~=0.10", "peft>=0.13.0,<1")]},
    "hashes": {
        "requirements.in": [("trl\n", "trl>=1.13.0\nrequests\n"), ("peft\n", "peft>=0.13.0\n")]
    },
    "markers": {
        "requirements.txt": [
            ("peft==0.10.0; sys", "peft==0.13.0; sys"),
            ("vllm>=0.19.0 ;", "vllm>=0.19.1,<=0.28.0 ;"),
        ]
    },
    "pep621": {
        "pyproject.toml": [
            ('">=3.8"  # old', '">=3.10"  # old'),
            ("'trl==0.11.4'", "'trl==1.13.0'"),
            ('"peft>=0.8.0 ;', '"peft>=0.13.0 ;'),
            (
                '"vllm>=0.19.0,<=0.27.1", "deepspeed"',
                '"vllm>=0.19.1,<=0.27.1", "deepspeed>=0.18.6"',
            ),
            ('"liger-kernel==0.5.0"', '"liger-kernel==0.8.2"'),
        ]
    },
    "poetry": {
        "pyproject.toml": [
            ('python = "^3.8"', 'python = ">=3.10,<4"'),
            ('trl = "^0.11.4"', 'trl = ">=1.13.0"'),
            ('peft = "^0.4.4"   #', 'peft = ">=0.13.0"   #'),
            (
                '{ version = "~0.19.0", optional = true }',
                '{ version = ">=0.19.1,<0.20", optional = true }',
            ),
            ('">=0.14.4,<0.16"', '">=0.18.6"'),
        ]
    },
    "setupcfg": {
        "setup.cfg": [
            ("= >=3.8", "= >=3.10"),
            ("trl==0.11.4", "trl==1.13.0"),
            ("peft>=0.8.0", "peft>=0.13.0"),
            ("vllm==0.19.0", "vllm==0.19.1"),
            ("deepspeed>=0.14.4", "deepspeed>=0.18.6"),
        ]
    },
    "setuppy": {
        "setup.py": [
            ('"trl==0.11.4"', '"trl==1.13.0"'),
            ("'peft >= 0.8.0'", "'peft >= 0.13.0'"),
            ('">=3.9"', '">=3.10"'),
            ('"vllm==0.19.0"', '"vllm==0.19.1"'),
        ]
    },
    "pipfile": {
        "Pipfile": [
            ('trl = "==0.11.4"', 'trl = "==1.13.0"'),
            ('peft = "*"', 'peft = ">=0.13.0"'),
            ('version = ">=0.19.0"', 'version = ">=0.19.1,<=0.28.0"'),
            ('python_version = "3.9"', 'python_version = "3.10"'),
        ]
    },
    "conda": {
        "environment.yml": [
            ("python=3.9", "python=3.10"),
            ("peft=0.10.0", "peft=0.13.0"),
            ('"accelerate>=1.0"', '"accelerate>=1.4.0"'),
            ("trl==0.11.4", "trl==1.13.0"),
            ("vllm>=0.19.0  #", "vllm>=0.19.1,<=0.28.0  #"),
        ]
    },
    "unpinned": {
        "requirements.txt": [
            (f"{n}\n", f"{n}{s}\n")
            for n, s in [
                ("trl", ">=1.13.0"),
                ("peft", ">=0.13.0"),
                ("deepspeed", ">=0.18.6"),
                ("vllm", ">=0.19.1,<=0.28.0"),
                ("transformers", ">=4.56.2"),
                ("accelerate", ">=1.4.0"),
                ("datasets", ">=4.7.0"),
                ("liger-kernel", ">=0.8.2"),
            ]
        ]
    },
    "malformed": {"requirements-ok.txt": [("deepspeed==0.14.4", "deepspeed==0.18.6")]},
    "notebook": {  # the pins of install lines, inside their JSON strings
        "train.ipynb": [
            ('trl==0.11.4 \\"peft>=0.8\\"', 'trl==1.13.0 \\"peft>=0.13.0\\"'),
            ("vllm==0.19.0 --index-url", "vllm==0.19.1 --index-url"),
        ]
    },
}
# fixtures --fix must leave byte-for-byte alone (locks, hash pins, URLs, fine pins)
UNTOUCHED = ["fine", "uvlock", "poetrylock", "pylock", "vcs"]


def _replace_in_order(data: bytes, pairs: list[tuple[str, str]]) -> bytes:
    text = data.decode("utf-8")
    out, pos = [], 0
    for old, new in pairs:
        hit = text.index(old, pos)
        out.append(text[pos:hit] + new)
        pos = hit + len(old)
    out.append(text[pos:])
    return "".join(out).encode("utf-8")


@pytest.mark.parametrize("fixture", sorted(CHANGES))
def test_fix_exact_bytes_and_twice_is_noop(fixture: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture(fixture, tmp_path)
    before = snapshot(folder)
    report = check_path(folder, installed=False, fix=True)
    after = snapshot(folder)
    expected = dict(before)
    for name, pairs in CHANGES[fixture].items():
        expected[name] = _replace_in_order(before[name], pairs)
    assert after == expected
    changed = sorted(r.path for r in report.results if r.status is Status.CHANGED)
    assert changed == sorted(CHANGES[fixture])
    assert not [f for f in report.findings if f.fix is Fix.AVAILABLE]
    again = check_path(folder, installed=False, fix=True)
    assert snapshot(folder) == after
    assert not [r for r in again.results if r.status is Status.CHANGED]
    assert not [
        f
        for f in again.findings
        if f.code in ("TRL201", "TRL202", "TRL203") and f.fix is not Fix.MANUAL
    ]


@pytest.mark.parametrize("fixture", UNTOUCHED)
def test_fix_leaves_untouched(fixture: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture(fixture, tmp_path)
    before = snapshot(folder)
    check_path(folder, installed=False, fix=True)
    assert snapshot(folder) == before


@pytest.mark.parametrize(
    ("fixture", "exit_before", "exit_after"),
    [
        ("demo", 1, 0),  # nothing fixable is left: `requests` is added next to trl
        ("unpinned", 1, 0),
        ("fine", 0, 0),
        ("malformed", 2, 2),
        ("uvlock", 1, 1),
        ("conda", 1, 0),
    ],
)
def test_exit_codes(fixture: str, exit_before: int, exit_after: int, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture(fixture, tmp_path)
    assert check_path(folder, installed=False).exit_code == exit_before
    assert check_path(folder, installed=False, fix=True).exit_code == exit_after


def test_crlf_bom_and_mode_are_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "requirements.txt"
    path.write_bytes(b"\xef\xbb\xbfpeft==0.10.0\r\n# keep\r\nrequests\r\ntrl>=1.13\r\n")
    os.chmod(path, 0o640)
    check_path(str(tmp_path), installed=False, fix=True)
    assert path.read_bytes() == b"\xef\xbb\xbfpeft==0.13.0\r\n# keep\r\nrequests\r\ntrl>=1.13\r\n"
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_toml_crlf_is_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pyproject.toml"
    path.write_bytes(b'[project]\r\nname = "x"\r\ndependencies = [\r\n  "peft>=0.8",  # x\r\n]\r\n')
    check_path(str(tmp_path), installed=False, fix=True)
    assert (
        path.read_bytes()
        == b'[project]\r\nname = "x"\r\ndependencies = [\r\n  "peft>=0.13.0",  # x\r\n]\r\n'
    )


def test_read_only_file_fails_cleanly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "requirements.txt"
    path.write_bytes(b"peft==0.10.0\n")
    os.chmod(path, 0o444)
    report = check_path(str(tmp_path), installed=False, fix=True)
    assert report.results[0].status is Status.FAILED
    assert "read-only" in report.results[0].message
    assert path.read_bytes() == b"peft==0.10.0\n"
    assert report.exit_code == 2


def test_failed_source_is_not_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "requirements.txt"
    path.write_bytes(b"peft==0.10.0\nbad line here!\n")
    check_path(str(tmp_path), installed=False, fix=True)
    assert path.read_bytes() == b"peft==0.10.0\nbad line here!\n"


def test_two_sources_that_pin_different_trl_versions_conflict_until_fixed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("trl==0.11.4\nrequests\n")
    (tmp_path / "requirements-dev.txt").write_text("trl==0.8.6\nrequests\n")
    before = check_path(str(tmp_path), installed=False)
    (conflict,) = [f for f in before.findings if f.code == "TRL208"]
    assert (conflict.path, conflict.line, conflict.fix) == ("requirements.txt", 1, Fix.AVAILABLE)
    assert conflict.message.startswith(
        "`trl==0.11.4` here and `trl==0.8.6` in requirements-dev.txt:1 admit no common version"
    )
    fixed = check_path(str(tmp_path), installed=False, fix=True)
    assert not [f for f in fixed.findings if f.code == "TRL208"]
    after = check_path(str(tmp_path), installed=False)
    assert not [f for f in after.findings if f.code == "TRL208"] and after.exit_code == 0


def test_sources_that_agree_or_only_overlap_do_not_conflict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("trl>=1.13.0\nrequests\n")
    (tmp_path / "requirements-dev.txt").write_text("trl==1.13.0\nrequests\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["trl"]\n')
    report = check_path(str(tmp_path), installed=False)
    assert not [f for f in report.findings if f.code == "TRL208"]
