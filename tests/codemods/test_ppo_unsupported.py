"""TRL107 ppo-unsupported: no-op, TODO, run twice."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_noop, dedent, run


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            "from trl import RLOOTrainer\nclass T(RLOOTrainer):\n    pass\n",
            id="subclass-of-1-13-class",
        ),
        pytest.param(
            "from unittest import mock\nmock.patch('trl.RLOOTrainer.train')\n",
            id="patch-of-existing-path",
        ),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=("TRL107",)) == []


def test_unsupported_shapes_get_todos():
    src = dedent(
        """
        import trl
        from unittest import mock
        from trl import PPOConfig
        class MyConfig(PPOConfig):
            pass
        trl.trainer.ppo_trainer.PPOTrainer.loss = my_loss
        with mock.patch("trl.trainer.ppo_trainer.PPOTrainer.step"):
            pass
        """
    )
    out, findings = run(src, select=("TRL107",))
    assert sum(f.code == "TRL107" and f.fix is Fix.MANUAL for f in findings) == 3
    assert (
        "trl.trainer.ppo_trainer.PPOTrainer.loss = my_loss" in run(src)[0]
    )  # no rule renames a monkeypatch
    assert run(out, select=("TRL107",))[0] == out
