"""TRL101 imports: every TRL import path that 1.13 moved goes to its new home; removed ones get a
TODO.

Driven by the symbol table (`codemods/data/trl_symbols.json`, built from the wheels of TRL
0.4-1.13). Handles `from trl... import X [as Y]` anywhere (module level, functions, try/except),
`import trl` / `import trl.core as c` followed by attribute use, and star imports. Value-head
classes are TRL102's; PPO classes are TRL103's (configs) and TRL104's (trainers), which move their
imports once their uses are rewritten and mark them when not.
Release notes: https://github.com/huggingface/trl/releases/tag/v1.13.0
"""

from __future__ import annotations

from codemods import symbols
from codemods.base import Rule
from codemods.rules.imports.gone import GoneModuleImports
from codemods.rules.imports.rewrite import RewriteImports


class Imports(Rule):
    code = "TRL101"
    summary = "Move TRL imports that 1.13 relocated; mark the ones it removed."
    before = (
        "import trl.core\n"
        "from trl import XPOTrainer, create_reference_model, set_seed\n"
        "\n"
        "trl.core.set_seed(0)\n"
    )
    after = (
        "from trl.experimental.xpo import XPOTrainer\n"
        "from trl.experimental.utils import create_reference_model\n"
        "from transformers import set_seed\n"
        "import transformers\n"
        "\n"
        "transformers.set_seed(0)\n"
    )
    transformers = (RewriteImports, GoneModuleImports)

    def triggered(self, text: str) -> bool:
        return symbols.load().mention.search(text) is not None
