"""The effective-settings checker (migrate/effective/) against the real TRL 1.13 configs: every
era fixture, rewritten for each target, trains with its old settings or `fix` names each
setting that changed; and the checker itself finds a change that no finding names."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")

import codemods  # noqa: E402
from codemods.base import Options  # noqa: E402
from codemods.engine import process  # noqa: E402
from migrate import effective  # noqa: E402
from tests.codemods.test_eras import SCRIPTS, TARGETS  # noqa: E402

ALL = tuple(r.code for r in codemods.RULES)


def _rewrite(text: str, target: str) -> tuple[str, list]:
    result = process("t.py", text.encode(), codes=ALL, options=Options(target=target))
    return (result.new or text.encode()).decode(), result.findings


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_changed_setting_of_an_era_fixture_is_reported(script, target):
    text = script.read_text()
    rewritten, findings = _rewrite(text, target)
    for report in effective.check(text, rewritten, findings):
        assert report.uncovered == [], (
            f"{script.name}:{report.line} ({report.era}): {report.uncovered}"
        )


def test_the_checker_sees_dropout_left_on_and_an_unreported_eos_stop():
    text = "from trl import PPOConfig\nconfig = PPOConfig(output_dir='o', num_ppo_epochs=4)\n"
    rewritten, findings = _rewrite(text, "rloo")
    assert "disable_dropout=True" in rewritten
    (report,) = effective.check(text, rewritten.replace(", disable_dropout=True", ""), findings)
    assert [d.setting for d in report.uncovered] == ["dropout"]
    quiet = [f for f in findings if "stop_token" not in f.message]
    (report,) = effective.check(text, rewritten, quiet)
    assert [d.setting for d in report.uncovered] == ["stops_at_eos"]


def test_the_checker_sees_a_change_no_finding_names():
    text = "from trl import PPOConfig\nconfig = PPOConfig(output_dir='o', num_ppo_epochs=4, kl_coef=0.05)\n"
    rewritten, findings = _rewrite(text, "rloo")
    (report,) = effective.check(text, rewritten, [])
    assert {d.setting for d in report.uncovered} >= {"completions_per_prompt"}
    (report,) = effective.check(text, rewritten, findings)
    assert report.uncovered == []


TRL_PARSED = """\
from trl import ModelConfig, ScriptArguments, TrlParser
from trl.experimental.ppo import PPOConfig, PPOTrainer

parser = TrlParser((ScriptArguments, PPOConfig, ModelConfig))
script_args, training_args, model_args = parser.parse_args_and_config()
trainer = PPOTrainer(args=training_args, model=None, reward_model=None, value_model=None)
trainer.train()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_config_trls_own_parser_builds_is_checked(target):
    """TRL's examples parse their config with `TrlParser` (TRL's spelling): the checker reads it
    with the class defaults, and a rewrite without findings leaves settings uncovered."""
    rewritten, findings = _rewrite(TRL_PARSED, target)
    (report,) = effective.check(TRL_PARSED, rewritten, findings)
    assert (report.era, report.line, report.uncovered) == ("experimental", 4, [])
    (bare,) = effective.check(TRL_PARSED, rewritten, [])
    assert "learning_rate" in {d.setting for d in bare.uncovered}


@pytest.mark.parametrize(
    ("call", "setting", "old", "new"),
    [
        # legacy PPO: no gradient clipping unless set, no mixed precision, a constant learning rate
        ("PPOConfig(batch_size=8, mini_batch_size=4)", "grad_clip", "off", "off"),
        ("PPOConfig(batch_size=8, mini_batch_size=4)", "precision", "fp32", "fp32"),
        ("PPOConfig(batch_size=8, mini_batch_size=4)", "lr_schedule", "constant", "constant"),
        ("PPOConfig(batch_size=8, mini_batch_size=4, max_grad_norm=0.5)", "grad_clip", 0.5, 0.5),
        # v2: the trainer never clipped, whatever max_grad_norm said
        (
            "PPOConfig(output_dir='o', num_ppo_epochs=2, max_grad_norm=1.0)",
            "grad_clip",
            "off",
            "off",
        ),
        ("PPOConfig(output_dir='o', num_ppo_epochs=2)", "temperature", 0.7, 0.7),
        ("PPOConfig(output_dir='o', num_ppo_epochs=2)", "epochs_per_generation", 2, 2),
        # every era ran without dropout; RLOO/GRPO leave it on unless told
        ("PPOConfig(batch_size=8, mini_batch_size=4)", "dropout", "off", "off"),
        ("PPOConfig(output_dir='o', num_ppo_epochs=2)", "dropout", "off", "off"),
        # v2 stopped at EOS only when told to; RLOO/GRPO always do
        ("PPOConfig(output_dir='o', num_ppo_epochs=2)", "stops_at_eos", False, True),
        (
            "PPOConfig(output_dir='o', num_ppo_epochs=2, stop_token='eos')",
            "stops_at_eos",
            True,
            True,
        ),
    ],
)
def test_old_and_new_settings(call, setting, old, new):
    text = f"from trl import PPOConfig\nconfig = {call}\n"
    rewritten, findings = _rewrite(text, "rloo")
    (report,) = effective.check(text, rewritten, findings)
    assert (report.old[setting], report.new[setting]) == (old, new)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("version", ["0.9.6", "0.11.4"])
@pytest.mark.parametrize("name", ["ppo.py", "ppo_multi_adapter.py"])
def test_trls_own_example_scripts_keep_or_report_every_setting(tmp_path, version, name, target):
    """A slice of TRL's own PPO examples, as its wheels shipped them (read at test time, not kept)."""
    from tests.reliability.test_corpus_slice import unpack

    folder = unpack(version, tmp_path, (f"trl/commands/scripts/{name}",))
    text = (folder / "trl" / "commands" / "scripts" / name).read_text()
    rewritten, findings = _rewrite(text, target)
    reports = effective.check(text, rewritten, findings)
    assert reports, "the script's config was not found"
    for report in reports:
        assert report.uncovered == [], (
            f"{version} {name}:{report.line} ({report.era}): {report.uncovered}"
        )


LEGACY_LOOP = """\
from trl import PPOConfig, PPOTrainer
config = PPOConfig(batch_size=4, mini_batch_size=2)
trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
gen = {"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 8, "no_repeat_ngram_size": 3}
for batch in trainer.dataloader:
    q = batch["input_ids"]
    r = trainer.generate(q, return_prompt=False, **gen)
    batch["response"] = tokenizer.batch_decode(r)
    rewards = [torch.tensor(len(c)) for c in batch["response"]]
    stats = trainer.step(q, r, rewards)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_rewritten_loops_sampling_settings_are_judged(target):
    """The loop's generate() settings moved into the config are compared with what the new
    config generates with; the one the model's config supplied (temperature) must be named."""
    rewritten, findings = _rewrite(LEGACY_LOOP, target)
    assert "trainer.generate(" not in rewritten
    (report,) = effective.check(LEGACY_LOOP, rewritten, findings)
    assert report.uncovered == []
    assert {k: (report.old[k], report.new[k]) for k in ("top_k", "max_completion_length")} == {
        "top_k": (0, 0),
        "max_completion_length": (8, 8),
    }
    assert (
        report.old["other_generation"]
        == report.new["other_generation"]
        == ("no_repeat_ngram_size=3")
    )
    (bare,) = effective.check(LEGACY_LOOP, rewritten, [])
    assert "temperature" in {d.setting for d in bare.uncovered}


def test_a_loop_left_for_a_human_is_not_judged_on_sampling():
    text = LEGACY_LOOP.replace("**gen)", "**make_gen())")  # a dict the rewrite cannot read
    rewritten, findings = _rewrite(text, "rloo")
    assert "trainer.generate(" in rewritten
    (report,) = effective.check(text, rewritten, findings)
    assert "top_k" not in report.old


def test_the_model_load_dtype_is_judged():
    """A legacy script's model loaded in float32 on transformers 4; the rewrite keeps it, and a
    rewrite that did not would leave the checkpoint's dtype (transformers 5) unreported."""
    text = (
        "from transformers import AutoModelForCausalLM\n"
        "from trl import PPOConfig, PPOTrainer\n"
        "config = PPOConfig(batch_size=4, mini_batch_size=2)\n"
        'model = AutoModelForCausalLM.from_pretrained("gpt2")\n'
        "trainer = PPOTrainer(config, model, None, tok)\n"
    )
    rewritten, findings = _rewrite(text, "rloo")
    (report,) = effective.check(text, rewritten, findings)
    assert report.old["model_dtype"] == report.new["model_dtype"] == "float32"
    careless = rewritten.replace(', dtype="float32"', "")
    (bare,) = effective.check(text, careless, [])
    assert [(d.setting, d.old, d.new) for d in bare.uncovered if d.setting == "model_dtype"] == [
        ("model_dtype", "float32", "auto")
    ]


def test_a_v2_trainer_given_config_is_judged_on_the_0_12_to_0_14_defaults():
    """`PPOTrainer(config=..., policy=...)` ran on TRL 0.12-0.14, where bf16 was False: the
    rewrite's bf16=False is the old run's setting, and nothing is left uncovered."""
    text = (
        "from trl import PPOConfig, PPOTrainer\n"
        "config = PPOConfig(output_dir='o', num_ppo_epochs=2)\n"
        "t = PPOTrainer(config=config, processing_class=tok, policy=m, ref_policy=r, "
        "reward_model=rm, train_dataset=ds, value_model=vm)\n"
    )
    rewritten, findings = _rewrite(text, "rloo")
    (report,) = effective.check(text, rewritten, findings)
    assert (report.old["precision"], report.new["precision"]) == ("fp32", "fp32")
    assert report.uncovered == []
