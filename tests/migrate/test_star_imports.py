"""TRL names one file of a run hands another through `from module import *` (codemods.project):
the importer imports them from trl itself, so its uses are rewritten while the module that
imported them, which never used them, drops its import (Kwaai-AI-Lab/kwaai-alignment's shape)."""

from __future__ import annotations

import os

import pytest

from codemods import project
from migrate import api
from migrate.kernel.findings import Fix, Severity, Status

MODULES = (
    "import torch\n"
    "from trl import PPOTrainer, PPOConfig, AutoModelForCausalLMWithValueHead\n"
    "from trl import set_seed\n"
)
TRAIN = (
    "from modules import *\n"
    "\n"
    'model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")\n'
    "set_seed(0)\n"
)
TRAIN_AFTER = (
    "from modules import *\n"
    "from transformers import AutoModelForCausalLM\n"
    "\n"
    'model = AutoModelForCausalLM.from_pretrained("gpt2")\n'
    "set_seed(0)\n"
)


def repo(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return tmp_path


def fixed(root) -> dict[str, str]:
    return {
        os.path.relpath(os.path.join(d, f), root): open(os.path.join(d, f)).read()
        for d, _, names in os.walk(root)
        for f in names
        if f.endswith(".py")
    }


def test_the_importer_imports_the_trl_name_and_its_uses_are_rewritten(tmp_path):
    root = repo(tmp_path, {"modules.py": MODULES, "train.py": TRAIN})
    report = api.fix_paths([str(root)])
    out = fixed(root)
    assert out["train.py"] == TRAIN_AFTER
    # the module never used its value-head or PPO imports; its moved `set_seed` stays bound
    assert out["modules.py"] == "import torch\nfrom transformers import set_seed\n"
    train = next(r for r in report.results if r.path.endswith("train.py"))
    passed = [f for f in train.findings if f.line == 1]
    assert [(f.code, f.severity, f.fix, f.col) for f in passed] == [
        ("TRL101", Severity.INFO, Fix.APPLIED, 1)
    ]
    assert passed[0].message == (
        "`AutoModelForCausalLMWithValueHead` reaches this file from `trl` through "
        "`from modules import *` (modules.py imports it); it is now imported here from `trl` "
        "(the same object), so its uses here are rewritten too"
    )
    modules = next(r for r in report.results if r.path.endswith("modules.py"))
    assert sorted(f.message for f in modules.findings if f.line == 2) == [
        "`AutoModelForCausalLMWithValueHead` does not exist in TRL 1.13 and this file never "
        "uses it, so the import was removed",
        "`trl.PPOConfig` does not exist in TRL 1.13; this file never uses it, so the import "
        "was removed",
        "`trl.PPOTrainer` does not exist in TRL 1.13; this file never uses it, so the import "
        "was removed",
    ]
    again = api.fix_paths([str(root)])
    assert fixed(root) == out
    assert all(r.status is not Status.CHANGED for r in again.results)


def test_a_relative_star_import_in_a_package(tmp_path):
    root = repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/common.py": MODULES,
            "pkg/train.py": TRAIN.replace("from modules", "from .common"),
        },
    )
    api.fix_paths([str(root)])
    assert fixed(root)["pkg/train.py"] == TRAIN_AFTER.replace("from modules", "from .common")


@pytest.mark.parametrize(
    ("files", "why"),
    [
        pytest.param(
            {"modules.py": MODULES, "train.py": "from modules import *\nset_seed(0)\n"},
            "the importer never reads the value head",
            id="not-read",
        ),
        pytest.param(
            {
                "modules.py": MODULES,
                "train.py": TRAIN.replace(
                    "\n\n", "\nclass AutoModelForCausalLMWithValueHead:\n    pass\n"
                ),
            },
            "the importer binds the name itself",
            id="bound-here",
        ),
        pytest.param(
            {"modules.py": MODULES + '__all__ = ["set_seed"]\n', "train.py": TRAIN},
            "`__all__` leaves the value head out of the star",
            id="all",
        ),
        pytest.param(
            {"modules.py": MODULES, "train.py": TRAIN.replace("modules", "elsewhere")},
            "the star imports a module that is not part of the run",
            id="not-in-run",
        ),
        pytest.param(
            {"modules.py": "from trl import set_seed\n", "train.py": TRAIN},
            "a moved name stays bound in the module under its new import",
            id="moved",
        ),
    ],
)
def test_nothing_is_passed(tmp_path, files, why):
    root = repo(tmp_path, files)
    data = [(str(root / n), (root / n).read_bytes()) for n in files]
    assert project.star_passes(data) == {}, why


def test_the_lines_are_inserted_with_the_files_newlines():
    passed = project.Passed(1, 1, "m", "m.py", "PPOConfig", "trl", "PPOConfig")
    assert project.with_passed("from m import *\r\nx = 1\r\n", [passed]) == (
        "from m import *\r\nfrom trl import PPOConfig\r\nx = 1\r\n"
    )
    assert project.with_passed("from m import *", [passed]) == (
        "from m import *\nfrom trl import PPOConfig\n"
    )
    aliased = project.Passed(1, 1, "m", "m.py", "Cfg", "trl", "PPOConfig")
    assert project.with_passed("from m import *\n", [aliased]) == (
        "from m import *\nfrom trl import PPOConfig as Cfg\n"
    )
