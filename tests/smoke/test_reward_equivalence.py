"""TRL106's reward functions compute what the legacy loops computed (defect class 7 of #14).

Each loop is run twice on the same generated tokens: as written, against a stand-in legacy
`PPOTrainer` whose `generate` returns fixed response tokens (some ending in EOS, as legacy
`generate(..., return_prompt=False)` returned them) and whose `step` records the rewards; and
rewritten by `fix`, against a stand-in TRL 1.13 trainer that calls `reward_funcs` the way
RLOOTrainer/GRPOTrainer do (`prompts`, completions decoded with `skip_special_tokens=True`,
`completion_ids`). The rewards must be equal, float for float."""

from __future__ import annotations

import sys
import types

import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

import torch  # noqa: E402

from migrate.reference.tiny import tiny_tokenizer  # noqa: E402
from tests.codemods.helpers import dedent, run  # noqa: E402

PPO = ("TRL103", "TRL104", "TRL105", "TRL106")
QUERIES = ["the cat sat", "a dog ran far"]
RESPONSES = [" on the mat", " away from home"]  # the first one ends in EOS


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


def _generated(tok) -> list[list[int]]:
    ids = [tok(r, add_special_tokens=False)["input_ids"] for r in RESPONSES]
    ids[0] = [*ids[0], tok.eos_token_id]
    return ids


def _old_run(src: str, tok) -> list[float]:
    """The loop as written: one batch, the fixed responses, the rewards `step` got."""
    got: list[float] = []
    responses = [torch.tensor(ids) for ids in _generated(tok)]

    class PPOTrainer:
        def __init__(self, *args, **kwargs):
            queries = [torch.tensor(tok(q)["input_ids"]) for q in QUERIES]
            self.dataloader = [{"input_ids": queries, "query": list(QUERIES)}]

        def generate(self, query, **kwargs):
            if isinstance(query, list):
                return list(responses)
            i = next(i for i, q in enumerate(self.dataloader[0]["input_ids"]) if q is query)
            return torch.cat([query, responses[i]])  # one query: prompt + response

        def step(self, queries, responses, scores):
            got.extend(float(s) for s in scores)
            return {}

        def log_stats(self, *args, **kwargs):
            pass

    class PPOConfig:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    trl = types.SimpleNamespace(PPOTrainer=PPOTrainer, PPOConfig=PPOConfig)
    _exec(src, trl, tok)
    return got


def _new_run(src: str, tok, target: str) -> list[float]:
    """The rewrite: the trainer calls its reward function as TRL 1.13's RLOO/GRPO do."""
    got: list[float] = []
    ids = _generated(tok)

    class Trainer:
        def __init__(self, args=None, reward_funcs=None, **kwargs):
            self.reward_funcs = reward_funcs if isinstance(reward_funcs, list) else [reward_funcs]

        def train(self):
            completions = tok.batch_decode(ids, skip_special_tokens=True)
            for fn in self.reward_funcs:
                got.extend(fn(prompts=list(QUERIES), completions=completions, completion_ids=ids))

    class Config:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    cls = target.upper()
    trl = types.SimpleNamespace(**{f"{cls}Trainer": Trainer, f"{cls}Config": Config})
    _exec(src, trl, tok)
    return got


def _exec(src: str, trl, tok) -> None:
    saved = sys.modules.get("trl")
    sys.modules["trl"] = trl  # type: ignore[assignment]
    try:
        env = {"__name__": "__main__", "torch": torch, "tokenizer": tok, "model": None, "ds": None}
        env["tqdm"] = lambda it, **_: it
        exec(compile(src, "loop.py", "exec"), env)
    finally:
        if saved is not None:
            sys.modules["trl"] = saved
        else:
            sys.modules.pop("trl", None)


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
