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
    ("trl.core", "WANDB_PADDING"),
    ("trl.core", "flatten_dict"),
    ("trl.core", "convert_to_scalar"),
    ("trl.core", "stack_dicts"),
    ("trl.core", "add_suffix"),
    ("trl.core", "pad_to_size"),
    ("trl.core", "average_torch_dicts"),
    ("trl.core", "listify_batch"),
    ("trl.core", "build_bert_batch_from_txt"),
    ("trl.core", "top_k_top_p_filtering"),
    ("trl.trainer", "AdaptiveKLController"),
    ("trl.trainer.utils", "FixedKLController"),
    ("trl.trainer", "BaseTrainer"),
    ("trl.import_utils", "is_torch_greater_2_0"),
    ("trl.trainer", "ConstantLengthDataset"),
    ("trl.trainer.utils", "prepare_deepspeed"),
    ("trl.trainer.utils", "batch_generation"),
    ("trl.experimental.ppo.ppo_trainer", "truncate_response"),
    # re-exported by an old module the table does not list: the definition of that name
    ("trl.trainer.ppo_trainer", "PPODecorators"),
    ("trl.trainer.ppo_trainer", "logprobs_from_logits"),
    ("trl.trainer.utils", "exact_div"),
    ("trl.experimental.ppo.ppo_trainer", "INVALID_LOGPROB"),
    ("trl.experimental.ppo.ppo_trainer", "masked_whiten"),
    ("trl", "setup_chat_format"),
    ("trl.models.utils", "setup_chat_format"),
    ("trl", "DataCollatorForCompletionOnlyLM"),
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
def _old_sources(version: str = "0.11.4") -> dict[str, str] | str:
    """name -> source of that trl release's own definition, or why the wheel is not at hand."""
    out = {}
    for path in ("trl/core.py", "trl/trainer/utils.py"):
        try:
            text = old_wheels.member(version, path)
        except LookupError as why:
            return str(why)
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                out.setdefault(node.name, ast.get_source_segment(text, node) or "")
    return out


def _old(name: str, version: str = "0.11.4"):  # type: ignore[no-untyped-def]
    sources = _old_sources(version)
    if isinstance(sources, str):
        pytest.skip(sources)
    import gc
    from collections.abc import Mapping
    from contextlib import contextmanager

    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch.nn.utils.rnn import pad_sequence
    from transformers import TopKLogitsWarper, TopPLogitsWarper

    space = {
        "pad_sequence": pad_sequence,
        "TopKLogitsWarper": TopKLogitsWarper,
        "TopPLogitsWarper": TopPLogitsWarper,
        "WANDB_PADDING": -1,
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
    for helper in ("masked_mean", "masked_var", "pad_to_size"):  # what the old functions call
        if helper in sources:
            exec(sources[helper], space)
    exec(sources[name], space)
    return space[name]


def _ours(name: str):  # type: ignore[no-untyped-def]
    space: dict = {}
    source = inline.lookup(f"trl.core.{name}") or inline.lookup(f"trl.trainer.utils.{name}") or ""
    assert source, name
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


def test_the_stats_and_batch_helpers_give_the_old_functions_results():
    """The legacy PPO stats helpers (0.11.4's own), the 0.10.1 ones, and 0.7.0's batch helpers."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    g = torch.Generator().manual_seed(0)
    nested = {"a": {"b": torch.tensor(1.0), "c": {"d": 2}}, "e": np.array([3.0])}
    for name, version in (("flatten_dict", "0.11.4"), ("flatten_dict", "0.7.0")):
        assert _old(name, version)(nested) == _ours(name)(nested)
        for fn in (_old(name, version), _ours(name)):
            with pytest.raises(ValueError, match="separator '/' not allowed to be in key 'x/y'"):
                fn({"x/y": 1})
    stats = {"s": torch.tensor(2.5), "v": torch.tensor([4.0]), "w": torch.ones(2), "n": np.array(7)}
    old, ours = _old("convert_to_scalar")(stats), _ours("convert_to_scalar")(stats)
    assert old.keys() == ours.keys()
    assert all(type(old[k]) is type(ours[k]) for k in old)
    assert (old["s"], old["v"], old["n"]) == (ours["s"], ours["v"], ours["n"])
    assert torch.equal(old["w"], ours["w"])
    ragged = [{"k": torch.randn(3, generator=g)}, {"k": torch.randn(2, 2, generator=g)}]
    assert torch.equal(_old("stack_dicts")(ragged)["k"], _ours("stack_dicts")(ragged)["k"])
    dicts = [{"k": torch.randn(3, generator=g)} for _ in range(4)]
    assert torch.equal(
        _old("average_torch_dicts", "0.10.1")(dicts)["k"], _ours("average_torch_dicts")(dicts)["k"]
    )
    assert _old("add_suffix", "0.10.1")({"a": 1}, "_x") == _ours("add_suffix")({"a": 1}, "_x")
    t = torch.randn(2, 3, generator=g)
    for args in ((t, 5), (t, 3), (t, 2, 0, 7)):  # the last measures dim 0, pads the last one
        assert torch.equal(_old("pad_to_size", "0.10.1")(*args), _ours("pad_to_size")(*args))
    assert [r.tolist() for r in _old("listify_batch", "0.7.0")(t)] == [
        r.tolist() for r in _ours("listify_batch")(t)
    ]
    logits = torch.randn(4, 11, generator=g)
    for k, p in ((0, 1.0), (3, 1.0), (0, 0.8), (5, 0.5)):
        assert torch.equal(
            _old("top_k_top_p_filtering")(logits, k, p),
            _ours("top_k_top_p_filtering")(logits, k, p),
        )


def test_is_torch_greater_2_0_answers_as_trl_0_11_4s_did():
    pytest.importorskip("torch")
    text = old_wheels.member("0.11.4", "trl/import_utils.py") if _old_sources() else ""
    space: dict = {"_is_python_greater_3_8": True}
    node = next(
        n
        for n in ast.parse(text).body
        if isinstance(n, ast.FunctionDef) and n.name == "is_torch_greater_2_0"
    )
    exec(ast.get_source_segment(text, node) or "", space)
    ours: dict = {}
    exec(
        (inline.lookup("trl.import_utils.is_torch_greater_2_0") or "").replace("__NAME__", "f"),
        ours,
    )
    assert space["is_torch_greater_2_0"]() is ours["f"]() is True


def test_a_name_the_table_knows_only_by_other_paths_gets_their_definition():
    assert inline.lookup_reexport("trl.trainer.ppo_trainer.PPODecorators") == inline.lookup(
        "trl.core.PPODecorators"
    )
    assert inline.lookup_reexport("trl.trainer.ppo_trainer.no_such_helper") is None


def test_the_kl_controllers_update_as_trl_0_11_4s_did():
    old, ours = (
        _old("AdaptiveKLController")(0.2, 6.0, 10000),
        _ours("AdaptiveKLController")(0.2, 6.0, 10000),
    )
    for current, n in ((9.0, 256), (1.0, 256), (6.5, 64), (100.0, 512)):  # clipped both ways
        old.update(current, n)
        ours.update(current, n)
        assert old.value == ours.value
    fixed = _ours("FixedKLController")(0.05)
    fixed.update(10.0, 256)
    assert fixed.value == _old("FixedKLController")(0.05).value == 0.05


def test_the_legacy_base_trainer_keeps_its_interface():
    pytest.importorskip("huggingface_hub")
    from huggingface_hub import PyTorchModelHubMixin

    space: dict = {}
    exec((inline.lookup("trl.trainer.BaseTrainer") or "").replace("__NAME__", "BaseTrainer"), space)
    base = space["BaseTrainer"]

    class Vendored(base):  # type: ignore[misc, valid-type]  # a legacy PPOTrainer copy
        def __init__(self, config):
            super().__init__(config)

    trainer = Vendored({"lr": 1.0})
    assert isinstance(trainer, PyTorchModelHubMixin) and trainer.config == {"lr": 1.0}
    for method in ("step", "loss", "compute_rewards"):
        with pytest.raises(NotImplementedError):
            getattr(trainer, method)()
    with pytest.raises(NotImplementedError):
        trainer._save_pretrained("somewhere")


def test_build_bert_batch_from_txt_pads_as_trl_0_7_did():
    pytest.importorskip("torch")
    import torch

    class Tok:  # encodes a text as its word lengths: texts of different lengths, no download
        def encode(self, text, return_tensors=None):  # type: ignore[no-untyped-def]
            return torch.tensor([[len(w) for w in text.split()]])

    texts = ["a bb ccc", "dddd", "ee f"]
    old = _old("build_bert_batch_from_txt", "0.7.0")(texts, Tok(), "cpu")
    ours = _ours("build_bert_batch_from_txt")(texts, Tok(), "cpu")
    assert all(torch.equal(a, b) and a.dtype == b.dtype for a, b in zip(old, ours))
    assert ours[0].tolist() == [[1, 2, 3], [4, 0, 0], [2, 1, 0]]


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


def test_setup_chat_format_sets_up_what_trl_0_11_4_did():
    """The written-in setup_chat_format against TRL 0.11.4's own (read out of its wheel), each
    on a fresh tiny model and tokenizer: the same special tokens, template, rendered chat,
    embedding size and token ids in the model's configs."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from migrate.reference.tiny import tiny_tokenizer

    try:
        text = old_wheels.member("0.11.4", "trl/models/utils.py")
    except LookupError as why:
        pytest.skip(str(why))
    tree = ast.parse(text)
    keep = [
        ast.get_source_segment(text, n) or ""
        for n in tree.body
        if isinstance(n, (ast.ClassDef, ast.FunctionDef))
        and n.name in ("ChatMlSpecialTokens", "setup_chat_format")
        or (isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "FORMAT_MAPPING")
    ]
    from dataclasses import dataclass
    from typing import Literal, Optional

    # the names the old module's annotations read
    old_space = {"dataclass": dataclass, "Literal": Literal, "Optional": Optional, "Tuple": tuple}
    old_space.update(PreTrainedModel=object, PreTrainedTokenizer=object)
    exec("\n\n".join(keep), old_space)  # noqa: S102
    ours_space: dict = {}
    exec(inline.lookup("trl.setup_chat_format").replace("__NAME__", "setup"), ours_space)  # type: ignore[union-attr]  # noqa: S102

    def fresh():  # type: ignore[no-untyped-def]
        tok = tiny_tokenizer()
        config = transformers.AutoConfig.for_model(
            "gpt2", vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=64
        )
        return transformers.AutoModelForCausalLM.from_config(config), tok

    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    for multiple in (None, 64):
        (m1, t1), (m2, t2) = fresh(), fresh()
        old_space["setup_chat_format"](m1, t1, resize_to_multiple_of=multiple)
        ours_space["setup"](m2, t2, resize_to_multiple_of=multiple)
        assert t1.chat_template == t2.chat_template and "<|im_start|>" in t2.chat_template
        assert (t1.bos_token, t1.eos_token, t1.pad_token) == (
            t2.bos_token,
            t2.eos_token,
            t2.pad_token,
        )
        assert len(t1) == len(t2)
        render = {"add_generation_prompt": True, "tokenize": False}
        assert t1.apply_chat_template(chat, **render) == t2.apply_chat_template(chat, **render)
        e1, e2 = m1.get_input_embeddings().weight.shape, m2.get_input_embeddings().weight.shape
        assert e1 == e2 and (multiple is None or e2[0] % multiple == 0)
        for part in ("config", "generation_config"):
            c1, c2 = getattr(m1, part), getattr(m2, part)
            assert (c1.pad_token_id, c1.bos_token_id, c1.eos_token_id) == (
                c2.pad_token_id,
                c2.bos_token_id,
                c2.eos_token_id,
            )
    with pytest.raises(ValueError, match="Format llama not available"):
        ours_space["setup"](*fresh(), format="llama")


def _old_definition(version: str, name: str, path: str = "trl/trainer/utils.py") -> str:
    """The source of `name` as TRL `version` defined it, read out of its wheel (the test skips
    when the wheel is not at hand)."""
    try:
        text = old_wheels.member(version, path)
    except LookupError as why:
        pytest.skip(str(why))
    for node in ast.parse(text).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
            return ast.get_source_segment(text, node) or ""
    raise LookupError(f"TRL {version}'s {path} defines no {name}")


def _old_packing(version: str):  # type: ignore[no-untyped-def]
    """TRL `version`'s own ConstantLengthDataset, read out of its wheel."""
    import random
    import warnings

    torch = pytest.importorskip("torch")
    source = _old_definition(version, "ConstantLengthDataset")
    space = {
        "IterableDataset": torch.utils.data.IterableDataset,
        "torch": torch,
        "random": random,
        "warnings": warnings,
        "datasets": pytest.importorskip("datasets"),
    }
    exec(source, space)  # noqa: S102
    return space["ConstantLengthDataset"]


class _Tokenizer:
    """Characters as token ids; an EOS id of 1 (or none)."""

    def __init__(self, eos: int | None = 1) -> None:
        self.eos_token_id = eos

    def __call__(self, texts, truncation=False, add_special_tokens=True):  # type: ignore[no-untyped-def]
        head = [2] if add_special_tokens else []
        return {"input_ids": [head + [ord(c) for c in t] for t in texts]}


def _packed(cls, seed: int, **kwargs):  # type: ignore[no-untyped-def]
    import random

    rows = [{"text": f"row {i} " * (1 + i % 4)} for i in range(23)]
    random.seed(seed)
    return [
        (e["input_ids"].tolist(), e["labels"].tolist())
        for e in cls(_Tokenizer(kwargs.pop("eos", 1)), rows, **kwargs)
    ]


PACKINGS = [
    {"dataset_text_field": "text", "seq_length": 7, "num_of_sequences": 3, "chars_per_token": 2},
    {"formatting_func": lambda r: r["text"].upper(), "seq_length": 5, "num_of_sequences": 2},
    {"dataset_text_field": "text", "seq_length": 9, "shuffle": False, "eos": None},
]


@pytest.mark.parametrize("version", ["0.4.7", "0.10.1"])
def test_constant_length_dataset_packs_as_trl_0_4_to_0_10_did(version):
    """The written-in ConstantLengthDataset gives the examples, in the order, of TRL 0.4.7's
    and 0.10.1's own class under the same random seed."""
    ours = _ours("ConstantLengthDataset")
    old = _old_packing(version)
    for kwargs in PACKINGS:
        for seed in (0, 3):
            got = _packed(ours, seed, **dict(kwargs))
            assert got and got == _packed(old, seed, **dict(kwargs))
    if version == "0.10.1":  # the arguments 0.7 added
        kwargs = {"dataset_text_field": "text", "seq_length": 6}
        for extra in ({"append_concat_token": False}, {"add_special_tokens": False}):
            assert _packed(ours, 1, **kwargs, **extra) == _packed(old, 1, **kwargs, **extra)


def test_constant_length_dataset_note_names_what_later_releases_did():
    """TRL 0.11 shuffled each buffer's texts too: other examples under the same seed, which the
    finding says instead of picking a release silently."""
    kwargs = {"dataset_text_field": "text", "seq_length": 7, "num_of_sequences": 3}
    ours = _packed(_ours("ConstantLengthDataset"), 0, **kwargs)
    later = _packed(_old_packing("0.11.4"), 0, **kwargs)
    assert ours and later and ours != later
    src = "from trl.trainer import ConstantLengthDataset\n\nds = ConstantLengthDataset(t, d)\n"
    out, findings = run(src, select=("TRL101",))
    assert [(f.severity.value, f.message) for f in findings] == [
        (
            "warning",
            "`trl.trainer.ConstantLengthDataset` was removed in TRL 0.20.0; an equivalent "
            "definition was written into this file: it is written in as TRL 0.4-0.10 had it; if "
            "this ran on TRL 0.11-0.19, those also shuffled each buffer's texts before packing "
            "(with shuffle=True, other texts share an example) and took a dataset with an "
            "`input_ids` column as already tokenized; TRL 1.13's own packing is "
            "`SFTConfig(packing=True)`",
        )
    ]
    assert out.startswith("import torch.utils.data\n\n\nclass ConstantLengthDataset(")


@pytest.mark.parametrize("version", ["0.10.1", "1.0.0"])
def test_prepare_deepspeed_hands_deepspeed_what_trl_did(version, monkeypatch):
    """Without DeepSpeed installed: a stand-in `deepspeed.initialize` records the config each
    function hands it, and the plugin config it leaves behind, for ZeRO stages 2 and 3."""
    import copy
    import sys
    import types

    torch = pytest.importorskip("torch")
    accelerate_state = pytest.importorskip("accelerate.state")
    source = _old_definition(version, "prepare_deepspeed")
    seen: list = []

    class Engine(torch.nn.Module):
        def __init__(self, model):  # type: ignore[no-untyped-def]
            super().__init__()
            self.inner = model

    def initialize(model, config):  # type: ignore[no-untyped-def]
        seen.append(copy.deepcopy(config))
        return Engine(model), None, None, None

    monkeypatch.setitem(sys.modules, "deepspeed", types.SimpleNamespace(initialize=initialize))
    plugin = types.SimpleNamespace(deepspeed_config={})
    monkeypatch.setattr(
        accelerate_state,
        "AcceleratorState",
        lambda: types.SimpleNamespace(deepspeed_plugin=plugin),
    )
    old_space = {"torch": torch, "AcceleratorState": accelerate_state.AcceleratorState}
    exec(source, old_space)  # noqa: S102
    ours_space: dict = {}
    exec(
        inline.lookup("trl.trainer.utils.prepare_deepspeed").replace("__NAME__", "prep"), ours_space
    )  # type: ignore[union-attr]  # noqa: S102
    model = torch.nn.Linear(2, 2)
    model.config = types.SimpleNamespace(hidden_size=8)  # type: ignore[assignment]
    for stage in (2, 3):
        for flags in ((False, False), (True, False), (False, True)):
            results = []
            for fn in (old_space["prepare_deepspeed"], ours_space["prep"]):
                plugin.deepspeed_config = {"zero_optimization": {"stage": stage}, "x": 1}
                wrapped = fn(model, 4, *flags)
                assert isinstance(wrapped, Engine) and not wrapped.training
                results.append((seen[-1], plugin.deepspeed_config))
            assert results[0] == results[1], (stage, flags)


def test_v2_rollout_helpers_give_trl_0_26s_tensors():
    """forward, truncate_response, generate and batch_generation (what vendored v2 PPO/RLOO
    trainers import) against TRL 0.26.2's own functions on a tiny GPT-2: the same logits,
    hidden states, truncated ids and generations; batch_generation also with slices whose
    generations end at different lengths (padded and joined)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import numpy as np

    try:
        text = old_wheels.member("0.26.2", "trl/trainer/utils.py")
    except LookupError as why:
        pytest.skip(str(why))
    wanted = ("forward", "truncate_response", "generate", "batch_generation", "pad")
    wanted += ("first_true_indices",)
    old: dict = {"torch": torch, "np": np, "Optional": object}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name in wanted:
            exec(ast.get_source_segment(text, node) or "", old)  # noqa: S102
    ours: dict = {}
    for name in wanted[:4]:
        source = inline.lookup(f"trl.trainer.utils.{name}") or ""
        exec(source.replace("__NAME__", name), ours)  # noqa: S102

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=50, n_embd=16, n_layer=2, n_head=2, n_positions=64, eos_token_id=3
    )
    model = transformers.GPT2LMHeadModel(config).eval()
    pad_id = 0
    queries = torch.tensor([[0, 0, 5, 6, 7], [0, 8, 9, 10, 11], [12, 13, 14, 15, 16]])
    with torch.no_grad():
        a, b = old["forward"](model, queries, pad_id), ours["forward"](model, queries, pad_id)
    assert torch.equal(a.logits, b.logits)
    assert all(torch.equal(x, y) for x, y in zip(a.hidden_states, b.hidden_states))

    responses = torch.tensor([[4, 3, 9, 9], [3, 5, 3, 1], [7, 8, 9, 10]])
    for stop in (3, 9, 42):
        assert torch.equal(
            old["truncate_response"](stop, pad_id, responses),
            ours["truncate_response"](stop, pad_id, responses),
        )

    # greedy, the first query's first new token is 33: as EOS, its generation ends first
    gen = transformers.GenerationConfig(
        max_new_tokens=6, do_sample=False, eos_token_id=33, pad_token_id=pad_id
    )
    for fn in ("generate",):
        (s1, l1), (s2, l2) = (
            old[fn](model, queries, pad_id, gen),
            ours[fn](model, queries, pad_id, gen),
        )
        assert torch.equal(s1, s2) and torch.equal(l1, l2)
    for step in (1, 2, 3):
        (s1, l1), (s2, l2) = (
            old["batch_generation"](model, queries, step, pad_id, gen),
            ours["batch_generation"](model, queries, step, pad_id, gen),
        )
        assert torch.equal(s1, s2) and torch.equal(l1, l2), step
        assert s2[0, -1] == pad_id and s2[1, -1] != pad_id  # one slice ended early
        assert not s2.requires_grad and not l2.requires_grad


@pytest.mark.parametrize("version", ["0.11.4", "0.19.1"])
def test_reward_collator_pads_as_trl_did(version):
    """The written-in RewardDataCollatorWithPadding gives the batch of TRL 0.11.4's class
    (which took max_length) and 0.19.1's (as later releases had it; 0.26's only added a
    deprecation warning), margins and padding options included, and raises as they did on a
    feature without the four keys."""
    torch = pytest.importorskip("torch")
    from migrate.reference.tiny import tiny_tokenizer

    tok = tiny_tokenizer()
    source = _old_definition(version, "RewardDataCollatorWithPadding")
    from dataclasses import dataclass
    from typing import Any, Optional, Union

    space = {"dataclass": dataclass, "torch": torch, "Any": Any, "Optional": Optional}
    space.update({"Union": Union, "List": list, "Dict": dict, "PreTrainedTokenizerBase": object})
    exec("@dataclass\n" + source, space)  # noqa: S102
    old, ours = space["RewardDataCollatorWithPadding"], _ours("RewardDataCollatorWithPadding")

    def feature(chosen, rejected, **extra):  # type: ignore[no-untyped-def]
        c, r = tok(chosen)["input_ids"], tok(rejected)["input_ids"]
        return {
            "input_ids_chosen": c,
            "attention_mask_chosen": [1] * len(c),
            "input_ids_rejected": r,
            "attention_mask_rejected": [1] * len(r),
            **extra,
        }

    plain = [feature("a good answer here", "no"), feature("yes", "a much longer rejected one")]
    margins = [dict(f, margin=m) for f, m in zip(plain, (0.5, 2))]
    options = [{}, {"pad_to_multiple_of": 8}, {"padding": "longest"}]
    if version == "0.11.4":
        options.append({"padding": "max_length", "max_length": 40})
    for kwargs in options:
        for features in (plain, margins):
            want, got = old(tok, **kwargs)(features), ours(tok, **kwargs)(features)
            assert list(got) == list(want)
            for key, value in want.items():
                same = torch.equal(got[key], value) if torch.is_tensor(value) else got[key] == value
                assert same, (kwargs, key)
    broken = [{"input_ids_chosen": [1], "attention_mask_chosen": [1]}]
    with pytest.raises(ValueError) as theirs:
        old(tok)(broken)
    with pytest.raises(ValueError) as mine:
        ours(tok)(broken)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["SftScriptArguments", "DpoScriptArguments"])
def test_script_arguments_give_trl_0_8_6s_flags(name):
    """The written-in flag dataclasses of TRL 0.8's SFT and DPO examples give HfArgumentParser
    the flags, types and defaults of 0.8.6's own classes."""
    from dataclasses import dataclass, field, fields

    from transformers import HfArgumentParser

    source = _old_definition("0.8.6", name, "trl/commands/cli_utils.py")
    space: dict = {"dataclass": dataclass, "field": field}
    exec("@dataclass\n" + source, space)  # noqa: S102
    old = space[name]
    ours = inline.lookup(f"trl.commands.cli_utils.{name}")
    assert ours
    mine: dict = {}
    exec(ours.replace("__NAME__", name), mine)  # noqa: S102
    new = mine[name]
    # all but `config`, which TRL 1.13's TrlParser reads itself and rejects as a field
    assert [(f.name, f.type, f.default) for f in fields(new)] == [
        (f.name, f.type, f.default) for f in fields(old) if f.name != "config"
    ]
    argv = ["--dataset_name", "d", "--gradient_checkpointing_use_reentrant"]
    (a,) = HfArgumentParser(old).parse_args_into_dataclasses(argv)
    (b,) = HfArgumentParser(new).parse_args_into_dataclasses(argv)
    assert vars(a) == {**vars(b), "config": None}
    from trl import TrlParser

    TrlParser((new,))  # the old class, with its `config` field, it rejects
    with pytest.raises(ValueError, match="has a field named 'config'"):
        TrlParser((old,))


def test_sft_script_arguments_note_names_the_releases_that_differ():
    src = "from trl.commands.cli_utils import SftScriptArguments, TrlParser\n\np = TrlParser((SftScriptArguments,))\n"
    out, findings = run(src, select=("TRL101",))
    assert "class SftScriptArguments:" in out and "from trl import TrlParser" in out
    [written] = [f for f in findings if "SftScriptArguments" in f.message]
    assert (written.severity.value, written.fix.value) == ("warning", "applied")
    assert "less its `config` field: TRL 1.13's TrlParser reads `--config`" in written.message
    assert written.message.endswith(
        '0.8.0-0.8.3 defaulted `--dataset_text_field` to "text" (None here), and 0.8.0-0.8.4 '
        "had no `--dataset_train_name`/`--dataset_test_name`: pass `--dataset_text_field text` "
        "if the script ran on those"
    )
    assert run(out, select=("TRL101",))[0] == out


@pytest.mark.parametrize(
    ("below", "after"),
    [
        pytest.param(
            # seen in haf-rm-anonymized/Code-for-HAF-RM: a commented-out import under the block
            # moved below the written class, and the blank lines before the next comment went
            "# from trl.core import LengthSampler\n\n\n# sizes\nx = 1\n",
            "# from trl.core import LengthSampler\n\n\ndef helper():\n    pass\n\n\n# sizes\nx = 1\n",
            id="a-commented-import-stays-with-the-imports",
        ),
        pytest.param(
            "# set the seed\nx = 1\n",
            "\n\ndef helper():\n    pass\n\n\n# set the seed\nx = 1\n",
            id="a-comment-on-the-next-statement-stays-with-it",
        ),
    ],
)
def test_a_definition_written_after_the_imports_keeps_the_comments_in_their_places(below, after):
    import libcst as cst

    module = cst.parse_module("import os\n" + below)
    written = list(cst.parse_module("def helper():\n    pass\n").body)
    assert inline.after_imports(module, written).code == "import os\n" + after


# -- DataCollatorForCompletionOnlyLM ----------------------------------------------------------
_DIALOGUE = [
    "### Human: hello there ### Assistant: a good answer here",
    "### Assistant: an answer first ### Human: then a question ### Assistant: more",
    "### Human: one ### Assistant: two ### Human: three",
    "no template at all in this text",
    "### Human: only a question",
]


def _completion_collators(version: str):  # type: ignore[no-untyped-def]
    """TRL `version`'s DataCollatorForCompletionOnlyLM and ours."""
    import warnings
    from typing import Any, Optional, Union

    import numpy as np
    import torch
    from transformers import DataCollatorForLanguageModeling

    source = _old_definition(version, "DataCollatorForCompletionOnlyLM")
    space = {"warnings": warnings, "np": np, "torch": torch, "Any": Any, "Optional": Optional}
    space.update({"Union": Union, "List": list, "Dict": dict})
    space["DataCollatorForLanguageModeling"] = DataCollatorForLanguageModeling
    exec(source, space)  # noqa: S102
    return space["DataCollatorForCompletionOnlyLM"], _ours("DataCollatorForCompletionOnlyLM")


@pytest.mark.parametrize("version", ["0.7.11", "0.11.4", "0.19.1"])
def test_completion_only_collator_masks_as_trl_did(version):
    """The written-in DataCollatorForCompletionOnlyLM gives the batch of TRL 0.7.11's, 0.11.4's
    and 0.19.1's class: the response template alone, with an instruction template over several
    turns (an answer first, a question last, none found), templates given as token ids, padding
    free (0.11 on), and the same number of warnings. Examples that carry TRL 1.13's `labels`
    give the batch the old class gave them without."""
    torch = pytest.importorskip("torch")
    import warnings

    from migrate.reference.tiny import tiny_tokenizer

    tok = tiny_tokenizer()
    old, ours = _completion_collators(version)
    examples = [{"input_ids": tok(t)["input_ids"]} for t in _DIALOGUE]
    with_labels = [dict(e, labels=list(e["input_ids"])) for e in examples]
    response = "### Assistant:"
    options = [
        {"response_template": response},
        {"response_template": response, "instruction_template": "### Human:"},
        {
            "response_template": tok.encode(response, add_special_tokens=False),
            "instruction_template": tok.encode("### Human:", add_special_tokens=False),
        },
        {"response_template": response, "ignore_index": -1},
    ]
    if version != "0.7.11":
        options += [dict(o, padding_free=True) for o in options[:2]]
    for kwargs in options:
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            want = old(tokenizer=tok, **kwargs)(examples)
        with warnings.catch_warnings(record=True) as mine:
            warnings.simplefilter("always")
            got = ours(tokenizer=tok, **kwargs)(with_labels)
        assert len(mine) == len([w for w in theirs if w.category is UserWarning]), kwargs
        shared = [k for k in got if k in want]
        assert shared == list(want), kwargs  # 0.11-0.18's padding_free lacked cu_seq_lens
        for key in shared:
            assert torch.equal(got[key], want[key]), (kwargs, key)
        assert (got["labels"] == kwargs.get("ignore_index", -100)).any()


def test_completion_only_collator_trains_with_trl_1_13s_sft_trainer(tmp_path):
    """TRL 1.13's SFTTrainer hands the collator tokenized examples with `labels` of their own;
    the loss is computed on the response tokens only."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from migrate.reference.tiny import tiny_causal_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    collator = _ours("DataCollatorForCompletionOnlyLM")(
        response_template="### Assistant:", tokenizer=tok
    )
    data = Dataset.from_list([{"text": t} for t in _DIALOGUE[:3]] * 2)
    args = SFTConfig(
        str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=2,
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
    )
    trainer = SFTTrainer(
        model=tiny_causal_lm(),
        args=args,
        train_dataset=data,
        processing_class=tok,
        data_collator=collator,
    )
    batch = next(iter(trainer.get_train_dataloader()))
    ids, labels = batch["input_ids"][0], batch["labels"][0]
    template = tok.encode("### Assistant:", add_special_tokens=False)
    end = next(
        at + len(template)
        for at in range(len(ids))
        if ids[at : at + len(template)].tolist() == template
    )
    assert (labels[:end] == -100).all() and (
        labels[end:][ids[end:] != tok.pad_token_id] != -100
    ).all()
    assert torch.isfinite(torch.tensor(trainer.train().training_loss))
