"""`trl-migrate smoke --env` end to end, its verdicts and exit codes, and the tiny factories."""

from __future__ import annotations

import json
import os
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner

from migrate.cli_smoke import smoke_command
from migrate.reference import parity, tiny, train


def _codes(result):
    return [f.code for f in result.findings]


def test_env_check_trains_and_passes():
    result = train.check_env(steps=6)
    assert result.verdict == "pass" and result.exit_code == 0, result.findings
    assert len(result.losses) == 6 and result.losses[-1] < result.losses[0]
    assert result.dtype == "bfloat16" and result.tokens > 0 and result.tokens_per_s > 0
    assert result.versions["torch"] != "-"


def test_cli_json_with_lora_and_loss_parity():
    run = CliRunner().invoke(
        smoke_command, ["--env", "--lora", "--loss-parity", "--steps", "4", "--format", "json"]
    )
    assert run.exit_code == 0, run.output
    doc = json.loads(run.output)
    assert doc["command"] == "smoke" and doc["summary"]["exit_code"] == 0
    env = doc["env"]
    assert env["verdict"] == "pass" and env["lora"] and env["trainable"] < env["parameters"]
    assert env["parity"]["ok"] and env["parity"]["ours_rel"] <= env["parity"]["tolerance"]


def test_cli_text_llama():
    run = CliRunner().invoke(smoke_command, ["--env", "--arch", "llama", "--steps", "3"])
    assert run.exit_code == 0, run.output
    assert "step   3" in run.output and run.output.rstrip().endswith("verdict: pass")


def test_cli_needs_env_or_script():
    run = CliRunner().invoke(smoke_command, [])
    assert run.exit_code == 2 and "--env" in run.output


def test_loss_that_does_not_go_down_fails(monkeypatch):
    monkeypatch.setattr(train, "MIN_DROP", 0.99)
    result = train.check_env(steps=3)
    assert _codes(result) == ["TRL401"] and result.exit_code == 1


def test_non_finite_loss_fails(monkeypatch):
    real = train.chunked_loss
    monkeypatch.setattr(
        train, "chunked_loss", lambda model, batch: real(model, batch) * float("nan")
    )
    result = train.check_env(steps=3)
    assert _codes(result) == ["TRL402"] and result.exit_code == 1 and len(result.losses) == 1


def test_without_bf16_trains_in_fp32_with_a_warning(monkeypatch):
    monkeypatch.setattr(train, "bf16_supported", lambda device: False)
    result = train.check_env(steps=3)
    assert result.dtype == "float32" and _codes(result) == ["TRL403"] and result.exit_code == 0


def test_parity_gap_is_reported(monkeypatch):
    real = parity.chunked_loss  # our loss, as the parity check computes it
    monkeypatch.setattr(parity, "chunked_loss", lambda model, batch: real(model, batch) * 1.01)
    result = train.check_env(steps=3, loss_parity=True)
    assert "TRL404" in _codes(result) and result.exit_code == 1


def test_missing_trl_is_a_warning(monkeypatch):
    monkeypatch.setattr(parity, "_trl_chunked_loss", lambda: None)
    result = train.check_env(steps=3, loss_parity=True)
    assert _codes(result) == ["TRL405"] and result.parity.trl is None and result.exit_code == 0


def test_crash_is_an_error_with_exit_2(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("no model for you")

    monkeypatch.setattr(tiny, "tiny_causal_lm", boom)
    run = CliRunner().invoke(smoke_command, ["--env", "--steps", "2"])
    assert run.exit_code == 2 and "TRL406" in run.output and "no model for you" in run.output


def test_importing_the_command_does_not_import_torch():
    code = "import sys, migrate.cli_smoke; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_tiny_factories():
    tok = tiny.tiny_tokenizer()
    assert (tok.pad_token_id, tok.eos_token_id, tok.bos_token_id) == (
        tiny.PAD_ID,
        tiny.EOS_ID,
        tiny.BOS_ID,
    )
    ds = tiny.tiny_text_dataset(
        6, columns=["prompt", "completion", "messages", "chosen", "rejected", "label"]
    )
    assert len(ds) == 6 and set(ds.column_names) == {
        "prompt",
        "completion",
        "messages",
        "chosen",
        "rejected",
        "label",
    }
    assert "<|im_start|>assistant" in tok.apply_chat_template(ds[0]["messages"], tokenize=False)
    clf = tiny.tiny_seq_classifier(num_labels=1, arch="llama")
    assert clf.config.num_labels == 1 and clf.config.pad_token_id == tiny.PAD_ID
    with pytest.raises(ValueError):
        tiny.tiny_text_dataset(2, columns=["nope"])
