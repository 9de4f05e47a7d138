"""Every source format: exact findings (file, line, code, fix state) and the key message text."""

from __future__ import annotations

import os

import pytest

from compat.sources import discover, format_of
from migrate.kernel.findings import Status
from tests.compat.helpers import FIXTURES, copy_fixture, declared, message, summary

A, M = "available", "manual"

EXPECTED = [
    pytest.param(
        "demo",
        [
            ("requirements.txt", 1, "TRL201", A),
            ("requirements.txt", 1, "TRL205", A),  # `requests` goes on the line after trl
            ("requirements.txt", 2, "TRL201", A),
            ("requirements.txt", 3, "TRL201", A),
            ("requirements.txt", 4, "TRL201", A),
        ],
        id="demo",
    ),
    pytest.param("fine", [], id="fine-noop"),
    pytest.param(
        "reqs",
        [
            ("constraints.txt", 1, "TRL201", A),
            ("requirements-base.txt", 1, "TRL202", A),
            ("requirements-base.txt", 2, "TRL202", A),
            ("requirements.txt", 6, "TRL201", A),
            ("requirements.txt", 7, "TRL202", A),
            ("requirements.txt", 9, "TRL202", A),
        ],
        id="requirements-r-c-chain",
    ),
    pytest.param("cycle", [("more.txt", 2, "TRL202", A)], id="requirements-cycle"),
    pytest.param(
        "hashes",
        [
            ("requirements.in", 1, "TRL202", A),
            ("requirements.in", 1, "TRL205", A),
            ("requirements.in", 2, "TRL202", A),
            ("requirements.txt", 4, "TRL201", M),
        ],
        id="hash-pinned",
    ),
    pytest.param(
        "vcs",
        [("requirements.txt", 1, "TRL204", M), ("requirements.txt", 2, "TRL201", M)],
        id="vcs",
    ),
    pytest.param(
        "markers",
        [("requirements.txt", 3, "TRL201", A), ("requirements.txt", 5, "TRL202", A)],
        id="markers-linux-only",
    ),
    pytest.param(
        "unpinned",
        [("requirements.txt", n, "TRL202", A) for n in range(1, 9)],
        id="unpinned-everything",
    ),
    pytest.param(
        "pep621",
        [
            ("pyproject.toml", 6, "TRL202", A),
            ("pyproject.toml", 9, "TRL201", A),
            ("pyproject.toml", 10, "TRL202", A),
            ("pyproject.toml", 16, "TRL202", A),
            ("pyproject.toml", 16, "TRL202", A),
            ("pyproject.toml", 20, "TRL201", A),
        ],
        id="pep621-groups",
    ),
    pytest.param(
        "poetry",
        [
            ("pyproject.toml", 6, "TRL202", A),
            ("pyproject.toml", 7, "TRL201", A),
            ("pyproject.toml", 8, "TRL201", A),
            ("pyproject.toml", 9, "TRL202", A),
            ("pyproject.toml", 10, "TRL201", A),
            ("pyproject.toml", 15, "TRL201", M),
        ],
        id="poetry",
    ),
    pytest.param(
        "setupcfg",
        [
            ("setup.cfg", 5, "TRL202", A),
            ("setup.cfg", 7, "TRL201", A),
            ("setup.cfg", 9, "TRL202", A),
            ("setup.cfg", 13, "TRL201", A),
            ("setup.cfg", 15, "TRL202", A),
        ],
        id="setup-cfg",
    ),
    pytest.param(
        "setuppy",
        [
            ("setup.py", 4, "TRL201", A),
            ("setup.py", 5, "TRL202", A),
            ("setup.py", 11, "TRL202", A),
            ("setup.py", 13, "TRL201", A),
            ("setup.py", 13, "TRL201", M),
        ],
        id="setup-py",
    ),
    pytest.param(
        "pipfile",
        [
            ("Pipfile", 7, "TRL201", A),
            ("Pipfile", 8, "TRL202", A),
            ("Pipfile", 9, "TRL202", A),
            ("Pipfile", 13, "TRL201", M),
            ("Pipfile", 16, "TRL201", A),
        ],
        id="pipfile",
    ),
    pytest.param(
        "conda",
        [
            ("environment.yml", 6, "TRL201", A),
            ("environment.yml", 8, "TRL201", A),
            ("environment.yml", 9, "TRL202", A),
            ("environment.yml", 13, "TRL201", A),
            ("environment.yml", 14, "TRL202", A),
        ],
        id="conda",
    ),
    pytest.param(
        "uvlock", [("uv.lock", 5, "TRL201", M), ("uv.lock", 10, "TRL205", M)], id="uv-lock"
    ),
    pytest.param(
        "poetrylock",
        [("poetry.lock", 4, "TRL201", M), ("poetry.lock", 11, "TRL201", M)],
        id="poetry-lock",
    ),
    pytest.param("pylock", [("pylock.toml", 10, "TRL201", M)], id="pylock"),
    pytest.param(
        "notebook",
        [
            ("train.ipynb", 16, "TRL201", A),  # pins of install lines are edited in place
            ("train.ipynb", 16, "TRL202", A),
            ("train.ipynb", 26, "TRL201", A),
        ],
        id="notebook",
    ),
]


@pytest.mark.parametrize(("fixture", "expected"), EXPECTED)
def test_findings(fixture: str, expected: list[tuple[str, int, str, str]], tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = declared(copy_fixture(fixture, tmp_path))
    assert summary(report) == sorted(expected)


@pytest.mark.parametrize(
    ("fixture", "path", "line", "code", "fragments"),
    [
        (
            "demo",
            "requirements.txt",
            1,
            "TRL201",
            ["`trl==0.11.4`", "needs trl>=1.13.0", "fix: trl==1.13.0"],
        ),
        (
            "demo",
            "requirements.txt",
            2,
            "TRL201",
            ["needs peft>=0.13.0", "previously >=0.8.0", "fix: peft==0.13.0"],
        ),
        ("demo", "requirements.txt", 3, "TRL201", ["deepspeed>=0.18.6", "fix: deepspeed==0.18.6"]),
        ("demo", "requirements.txt", 4, "TRL201", ["vllm>=0.19.1,<=0.28.0", "fix: vllm==0.19.1"]),
        (
            "demo",
            "requirements.txt",
            1,
            "TRL205",
            ["`requests`", "add `requests` next to `trl==0.11.4`"],
        ),
        ("reqs", "requirements.txt", 6, "TRL201", ["fix: trl[peft] >= 1.13.0"]),
        ("reqs", "requirements-base.txt", 2, "TRL202", ["fix: liger-kernel>=0.8.2,!=0.8.1"]),
        (
            "unpinned",
            "requirements.txt",
            4,
            "TRL202",
            ["no version constraint", "fix: vllm>=0.19.1,<=0.28.0"],
        ),
        (
            "hashes",
            "requirements.txt",
            4,
            "TRL201",
            ["pip-compile --generate-hashes --upgrade-package 'peft>=0.13.0' requirements.in"],
        ),
        ("vcs", "requirements.txt", 1, "TRL204", ["git+ssh://", "no version tag"]),
        ("vcs", "requirements.txt", 2, "TRL201", ["use a release tag in >=0.13.0"]),
        ("poetry", "pyproject.toml", 8, "TRL201", ['fix: peft = ">=0.13.0"']),
        ("poetry", "pyproject.toml", 9, "TRL202", ['fix: vllm = ">=0.19.1,<0.20"']),
        ("poetry", "pyproject.toml", 6, "TRL202", ["Python >=3.10", "fix: >=3.10,<4"]),
        ("conda", "environment.yml", 6, "TRL201", ["fix: python=3.10"]),
        ("conda", "environment.yml", 8, "TRL201", ["fix: peft=0.13.0"]),
        ("pipfile", "Pipfile", 16, "TRL201", ["fix: 3.10"]),
        ("setuppy", "setup.py", 13, "TRL201", ["escapes or split across lines"]),
        ("uvlock", "uv.lock", 5, "TRL201", ["uv lock --upgrade-package peft"]),
        ("poetrylock", "poetry.lock", 11, "TRL201", ["poetry update trl"]),
        ("pylock", "pylock.toml", 10, "TRL201", ["regenerate pylock.toml with uv"]),
        ("notebook", "train.ipynb", 26, "TRL201", ["`vllm==0.19.0`", "fix: vllm==0.19.1"]),
    ],
)
def test_messages(fixture: str, path: str, line: int, code: str, fragments: list[str]) -> None:
    text = message(declared(os.path.join(FIXTURES, fixture)), path, line, code)
    for fragment in fragments:
        assert fragment in text


def test_uv_lock_judges_base_version_of_local_build() -> None:
    report = declared(os.path.join(FIXTURES, "uvlock"))
    vllm = [r for r in report.rows if r.package == "vllm"]
    assert [(r.line, r.declared, r.verdict) for r in vllm] == [(15, "==0.24.0+cu129", "ok")]


def test_conda_local_torch_and_build_string_are_read() -> None:
    report = declared(os.path.join(FIXTURES, "conda"))
    rows = {r.package: r for r in report.rows}
    assert rows["datasets"].verdict == "ok" and rows["datasets"].declared == "4.7.0"
    assert "torch" not in rows  # no rule for torch in declared sources


def test_markers_false_here_are_skipped_unless_all_platforms() -> None:
    folder = os.path.join(FIXTURES, "markers")
    rows = {r.package: r.verdict for r in declared(folder).rows}
    assert rows["deepspeed"].startswith("skipped: marker")
    everywhere = declared(folder, all_platforms=True)
    assert ("requirements.txt", 4, "TRL201", A) in summary(everywhere)


def test_cycle_is_reported_once_as_info() -> None:
    report = declared(os.path.join(FIXTURES, "cycle"))
    cycles = [f for f in report.findings if f.code == "TRL206"]
    assert [(f.path, f.line, f.severity.value) for f in cycles] == [("more.txt", 1, "info")]
    assert "requirements.txt -> more.txt -> requirements.txt" in cycles[0].message
    assert report.exit_code == 1  # the floor in more.txt, not the cycle


def test_requests_declared_in_an_included_file_counts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("-r base.txt\ntrl>=1.13.0\n")
    (tmp_path / "base.txt").write_text("requests\n")
    assert summary(declared(str(tmp_path))) == []


def test_trl_vllm_extra_brings_requests(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("trl[vllm]>=1.13.0\n")
    assert summary(declared(str(tmp_path))) == []


def test_missing_include_is_an_error_and_the_includer_is_still_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("-r nowhere.txt\npeft==0.10.0\n")
    report = declared(str(tmp_path))
    assert summary(report) == [
        ("nowhere.txt", 0, "TRL200", "none"),
        ("requirements.txt", 2, "TRL201", A),
    ]
    assert "included from requirements.txt:1" in message(report, "nowhere.txt", 0, "TRL200")
    assert report.exit_code == 2


def test_malformed_inputs_name_file_and_line_and_others_are_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = declared(copy_fixture("malformed", tmp_path))
    failed = {r.path: r.message for r in report.results if r.status is Status.FAILED}
    assert failed == {
        "environment.yml": "line 4: not valid YAML: mapping values are not allowed here",
        "pyproject.toml": "line 1: not valid TOML: Unexpected character: '\\n'",
        "requirements.txt": "line 2: pip would reject `peft=0.10.0`: Expected semicolon (after name with no version specifier) or end",
        "setup.py": "line 2: not valid Python: '[' was never closed",
    }
    # the good lines of a failed requirements file and the other sources are still judged
    assert ("requirements-ok.txt", 1, "TRL201", A) in summary(report)
    assert report.exit_code == 2


def test_setup_py_is_never_executed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "ran"
    (tmp_path / "setup.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\nfrom setuptools import setup\nsetup(install_requires=['peft==0.10.0'])\n"
    )
    assert summary(declared(str(tmp_path))) == [("setup.py", 3, "TRL201", A)]
    assert not marker.exists()


def test_undecodable_file_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_bytes(b"peft==0.10.0\n\xff\xfe\n")
    report = declared(str(tmp_path))
    assert report.results[0].message == "line 2: cannot decode as UTF-8 (byte 0xff)"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("requirements.txt", "requirements"),
        ("requirements-dev.txt", "requirements"),
        ("requirements/base.txt", "requirements"),
        ("req.txt", "requirements"),
        ("reqs.txt", "requirements"),
        ("requirement.txt", "requirements"),
        ("requirments.txt", "requirements"),
        ("new_requirements.txt", "requirements"),
        ("dev-requirements.txt", "requirements"),
        ("requirements.gpu.txt", "requirements"),
        ("frequency.txt", None),
        ("prerequisites.txt", None),
        ("requests.txt", None),
        ("dev.in", "requirements"),
        ("MANIFEST.in", None),
        ("notes.txt", None),
        ("pyproject.toml", "pyproject"),
        ("Pipfile", "Pipfile"),
        ("Pipfile.lock", None),
        ("environment.yml", "conda"),
        ("environment-gpu.yaml", "conda"),
        ("pylock.dev.toml", "pylock"),
        ("uv.lock", "uv.lock"),
        ("train.ipynb", "notebook"),
    ],
)
def test_format_of(name: str, fmt: str | None) -> None:
    assert format_of(os.path.join("/repo", name)) == fmt


def test_discover_skips_virtualenvs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "requirements.txt").write_text("peft\n")
    (tmp_path / "requirements.txt").write_text("peft\n")
    assert discover(str(tmp_path)) == [str(tmp_path / "requirements.txt")]


def test_discover_walks_the_tree_fix_walks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # One walk for both jobs: what .gitignore hides from `fix` is hidden from `compat` too.
    from migrate.kernel.discovery import walk

    (tmp_path / ".gitignore").write_text("vendor/\nrequirements-local.txt\nold_train.py\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "requirements.txt").write_text("trl==0.4\n")
    (tmp_path / "vendor" / "train.py").write_text("import trl\n")
    (tmp_path / "requirements-local.txt").write_text("trl==0.4\n")
    (tmp_path / "requirements.txt").write_text("trl==0.11.4\n")
    (tmp_path / "old_train.py").write_text("import trl\n")
    (tmp_path / "train.py").write_text("import trl\n")
    assert discover(str(tmp_path)) == [str(tmp_path / "requirements.txt")]
    assert list(walk(str(tmp_path))) == [str(tmp_path / "train.py")]


def test_single_file_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = copy_fixture("demo", tmp_path)
    report = declared(os.path.join(folder, "requirements.txt"))
    assert len(summary(report)) == 5


def _notebook(tmp_path, *sources: list[str], indent: int = 1) -> str:  # type: ignore[no-untyped-def]
    import json

    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"c{i}",
            "metadata": {},
            "outputs": [],
            "source": src,
        }
        for i, src in enumerate(sources)
    ]
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(doc, indent=indent) + "\n")
    return str(path)


def test_notebook_install_line_continued_with_a_backslash_is_one_install(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _notebook(
        tmp_path,
        ["%pip install transformers==4.44.2 \\\n", "    trl==0.11.4 \\\n", "    datasets\n"],
    )
    report = declared(path)
    assert [r.message for r in report.results if r.message] == []
    pkgs = sorted((r.package, r.declared, r.line) for r in report.rows)
    # One install, reported at the JSON line of its first physical line (before: "cannot split
    # the install line: No escaped character").
    assert pkgs == [
        ("datasets", "(any)", 10),
        ("transformers", "==4.44.2", 10),
        ("trl", "==0.11.4", 10),
    ]


def test_notebook_automagic_pip_line_is_read_like_percent_pip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _notebook(tmp_path, ["import os\n", "pip install trl==0.8.6 peft\n"], indent=2)
    rows = sorted((r.package, r.declared, r.line) for r in declared(path).rows)
    assert rows == [("peft", "(any)", 11), ("trl", "==0.8.6", 11)]


def test_notebook_in_any_json_layout_is_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = (
        '{"nbformat":4,"nbformat_minor":5,"metadata":{},"cells":[{"source":"!pip install '
        'trl==0.11.4","cell_type":"code","metadata":{},"outputs":[],"execution_count":null}]}'
    )
    (tmp_path / "one_line.ipynb").write_text(text)
    report = declared(str(tmp_path / "one_line.ipynb"))
    assert [(r.package, r.declared, r.line) for r in report.rows] == [("trl", "==0.11.4", 1)]


@pytest.mark.parametrize(
    ("name", "text", "found"),
    [
        pytest.param(
            "train.py",
            'args = GRPOConfig(gradient_checkpointing_kwargs={"offload": True})\n',
            True,
            id="dict",
        ),
        pytest.param(
            "train.py",
            "cfg = dict(\n    gradient_checkpointing_kwargs=dict(\n        offload=True,\n    )\n)\n",
            True,
            id="multi-line",
        ),
        pytest.param(
            "run.sh",
            "python train.py --gradient_checkpointing_kwargs '{\"offload\": true}'\n",
            True,
            id="shell",
        ),
        pytest.param(
            "config.yaml",
            "gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  offload: true\n",
            True,
            id="yaml-block",
        ),
        pytest.param(
            "train.py",
            'args = GRPOConfig(gradient_checkpointing_kwargs={"offload": False})\n',
            False,
            id="off",
        ),
        pytest.param(
            "train.py",
            'args = GRPOConfig(gradient_checkpointing_kwargs={"use_reentrant": False})\n',
            False,
            id="no-offload",
        ),
        pytest.param(
            "train.py", "model.enable_cpu_offload()  # offload\n", False, id="other-offload"
        ),
    ],
)
def test_offload_notice_only_where_the_code_turns_it_on(tmp_path, name, text, found) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("trl==1.13.0\nrequests\n")
    (tmp_path / name).write_text(text)
    notes = [f for f in declared(str(tmp_path)).findings if f.code == "TRL207"]
    assert bool(notes) is found
    if found:
        assert notes[0].message.endswith(
            f"the code sets it at {name}:{text[: text.index('gradient_checkpointing_kwargs')].count(chr(10)) + 1}"
        )


def test_an_empty_notebook_file_declares_nothing_and_fails_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty.ipynb").write_text("")
    (tmp_path / "requirements.txt").write_text("trl>=1.13.0\nrequests\n")
    report = declared(str(tmp_path))
    assert [r.status for r in report.results] == [Status.UNCHANGED, Status.UNCHANGED]
    assert report.exit_code == 0
