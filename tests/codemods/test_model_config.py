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
        pytest.param(
            "from transformers import AutoModel\nimport trl\n"
            "m = AutoModel.from_pretrained('x', trust_remote_code=True)\n"
            "print(args.trust_remote_code)\n",
            id="trust-remote-code-of-no-model-config",
        ),
        pytest.param(
            "from transformers import HfArgumentParser\nfrom trl import GRPOConfig, ModelConfig\n"
            "p = HfArgumentParser((GRPOConfig, ModelConfig))\n"
            "training_args, model_args = p.parse_args_into_dataclasses()\n"
            "print(training_args.trust_remote_code)\n",
            id="trust-remote-code-read-from-the-trainer-config",
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


def test_fixes_trust_remote_code_read_from_the_config_parsed_beside():
    """TRL's own example scripts (reward modeling, SFT, GRPO: TPNxl/592rli-llm-project,
    ktolnos/Reward-Model-Overoptimization) read `model_args.trust_remote_code`, which TRL 1.7
    moved to the trainer configs: the flag lands in the config the same parser builds."""
    before = dedent(
        """
        from transformers import AutoModelForCausalLM, HfArgumentParser
        from trl import GRPOConfig, ModelConfig, ScriptArguments
        parser = HfArgumentParser((ScriptArguments, GRPOConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_into_dataclasses()
        model = AutoModelForCausalLM.from_pretrained(
            model_args.model_name_or_path, trust_remote_code=model_args.trust_remote_code
        )
        """
    )
    after = before.replace(
        "trust_remote_code=model_args.trust_remote_code",
        "trust_remote_code=training_args.trust_remote_code",
    )
    [finding] = assert_fixes(before, after, select=SELECT)
    assert (finding.line, finding.fix, finding.message) == (
        6,
        Fix.APPLIED,
        "`model_args.trust_remote_code` is `training_args.trust_remote_code`: ModelConfig has no "
        "`trust_remote_code` since TRL 1.7 (TRL's trainer configs took it and the "
        "`--trust_remote_code` flag); the parser builds `training_args` beside `model_args`, so "
        "the flag lands there, with the same default (False)",
    )


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from transformers import HfArgumentParser, TrainingArguments\n"
            "from trl import ModelConfig\n"
            "p = HfArgumentParser((TrainingArguments, ModelConfig))\n"
            "training_args, model_args = p.parse_args_into_dataclasses()\n"
            "x = model_args.trust_remote_code\n",
            id="beside-transformers-training-arguments",
        ),
        pytest.param(
            "from trl import ModelConfig\nm = ModelConfig(**cfg)\nx = m.trust_remote_code\n",
            id="built-by-a-call-from-a-splat",
        ),
        pytest.param(
            "from transformers import HfArgumentParser\nfrom trl import ModelConfig, SFTConfig\n"
            "p = HfArgumentParser((SFTConfig, SFTConfig, ModelConfig))\n"
            "a, b, model_args = p.parse_args_into_dataclasses()\n"
            "x = model_args.trust_remote_code\n",
            id="two-configs-beside-it",
        ),
    ],
)
def test_trust_remote_code_with_no_one_config_beside_is_a_todo(src):
    out, findings = run(src, select=SELECT)
    head, read = src.rsplit("x = ", 1)
    owner = read.split(".")[0]
    assert (
        out
        == head
        + (
            f"# TODO(trl-migrate TRL110): `{owner}.trust_remote_code`: ModelConfig has no "
            "`trust_remote_code` since TRL 1.7 (TRL's trainer configs took it and the "
            f"`--trust_remote_code` flag), and no TRL config is parsed beside `{owner}` here: read "
            "the flag from your trainer config, or give your script its own flag for it\n"
        )
        + "x = "
        + read
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(
            "print(m.trust_remote_code)\nm.trust_remote_code = False\n", id="read-and-set"
        ),
        pytest.param("setup(m)\n", id="handed-to-the-script-s-own-function"),
        pytest.param("print(getattr(m, 'trust_remote_code'))\n", id="getattr"),
        pytest.param("def f(m):\n    return m.trust_remote_code\n", id="a-parameter-of-that-name"),
        pytest.param("m, n = parse()\n", id="bound-by-an-unpacking-too"),
    ],
)
@pytest.mark.parametrize("value", ["True", "flag()"])
def test_trust_remote_code_given_to_model_config_is_a_todo(use, value):
    """The field may be read (or its value has effects): TRL 1.13's ModelConfig would reject it,
    and where the flag goes now is the human's choice."""
    call = f"m = ModelConfig('gpt2', trust_remote_code={value})\n"
    src = "from trl import ModelConfig\n" + call + use
    out, findings = run(src, select=SELECT)
    assert out.startswith(
        "from trl import ModelConfig\n# TODO(trl-migrate TRL110): ModelConfig has no "
        "`trust_remote_code` since TRL 1.7 (TRL's trainer configs took it and the "
        "`--trust_remote_code` flag): pass `trust_remote_code=` to your trainer config instead, "
        "or to the `from_pretrained` calls that load the model\n" + call
    )
    assert {f.fix for f in findings} == {Fix.MANUAL}  # a read of the field gets its own TODO
    assert run(out, select=SELECT)[0] == out


DROPPED = (
    "`trust_remote_code=` dropped: ModelConfig has no `trust_remote_code` since TRL 1.7 (TRL's "
    "trainer configs took it and the `--trust_remote_code` flag); nothing in this file reads it "
    "from this ModelConfig (the model loads pass their own)"
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "m = ModelConfig('gpt2', trust_remote_code=True)\n",
            "m = ModelConfig('gpt2')\n",
            id="never-read",
        ),
        pytest.param(
            "m = ModelConfig(trust_remote_code=True, model_name_or_path='gpt2')\n"
            "load(m.model_name_or_path, trust_remote_code=True)\n",
            "m = ModelConfig(model_name_or_path='gpt2')\n"
            "load(m.model_name_or_path, trust_remote_code=True)\n",
            id="first-keyword-other-fields-read",
        ),
        pytest.param(
            "m = ModelConfig(\n    model_name_or_path=path,\n    trust_remote_code=True,\n"
            "    torch_dtype='auto',\n)\npeft_config = get_peft_config(m)\n"
            "q = trl.get_quantization_config(m)\n",
            "m = ModelConfig(\n    model_name_or_path=path,\n    dtype='auto',\n)\n"
            "peft_config = get_peft_config(m)\nq = trl.get_quantization_config(m)\n",
            id="multi-line-handed-to-trl-helpers",
        ),
        pytest.param(
            "m = ModelConfig(\n    model_name_or_path=path,\n    trust_remote_code=trust\n)\n",
            "m = ModelConfig(\n    model_name_or_path=path\n)\n",
            id="last-keyword-no-trailing-comma",
        ),
    ],
)
def test_trust_remote_code_nothing_reads_is_dropped(before, after):
    """tyronen/bb-finetune's `ModelConfig(..., trust_remote_code=True, ...)` whose field nothing
    read: TRL 1.13's ModelConfig raises TypeError on it; dropping it changes nothing else."""
    head = "import trl\nfrom trl import ModelConfig, get_peft_config\n"
    findings = assert_fixes(head + before, head + after, select=SELECT)
    assert DROPPED in [f.message for f in findings]
    assert {f.fix for f in findings} == {Fix.APPLIED}


LITERAL_DROPPED = (
    "`trust_remote_code={v}` dropped: ModelConfig has no `trust_remote_code` since TRL 1.7 "
    "(TRL's trainer configs took it and the `--trust_remote_code` flag); this file's reads of the "
    "field from this ModelConfig are `{v}` now"
)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "model_args = ModelConfig(\n"
            "    model_name_or_path='Qwen/Qwen3-4B',\n"
            "    trust_remote_code=True,\n"
            "    lora_r=8,\n"
            ")\n"
            "tok = AutoTokenizer.from_pretrained(\n"
            "    model_args.model_name_or_path, trust_remote_code=model_args.trust_remote_code\n"
            ")\n"
            "peft_config = get_peft_config(model_args)\n",
            "model_args = ModelConfig(\n"
            "    model_name_or_path='Qwen/Qwen3-4B',\n"
            "    lora_r=8,\n"
            ")\n"
            "tok = AutoTokenizer.from_pretrained(\n"
            "    model_args.model_name_or_path, trust_remote_code=True\n"
            ")\n"
            "peft_config = get_peft_config(model_args)\n",
            id="sea-abc-read-by-a-load",
        ),
        pytest.param(
            "m = ModelConfig('gpt2', trust_remote_code=False)\n"
            "def load():\n    return f(m.model_name_or_path, trust=m.trust_remote_code)\n"
            "print(m.trust_remote_code)\n",
            "m = ModelConfig('gpt2')\n"
            "def load():\n    return f(m.model_name_or_path, trust=False)\n"
            "print(False)\n",
            id="false-read-twice-one-in-a-function",
        ),
    ],
)
def test_trust_remote_code_read_from_a_literal_is_that_literal(before, after):
    """sea-abc/LLM-from-trl-to-GRPO: `ModelConfig(..., trust_remote_code=True)`, the field read
    by `from_pretrained(..., trust_remote_code=model_args.trust_remote_code)`. On TRL 1.13 the
    call raises TypeError; the name is bound once, to that call, and the field never set, so
    each read is the literal."""
    head = "from transformers import AutoTokenizer\nfrom trl import ModelConfig, get_peft_config\n"
    findings = assert_fixes(head + before, head + after, select=SELECT)
    value = "False" if "=False" in before else "True"
    assert LITERAL_DROPPED.format(v=value) in [f.message for f in findings]
    reads = [f for f in findings if f.message.startswith("`m") and "` is `" in f.message]
    assert all(
        f.message.endswith(f"is bound once, to a ModelConfig that sets it to `{value}`")
        for f in reads
    )
    assert {f.fix for f in findings} == {Fix.APPLIED}


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "m = ModelConfig('gpt2', trust_remote_code=flag())\nprint(m.trust_remote_code)\n",
            id="not-a-literal",
        ),
        pytest.param(
            "m = ModelConfig('gpt2', trust_remote_code=True)\n"
            "m = ModelConfig('gpt2', trust_remote_code=False)\nprint(m.trust_remote_code)\n",
            id="bound-twice",
        ),
        pytest.param(
            "m = ModelConfig('gpt2', trust_remote_code=True)\nm.trust_remote_code += 1\n"
            "print(m.trust_remote_code)\n",
            id="set-elsewhere",
        ),
    ],
)
def test_trust_remote_code_read_not_from_one_literal_keeps_its_todos(src):
    out, findings = run("from trl import ModelConfig\n" + src, select=SELECT)
    assert "print(m.trust_remote_code)\n" in out
    assert out.count("# TODO(trl-migrate TRL110)") >= 2  # the call(s) and the read
    assert {f.fix for f in findings} == {Fix.MANUAL}
    assert run(out, select=SELECT)[0] == out


def test_trust_remote_code_read_from_a_config_that_never_set_it_is_its_default():
    # sea-abc/LLM-from-trl-to-GRPO's my_ppo.py: `ModelConfig(model_name_or_path=...)`, then
    # `from_pretrained(..., trust_remote_code=model_args.trust_remote_code)`: the field's default,
    # False in every release that had it
    # (em-bst's notebook shows the config in a cell of its own: `m` alone reads no field)
    head = "from trl import ModelConfig\n"
    findings = assert_fixes(
        head
        + "m = ModelConfig('gpt2')\nm\nload(m.model_name_or_path, trust=m.trust_remote_code)\n",
        head + "m = ModelConfig('gpt2')\nm\nload(m.model_name_or_path, trust=False)\n",
        select=SELECT,
    )
    assert [f.message for f in findings] == [
        "`m.trust_remote_code` is `False`: ModelConfig has no `trust_remote_code` since TRL 1.7 "
        "(TRL's trainer configs took it and the `--trust_remote_code` flag), and `m` is bound "
        "once, to a ModelConfig that leaves it at its default, `False`"
    ]
    # a splat or a second positional may set it: the TODO stays
    for call in ("ModelConfig(**kw)", "ModelConfig('gpt2', 'main', 'eager', True)"):
        out, _ = run(f"{head}m = {call}\nx = m.trust_remote_code\n", select=SELECT)
        assert "# TODO(trl-migrate TRL110): `m.trust_remote_code`:" in out
