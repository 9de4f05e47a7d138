"""Removed TRL helpers written into the file that imported them (codemods/data/inline.toml):
the import becomes the definition, and the definition gives the numbers the old TRL function
gave (run against the function itself, read out of the TRL wheel)."""

from __future__ import annotations

import ast
import functools
import os

import pytest

from codemods import inline
from tests import old_wheels
from tests.codemods.helpers import run

HELPERS = [
    ("trl.core", "logprobs_from_logits"),
    ("trl.core", "whiten"),
    ("trl.core", "masked_mean"),
    ("trl.core", "masked_var"),
    ("trl.core", "masked_whiten"),
    ("trl.core", "clip_by_value"),
    ("trl.core", "entropy_from_logits"),
    ("trl.core", "stats_to_np"),
    ("trl.core", "PPODecorators"),
    ("trl.trainer.utils", "exact_div"),
    ("trl.experimental.ppo.ppo_trainer", "INVALID_LOGPROB"),
    ("trl.experimental.ppo.ppo_trainer", "masked_whiten"),
]


@pytest.mark.parametrize(("module", "name"), HELPERS, ids=[f"{m}.{n}" for m, n in HELPERS])
def test_the_import_becomes_the_definition_and_a_rerun_changes_nothing(module, name):
    src = f"from {module} import {name} as helper\n\nprint(helper)\n"
    out, findings = run(src, select=("TRL101",))
    assert f"from {module} import" not in out and "TODO(trl-migrate" not in out, out
    tree = ast.parse(out)
    bound = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    assert "helper" in bound
    assert [f.code for f in findings] == ["TRL101"]
    assert run(out, select=("TRL101",))[0] == out


# -- the same numbers as the old function ---------------------------------------------------
@functools.cache
def _old_sources() -> dict[str, str] | str:
    """name -> source of trl 0.11.4's own definition, or why the wheel is not at hand."""
    out = {}
    for path in ("trl/core.py", "trl/trainer/utils.py"):
        try:
            text = old_wheels.member("0.11.4", path)
        except LookupError as why:
            return str(why)
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.setdefault(node.name, ast.get_source_segment(text, node) or "")
    return out


def _old(name: str):  # type: ignore[no-untyped-def]
    sources = _old_sources()
    if isinstance(sources, str):
        pytest.skip(sources)
    import gc
    from collections.abc import Mapping
    from contextlib import contextmanager

    import numpy as np
    import torch
    import torch.nn.functional as F

    space = {
        "torch": torch,
        "F": F,
        "np": np,
        "Mapping": Mapping,
        "gc": gc,
        "contextmanager": contextmanager,
        "Optional": object,
        "Dict": dict,
        "List": list,
        "is_torch_xpu_available": lambda: False,
        "is_torch_npu_available": lambda: False,
    }
    for helper in ("masked_mean", "masked_var"):  # what the old functions call
        exec(sources[helper], space)
    exec(sources[name], space)
    return space[name]


def _ours(name: str):  # type: ignore[no-untyped-def]
    space: dict = {}
    source = inline.lookup(f"trl.core.{name}") or inline.lookup(f"trl.trainer.utils.{name}") or ""
    exec(source.replace("__NAME__", name), space)
    return space[name]


def test_the_definitions_give_the_old_functions_numbers():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 11, generator=g)  # (B, T, V)
    labels = torch.randint(0, 11, (2, 5), generator=g)  # (B, T)
    values = torch.randn(3, 7, generator=g)
    mask = (torch.rand(3, 7, generator=g) > 0.3).float()
    cases = {
        "logprobs_from_logits": [(logits, labels), (logits, labels, False)],
        "whiten": [(values,), (values, False)],
        "masked_mean": [(values, mask), (values, mask, 1)],
        "masked_var": [(values, mask), (values, mask, False)],
        "masked_whiten": [(values, mask), (values, mask, False)],
        "clip_by_value": [(values, torch.tensor(-0.5), torch.tensor(0.5))],
        "entropy_from_logits": [(logits,)],
    }
    for name, calls in cases.items():
        old, ours = _old(name), _ours(name)
        for args in calls:
            assert torch.equal(old(*args), ours(*args)), (name, len(args))
    stats = {"a": torch.tensor([1.5, 2.0], dtype=torch.bfloat16), "b": torch.tensor(3.0), "c": 2}
    old, ours = _old("stats_to_np")(stats), _ours("stats_to_np")(stats)
    assert old.keys() == ours.keys() and all(
        type(old[k]) is type(ours[k]) and str(old[k]) == str(ours[k]) for k in old
    )
    assert _old("exact_div")(12, 4) == _ours("exact_div")(12, 4) == 3
    for fn in (_old("exact_div"), _ours("exact_div")):
        with pytest.raises(ValueError, match="inexact division: 10 / 4 = 2.5"):
            fn(10, 4, "batch")


def test_the_decorators_class_keeps_its_interface():
    ours = _ours("PPODecorators")
    calls = []

    @ours.empty_device_cache()
    def step(x):
        calls.append(x)
        return x * 2

    assert step(3) == 6 and calls == [3]
    ours.optimize_device_cache = True
    with ours.empty_device_cache():
        calls.append("in")
    assert calls == [3, "in"] and os.environ is not None
