"""TRL205 fixed: `requests` is declared next to trl, in each source's own style; fixing twice
changes nothing. And `conda list --export` lines saved as requirements.txt read as conda pins."""

from __future__ import annotations

import pytest

from compat import check_path
from migrate.kernel.findings import Fix, Status


def _fix(tmp_path, name: str, text: str) -> tuple[str, list]:  # type: ignore[no-untyped-def]
    (tmp_path / name).write_bytes(text.encode())
    report = check_path(str(tmp_path), installed=False, fix=True)
    return (tmp_path / name).read_bytes().decode(), report.findings


CASES = [
    pytest.param(
        "requirements.txt",
        "trl==1.13.0\npeft>=0.13.0\n",
        "trl==1.13.0\nrequests\npeft>=0.13.0\n",
        id="requirements",
    ),
    pytest.param(
        "requirements.txt",
        "torch\r\ntrl>=1.13.0  # rl\r\n",
        "torch\r\ntrl>=1.13.0  # rl\r\nrequests\r\n",
        id="crlf-comment",
    ),
    pytest.param(
        "requirements.txt",
        "torch\ntrl>=1.13.0",
        "torch\ntrl>=1.13.0\nrequests",
        id="last-line-no-newline",
    ),
    pytest.param(
        "environment.yml",
        "name: rl\ndependencies:\n  - python=3.11\n  - pip:\n    - trl>=1.13.0\n    - torch\n",
        "name: rl\ndependencies:\n  - python=3.11\n  - pip:\n    - trl>=1.13.0\n    - requests\n    - torch\n",
        id="conda-pip-list",
    ),
    pytest.param(
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = [\n    "trl>=1.13.0",\n    "torch",\n]\n',
        '[project]\nname = "x"\ndependencies = [\n    "trl>=1.13.0",\n    "requests",\n    "torch",\n]\n',
        id="pep621-one-per-line",
    ),
    pytest.param(
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = [\n    "torch",\n    "trl>=1.13.0"\n]\n',
        '[project]\nname = "x"\ndependencies = [\n    "torch",\n    "trl>=1.13.0",\n    "requests"\n]\n',
        id="pep621-last-item",
    ),
    pytest.param(
        "pyproject.toml",
        '[project]\nname = "x"\ndependencies = ["trl>=1.13.0", "torch"]\n',
        '[project]\nname = "x"\ndependencies = ["trl>=1.13.0", "requests", "torch"]\n',
        id="pep621-inline",
    ),
    pytest.param(
        "setup.py",
        "from setuptools import setup\nsetup(name='x', install_requires=['trl>=1.13.0'])\n",
        "from setuptools import setup\nsetup(name='x', install_requires=['trl>=1.13.0', 'requests'])\n",
        id="setup-py",
    ),
    pytest.param(
        "pyproject.toml",
        '[tool.poetry.dependencies]\npython = ">=3.10"\ntrl = ">=1.13.0"\n',
        '[tool.poetry.dependencies]\npython = ">=3.10"\ntrl = ">=1.13.0"\nrequests = "*"\n',
        id="poetry",
    ),
    pytest.param(
        "Pipfile",
        '[packages]\ntrl = ">=1.13.0"\n\n[requires]\npython_version = "3.11"\n',
        '[packages]\ntrl = ">=1.13.0"\nrequests = "*"\n\n[requires]\npython_version = "3.11"\n',
        id="pipfile",
    ),
    pytest.param(
        "setup.cfg",
        "[options]\ninstall_requires =\n    trl>=1.13.0\n    torch\n",
        "[options]\ninstall_requires =\n    trl>=1.13.0\n    requests\n    torch\n",
        id="setup-cfg",
    ),
]


@pytest.mark.parametrize(("name", "before", "after"), CASES)
def test_requests_is_added_next_to_trl_in_the_sources_style(tmp_path, name, before, after):
    text, findings = _fix(tmp_path, name, before)
    assert text == after
    assert [f.fix for f in findings if f.code == "TRL205"] == [Fix.APPLIED]
    again = check_path(str(tmp_path), installed=False, fix=True)
    assert (tmp_path / name).read_bytes().decode() == after
    assert not [f for f in again.findings if f.code == "TRL205"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param("requirements.txt", "trl>=1.13.0\nrequests\n", id="declared"),
        pytest.param("requirements.txt", "trl[vllm]>=1.13.0\n", id="vllm-extra-brings-it"),
        pytest.param("requirements.txt", "torch; trl>=1.13.0\n", id="not-trl-s-line"),
    ],
)
def test_noop(tmp_path, name, text):
    out, findings = _fix(tmp_path, name, text)
    assert out == text
    assert [f.fix for f in findings if f.code == "TRL205"] in ([], [Fix.MANUAL])


def test_a_hash_pinned_file_is_left_for_its_tool(tmp_path):
    text = "trl==1.13.0 \\\n    --hash=sha256:" + "0" * 64 + "\n"
    out, findings = _fix(tmp_path, "requirements.txt", text)
    assert out == text
    assert [f.fix for f in findings if f.code == "TRL205"] == [Fix.MANUAL]


EXPORT = (
    "# This file may be used to create an environment using:\n"
    "# $ conda create --name <env> --file <this file>\n"
    "# platform: linux-64\n"
    "_libgcc_mutex=0.1=conda_forge\n"
    "python=3.10.13=hd12c33a_0\n"
    "trl=0.11.4=pyhd8ed1ab_0\n"
    "peft=0.6.0\n"
    "requests=2.31.0=pyhd8ed1ab_0\n"
)


def test_conda_export_saved_as_requirements_is_read_and_fixed_as_conda_pins(tmp_path):
    # Before: every line was "pip would reject" and the file failed as a whole.
    text, findings = _fix(tmp_path, "requirements.txt", EXPORT)
    assert text == EXPORT.replace("trl=0.11.4=pyhd8ed1ab_0", "trl=1.13.0").replace(
        "peft=0.6.0", "peft=0.13.0"
    )
    report = check_path(str(tmp_path), installed=False)
    assert report.results[0].status is Status.UNCHANGED
    assert not [f for f in findings if f.code == "TRL200"]


def test_a_single_equals_in_a_pip_file_is_still_an_error(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl>=1.13.0\npeft=0.10.0\n")
    report = check_path(str(tmp_path), installed=False)
    assert [f.code for f in report.findings if f.code == "TRL200"] == ["TRL200"]


def test_notebook_install_pins_are_fixed_inside_their_json_strings(tmp_path):
    import json

    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "a",
            "metadata": {},
            "outputs": [],
            "source": [
                "# caf\u00e9 \u2615\n",
                '%pip install -q "trl==0.11.4" peft==0.10.0  # pins\n',
            ],
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "b",
            "metadata": {},
            "outputs": [],
            "source": ["!pip install \\\n", "    peft==0.10.0\n"],
        },  # continued: left for a human
    ]
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    before = json.dumps(doc, indent=1, ensure_ascii=True) + "\n"
    text, findings = _fix(tmp_path, "nb.ipynb", before)
    # the pins edited in place, and `requests` (TRL205) added after trl's quoted word
    assert text == before.replace('\\"trl==0.11.4\\"', '\\"trl==1.13.0\\" requests').replace(
        "peft==0.10.0  # pins", "peft==0.13.0  # pins"
    )
    manual = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL201"]
    assert [(f.cell, "peft" in f.message) for f in manual] == [(0, True)]
    assert "the install line is not one a fix can edit" in manual[0].message


def test_setup_py_extras_keyed_by_trl_get_requests_in_trls_list(tmp_path):
    before = (
        "from setuptools import setup\n"
        "setup(\n"
        "    name='x',\n"
        '    extras_require={\n        "trl": ["trl>=1.13.0"],\n    },\n'
        ")\n"
    )
    text, findings = _fix(tmp_path, "setup.py", before)
    assert text == before.replace('["trl>=1.13.0"]', '["trl>=1.13.0", "requests"]')
    unpinned = before.replace('["trl>=1.13.0"]', '["trl"]')
    (tmp_path / "setup.py").write_text(unpinned)
    text, _ = _fix(tmp_path, "setup.py", unpinned)
    assert text == before.replace('["trl>=1.13.0"]', '["trl>=1.13.0", "requests"]')
