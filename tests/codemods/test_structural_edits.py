"""Exactness class 5 of issue #14: the rewrite changes only what is TRL API and keeps the code
around it working: guarded imports and their fallbacks, comments on the argument they belong
to, writes to a field the new config lacks (not to a throwaway copy of its value)."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, dedent, run

GUARD_TODO = "so this guarded import always fails and the fallback runs"


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            """
            try:
                from trl.experimental.ppo import PPOConfig, PPOTrainer
            except ImportError:
                PPOConfig = None
                PPOTrainer = None

            __all__ = ["PPOConfig", "PPOTrainer"]
            """,
            id="fallback-none-and-all",
        ),
        pytest.param(
            """
            try:
                from trl import PPOTrainer
            except ImportError:
                class PPOTrainer:
                    pass
            """,
            id="fallback-class",
        ),
        pytest.param(
            """
            try:
                from trl import PPOTrainer
            except ImportError:
                PPOTrainer = None


            def make(config, model, tok):
                if PPOTrainer is None:
                    raise RuntimeError("no PPO")
                return PPOTrainer(config, model, None, tok)
            """,
            id="fallback-and-a-use",
        ),
    ],
)
def test_a_guarded_import_with_a_fallback_keeps_its_code_and_gets_a_todo(src):
    src = dedent(src)
    out, findings = run(src)
    # Only TODO lines were added: the import, the fallback and every use are as they were.
    assert [line for line in out.splitlines() if "TODO(trl-migrate" not in line] == src.splitlines()
    todos = [f for f in findings if f.fix is Fix.MANUAL]
    assert todos and all(GUARD_TODO in f.message for f in todos)
    assert all(f.line == 2 for f in todos)
    assert run(out)[0] == out


def test_a_shim_that_imports_ppo_from_either_place_is_rewritten_whole():
    findings = assert_fixes(
        dedent(
            """
            try:
                from trl import PPOConfig
            except ImportError:
                from trl.experimental.ppo import PPOConfig

            config = PPOConfig(output_dir="o", num_ppo_epochs=2, max_grad_norm=1.0, learning_rate=1e-5, response_length=32, temperature=1.0, kl_coef=0.1, bf16=False, gradient_checkpointing=False)
            """
        ),
        dedent(
            """
            try:
                from trl import RLOOConfig
            except ImportError:
                pass

            config = RLOOConfig(output_dir="o", num_iterations=2, max_grad_norm=0.0, learning_rate=1e-5, max_completion_length=32, temperature=1.0, beta=0.1, bf16=False, gradient_checkpointing=False, disable_dropout=True)
            """
        ),
    )
    # PPO v2 never clipped gradients, whatever max_grad_norm said: the finding says so.
    assert any("max_grad_norm=1.0" in f.message and "never clipped" in f.message for f in findings)


def test_line_comments_stay_on_their_argument_and_new_arguments_get_none():
    assert_fixes(
        dedent(
            """
            from trl import PPOConfig

            config = PPOConfig(
                output_dir="out",  # where to save
                num_ppo_epochs=2,  # epochs
            )
            """
        ),
        dedent(
            """
            from trl import RLOOConfig

            config = RLOOConfig(
                output_dir="out",  # where to save
                num_iterations=2,  # epochs
                max_grad_norm=0.0,
                learning_rate=5e-05,
                max_completion_length=53,
                temperature=0.7,
                beta=0.05,
                disable_dropout=True,
            )
            """
        ),
    )


@pytest.mark.parametrize(
    ("last", "kept", "added"),
    [
        pytest.param("    num_ppo_epochs=2,\n", "    num_iterations=2,\n", "", id="last-kept"),
        pytest.param(
            "    whiten_rewards=False,\n", "", "    num_iterations=4,\n", id="last-dropped"
        ),
    ],
)
def test_comment_lines_before_the_closing_parenthesis_stay_there(last, kept, added):
    # seen in minsik-hong/rewardedsoups: notes on lines of their own after the last argument
    # were lost when the rewrite appended arguments after it (or dropped it)
    notes = "    # tracker_kwargs may be needed too\n    # (see the README)\n"
    before = (
        f'from trl import PPOConfig\n\nconfig = PPOConfig(\n    output_dir="out",\n{last}{notes})\n'
    )
    after = (
        'from trl import RLOOConfig\n\nconfig = RLOOConfig(\n    output_dir="out",\n'
        f"{kept}    max_grad_norm=0.0,\n    learning_rate=5e-05,\n    max_completion_length=53,\n"
        f"    temperature=0.7,\n{added}    beta=0.05,\n    disable_dropout=True,\n{notes})\n"
    )
    assert_fixes(before, after, select=("TRL103",))


def test_comment_lines_below_a_dropped_argument_stay_above_the_next():
    # seen in duke-trust-lab/intro_modern_rl: `lam=0.95,` then a blank line and `# Logging`
    # above `output_dir=`; dropping `lam` lost the heading
    before = (
        "from trl import PPOConfig\n\nconfig = PPOConfig(\n    kl_coef=0.1,  # stronger\n"
        '    vf_coef=0.1,\n    gamma=1.0,\n\n    # Logging\n    output_dir="out",\n'
        "    logging_steps=1,\n)\n"
    )
    after = (
        "from trl import RLOOConfig\n\nconfig = RLOOConfig(\n    beta=0.1,  # stronger\n\n"
        '    # Logging\n    output_dir="out",\n    logging_steps=4,\n    max_grad_norm=0.0,\n'
        "    learning_rate=5e-05,\n    max_completion_length=53,\n    temperature=0.7,\n"
        "    num_iterations=4,\n    disable_dropout=True,\n)\n"
    )
    assert_fixes(before, after, select=("TRL103",))


def test_a_heading_over_dropped_arguments_stays_where_one_of_them_stays():
    # seen in dubin555/hf-ppo: a config in sections; `# clipping` heads `cliprange` (now
    # `epsilon`) and stays; `# GAE`, under a dropped argument, heads only dropped ones and goes;
    # comment lines under a kept argument (`# value head`; commented-out code in
    # minsik-hong/rewardedsoups) stay where they are
    before = (
        'from trl import PPOConfig\n\nconfig = PPOConfig(\n    output_dir="out",\n'
        "    kl_coef=0.1,  # kl\n    # value head\n    vf_coef=0.1,\n\n    # GAE\n    gamma=1.0,\n"
        "    lam=0.95,\n\n    # clipping\n    cliprange_value=0.2,\n    cliprange=0.2,\n"
        "    # the end\n)\n"
    )
    after = (
        'from trl import RLOOConfig\n\nconfig = RLOOConfig(\n    output_dir="out",\n'
        "    beta=0.1,  # kl\n    # value head\n\n    # clipping\n    epsilon=0.2,\n"
        "    max_grad_norm=0.0,\n    learning_rate=5e-05,\n    max_completion_length=53,\n"
        "    temperature=0.7,\n    num_iterations=4,\n    disable_dropout=True,\n"
        "    # the end\n)\n"
    )
    assert_fixes(before, after, select=("TRL103",))


def test_new_arguments_after_a_blank_line_get_none():
    # a blank line after the first argument was copied before every argument the rewrite added
    before = (
        'from trl import PPOConfig\n\nconfig = PPOConfig(\n    output_dir="out",\n\n'
        "    kl_coef=0.1,\n)\n"
    )
    out, _ = run(before, select=("TRL103",))
    assert "\n\n    max_grad_norm=0.0,\n    learning_rate=5e-05,\n" not in out
    assert "    beta=0.1,\n    max_grad_norm=0.0,\n    learning_rate=5e-05,\n" in out


@pytest.mark.parametrize(
    "write",
    [
        'config.accelerator_kwargs["project_dir"] = "x"',
        'config.accelerator_kwargs.update({"cpu": True})',
    ],
)
def test_a_write_to_a_field_the_new_config_lacks_is_a_todo_not_a_throwaway(write):
    src = dedent(
        f"""
        from trl import PPOConfig

        config = PPOConfig(batch_size=128, accelerator_kwargs={{"mixed_precision": "no"}})
        {write}
        print(config.accelerator_kwargs)
        """
    )
    out, findings = run(src)
    assert f"\n{write}\n" in out
    assert 'print({"mixed_precision": "no"})' in out  # a plain read takes the value
    todo = [f for f in findings if f.line == 4]
    assert len(todo) == 1 and todo[0].fix is Fix.MANUAL
    assert "this changes `accelerator_kwargs`" in todo[0].message
    assert run(out)[0] == out
