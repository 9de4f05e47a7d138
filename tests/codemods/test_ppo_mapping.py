"""The PPO mapping tables emit only names TRL 1.13 really has (introspected, not assumed)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from codemods import ppo

TARGETS = ("rloo", "grpo")


def _trl():
    trl = pytest.importorskip("trl")
    if not trl.__version__.startswith("1.13."):
        pytest.skip(f"needs trl 1.13, found {trl.__version__}")
    return trl


def _classes(trl, target):
    return (
        (trl.RLOOConfig, trl.RLOOTrainer) if target == "rloo" else (trl.GRPOConfig, trl.GRPOTrainer)
    )


def emitted_config_keywords() -> set[str]:
    """Every keyword a config table can write, plus the ones the rule's code writes."""
    m = ppo.mapping()
    out = {
        "max_steps",
        "steps_per_generation",
        "per_device_train_batch_size",
        "report_to",
        "max_grad_norm",
        "torch_empty_cache_steps",
        "log_completions",
        "num_generations",
        "lr_scheduler_type",
        "generation_kwargs",
        "max_completion_length",
        "temperature",
        "top_k",
        "top_p",
        "num_train_epochs",
    }
    for section in ("legacy_config", "v2_config"):
        for name, row in m[section].items():
            if row["kind"] in ("same", "rename"):
                out.add(row.get("to", name))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_config_keywords_are_real_fields(target):
    config, _ = _classes(_trl(), target)
    fields = {f.name for f in dataclasses.fields(config)}
    assert emitted_config_keywords() - fields == set()


def test_rloo_only_keyword():
    trl = _trl()
    assert "reward_clip_range" in {f.name for f in dataclasses.fields(trl.RLOOConfig)}


@pytest.mark.parametrize("target", TARGETS)
def test_trainer_keywords_are_real_parameters(target):
    _, trainer = _classes(_trl(), target)
    params = set(inspect.signature(trainer.__init__).parameters)
    rows = ppo.mapping()["trainer"]["kwargs"]
    emitted = {
        row.get("to", k)
        for k, row in rows.items()
        if row["kind"] in ("same", "rename", "special") and k not in ("ref_model", "ref_policy")
    } | {"reward_processing_classes"}
    assert emitted - params == set()


@pytest.mark.parametrize("target", TARGETS)
def test_stored_target_fields_match_installed(target):
    """codemods/data/ppo_targets.json (what the rules read) is the installed 1.13's truth."""
    config, trainer = _classes(_trl(), target)
    data = ppo.targets()
    assert set(data["config_fields"][target]) == {f.name for f in dataclasses.fields(config)}
    assert data["trainer_kwargs"][target] == [
        p for p in inspect.signature(trainer.__init__).parameters if p != "self"
    ]
    plain = {
        f.name: f.default
        for f in dataclasses.fields(config)
        if f.default is None or isinstance(f.default, (bool, int, float, str))
    }
    assert data["config_defaults"][target] == plain and plain["trust_remote_code"] is False


def test_every_row_has_a_known_kind():
    m = ppo.mapping()
    kinds = {"same", "rename", "drop", "gone", "todo", "flag", "special"}
    for section in ("legacy_config", "v2_config"):
        for name, row in m[section].items():
            assert row["kind"] in kinds, name
            assert row["kind"] != "rename" or "to" in row, name
            assert row["kind"] not in ("todo", "flag") or "todo" in row, name
            assert row["kind"] not in ("drop", "gone", "special") or "why" in row, name


def test_stored_parser_fields_match_installed():
    """`parser_fields` (TRL108's flag clashes) holds every dataclass TRL 1.13 exports with the
    flags it gives a parser; a TrainingArguments subclass lists those beyond TrainingArguments."""
    import transformers

    trl = _trl()
    data = ppo.targets()
    base = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    assert set(data["parser_fields"]["TrainingArguments"]) == base
    for name in ("SFTConfig", "DPOConfig", "RewardConfig", "GRPOConfig", "ModelConfig"):
        cls = getattr(trl, name)
        flags = set(data["parser_fields"][name])
        if name in data["parser_extends"]:
            flags |= base
        assert flags == {f.name for f in dataclasses.fields(cls)}, name
    assert "max_length" in data["parser_fields"]["SFTConfig"]
    assert "trust_remote_code" in data["parser_fields"]["DPOConfig"]
