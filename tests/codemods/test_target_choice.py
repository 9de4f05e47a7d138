"""Exactness class 6 of issue #14: which trainer and which era a file reads as. A file that
trained with tools (TextEnvironment) moves to GRPO unless a target was chosen; a config call
whose keywords only PPO v2 had is v2, whatever else the file holds."""

from __future__ import annotations

import codemods
from codemods.base import Options
from codemods.engine import fix_text
from migrate.kernel.findings import Severity
from tests.codemods.helpers import dedent

TOOLS = dedent(
    """
    from trl import PPOConfig, PPOTrainer, TextEnvironment
    config = PPOConfig(batch_size=8, mini_batch_size=8)
    trainer = PPOTrainer(config, model, ref, tok)
    env = TextEnvironment(model, tok, tools, reward_fn, prompt)
    """
)
REASON = "this file trains with tools (TextEnvironment)"


def _fix(src: str, **options: object) -> tuple[str, list]:
    return fix_text(src, path="t.py", rules=codemods.RULES, options=Options(**options))  # type: ignore[arg-type]


def test_a_file_with_tools_moves_to_grpo_when_no_target_was_chosen():
    out, findings = _fix(TOOLS)
    assert "from trl import GRPOConfig, GRPOTrainer, TextEnvironment\n" in out
    assert "config = GRPOConfig(" in out and "trainer = GRPOTrainer(" in out
    reasons = [f for f in findings if f.message.startswith(REASON)]
    assert len(reasons) == 1 and reasons[0].severity is Severity.INFO
    assert _fix(out)[0] == out


def test_a_chosen_target_is_kept_even_with_tools():
    out, findings = _fix(TOOLS, target="rloo", target_chosen=True)
    assert "config = RLOOConfig(" in out and "trainer = RLOOTrainer(" in out
    assert not any(f.message.startswith(REASON) for f in findings)


def test_without_tools_the_default_stays_rloo():
    src = TOOLS.replace(", TextEnvironment", "").replace(
        "env = TextEnvironment(model, tok, tools, reward_fn, prompt)\n", ""
    )
    out, findings = _fix(src)
    assert "config = RLOOConfig(" in out
    assert not any(f.message.startswith(REASON) for f in findings)


def test_a_text_environment_of_another_library_does_not_count():
    src = TOOLS.replace(", TextEnvironment", "").replace(
        "env =", "from mylib import TextEnvironment\nenv ="
    )
    out, _ = _fix(src)
    assert "config = RLOOConfig(" in out


def test_keywords_only_v2_had_make_the_call_v2():
    src = dedent(
        """
        from trl import PPOConfig
        config = PPOConfig(output_dir="out", num_ppo_epochs=2, kl_coef=0.1, total_episodes=100)
        """
    )
    out, findings = _fix(src)
    assert "num_iterations=2" in out and "beta=0.1" in out and "max_steps=" in out
    assert any("(PPO v2 (TRL 0.12-0.28)) was removed" in f.message for f in findings)
