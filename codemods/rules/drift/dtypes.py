"""TRL108: the dtype a model loads in, which transformers 5 changed.

transformers 4 loaded `Model.from_pretrained(name)` in torch's default dtype (float32) unless the
call said otherwise; transformers 5, which TRL 1.13 installs in practice, loads it in the dtype
its checkpoint was saved in (`dtype="auto"` is the new default: bfloat16 for most current
checkpoints). A PPO script whose config keeps fp32 training (`bf16=False`) would then train a
bfloat16 model. Where the file's PPO code tells that it ran on transformers 4 (the legacy
`step()` API and PPOv2, TRL <= 0.11, released before transformers 5), `dtype="float32"` is
written into each model load that sets no dtype; elsewhere (the v2 and experimental APIs, TRL
0.12-1.12, whose last releases also ran on transformers 5) the load is reported, not changed.
An 8/4-bit bitsandbytes load that sets no dtype loaded the modules bitsandbytes leaves
unquantized (embeddings, norms, the LM head) in float16 on transformers 4 (its quantizer's
`update_torch_dtype` forced it, 4.46.3 and 4.56.2 alike) and loads them in the checkpoint's dtype
on 5 (`update_dtype` returns "auto" as given): `dtype="float16"` is written in on the same terms
as float32 above. Other quantized loads (another method's config, one this file does not build)
and loads given `**kwargs` (the dict may set it) are left alone; one quantized only on some runs
(a flag read at run time, a config that may be None) is reported.
`pipeline(...)` loads its model the same way (its `dtype` defaults to "auto" in transformers 5);
handed a model object it ignores `dtype` and keeps the object's, in both versions, so the keyword
is safe there too. A pipeline given `model_kwargs` that may set the dtype is left alone
(transformers 5 refuses both).
"""

from __future__ import annotations

import re

import libcst as cst

from codemods import edits, quantization, walk
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

    _module: cst.Module  # the pass's tree (RewriteDrift.visit_Module)

    def dtype_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        era = self.state.shared.ppo_era
        if era is None or not (self._loads_a_model(original) or self._builds_a_pipeline(original)):
            return updated
        if any(a.star == "**" for a in updated.args):
            return updated
        given = {a.keyword.value: a for a in updated.args if a.keyword is not None}
        if QUANTIZED & set(given):
            dtype_given = {"dtype", "torch_dtype"} & set(given)
            names = quantization.config_names(self._module)
            if not dtype_given and quantization.load_state(original, names) == quantization.ON:
                return self._bnb_float16(original, updated, era)
            self._maybe_quantized(original, era)
            return updated
        for key in ("dtype", "torch_dtype"):
            if key in given:
                self._maybe_none(original, given[key])
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
        return _with_dtype(updated, "float32")

    def _bnb_float16(self, original: cst.Call, updated: cst.Call, era: str) -> cst.Call:
        """An 8/4-bit bitsandbytes load with no dtype: float16 for the unquantized modules on
        transformers 4, the checkpoint's dtype on 5 (Deskrado/streambe-medical's QLoRA load)."""
        said = (
            "transformers 4 loaded the modules bitsandbytes leaves unquantized (embeddings, "
            "norms, the LM head) in float16 when the load set no dtype (its quantizer forced "
            "it); transformers 5, which TRL 1.13 installs in practice, loads them in the "
            'checkpoint\'s dtype (`dtype="auto"`, bfloat16 for most current checkpoints)'
        )
        if era not in ON_TRANSFORMERS_4:
            self.report(
                original,
                f"{said}: if this script ran on transformers 4, pass "
                '`dtype="float16"` to load them as it did',
                severity=Severity.WARNING,
                fix=Fix.NONE,
            )
            return updated
        self.report(
            original, f'{said}: `dtype="float16"` keeps them as they were', severity=Severity.INFO
        )
        return _with_dtype(updated, "float16")

    def _maybe_quantized(self, call: cst.Call, era: str) -> None:
        """A load quantized only on some runs (`quantization_config=bnb if args.q else None`, a
        flag read at run time): where it is not, it loads as any other, in float32 on
        transformers 4 and in the checkpoint's dtype on 5. Said, not changed: a dtype written in
        would also reach the quantized runs, which transformers 4 loaded in float16."""
        if not self._sometimes_quantized(call):
            return
        asked = ", ".join(
            edits.arg_text(a)
            for a in call.args
            if a.keyword is not None and a.keyword.value in QUANTIZED
        )
        ran = (
            "this script's TRL ran on transformers 4, which loaded it in float32"
            if era in ON_TRANSFORMERS_4
            else "transformers 4 loaded it in float32"
        )
        self.report(
            call,
            f"`{asked}` may leave this model unquantized on some runs (a flag or a config read "
            f"at run time): where it does, {ran}, and "
            "transformers 5, which TRL 1.13 installs in practice, loads it in its checkpoint's "
            'dtype (`dtype="auto"`, bfloat16 for most current checkpoints): pass '
            '`dtype="float32"` on those runs to keep the old precision (and `dtype="float16"` '
            "on the quantized ones: transformers 4 loaded the modules bitsandbytes leaves "
            "unquantized in float16)",
            severity=Severity.WARNING,
            fix=Fix.NONE,
        )

    def _sometimes_quantized(self, call: cst.Call) -> bool:
        """Whether the file shows the load quantized on some runs only: an 8/4-bit flag read at
        run time, `quantization_config=<config> if <test> else None` (either way round), or a
        config name the file binds both to a `BitsAndBytesConfig` and to something else. A
        config this file does not build is not counted (it may well always quantize)."""
        for arg in call.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key in ("load_in_8bit", "load_in_4bit"):
                if edits.literal(arg.value) not in (True, False, None):
                    return True
            elif key == "quantization_config":
                value = arg.value
                if isinstance(value, cst.IfExp) and any(
                    isinstance(v, cst.Name) and v.value == "None"
                    for v in (value.body, value.orelse)
                ):
                    return True
                if isinstance(value, cst.Name):
                    names = quantization.config_names(self._module)
                    if names.get(value.value) == quantization.MAYBE:
                        return True
        return False

    def _maybe_none(self, call: cst.Call, arg: cst.Arg) -> None:
        """A dtype argument that may be None at run time: the HF scripts' `torch_dtype = (
        model_args.torch_dtype if model_args.torch_dtype in ["auto", None] else getattr(torch,
        model_args.torch_dtype))` with the field's default None. transformers 4 loaded float32
        for None, and 5 reads it as "auto" (the checkpoint's dtype)."""
        value = arg.value
        where = _none_binding(self._module, value)
        if where is None:
            return
        shown = edits.code(value).strip()
        self.report(
            call,
            f"`{edits.arg_text(arg)}` may be None at run time ({where}): transformers 4 loaded "
            'the model in float32 for None, and transformers 5 reads None as "auto", the '
            f"checkpoint's dtype (bfloat16 for most current checkpoints): pass `{shown} or "
            '"float32"` to load in float32 where it is None, as this script did on '
            "transformers 4",
            severity=Severity.WARNING,
            fix=Fix.NONE,
        )

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


def _none_binding(module: cst.Module, value: cst.BaseExpression) -> str | None:
    """Where `value` (a name, or an attribute `args.torch_dtype`) may get None, as code: an
    assignment of the name whose value may be None (`x if x in ["auto", None] else ...`), or a
    dataclass field of the attribute's name whose default is None; None where the file shows no
    such binding."""
    if isinstance(value, cst.Name):
        for assign in walk.find_all(module, cst.Assign):
            if any(
                isinstance(t.target, cst.Name) and t.target.value == value.value
                for t in assign.targets
            ) and (_may_be_none(assign.value) or _none_field(module, assign.value)):
                return f"`{' '.join(edits.code(assign).split())[:140]}`"
        return None
    return _none_field(module, value)


def _may_be_none(expr: cst.BaseExpression) -> bool:
    """None itself, or a conditional one of whose branches may be None: `None`, or the value
    tested `x in [..., None]` / `x is None` given back as it is."""
    if isinstance(expr, cst.Name) and expr.value == "None":
        return True
    if not isinstance(expr, cst.IfExp):
        return False
    if _may_be_none(expr.body) or _may_be_none(expr.orelse):
        return True
    test = expr.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    same = edits.code(test.left).strip() == edits.code(expr.body).strip()
    if isinstance(op, cst.Is):
        return same and isinstance(right, cst.Name) and right.value == "None"
    if isinstance(op, cst.In) and isinstance(right, (cst.List, cst.Tuple, cst.Set)):
        return same and any(
            isinstance(e.value, cst.Name) and e.value.value == "None" for e in right.elements
        )
    return False


def _none_field(module: cst.Module, value: cst.BaseExpression) -> str | None:
    """`args.torch_dtype` whose name is a dataclass field of the file defaulting to None."""
    if not isinstance(value, cst.Attribute):
        return None
    field = value.attr.value
    for ann in walk.find_all(module, cst.AnnAssign):
        if not (isinstance(ann.target, cst.Name) and ann.target.value == field) or not ann.value:
            continue
        default = ann.value
        if isinstance(default, cst.Call):
            kw = edits.kwarg(default, "default")
            if kw is None:
                continue
            default = kw.value
        if isinstance(default, cst.Name) and default.value == "None":
            return f"the field `{field}` defaults to None"
    return None


def _with_dtype(call: cst.Call, dtype: str) -> cst.Call:
    """`call` with `dtype="<dtype>"` as its last keyword, laid out as its other arguments."""
    arg = edits.new_kwarg("dtype", f'"{dtype}"')
    args = [*call.args, arg]
    fresh = {id(arg), id(call.args[-1])} if call.args else {id(arg)}
    return call.with_changes(args=edits.relayout(call, args, fresh))
