"""TRL's own legacy example scripts, as its 0.9.6 and 0.11.4 wheels shipped them
(`trl/commands/scripts/ppo.py`, `ppo_multi_adapter.py`), migrated by `fix` and smoke-trained on
real TRL 1.13. The files are read from the wheels at test time (cached in `.wheels/`, else
downloaded from the package index like the corpus slice does); none of TRL's code is kept here.

The sentiment script must train on both targets, as rewritten (its one TODO is a warning about the
`--use_seq2seq` branch). The multi-adapter script takes its reward from a reward adapter on the
policy: TRL 1.13 has none, so the rewrite writes one in (`model.compute_reward_score =
RewardAdapter(...)`) and the loop's reward becomes `reward_fn`; it must train on both targets too,
its only TODOs being the dropped PPO-only settings (tracker, score scaling/normalisation/clipping).
"""

from __future__ import annotations

import math
import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from codemods.base import Options  # noqa: E402
from migrate import api  # noqa: E402
from migrate.kernel.findings import Status  # noqa: E402
from migrate.smoke import smoke_script  # noqa: E402
from tests.reliability.test_corpus_slice import unpack  # noqa: E402

VERSIONS = ("0.9.6", "0.11.4")
TARGETS = ("rloo", "grpo")
CASES = [(v, t) for v in VERSIONS for t in TARGETS]


def _migrated(tmp_path, version: str, target: str, name: str) -> str:
    folder = unpack(version, tmp_path, (f"trl/commands/scripts/{name}",))
    script = tmp_path / f"{target}-{version}-{name}"
    shutil.copy(folder / "trl" / "commands" / "scripts" / name, script)
    report = api.fix_paths([str(script)], options=Options(target=target))
    assert [r.status for r in report.results] == [Status.CHANGED], [
        (r.path, r.message) for r in report.results
    ]
    return str(script)


@pytest.mark.parametrize(("version", "target"), CASES, ids=[f"{v}-{t}" for v, t in CASES])
def test_trls_sentiment_example_trains_once_migrated(tmp_path, store, version, target):
    script = _migrated(tmp_path, version, target, "ppo.py")
    with open(script, encoding="utf-8") as fh:
        todos = [line.strip() for line in fh if "TODO(trl-migrate" in line]
    # Two TODOs, warnings: the usage docstring passes `--log_with`, and the script's --use_seq2seq branch
    # picks a seq2seq policy, which 1.13 cannot train.
    assert len(todos) == 2, todos
    assert todos[0].startswith(
        "# TODO(trl-migrate TRL103): the usage in this docstring passes PPO flags: "
        "`--log_with` is `--report_to`"
    )
    assert todos[1].startswith(
        "# TODO(trl-migrate TRL102): `trl_model_class` is `AutoModelForSeq2SeqLM`"
    )
    result = smoke_script(script, store=store, timeout=240)
    assert [f.code for f in result.findings if f.code != "TRL420"] == ["TRL410"], (
        result.findings,
        result.log_tail,
    )
    assert (
        result.steps_run == 2
        and len(result.losses) == 2
        and all(math.isfinite(x) for x in result.losses)
    )
    assert ("GRPOTrainer" if target == "grpo" else "RLOOTrainer") in result.findings[0].message


@pytest.mark.parametrize(("version", "target"), CASES, ids=[f"{v}-{t}" for v, t in CASES])
def test_trls_multi_adapter_example_trains_once_migrated(tmp_path, store, version, target):
    script = _migrated(tmp_path, version, target, "ppo_multi_adapter.py")
    with open(script, encoding="utf-8") as fh:
        text = fh.read()
    todos = [line.strip() for line in text.splitlines() if "TODO(trl-migrate" in line]
    # `log_with=script_args.log_with` is `report_to=script_args.log_with or "none"` now
    assert 'report_to=script_args.log_with or "none"' in text
    dropped = {"use_score_scaling", "use_score_norm"}
    if target == "grpo":  # RLOO clips rewards as PPO did (`reward_clip_range`); GRPO cannot
        dropped.add("score_clip")
    assert sorted(t.split("`", 2)[1].split("=")[0] for t in todos) == sorted(dropped), todos
    assert all(t.startswith("# TODO(trl-migrate TRL103): ") for t in todos), todos
    assert "model.compute_reward_score = RewardAdapter(model, script_args.rm_adapter)" in text
    assert ").compute_reward_score(**inputs)" in text.split("def reward_fn(", 1)[1]
    result = smoke_script(script, store=store, timeout=240)
    assert [f.code for f in result.findings if f.code != "TRL420"] == ["TRL410"], (
        result.findings,
        result.log_tail,
    )
    assert result.steps_run == 2 and all(math.isfinite(x) for x in result.losses)
