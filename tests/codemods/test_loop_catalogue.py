"""The legacy loop catalogue (tests/fixtures/loops): each shape seen in public PPO code is
rewritten exactly as its golden says, a second run changes nothing, and the outcome matches the
catalogue's table (rewritten, or a TODO that names the reason)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import codemods
from codemods.base import Options
from codemods.engine import process

LOOPS = Path(__file__).resolve().parents[1] / "fixtures" / "loops"
TARGETS = ("rloo", "grpo")


def catalogue() -> dict[str, str]:
    """shape -> outcome, from the README's table."""
    rows = re.findall(r"^\| (\d\d_\w+) \| ([^|]+) \|", (LOOPS / "README.md").read_text(), re.M)
    return {shape: outcome.strip() for shape, outcome in rows}


def migrate(path: Path, target: str) -> tuple[str, list]:
    result = process(
        path.name,
        path.read_bytes(),
        codes=[r.code for r in codemods.RULES],
        options=Options(target=target, target_chosen=True),
    )
    assert result.status.value in ("changed", "unchanged"), result.message
    return (result.new or path.read_bytes()).decode(), result.findings


SHAPES = sorted(p.stem for p in LOOPS.glob("*.py"))


def test_the_catalogue_lists_every_fixture_and_has_25_shapes():
    assert sorted(catalogue()) == SHAPES
    assert len(SHAPES) >= 25


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES)
def test_shape_is_rewritten_as_its_golden(shape, target):
    out, findings = migrate(LOOPS / f"{shape}.py", target)
    assert out == (LOOPS / "expected" / f"{shape}.{target}.py").read_text()
    ast.parse(out)
    again = LOOPS / "expected" / f"{shape}.{target}.py"
    assert migrate(again, target)[0] == out, "a second run changed the output"
    outcome = catalogue()[shape]
    left = [f.message for f in findings if f.code == "TRL106" and f.fix.value == "manual"]
    if outcome == "rewritten":
        assert ".step(" not in out and not left, left
        assert "reward_funcs=reward_fn" in out and ".train()" in out
    else:
        reason = outcome.removeprefix("TODO: ")
        assert any(reason in message for message in left), left
        assert ".step(" in out
        source = (LOOPS / f"{shape}.py").read_text()
        if any("was left as it is" in m for m in left) and "ppo_trainer.dataloader" in source:
            # a loop over the dataloader that TRL106 read but could not rewrite: a filled draft
            draft = [ln for ln in out.splitlines() if "# trl-migrate draft | " in ln]
            assert draft and "def reward_fn(prompts, completions" in draft[0], shape
            assert "return [float(r) for r in " in draft[-1]


def test_a_draft_holds_the_loops_own_reward_code():
    out, _ = migrate(LOOPS / "25_moving_baseline.py", "rloo")
    draft = [ln.split("| ", 1)[1] for ln in out.splitlines() if "# trl-migrate draft | " in ln]
    assert draft == [
        "def reward_fn(prompts, completions, **kwargs) -> list[float]:",
        "    scores = [float(len(r)) for r in completions]",
        "    baseline = 0.9 * baseline + 0.1 * sum(scores) / len(scores)",
        "    rewards = [torch.tensor(s - baseline) for s in scores]",
        "    return [float(r) for r in rewards]",
    ]


def test_a_per_query_generation_finding_points_at_the_generate_call():
    """The per-query loop's generate call is rebuilt as one batch call; what is said of the
    whole call still has the line of the call in the file."""
    source = (LOOPS / "03_per_query_sampler.py").read_text()
    line = next(
        i for i, text in enumerate(source.splitlines(), 1) if "ppo_trainer.generate(" in text
    )
    _, findings = migrate(LOOPS / "03_per_query_sampler.py", "rloo")
    said = [f for f in findings if "to the model's generation config" in f.message]
    assert [f.line for f in said] == [line]
