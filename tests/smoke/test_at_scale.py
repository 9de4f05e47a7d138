"""TRL420: what the script's own settings would fail with at real scale, checked before the
smoke caps (migrate/reference/caps.py), and worded by migrate/smoke/outcome.py."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")

from trl import RLOOConfig  # noqa: E402

from migrate.reference import caps  # noqa: E402
from migrate.smoke import outcome  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh():
    caps.AT_SCALE.clear()
    yield
    caps.AT_SCALE.clear()


def _config(**kwargs):
    """A config as the script wrote it, before its own checks ran (where the smoke harness's
    patched __post_init__ calls check_at_scale)."""
    post_init = RLOOConfig.__post_init__
    RLOOConfig.__post_init__ = lambda self: None  # type: ignore[method-assign]
    try:
        return RLOOConfig(output_dir="out", report_to="none", **kwargs)
    finally:
        RLOOConfig.__post_init__ = post_init  # type: ignore[method-assign]


def test_a_check_past_the_devices_precision_is_run_with_the_precision_aside():
    """On a device without bf16 the config stops at its precision check; an evaluation batch
    that cannot hold a whole group would stop a run on a device that has bf16: both are said."""
    args = _config(eval_strategy="steps", eval_steps=10, per_device_eval_batch_size=1, bf16=True)
    caps.check_at_scale(args)
    [group] = [p for p in caps.AT_SCALE if "eval batch size" in p]
    assert group.endswith(
        "ValueError: The global eval batch size (1 * 1) must be divisible by the number of "
        "generations used for evaluation (2)."
    )
    if len(caps.AT_SCALE) == 2:  # this device lacks bf16: that check came first
        assert "bf16" in caps.AT_SCALE[0] and caps.AT_SCALE[1] == group
        assert group.startswith(
            "RLOOConfig at the script's own settings (its precision aside, as on a device that "
            "has it): "
        )
    else:
        assert [group] == caps.AT_SCALE and outcome.PRECISION_ASIDE not in group


def test_settings_that_hold_at_scale_say_nothing():
    caps.check_at_scale(_config(per_device_train_batch_size=4, bf16=False, use_cpu=True))
    assert caps.AT_SCALE == []


def test_the_finding_says_where_the_real_run_would_stop():
    here = outcome.at_scale_message("RLOOConfig at the script's own settings: ValueError: a.")
    there = outcome.at_scale_message(
        "RLOOConfig at the script's own settings (its precision aside, as on a device that has "
        "it): ValueError: b."
    )
    assert here.endswith(
        "ValueError: a: the smoke run's caps went past it, the real run on this machine would stop there"
    )
    assert there.endswith("the real run on a device with that precision would stop there")


@pytest.mark.parametrize(
    ("optim", "capped"),
    [
        ("paged_adamw_32bit", True),  # the QLoRA scripts' (Pranavbp525, TPNxl notebooks)
        ("adamw_bnb_8bit", True),
        ("paged_lion_8bit", True),
        ("rmsprop_bnb", True),
        ("adamw_torch", False),
        ("adafactor", False),
        ("sgd", False),
    ],
)
def test_a_bitsandbytes_optimizer_trains_as_adamw_torch_with_the_override_listed(optim, capped):
    """bitsandbytes' optimizers need CUDA and the package: a smoke run on this machine stopped
    on them ("You need to install `bitsandbytes`") before this cap."""
    from transformers import TrainingArguments

    caps.OVERRIDES.clear()
    args = TrainingArguments(output_dir="out", optim=optim, report_to="none")
    caps.cap_args(args, 2)
    assert (args.optim == "adamw_torch") is (capped or optim == "adamw_torch")
    said = [o for o in caps.OVERRIDES if o["field"] == "optim"]
    assert len(said) == (1 if capped else 0)
    caps.OVERRIDES.clear()


def test_a_reward_configs_max_length_is_not_capped():
    """TRL 1.13's RewardTrainer drops pairs longer than `max_length` (it cuts nothing): capped
    to 128, it emptied abhaykrishna2010's reward data, tokenized and padded to 512 ("num_samples
    should be a positive integer value, but got num_samples=0"). SFT's max_length cuts, and is
    capped."""
    from trl import RewardConfig, SFTConfig

    caps.OVERRIDES.clear()
    reward = RewardConfig(output_dir="out", max_length=512, report_to="none", bf16=False)
    sft = SFTConfig(output_dir="out", max_length=512, report_to="none", bf16=False)
    caps.cap_args(reward, 2)
    caps.cap_args(sft, 2)
    assert (reward.max_length, sft.max_length) == (512, 128)
    assert [o["config"] for o in caps.OVERRIDES if o["field"] == "max_length"] == ["SFTConfig"]
    caps.OVERRIDES.clear()


class _Model:
    pass


@pytest.mark.parametrize(
    ("quantized", "kwargs", "said"),
    [
        pytest.param(True, {}, True, id="quantized-no-adapter"),
        pytest.param(True, {"peft_config": object()}, False, id="quantized-with-peft-config"),
        pytest.param(False, {}, False, id="not-quantized"),
    ],
)
def test_a_quantized_model_with_no_adapter_is_said_to_stop_at_scale(quantized, kwargs, said):
    # sea-abc/LLM-from-trl-to-GRPO: a 4-bit policy (`quantization_config=BitsAndBytesConfig`) and
    # `use_peft` False: the smoke run loads the stand-in unquantized and trained it, where the
    # real run stops ("You cannot perform fine-tuning on purely quantized models")
    from migrate.reference import stand_ins

    model = _Model()
    asked = {"quantization_config": type("BitsAndBytesConfig", (), {"load_in_4bit": True})()}
    stand_ins._quantized(model, asked if quantized else {})
    caps._purely_quantized("RLOOTrainer", (), {"model": model, **kwargs})
    expected = [
        "RLOOTrainer at the script's own settings: its model was loaded in 8/4 bits (which the "
        "smoke run left out) and gets no adapter (`peft_config` is None): transformers' Trainer "
        "refuses to fine-tune a purely quantized model"
    ]
    assert (expected if said else []) == caps.AT_SCALE
    # a config that quantizes nothing is no quantization
    plain = _Model()
    off = {"quantization_config": type("C", (), {"load_in_4bit": False, "load_in_8bit": False})()}
    stand_ins._quantized(plain, off)
    assert not hasattr(plain, stand_ins.QUANTIZED_MARK)
