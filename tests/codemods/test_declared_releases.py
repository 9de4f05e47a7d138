"""TRL103 with the TRL releases a project declares (its requirement files, or --trl-version):
where a PPO config's default changed between releases, the declared releases' default is kept,
and a declaration inside one era tells the era a file's code does not."""

from __future__ import annotations

import pytest

import codemods
from codemods import ppo
from codemods.base import Options
from codemods.engine import fix_text
from migrate.kernel.findings import Fix, Severity
from tests.codemods.helpers import dedent

SELECT = ("TRL103",)


def run(src: str, spec: str | None) -> tuple[str, list]:
    from migrate.api import trl_version

    options = Options() if spec is None else trl_version(spec, Options())
    out, findings = fix_text(src, path="t.py", rules=codemods.select(SELECT), options=options)
    again, _ = fix_text(out, path="t.py", rules=codemods.select(SELECT), options=options)
    assert again == out  # run twice, nothing changes
    return out, findings


def test_every_release_is_known_and_the_history_narrows_to_the_declared_ones():
    known = ppo.releases()
    assert known[0] == "0.4.0" and known[-1] == "1.12.0" and "0.7.10" in known
    assert ppo.default_history(ppo.LEGACY, "batch_size") == [
        ("0.4.0", "0.7.10", 256),
        ("0.7.11", "0.11.4", 128),
    ]
    pinned = ppo.Declared(frozenset({"0.7.10"}), "trl==0.7.10 (requirements.txt)")
    assert ppo.default_history(ppo.LEGACY, "batch_size", None, pinned) == [
        ("0.7.10", "0.7.10", 256)
    ]
    # a declaration the era contradicts (a legacy config in a project on trl 1.x) says nothing
    newer = ppo.Declared(frozenset({"1.12.0"}), "trl==1.12.0 (requirements.txt)")
    assert ppo.default_history(ppo.LEGACY, "batch_size", None, newer) == (
        ppo.default_history(ppo.LEGACY, "batch_size")
    )
    assert ppo.era_of_releases(("0.7.10", "0.11.4")) == ppo.LEGACY
    assert ppo.era_of_releases(("0.16.1",)) == ppo.V2
    assert ppo.era_of_releases(("0.11.4", "0.12.0")) is None
    assert ppo.era_of_releases(()) is None


LEGACY = "from trl import PPOConfig\nconfig = PPOConfig(batch_size=64, learning_rate=1e-5)\n"
TAIL = (
    "seed=0, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, "
    'lr_scheduler_type="constant", bf16=False, disable_dropout=True)\n'
)


def test_a_declared_release_keeps_its_defaults():
    out, findings = run(LEGACY, "0.7.10")
    assert out.splitlines()[-1] == (
        "config = RLOOConfig(learning_rate=1e-5, per_device_train_batch_size=1, "
        "steps_per_generation=64, " + TAIL.rstrip("\n")
    )
    messages = [f.message for f in findings]
    assert (
        "`mini_batch_size` is not set and its legacy PPO (TRL <= 0.11) default changed between "
        "releases; the rewrite keeps 1, the default of the releases that trl 0.7.10 "
        "(--trl-version) allows" in messages
    )
    assert not [m for m in messages if "if you ran another release" in m]
    assert all(f.fix is Fix.APPLIED for f in findings)


def test_a_declaration_the_code_contradicts_is_not_guessed_past():
    """batch_size=64 is no multiple of the mini_batch_size (128) of TRL 0.7.11 and later, which
    rejected it: declared >=0.8, the call cannot have run as written, and the step size stays a
    TODO (without a declaration, the rewrite reads it as 0.4.0-0.7.10's)."""
    out, findings = run(LEGACY, ">=0.8,<0.12")
    assert out.splitlines()[1] == (
        "# TODO(trl-migrate TRL103): set `steps_per_generation = batch_size // mini_batch_size` "
        "(batch_size=64, mini_batch_size=128) so one generation covers batch_size samples as "
        "in legacy PPO: 64 is not a multiple of mini_batch_size * gradient_accumulation_steps "
        "(128), which PPOConfig rejected from TRL 0.6.0 on"
    )
    assert (
        "`mini_batch_size` is not set and its legacy PPO (TRL <= 0.11) default changed between "
        "releases; the rewrite keeps 128, the default of the releases that trl >=0.8,<0.12 "
        "(--trl-version) allows" in [f.message for f in findings]
    )


def test_without_a_declaration_the_newest_default_is_kept_with_a_warning():
    src = "from trl import PPOConfig\nconfig = PPOConfig(batch_size=128, mini_batch_size=4)\n"
    out, findings = run(src, None)
    warned = [f for f in findings if "if you ran another release" in f.message]
    assert [f.severity for f in warned] == [Severity.WARNING]
    assert "learning_rate=1.41e-05" in out
    out, findings = run(src, "0.7.10")
    assert "learning_rate=1e-05" in out
    assert not [f for f in findings if "if you ran another release" in f.message]


def test_the_declared_releases_tell_the_era_the_code_does_not():
    src = "from trl import PPOConfig\nconfig = PPOConfig(learning_rate=1e-5)\n"
    out, findings = run(src, None)
    assert "cannot tell whether it is legacy" in out  # TODO: no sign of an era
    out, _ = run(src, "0.7.10")
    assert out == dedent(
        """
        from trl import RLOOConfig
        config = RLOOConfig(learning_rate=1e-5, per_device_train_batch_size=1, steps_per_generation=256, seed=0, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True)
        """
    )
    out, _ = run(src, "0.16.1")
    assert out.startswith("from trl import RLOOConfig\nconfig = RLOOConfig(learning_rate=1e-5,")
    assert "bf16=False, gradient_checkpointing=False" in out  # 0.16's v2 defaults
    out, _ = run(src, ">=0.10,<0.13")  # legacy and v2 releases both: still a TODO
    assert "cannot tell whether it is legacy" in out


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("banana", "--trl-version banana: not a version or a specifier ('banana' has no operator)"),
        (">=2", "--trl-version >=2: no TRL release with a PPO config (0.4.0 to 1.12.0) matches it"),
    ],
)
def test_a_trl_version_that_says_nothing_is_an_error(spec, error):
    from migrate.api import trl_version

    with pytest.raises(ValueError) as e:
        trl_version(spec, Options())
    assert str(e.value) == error
