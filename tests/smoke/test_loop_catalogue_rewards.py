"""Every rewritten shape of the loop catalogue scores what the legacy loop scored: the loop runs
as written against a legacy PPOTrainer stand-in, its golden against a TRL 1.13 trainer stand-in,
on the same generated tokens, and `reward_fn` must return, float for float, what `step` got."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")
pytest.importorskip("transformers")
pytest.importorskip("datasets")
pytest.importorskip("trl")

from migrate.reference.tiny import tiny_tokenizer  # noqa: E402
from tests.codemods.test_loop_catalogue import LOOPS, TARGETS, catalogue  # noqa: E402
from tests.smoke.loop_fakes import QUERIES, generated, new_run, old_run  # noqa: E402

REWRITTEN = sorted(shape for shape, outcome in catalogue().items() if outcome == "rewritten")


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", REWRITTEN)
def test_reward_fn_returns_what_the_loop_gave_step(shape, target, tok, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # scripts that save write here
    ids = generated(tok)
    draw = min(len(x) for x in ids)  # what LengthSampler() draws: cut every response to it
    src = (LOOPS / f"{shape}.py").read_text()
    if "LengthSampler" in src and "generate(query," in src:
        ids = [x[:draw] for x in ids]  # one query at a time, cut to the drawn length
    golden = (LOOPS / "expected" / f"{shape}.{target}.py").read_text()
    old = old_run(src, tok, ids, draw=draw)
    new = new_run(golden, tok, target, ids)
    assert old, "the loop handed step() no scores"
    if 'Dataset.from_dict({"prompt": [' in golden:  # one fixed prompt: the same reward each step
        assert set(new) == set(old) and len(new) == len(QUERIES)
    else:  # the loop's epochs ran the one batch that many times; the stand-in trainer, once
        epochs = re.search(r"num_train_epochs=([\w.]+)", golden)
        if epochs is None or epochs.group(1).isdigit():
            assert new * int(epochs.group(1) if epochs else 1) == old
        else:  # `num_train_epochs=args.epochs`: as many as the loop's epochs ran, at least 2
            assert new and len(old) // len(new) >= 2 and new * (len(old) // len(new)) == old


def test_the_check_can_fail_without_the_prompt_the_loop_scored(tok, tmp_path, monkeypatch):
    """Legacy generate() returned the prompt with the response: scoring the completion alone
    would give other rewards, so the prompt-returning shape's check means something."""
    monkeypatch.chdir(tmp_path)
    shape = "11_prompt_returned_local_texts"
    golden = (LOOPS / "expected" / f"{shape}.rloo.py").read_text()
    assert "tokenizer(text=prompts)" in golden
    alone = golden.replace(
        'tokenizer.batch_decode([p + c for p, c in zip(tokenizer(text=prompts)["input_ids"], '
        'kwargs["completion_ids"])], skip_special_tokens=True)',
        "completions",
    )
    ids = generated(tok)
    assert alone != golden
    assert new_run(alone, tok, "rloo", ids) != old_run(
        (LOOPS / f"{shape}.py").read_text(), tok, ids
    )
