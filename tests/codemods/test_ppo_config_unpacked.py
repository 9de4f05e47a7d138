"""TRL103 on `PPOConfig(**d)` where `d` is a dict literal the file builds for that call alone:
the entries become the call's keywords and are rewritten as keywords are; every other `**d`
keeps the TODO. Exact text, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import dedent, run

SELECT = ("TRL103",)
LEFT = (
    "# TODO(trl-migrate TRL103): `PPOConfig` is gone in TRL 1.13 and this call was left as it "
    "is: `**cfg` holds PPO field names that must be renamed one by one; rewrite it as "
    "`RLOOConfig(...)` following docs/rules.md (TRL103)\n"
)


def test_a_dict_built_for_the_call_becomes_its_keywords():
    # tddpytester/pytester and em-bst's notebook: `ppo_config = {...}` then
    # `PPOConfig(**ppo_config)`; the dict's comments stay with its entries and above it
    src = dedent(
        """
        from trl import PPOConfig

        def build(args):
            # the PPO settings
            ppo_config = {
                "learning_rate": args.lr,  # tuned
                "batch_size": 16,
                "mini_batch_size": 4,
                "ppo_epochs": 2  # two passes
            }
            return PPOConfig(**ppo_config)
        """
    )
    out, findings = run(src, select=SELECT)
    assert out == dedent(
        """
        from trl import RLOOConfig

        def build(args):
            # the PPO settings
            return RLOOConfig(
                learning_rate=args.lr,  # tuned
                per_device_train_batch_size=4,
                num_iterations=2,  # two passes
                steps_per_generation=4,
                seed=0,
                beta=0.2,
                max_grad_norm=0.0,
                gradient_checkpointing=False,
                lr_scheduler_type="constant",
                bf16=False,
                disable_dropout=True,
            )
        """
    )
    (said,) = [f for f in findings if "unpacked a dict literal" in f.message]
    assert (said.line, said.severity, said.fix) == (11, Severity.INFO, Fix.APPLIED)
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=SELECT)[0] == out


def test_literal_entries_may_be_written_out_past_statements_between():
    src = (
        "from trl import PPOConfig\n"
        'cfg = {"batch_size": 16, "mini_batch_size": 4}\n'
        "import wandb\n"
        "config = PPOConfig(**cfg, seed=1)\n"
    )
    out, _ = run(src, select=SELECT)
    assert out == (
        "from trl import RLOOConfig\n"
        "import wandb\n"
        "config = RLOOConfig(per_device_train_batch_size=4, seed=1, steps_per_generation=4, "
        "learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, "
        'gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, '
        "disable_dropout=True)\n"
    )
    assert run(out, select=SELECT)[0] == out


@pytest.mark.parametrize(
    ("dict_line", "between", "call"),
    [
        pytest.param(
            'cfg = {"learning_rate": lr}', "lr = 2e-5\n", "PPOConfig(**cfg)", id="rebound-between"
        ),
        pytest.param(
            'cfg = {"batch_size": 16}',
            "wandb.init(config=cfg)\n",
            "PPOConfig(**cfg)",
            id="read-elsewhere",
        ),
        pytest.param('cfg = {"batch-size": 16}', "", "PPOConfig(**cfg)", id="key-no-identifier"),
        pytest.param(
            'cfg = {"batch_size": 16}', "", "PPOConfig(**cfg, batch_size=8)", id="key-given-twice"
        ),
        pytest.param(
            'cfg = {"batch_size": 16, **base}', "", "PPOConfig(**cfg)", id="unpacks-another"
        ),
        pytest.param(
            'cfg = {"learning_rate": args.lr}', "", "lambda: PPOConfig(**cfg)", id="called-later"
        ),
    ],
)
def test_any_other_unpacked_dict_keeps_the_todo(dict_line, between, call):
    src = f"from trl import PPOConfig\n{dict_line}\n{between}config = {call}\n"
    out, findings = run(src, select=SELECT)
    assert out.endswith(f"{dict_line}\n{between}{LEFT}config = {call}\n")
    assert not [f for f in findings if "unpacked a dict literal" in f.message]
    assert run(out, select=SELECT)[0] == out


def test_a_batch_size_the_mini_batches_do_not_divide_says_which_releases_rejected_it():
    src = "from trl import PPOConfig\nc = PPOConfig(batch_size=8, mini_batch_size=4, gradient_accumulation_steps=8)\n"
    out, _ = run(src, select=SELECT)
    assert out.splitlines()[1] == (
        "# TODO(trl-migrate TRL103): set `steps_per_generation = batch_size // mini_batch_size` "
        "(batch_size=8, mini_batch_size=4) so one generation covers batch_size samples as in "
        "legacy PPO: 8 is not a multiple of mini_batch_size * gradient_accumulation_steps (32), "
        "which PPOConfig rejected from TRL 0.6.0 on"
    )
