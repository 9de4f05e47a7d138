"""codemods.top_imports: the imports passes ask for, added as libcst's AddImportsVisitor adds
them. Each case is held to libcst's own visitor, and a few to the exact text."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, ImportItem

from codemods import top_imports
from tests.codemods.helpers import dedent

REQUESTS = [
    ImportItem("trl", "RLOOConfig"),
    ImportItem("trl", "RLOOTrainer"),
    ImportItem("math"),
    ImportItem("transformers", "TrainerCallback"),
]

MODULES = {
    "empty": "",
    "no imports": "x = 1\n",
    "docstring": '"""Doc."""\nimport os\n\nprint(os)\n',
    "strict flag": "__strict__ = True\nimport os\nx = 1\n",
    "merge into a from line": "import os\nfrom trl import PPOTrainer\nx = 1\n",
    "first of two lines": "from trl import A\nfrom trl import B\nx = 1\n",
    "parenthesised": "from trl import (\n    PPOTrainer,\n    PPOConfig,\n)\nx = 1\n",
    "aliased line": "from trl import PPOTrainer as T\nx = 1\n",
    "already there": "import math\nfrom trl import RLOOConfig, RLOOTrainer\n"
    "from transformers import TrainerCallback\nx = 1\n",
    "star": "from trl import *\nx = 1\n",
    "star after": "from trl import RLOOConfig\nfrom trl import *\nx = 1\n",
    "dotted import": "import math.fsum\nx = 1\n",
    "relative line": "from . import trl\nx = 1\n",
    "comment first": "import os\n# a comment\nx = 1\n",
    "blank first": "import os\n\nx = 1\n",
    "two on a line": "import os; import sys\nx = 1\n",
    "import after code": "x = 1\nfrom trl import PPOTrainer\n",
    "block first": "if True:\n    import trl\n",
    "only imports": "import os\nfrom trl import A\n",
    "crlf": "import os\r\nx = 1\r\n",
    "ends without newline": "import os\nx = 1",
}


def _libcst(module: cst.Module, items: list[ImportItem]) -> cst.Module:
    context = CodemodContext()
    for item in items:
        AddImportsVisitor.add_needed_import(context, item.module, item.obj_name)
    return module.visit(AddImportsVisitor(context))


@pytest.mark.parametrize("name", list(MODULES))
@pytest.mark.parametrize("count", [1, 2, len(REQUESTS)])
def test_adds_what_libcst_adds(name, count):
    module = cst.parse_module(MODULES[name])
    items = REQUESTS[:count]
    ours = top_imports.add(module, items, None)
    assert ours is not None
    assert ours.code == _libcst(module, items).code
    # and again: nothing more to add
    assert top_imports.add(ours, items, None).code == ours.code  # type: ignore[union-attr]


def test_exact_text():
    module = cst.parse_module(
        dedent(
            '''
            """Train."""
            import os
            from trl import PPOTrainer
            # the script
            x = 1
            '''
        )
    )
    out = top_imports.add(module, REQUESTS, None)
    assert out is not None
    assert out.code == dedent(
        '''
        """Train."""
        import os
        from trl import RLOOConfig, RLOOTrainer, PPOTrainer
        import math
        from transformers import TrainerCallback

        # the script
        x = 1
        '''
    )


def test_nothing_to_add_keeps_the_module():
    module = cst.parse_module(MODULES["already there"])
    assert top_imports.add(module, REQUESTS, None) is module


@pytest.mark.parametrize(
    "item",
    [
        ImportItem("trl", "RLOOConfig", alias="C"),
        ImportItem("trl", alias="t"),
        ImportItem("trl_migrate_helpers", "f", relative=1),
        ImportItem("__future__", "annotations"),
    ],
)
def test_leaves_aliases_relative_and_future_to_libcst(item):
    module = cst.parse_module("x = 1\n")
    assert top_imports.add(module, [ImportItem("math"), item], None) is None


def test_names_go_in_sorted_order():
    names = ["Zeta", "Gamma", "Alpha", "Omega", "Beta", "Delta"]
    items = [ImportItem("trl", n) for n in names] + [ImportItem("peft", n) for n in names]
    module = cst.parse_module("from trl import PPOTrainer\nx = 1\n")
    out = top_imports.add(module, items, None)
    assert out is not None
    assert out.code == (
        "from trl import Alpha, Beta, Delta, Gamma, Omega, Zeta, PPOTrainer\n"
        "from peft import Alpha, Beta, Delta, Gamma, Omega, Zeta\n"
        "\n"
        "x = 1\n"
    )
    assert out.code == _libcst(module, items).code
