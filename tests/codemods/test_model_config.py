"""TRL110 model-config: no-op, fix and TODO cases, exact text, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL110",)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from transformers import AutoConfig\nimport trl\n"
            "config = AutoConfig.from_pretrained('gpt2')\nprint(config.torch_dtype)\n",
            id="transformers-config",
        ),
        pytest.param(
            "from trl import ModelConfig\nm = ModelConfig(dtype='bfloat16')\nprint(m.dtype)\n",
            id="already-dtype",
        ),
        pytest.param(
            "from trl import ModelConfig\nfrom transformers import AutoConfig\n"
            "m = ModelConfig()\nm = AutoConfig.from_pretrained('x')\nprint(m.torch_dtype)\n",
            id="name-bound-to-two-things",
        ),
        pytest.param(
            "from mylib import ModelConfig\nm = ModelConfig(torch_dtype='bfloat16')\n",
            id="another-library",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            import torch
            from transformers import HfArgumentParser
            from trl import ModelConfig, ScriptArguments, SFTConfig
            parser = HfArgumentParser((ScriptArguments, SFTConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_into_dataclasses()
            dtype = model_args.torch_dtype if model_args.torch_dtype in ["auto", None] else getattr(torch, model_args.torch_dtype)
            """,
            """
            import torch
            from transformers import HfArgumentParser
            from trl import ModelConfig, ScriptArguments, SFTConfig
            parser = HfArgumentParser((ScriptArguments, SFTConfig, ModelConfig))
            script_args, training_args, model_args = parser.parse_args_into_dataclasses()
            dtype = model_args.dtype if model_args.dtype in ["auto", None] else getattr(torch, model_args.dtype)
            """,
            id="parsed",
        ),
        pytest.param(
            """
            import trl
            m = trl.ModelConfig(model_name_or_path="gpt2", torch_dtype="bfloat16")
            print(m.torch_dtype)
            """,
            """
            import trl
            m = trl.ModelConfig(model_name_or_path="gpt2", dtype="bfloat16")
            print(m.dtype)
            """,
            id="built",
        ),
    ],
)
def test_fixes(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    assert findings and all(f.fix is Fix.APPLIED for f in findings)


def test_both_names_given_is_a_todo():
    src = "from trl import ModelConfig\nm = ModelConfig(torch_dtype='float16', dtype='bfloat16')\n"
    out, findings = run(src, select=SELECT)
    assert out.endswith("m = ModelConfig(torch_dtype='float16', dtype='bfloat16')\n")
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out
