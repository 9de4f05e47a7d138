"""TRL101 imports: before/after tables, no-op cases, second run changes nothing."""

from __future__ import annotations

import pytest

from codemods import symbols
from codemods.rules.imports.uses import message_for
from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

SELECT = ("TRL101",)


def todo(path: str) -> str:
    return "# TODO(trl-migrate TRL101): " + message_for(symbols.load().symbols[path])


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("import os\n", id="unrelated"),
        pytest.param("from trl import SFTConfig, SFTTrainer, GRPOTrainer\n", id="still-in-1.13"),
        pytest.param("import trl\ntrainer = trl.SFTTrainer\n", id="module-attribute-still-in-1.13"),
        pytest.param(
            "from trl.experimental.utils import create_reference_model\n", id="already-canonical"
        ),
        pytest.param("from .core import set_seed\nfrom ..trl import set_seed\n", id="relative"),
        pytest.param(
            "from trlx import core\nfrom mytrl.core import set_seed\n", id="other-packages"
        ),
        pytest.param("x = trl.core.set_seed\n", id="unbound-name"),
        pytest.param("import transformers\ntransformers.set_seed(0)\n", id="already-migrated"),
        pytest.param(
            "s = 'from trl import set_seed'\n# from trl import set_seed\n",
            id="strings-and-comments",
        ),
        pytest.param("def f(trl):\n    return trl.set_seed\n", id="parameter-shadows-module"),
        pytest.param("from trl import *\nprint(SFTTrainer)\n", id="star-using-live-names"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=SELECT) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "from trl import set_seed\nset_seed(0)\n",
            "from transformers import set_seed\nset_seed(0)\n",
            id="moved-to-transformers",
        ),
        pytest.param(
            "from trl.core import set_seed as seed_all\n",
            "from transformers import set_seed as seed_all\n",
            id="alias-kept",
        ),
        pytest.param(
            "from trl.import_utils import is_npu_available, is_peft_available, is_xpu_available\n",
            "from accelerate.utils import is_npu_available, is_xpu_available\n"
            "from transformers.utils import is_peft_available\n",
            id="availability-helpers-to-accelerate-and-transformers",
        ),
        pytest.param(
            "import trl\nif trl.is_wandb_available():\n    pass\n",
            "import trl\nimport transformers.integrations\n\nif transformers.integrations.is_wandb_available():\n    pass\n",
            id="availability-helper-by-attribute",
        ),
        pytest.param(
            "from trl import SFTTrainer, set_seed  # training utils\n",
            "from trl import SFTTrainer  # training utils\nfrom transformers import set_seed\n",
            id="partial-move-keeps-comment",
        ),
        pytest.param(
            """
            from trl import (
                SFTConfig,
                set_seed,
                SFTTrainer,
            )
            """,
            """
            from trl import (
                SFTConfig,
                SFTTrainer,
            )
            from transformers import set_seed
            """,
            id="parenthesized-trailing-comma",
        ),
        pytest.param(
            "from trl import XPOTrainer, OnlineDPOConfig\n",
            "from trl.experimental.xpo import XPOTrainer\nfrom trl.experimental.online_dpo import OnlineDPOConfig\n",
            id="trainers-moved-to-experimental",
        ),
        pytest.param(
            """
            def main():
                from trl import set_seed
                set_seed(1)
            """,
            """
            def main():
                from transformers import set_seed
                set_seed(1)
            """,
            id="lazy-import-stays-in-function",
        ),
        pytest.param(
            """
            try:
                from trl import XPOTrainer
            except ImportError:
                XPOTrainer = None
            """,
            """
            try:
                from trl.experimental.xpo import XPOTrainer
            except ImportError:
                XPOTrainer = None
            """,
            id="guarded-import",
        ),
        pytest.param(
            "import trl\ntrl.set_seed(0)\n",
            "import trl\nimport transformers\n\ntransformers.set_seed(0)\n",
            id="import-trl-attribute",
        ),
        pytest.param(
            "import trl.core\ntrl.core.set_seed(0)\n",
            "import transformers\n\ntransformers.set_seed(0)\n",
            id="gone-module-import-removed",
        ),
        pytest.param(
            "import trl.core as core\ncore.set_seed(0)\n",
            "import transformers\n\ntransformers.set_seed(0)\n",
            id="gone-module-alias",
        ),
        pytest.param(
            "from trl import core\ncore.set_seed(0)\n",
            "import transformers\n\ntransformers.set_seed(0)\n",
            id="from-trl-import-gone-submodule",
        ),
        pytest.param(
            "import trl.core\nprint(trl.SFTTrainer)\n",
            "import trl\nprint(trl.SFTTrainer)\n",
            id="gone-submodule-import-narrowed-to-package",
        ),
        pytest.param(
            "from trl import *\nset_seed(0)\n",
            "from trl import *\nfrom transformers import set_seed\nset_seed(0)\n",
            id="star-gains-explicit-import",
        ),
        pytest.param(
            "from trl.core import *\nset_seed(0)\n",
            "from transformers import set_seed\nset_seed(0)\n",
            id="star-of-gone-module-replaced",
        ),
        pytest.param(
            "from trl.trainer.utils import first_true_indices\n",
            "from trl.experimental.utils import first_true_indices\n",
            id="helper-moved-to-experimental-utils",
        ),
    ],
)
def test_fixes(before, after):
    assert_fixes(dedent(before), dedent(after), select=SELECT)


def test_deprecated_path_is_a_warning_and_renamed_import_kept():
    findings = assert_fixes(
        "from trl import create_reference_model as make_ref\nref = make_ref(model)\n",
        "from trl.experimental.utils import create_reference_model as make_ref\nref = make_ref(model)\n",
        select=SELECT,
    )
    assert [(f.line, f.col, f.severity, f.fix) for f in findings] == [
        (1, 17, Severity.WARNING, Fix.APPLIED)
    ]
    assert findings[0].message == (
        "`trl.create_reference_model` is deprecated in TRL 1.13 (it warns when used); "
        "import it from `trl.experimental.utils.create_reference_model`"
    )


def test_base_trainer_of_0_24_to_0_29_imports_the_private_class_1_13_kept():
    """A vendored trainer built on `trl.trainer.base_trainer.BaseTrainer` (TRL 0.24-0.29) keeps
    its base: TRL 1.0 renamed the class `_BaseTrainer`; the finding says what else changed."""
    findings = assert_fixes(
        "from trl.trainer.base_trainer import BaseTrainer\nclass MyPPO(BaseTrainer):\n    pass\n",
        "from trl.trainer.base_trainer import _BaseTrainer as BaseTrainer\n"
        "class MyPPO(BaseTrainer):\n    pass\n",
        select=SELECT,
    )
    (said,) = findings
    assert said.message.startswith(
        "`trl.trainer.base_trainer.BaseTrainer` was removed in TRL 1.0.0; it lives at "
        "`trl.trainer.base_trainer._BaseTrainer`: TRL 1.0 made the class private"
    )
    assert "HF_HUB_DISABLE_TELEMETRY=1" in said.message


def test_a_moved_trainer_whose_arguments_changed_says_so():
    (said,) = assert_fixes(
        "from trl import XPOTrainer\nXPOTrainer\n",
        "from trl.experimental.xpo import XPOTrainer\nXPOTrainer\n",
        select=SELECT,
    )
    assert said.message.endswith(
        "it lives at `trl.experimental.xpo.XPOTrainer`: The 1.13 trainer has no `judge` argument "
        "(judges were removed in 1.1.0); pass `reward_funcs` instead."
    )


def test_removed_names_keep_their_import_with_one_todo_each():
    before = dedent(
        """
        from trl.core import randn_tensor, respond_to_batch, set_seed
        import trl.core

        values = trl.core.randn_tensor((2, 3))
        response = respond_to_batch(model, query)
        """
    )
    after = "\n".join(
        [
            todo("trl.core.respond_to_batch"),
            "from trl.core import respond_to_batch",  # randn_tensor: only used as trl.core.randn_tensor, so dropped
            "from transformers import set_seed",
            "# TODO(trl-migrate TRL101): module `trl.core` does not exist in TRL 1.13 (removed in TRL 0.25.0); "
            "move what this file uses from it",
            "import trl.core",
            "",
            todo("trl.core.randn_tensor"),
            "values = trl.core.randn_tensor((2, 3))",
            "response = respond_to_batch(model, query)",
            "",
        ]
    )
    findings = assert_fixes(before, after, select=SELECT)
    assert sorted((f.line, f.fix.value) for f in findings) == [
        (1, "applied"),
        (1, "applied"),
        (1, "manual"),
        (2, "manual"),
        (4, "manual"),
    ]
    assert todo("trl.core.randn_tensor").endswith("use `diffusers.utils.torch_utils.randn_tensor`.")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            """
            import os
            from trl.core import LengthSampler as Sampler, respond_to_batch
            from trl import SFTTrainer

            length = Sampler(2, 8)
            response = respond_to_batch(model, query)
            """,
            """
            import os
            # TODO(trl-migrate TRL101): `trl.core.respond_to_batch` was removed in TRL 0.14.0: Sample with `model.generate(...)`; in 1.13 GRPOTrainer/RLOOTrainer generate completions themselves.
            from trl.core import respond_to_batch
            from trl import SFTTrainer


            class Sampler:
                \"\"\"trl.core.LengthSampler, which TRL 0.25.0 removed (written in by trl-migrate).\"\"\"

                def __init__(self, min_value, max_value):
                    self.values = list(range(min_value, max_value))

                def __call__(self):
                    import numpy as np

                    return np.random.choice(self.values)


            length = Sampler(2, 8)
            response = respond_to_batch(model, query)
            """,
            id="class-after-the-import-block",
        ),
        pytest.param(
            """
            \"\"\"A module.\"\"\"
            from trl.core import LengthSampler
            import os
            def sample():
                return LengthSampler(1, 2)
            """,
            """
            \"\"\"A module.\"\"\"
            import os


            class LengthSampler:
                \"\"\"trl.core.LengthSampler, which TRL 0.25.0 removed (written in by trl-migrate).\"\"\"

                def __init__(self, min_value, max_value):
                    self.values = list(range(min_value, max_value))

                def __call__(self):
                    import numpy as np

                    return np.random.choice(self.values)


            def sample():
                return LengthSampler(1, 2)
            """,
            id="pep8-two-blank-lines-around-the-written-class",
        ),
        pytest.param(
            """
            from trl.core import LengthSampler
            x = LengthSampler(1, 2)
            """,
            """
            class LengthSampler:
                \"\"\"trl.core.LengthSampler, which TRL 0.25.0 removed (written in by trl-migrate).\"\"\"

                def __init__(self, min_value, max_value):
                    self.values = list(range(min_value, max_value))

                def __call__(self):
                    import numpy as np

                    return np.random.choice(self.values)


            x = LengthSampler(1, 2)
            """,
            id="first-statement-of-the-file-has-no-blank-line-above",
        ),
        pytest.param(
            """
            def tokenizer_with_template(tokenizer):
                from trl.trainer.utils import SIMPLE_CHAT_TEMPLATE
                tokenizer.chat_template = SIMPLE_CHAT_TEMPLATE
            """,
            """
            def tokenizer_with_template(tokenizer):
                # The chat template TRL shipped as SIMPLE_CHAT_TEMPLATE until 1.0 (written in by trl-migrate).
                SIMPLE_CHAT_TEMPLATE = "{% for message in messages %}{{message['role'].capitalize() + ': ' + message['content'] + '\\n\\n'}}{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
                tokenizer.chat_template = SIMPLE_CHAT_TEMPLATE
            """,
            id="constant-in-a-function",
        ),
    ],
)
def test_small_removed_helpers_are_written_in(before, after):
    findings = assert_fixes(dedent(before), dedent(after), select=SELECT)
    written = [
        f for f in findings if "equivalent definition was written into this file" in f.message
    ]
    assert len(written) == 1 and written[0].fix is Fix.APPLIED


def test_written_in_helpers_behave_like_the_originals():
    namespace: dict = {}
    out, _ = run("from trl.core import LengthSampler\n", select=SELECT)
    exec(compile(out, "t.py", "exec"), namespace)
    sampler = namespace["LengthSampler"](2, 5)
    assert sampler.values == [2, 3, 4] and {int(sampler()) for _ in range(200)} == {2, 3, 4}
    out, _ = run("from trl.trainer.utils import SIMPLE_CHAT_TEMPLATE\n", select=SELECT)
    exec(compile(out, "t.py", "exec"), namespace)
    assert namespace["SIMPLE_CHAT_TEMPLATE"].endswith(
        "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
    )
    assert (
        "+ '\n\n'}}" in namespace["SIMPLE_CHAT_TEMPLATE"]
    )  # two real newlines, as TRL's constant held
    out, _ = run("from trl import get_kbit_device_map as device_map\n", select=SELECT)
    assert out.startswith(
        'def device_map():\n    """trl.get_kbit_device_map, which TRL 1.8.0 removed'
    )
    torch = pytest.importorskip("torch")
    exec(compile(out, "t.py", "exec"), namespace)
    if not torch.cuda.is_available():
        assert (
            namespace["device_map"]() is None
        )  # no accelerator: no device map, as TRL's helper did


def test_unknown_name_from_gone_module_gets_a_todo():
    out, findings = run("from trl.environment import SomethingNew\n", select=SELECT)
    assert out.startswith(
        "# TODO(trl-migrate TRL101): `trl.environment` does not exist in TRL 1.13; `SomethingNew` has no known new home\n"
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]


def test_a_misspelt_name_from_a_gone_module_gets_the_likely_name():
    # PrasannS/rlhf-length-biases: `from trl.core import LengthSamplerimport` (a lost newline)
    src = "from trl.core import LengthSamplerimport\n"
    out, findings = run(src, select=SELECT)
    assert out == (
        "# TODO(trl-migrate TRL101): `trl.core` does not exist in TRL 1.13; "
        "`LengthSamplerimport` has no known new home (no TRL release had "
        "`trl.core.LengthSamplerimport`: misspelt `LengthSampler`? correct it and run "
        "trl-migrate again)\n" + src
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_ppo_names_are_left_to_the_ppo_rules():
    src = "from trl.trainer.ppov2_trainer import PPOv2Config, PPOv2Trainer\nclass T(PPOv2Trainer):\n    pass\n"
    out, findings = run(src, select=(*SELECT, "TRL103", "TRL104"))
    assert (
        "# TODO(trl-migrate TRL104): `trl.trainer.ppov2_trainer.PPOv2Trainer` does not exist in TRL 1.13"
        in out
    )
    assert "PPOv2Config" not in out  # unused: TRL103 removed it


def test_positions_point_at_the_original_text():
    src = "import os\nfrom trl import set_seed, XPOTrainer\n\n\nimport trl\nx = trl.set_seed\n"
    _, findings = run(src, select=SELECT)
    assert sorted((f.line, f.col) for f in findings) == [(2, 17), (2, 27), (6, 5)]


def test_without_the_owning_rules_imports_marks_ppo_and_value_head_names():
    src = "from trl.trainer.ppov2_trainer import PPOv2Config\nfrom trl import AutoModelForCausalLMWithValueHead\n"
    out, findings = run(src, select=SELECT)
    assert out == (
        "# TODO(trl-migrate TRL101): `trl.trainer.ppov2_trainer.PPOv2Config` was removed in TRL 0.13.0 and TRL 1.13 "
        "has no PPO: migrate to RLOOTrainer/RLOOConfig (or GRPOTrainer/GRPOConfig); rules TRL103-TRL107 do it "
        "(docs/rules.md)\n"
        "from trl.trainer.ppov2_trainer import PPOv2Config\n"
        "# TODO(trl-migrate TRL101): `trl.AutoModelForCausalLMWithValueHead` was removed in TRL 0.29.0: load the "
        "plain transformers model (AutoModelForCausalLM); rule TRL102 does it\n"
        "from trl import AutoModelForCausalLMWithValueHead\n"
    )
    assert [f.fix.value for f in findings] == ["manual", "manual"]
    owned, _ = run(src, select=("TRL101", "TRL102", "TRL103", "TRL104"))
    assert "TRL101" not in owned


LENGTH_SAMPLER = '''
class LengthSampler:
    """trl.core.LengthSampler, which TRL 0.25.0 removed (written in by trl-migrate)."""

    def __init__(self, min_value, max_value):
        self.values = list(range(min_value, max_value))

    def __call__(self):
        import numpy as np

        return np.random.choice(self.values)
'''
UNUSED = "`trl.core.respond_to_batch` was removed in TRL 0.14.0; this file never uses it, so the import was removed"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "import os\nfrom trl.core import respond_to_batch\n",
            "import os\n",
            id="whole-statement",
        ),
        pytest.param(
            "from trl.core import respond_to_batch as sample, set_seed\nset_seed(0)\n",
            "from transformers import set_seed\nset_seed(0)\n",
            id="alias-next-to-a-moved-name",
        ),
        pytest.param(
            "try:\n    from trl.core import respond_to_batch\nexcept ImportError:\n    pass\n",
            "try:\n    pass\nexcept ImportError:\n    pass\n",
            id="only-statement-of-a-block",
        ),
        pytest.param(
            "# helpers\nfrom trl.core import respond_to_batch, set_seed\n",
            "# helpers\nfrom transformers import set_seed\n",
            id="comment-above-kept-by-what-stays",
        ),
        pytest.param(
            "import os\nfrom trl.core import LengthSampler, respond_to_batch\nfrom trl import SFTTrainer\n\nx = LengthSampler(1, 3)\n",
            "import os\nfrom trl import SFTTrainer\n\n"
            + LENGTH_SAMPLER
            + "\n\nx = LengthSampler(1, 3)\n",
            id="written-helper-still-goes-below-the-imports",
        ),
    ],
)
def test_removed_names_the_file_never_uses_are_dropped(before, after):
    findings = assert_fixes(before, after, select=SELECT)
    dropped = [f for f in findings if f.message == UNUSED]
    assert (
        len(dropped) == 1 and dropped[0].severity is Severity.INFO and dropped[0].fix is Fix.APPLIED
    )


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("from trl.core import respond_to_batch  # noqa: F401\n", id="noqa-re-export"),
        pytest.param(
            "from trl.core import respond_to_batch\n__all__ = ['respond_to_batch']\n",
            id="in-__all__",
        ),
        pytest.param(
            "from trl.core import respond_to_batch\n__all__ += ('respond_to_batch',)\n",
            id="added-to-__all__",
        ),
        pytest.param(
            "import os\n\n# sampling\nfrom trl.core import respond_to_batch\n",
            id="comment-above-would-be-lost",
        ),
        pytest.param(
            "from trl.core import respond_to_batch\nr = respond_to_batch(m, q)\n", id="used"
        ),
    ],
)
def test_removed_names_that_stay_keep_their_todo(src):
    out, findings = run(src, select=SELECT)
    assert out == src.replace(
        "from trl.core", todo("trl.core.respond_to_batch") + "\nfrom trl.core"
    )
    assert [f.fix for f in findings] == [Fix.MANUAL]
