"""TRL106's reward functions compute what the legacy loops computed (defect class 7 of #14).

Each loop is run twice on the same generated tokens: as written, against a stand-in legacy
`PPOTrainer` whose `generate` returns fixed response tokens (some ending in EOS, as legacy
`generate(..., return_prompt=False)` returned them) and whose `step` records the rewards; and
rewritten by `fix`, against a stand-in TRL 1.13 trainer that calls `reward_funcs` the way
RLOOTrainer/GRPOTrainer do (`prompts`, completions decoded with `skip_special_tokens=True`,
`completion_ids`). The rewards must be equal, float for float."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from migrate.reference.tiny import tiny_tokenizer  # noqa: E402
from tests.codemods.helpers import dedent, run  # noqa: E402
from tests.smoke.loop_fakes import QUERIES, generated, new_run, old_run  # noqa: E402

PPO = ("TRL103", "TRL104", "TRL105", "TRL106")


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


def _old_run(src: str, tok) -> list[float]:
    return old_run(src, tok, generated(tok))


def _new_run(src: str, tok, target: str) -> list[float]:
    return new_run(src, tok, target, generated(tok))


HEAD = """
from trl import PPOConfig, PPOTrainer
config = PPOConfig(batch_size=2, mini_batch_size=1)
trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
"""

BATCH = """
for batch in tqdm(trainer.dataloader):
    query_tensors = batch["input_ids"]
    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=8)
    batch["response"] = tokenizer.batch_decode(response_tensors{options})
{reward}
    stats = trainer.step(query_tensors, response_tensors, rewards)
    trainer.log_stats(stats, batch, rewards)
"""

PER_QUERY = """
generation_kwargs = {"do_sample": True, "max_new_tokens": 8}
for batch in trainer.dataloader:
    query_tensors = batch["input_ids"]
    response_tensors = []
    for query in query_tensors:
        query_response = trainer.generate(query, **generation_kwargs).squeeze()
        response_len = len(query_response) - len(query)
        response_tensors.append(query_response[-response_len:])
    batch["response"] = [tokenizer.decode(r.squeeze()) for r in response_tensors]
{reward}
    stats = trainer.step(query_tensors, response_tensors, rewards)
"""

REWARDS = {
    "length": "    rewards = [torch.tensor(float(len(r))) for r in batch['response']]",
    "joined-text": (
        '    texts = [q + r for q, r in zip(batch["query"], batch["response"])]\n'
        "    rewards = [torch.tensor(float(t.count('o') + len(t) / 10)) for t in texts]"
    ),
    "ends-with-eos": (
        "    rewards = [torch.tensor(1.0 if r.endswith(tokenizer.eos_token) else -1.0)\n"
        "               for r in batch['response']]"
    ),
    "baseline": (
        "    scores = [float(len(r.split())) for r in batch['response']]\n"
        "    baseline = sum(scores) / len(scores)\n"
        "    rewards = [torch.tensor(s - baseline) for s in scores]"
    ),
}


@pytest.mark.parametrize("target", ["rloo", "grpo"])
@pytest.mark.parametrize("reward", sorted(REWARDS))
@pytest.mark.parametrize(
    "loop",
    [
        pytest.param(BATCH.replace("{options}", ""), id="batch-decode"),
        pytest.param(
            BATCH.replace("{options}", ", skip_special_tokens=True"), id="batch-decode-skipping"
        ),
        pytest.param(PER_QUERY, id="per-query"),
    ],
)
def test_reward_fn_returns_what_the_loop_gave_step(tok, loop, reward, target):
    src = dedent(HEAD) + dedent(loop).replace("{reward}", REWARDS[reward])
    out, findings = run(src, select=PPO, target=target)
    assert "for batch in" not in out, [f.message for f in findings if f.code == "TRL106"]
    old, new = _old_run(src, tok), _new_run(out, tok, target)
    assert len(old) == len(QUERIES) and new == old


def test_the_texts_differ_without_the_decode_the_rewrite_adds(tok):
    """The check can fail: TRL 1.13's own completions lose the EOS the loop's text had."""
    src = dedent(HEAD) + dedent(BATCH.replace("{options}", "")).replace(
        "{reward}", REWARDS["ends-with-eos"]
    )
    out, _ = run(src, select=PPO)
    line = '    completions = tokenizer.batch_decode(kwargs["completion_ids"])  # as the loop decoded them\n'
    assert line in out
    assert _new_run(out.replace(line, ""), tok, "rloo") != _old_run(src, tok)
