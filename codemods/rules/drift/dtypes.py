"""TRL108: the dtype a model loads in, which transformers 5 changed.

transformers 4 loaded `Model.from_pretrained(name)` in torch's default dtype (float32) unless the
call said otherwise; transformers 5, which TRL 1.13 installs in practice, loads it in the dtype
its checkpoint was saved in (`dtype="auto"` is the new default: bfloat16 for most current
checkpoints). A PPO script whose config keeps fp32 training (`bf16=False`) would then train a
bfloat16 model. Where the file's PPO code tells that it ran on transformers 4 (the legacy
`step()` API and PPOv2, TRL <= 0.11, released before transformers 5), `dtype="float32"` is
written into each model load that sets no dtype; elsewhere (the v2 and experimental APIs, TRL
0.12-1.12, whose last releases also ran on transformers 5) the load is reported, not changed.
Quantized loads (`load_in_8bit`, `load_in_4bit`, `quantization_config`) picked their own dtype
in both versions and are left alone, as are loads given `**kwargs` (the dict may set it).
`pipeline(...)` loads its model the same way (its `dtype` defaults to "auto" in transformers 5);
handed a model object it ignores `dtype` and keeps the object's, in both versions, so the keyword
is safe there too. A pipeline given `model_kwargs` that may set the dtype is left alone
(transformers 5 refuses both).
"""

from __future__ import annotations

import re

import libcst as cst

from codemods import edits
from codemods.base import RuleTransformer
from codemods.ppo import LEGACY, PPOV2
from migrate.kernel.findings import Fix, Severity

METHOD = "from_pretrained"
PIPELINE = "pipeline"
PIPELINES = frozenset({"transformers.pipeline", "transformers.pipelines.pipeline"})
# Eras whose TRL releases all came before transformers 5: their runs loaded float32.
ON_TRANSFORMERS_4 = frozenset({LEGACY, PPOV2})
# quantized loads pick their own dtype, in transformers 4 and 5 alike
QUANTIZED = frozenset({"load_in_8bit", "load_in_4bit", "quantization_config"})
SETS_DTYPE = QUANTIZED | {"dtype", "torch_dtype"}
# transformers classes that load weights: AutoModel*, *Model, *LMHeadModel, *For<Task>
MODEL_CLASS = re.compile(r"^\w*(?:Model|For[A-Z]\w*)$")
NOT_MODELS = ("Tokenizer", "TokenizerFast", "Config", "Processor", "FeatureExtractor")


class ModelDtypes(RuleTransformer):
    """The part of RewriteDrift that keeps a model's load dtype."""

    def dtype_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        era = self.state.shared.ppo_era
        if era is None or not (self._loads_a_model(original) or self._builds_a_pipeline(original)):
            return updated
        if any(a.star == "**" for a in updated.args) or any(
            a.keyword is not None and a.keyword.value in SETS_DTYPE for a in updated.args
        ):
            return updated
        if era not in ON_TRANSFORMERS_4:
            self.report(
                original,
                "transformers 5, which TRL 1.13 installs in practice, loads this model in its "
                'checkpoint\'s dtype (`dtype="auto"`, bfloat16 for most current checkpoints); '
                "transformers 4 loaded it in float32: if this script ran on transformers 4, pass "
                '`dtype="float32"` to train in the precision it did',
                severity=Severity.WARNING,
                fix=Fix.NONE,  # the old transformers is not known here: nothing is changed
            )
            return updated
        self.report(
            original,
            "transformers 4, which this script's TRL ran on, loaded this model in float32 "
            "(torch's default dtype); transformers 5, which TRL 1.13 installs in practice, loads "
            'it in its checkpoint\'s dtype (`dtype="auto"`): `dtype="float32"` keeps the old '
            "precision",
            severity=Severity.INFO,
        )
        arg = edits.new_kwarg("dtype", '"float32"')
        args = [*updated.args, arg]
        fresh = {id(arg), id(updated.args[-1])} if updated.args else {id(arg)}
        return updated.with_changes(args=edits.relayout(updated, args, fresh))

    def _builds_a_pipeline(self, call: cst.Call) -> bool:
        """`pipeline(...)` from transformers, unless its `model_kwargs` may set a dtype."""
        if not set(self.names_from(call.func, "transformers")) & PIPELINES:
            return False
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "model_kwargs":
                value = arg.value
                if not isinstance(value, cst.Dict) or any(
                    not isinstance(e, cst.DictElement) or edits.literal(e.key) in SETS_DTYPE
                    for e in value.elements
                ):
                    return False
        return True

    def _loads_a_model(self, call: cst.Call) -> bool:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != METHOD:
            return False
        for path in self.qualified_names(func.value):
            module, _, name = path.rpartition(".")
            if (
                module.split(".")[0] == "transformers"
                and MODEL_CLASS.match(name)
                and not name.endswith(NOT_MODELS)
            ):
                return True
        return False
