"""The dtype a script's models load in, before and after the rewrite, read with `ast`.

transformers 4 loaded `Model.from_pretrained(name)` without a dtype in float32; transformers 5
(what TRL 1.13 runs on in practice) in the checkpoint's own dtype (`"auto"`). The old run's
transformers follows from the era of its TRL: legacy and PPOv2 scripts (TRL <= 0.11) ran on 4;
the v2 and experimental APIs on 4 or 5, so their loads without a dtype count as either.
"""

from __future__ import annotations

import ast
from typing import Any

from codemods.rules.drift.dtypes import MODEL_CLASS, NOT_MODELS, ON_TRANSFORMERS_4, QUANTIZED
from migrate.effective.values import UNKNOWN

AUTO = "auto"


def _transformers_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> class name, for the model classes the file imports from transformers, and
    TRL's value-head wrappers (they loaded the transformers model underneath; TRL102 loads it
    directly)."""
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level != 0:
            continue
        package = (node.module or "").split(".")[0]
        for a in node.names:
            if package == "transformers" or (package == "trl" and "WithValueHead" in a.name):
                out[a.asname or a.name] = a.name
    return out


def _loads(tree: ast.Module) -> list[ast.Call]:
    """`X.from_pretrained(...)` of a transformers model class (imported from transformers, or
    `transformers.X`; not a tokenizer or config, not peft's), in source order."""
    imported = _transformers_names(tree)
    objects = _model_objects(tree)
    out = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "from_pretrained"
        ):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Name):
            name = imported.get(owner.id, "")
        elif isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name):
            name = owner.attr if owner.value.id == "transformers" else ""
        else:
            name = ""
        wraps = (
            "WithValueHead" in name
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in objects
        )  # a value head put on a model already loaded: nothing is loaded here
        if MODEL_CLASS.match(name) and not name.endswith(NOT_MODELS) and not wraps:
            out.append(node)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def _model_objects(tree: ast.Module) -> set[str]:
    """Names the file binds to a loaded model (a `from_pretrained` or peft wrapping result)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("from_pretrained", "get_peft_model", "prepare_model_for_kbit_training"):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _dtype(call: ast.Call, unset: str) -> Any:
    """The dtype one load asks for: a literal (`torch.bfloat16` and "bfloat16" alike), `unset`
    when it sets none, None for a quantized load (its own dtype, the same in both versions),
    UNKNOWN for a value known only at run time."""
    given = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if any(k.arg is None for k in call.keywords) or QUANTIZED & given.keys():
        return UNKNOWN if any(k.arg is None for k in call.keywords) else None
    value = given.get("dtype", given.get("torch_dtype"))
    if value is None:
        return unset
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return AUTO if value.value == "auto" else value.value
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return value.attr if value.value.id == "torch" else UNKNOWN
    return UNKNOWN


def _joined(values: list[Any]) -> Any:
    """The distinct dtypes the loads ask for: a rewrite may drop a load (a reference model RLOO
    builds itself) without changing the precision of the others."""
    if any(v is UNKNOWN for v in values):
        return UNKNOWN
    return ", ".join(sorted({str(v) for v in values if v is not None})) or "none"


def old_dtypes(text: str, era: str) -> Any:
    """The old run's load dtypes, one string for the file's loads; for an era that ran
    on transformers 4 or 5, a tuple of both readings (the checker's "releases disagreed")."""
    loads = _loads(ast.parse(text))
    four = _joined([_dtype(c, "float32") for c in loads])
    if era in ON_TRANSFORMERS_4:
        return four
    five = _joined([_dtype(c, AUTO) for c in loads])
    return four if four == five else (four, five)


def new_dtypes(text: str) -> Any:
    """The rewritten run's load dtypes (transformers 5: a load without one takes the
    checkpoint's)."""
    return _joined([_dtype(c, AUTO) for c in _loads(ast.parse(text))])
