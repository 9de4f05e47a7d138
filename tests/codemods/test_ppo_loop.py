"""TRL106 ppo-loop: no-op, fix, TODO, run twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import assert_fixes, assert_noop, dedent, run

PPO = ("TRL103", "TRL104", "TRL105", "TRL106")


@pytest.mark.parametrize(
    "src",
    [
        pytest.param("for b in loader:\n    opt.step()\n", id="loop-optimizer-step"),
    ],
)
def test_noop(src):
    assert assert_noop(src, select=("TRL106",)) == []


SENTIMENT = """
from trl import PPOConfig, PPOTrainer
config = PPOConfig(batch_size=4, mini_batch_size=2)
trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
gen_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 8, "no_repeat_ngram_size": 3}
for batch in tqdm(trainer.dataloader):
    q = batch["input_ids"]
    r = trainer.generate(q, return_prompt=False, **gen_kwargs)
    batch["response"] = tokenizer.batch_decode(r)
    rewards = [torch.tensor(len(c)) for c in batch["response"]]
    stats = trainer.step(q, r, rewards)
    trainer.log_stats(stats, batch, rewards)
"""


@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_recognised_loop_becomes_reward_function_and_train(target):
    cls = target.upper()
    ng = (
        " num_generations=2," if target == "grpo" else ""
    )  # the generation batch (4) must divide by it
    after = dedent(
        f"""
        from trl import {cls}Config, {cls}Trainer
        config = {cls}Config(per_device_train_batch_size=2, steps_per_generation=2,{ng} seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True, top_k=0, top_p=1.0, max_completion_length=8, generation_kwargs={{'no_repeat_ngram_size': 3}}, num_train_epochs=1)


        def reward_fn(prompts, completions, **kwargs) -> list[float]:
            completions = tokenizer.batch_decode(kwargs["completion_ids"])  # as the loop decoded them
            rewards = [torch.tensor(len(c)) for c in completions]
            return [float(r) for r in rewards]


        trainer = {cls}Trainer(args=config, model=model, processing_class=tokenizer, train_dataset=ds, reward_funcs=reward_fn)
        gen_kwargs = {{"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 8, "no_repeat_ngram_size": 3}}
        trainer.train()
        """
    )
    findings = assert_fixes(dedent(SENTIMENT), after, select=PPO, target=target)
    assert not [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]


def test_prints_of_the_step_stats_are_dropped_with_the_step():
    """ivanluk914/RLHF-Dialogue-Summarizer printed `stats["objective/kl"]` after each step: those
    lines went into `reward_fn`, where `stats` is undefined (NameError on the first reward)."""
    src = dedent(SENTIMENT) + "    print(f\"kl: {stats['objective/kl']}\")\n"
    out, findings = run(src, select=PPO)
    assert "stats" not in out.split("def reward_fn", 1)[1].split("trainer =", 1)[0]
    dropped = [f for f in findings if "printed its counters, tensors or step stats" in f.message]
    assert len(dropped) == 1 and "`print(f\"kl: {stats['objective/kl']}\")`" in dropped[0].message
    assert run(out, select=PPO)[0] == out


def test_a_reward_reading_the_step_stats_keeps_the_todo():
    src = dedent(SENTIMENT) + "    history.append(stats)\n"
    out, findings = run(src, select=PPO)
    assert "for batch in tqdm(trainer.dataloader):" in out
    assert (
        "(`history.append(stats)` reads what `.step(...)` returned (`stats`), which no reward "
        "function has)" in out
    )
    assert run(out, select=PPO)[0] == out


def assert_trainer_todo(out: str) -> None:
    """A loop left as it is also marks the trainer call above it, which 1.13 rejects without a reward."""
    lines = out.splitlines()
    need = [
        i
        for i, line in enumerate(lines)
        if "needs `reward_funcs`: the rewards came from the PPO loop below" in line
    ]
    assert len(need) == 1, need
    assert (
        lines[need[0]].startswith("# TODO(trl-migrate TRL106): ")
        and " = RLOOTrainer(" in lines[need[0] + 1]
    )


def test_unrecognised_loop_stays_with_one_todo_and_a_skeleton():
    src = dedent(SENTIMENT).replace("return_prompt=False", "return_prompt=args.with_prompt")
    out, findings = run(src, select=PPO)
    todos = [
        line
        for line in out.splitlines()
        if line.startswith("# TODO(trl-migrate TRL106): TRL 1.13 has no PPO")
    ]
    assert len(todos) == 1 and "`return_prompt=args.with_prompt` is not a literal" in todos[0]
    assert_trainer_todo(out)
    assert (
        "def reward_fn(prompts, completions, **kwargs)" in todos[0]
        and "trainer.train()" in todos[0]
    )
    assert "for batch in tqdm(trainer.dataloader):" in out
    assert run(out, select=PPO)[0] == out


HELLO = """
import torch
from trl import PPOConfig, PPOTrainer
from trl.core import respond_to_batch
config = PPOConfig(batch_size=1, mini_batch_size=1)
trainer = PPOTrainer(config, model, None, tokenizer)
query_tensor = tokenizer.encode("This morning I went to the ", return_tensors="pt")
for _ in range(10):
    response_tensor = respond_to_batch(model, query_tensor)
    reward = [torch.tensor(1.0)]
    train_stats = trainer.step([query_tensor[0]], [response_tensor[0]], reward)
"""


@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_fixed_prompt_loop_becomes_a_dataset_of_the_prompt(target):
    cls = target.upper()
    after = dedent(
        f"""
        import torch
        from trl import {cls}Config, {cls}Trainer
        from datasets import Dataset

        config = {cls}Config(per_device_train_batch_size=2, num_generations=2, seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True, max_completion_length=20, num_train_epochs=1)


        def reward_fn(prompts, completions, **kwargs) -> list[float]:
            reward = [torch.tensor(1.0)]
            return [float(reward[0])] * len(completions)


        train_dataset = Dataset.from_dict({{"prompt": ["This morning I went to the "] * 10}})
        trainer = {cls}Trainer(args=config, model=model, processing_class=tokenizer, train_dataset=train_dataset, reward_funcs=reward_fn)
        query_tensor = tokenizer.encode("This morning I went to the ", return_tensors="pt")
        trainer.train()
        """
    )
    findings = assert_fixes(dedent(HELLO), after, target=target)
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    gone = [f for f in findings if f.code == "TRL101" and "respond_to_batch" in f.message]
    message = "`trl.core.respond_to_batch` is gone in TRL 1.13; TRL106 rewrote its uses, so the import is unused and was removed"
    assert [(f.fix, f.message) for f in gone] == [(Fix.APPLIED, message)]


def test_fixed_prompt_loop_with_generate_in_a_function():
    before = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        from trl.core import respond_to_batch, LengthSampler as train_dataset
        def main(text, steps):
            config = PPOConfig(batch_size=2, mini_batch_size=2)
            trainer = PPOTrainer(config, model, None, tok)
            q = tok(text, return_tensors="pt").input_ids
            for i in range(steps):
                r = trainer.generate(q[0], max_new_tokens=8, do_sample=True, return_prompt=False)
                rewards = [score()]
                trainer.step(q, r, rewards)
                trainer.log_stats({}, {}, rewards)
        """
    )
    after = dedent(
        """
        from trl import RLOOConfig, RLOOTrainer
        from trl.core import respond_to_batch, LengthSampler as train_dataset
        from datasets import Dataset

        def main(text, steps):
            config = RLOOConfig(per_device_train_batch_size=2, seed=0, learning_rate=1.41e-05, beta=0.2, num_iterations=4, max_grad_norm=0.0, gradient_checkpointing=False, lr_scheduler_type="constant", bf16=False, disable_dropout=True, max_completion_length=8, num_train_epochs=1)

            def reward_fn(prompts, completions, **kwargs) -> list[float]:
                rewards = [score()]
                return [float(rewards[0])] * len(completions)

            train_dataset_1 = Dataset.from_dict({"prompt": [text] * steps})
            trainer = RLOOTrainer(args=config, model=model, processing_class=tok, train_dataset=train_dataset_1, reward_funcs=reward_fn)
            q = tok(text, return_tensors="pt").input_ids
            trainer.train()
        """
    )
    assert_fixes(
        before, after, select=PPO
    )  # respond_to_batch is not used here: TRL106 leaves its import alone


@pytest.mark.parametrize(
    ("change", "why"),
    [
        pytest.param(
            ("reward = [torch.tensor(1.0)]", "reward = [score(response_tensor)]"),
            "`reward = [score(response_tensor)]` reads the query, the response",
            id="reward-reads-response",
        ),
        pytest.param(
            ("reward = [torch.tensor(1.0)]", "reward = [torch.tensor(_)]"),
            "reads the query, the response",
            id="reward-reads-counter",
        ),
        pytest.param(
            (
                "    train_stats = trainer.step([query_tensor[0]], [response_tensor[0]], reward)\n",
                "    train_stats = trainer.step([query_tensor[0]], [response_tensor[0]], reward)\nelse:\n    pass\n",
            ),
            "it has an else block",
            id="loop-else",
        ),
        pytest.param(
            (
                'tokenizer.encode("This morning I went to the ", return_tensors="pt")',
                "tokenizer.encode(prompt())",
            ),
            'is not `tokenizer.encode(<text>, return_tensors="pt")`',
            id="query-not-literal-encode",
        ),
        pytest.param(
            ("query_tensor = tokenizer", "query_tensor = 1\nquery_tensor = tokenizer"),
            "is not assigned once",
            id="query-assigned-twice",
        ),
        pytest.param(
            ("respond_to_batch(model, query_tensor)", "respond_to_batch(ref_model, query_tensor)"),
            "does not sample from the trainer's model",
            id="respond-with-other-model",
        ),
        pytest.param(
            ("    reward = [torch.tensor(1.0)]\n", ""),
            "`reward` is not computed inside the loop",
            id="reward-outside",
        ),
        pytest.param(
            ("range(10)", "range(len(xs))"), "iterates over neither", id="range-of-a-call"
        ),
        pytest.param(
            (
                "trainer = PPOTrainer(config, model, None, tokenizer)\n",
                "if True:\n    trainer = PPOTrainer(config, model, None, tokenizer)\n",
            ),
            "`trainer` is not built in the same block",
            id="trainer-in-another-block",
        ),
        pytest.param(
            ("for _ in range(10)", "n = len(prompts)\nfor _ in range(n)"),
            "`n` is set after `trainer` is built",
            id="count-set-after-the-trainer",
        ),
        pytest.param(("range(10)", "range(n)"), "", id="count-name-unbound-here-control"),
    ],
)
def test_fixed_prompt_loop_not_recognised_keeps_its_todo(change, why):
    src = dedent(HELLO).replace(*change)
    out, findings = run(src)
    assert run(out)[0] == out
    if not why:  # controls: these shapes are rewritten
        assert "trainer.train()" in out and not [
            f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"
        ]
        return
    todos = [
        line
        for line in out.splitlines()
        if line.startswith("# TODO(trl-migrate TRL106): TRL 1.13 has no PPO")
    ]
    assert len(todos) == 1 and why in todos[0], todos
    assert "for _ in range(" in out and "from trl.core import respond_to_batch" in out
    if "not built in the same block" not in why:
        assert_trainer_todo(out)


# -- generate_ref_response=True: reference responses that only fed logging ---------------------------
REF = """
from trl import RLOOConfig, RLOOTrainer
config = RLOOConfig(beta=0.1)
trainer = RLOOTrainer(args=config, model=m, processing_class=tok, train_dataset=ds)
for batch in tqdm(trainer.dataloader):
    q = batch["input_ids"]

    # policy and reference answers
    r, ref_r = trainer.generate(q, return_prompt=False, generate_ref_response=True, max_new_tokens=8)
    batch["response"] = tok.batch_decode(r)
    batch["ref_response"] = tok.batch_decode(ref_r)

    # score the answers
    rewards = [score(p + c) for p, c in zip(batch["query"], batch["response"])]  # one per answer
    ref_scores = [score(p + c) for p, c in zip(batch["query"], batch["ref_response"])]
    batch["ref_rewards"] = ref_scores
    stats = trainer.step(q, r, rewards)
    trainer.log_stats(stats, batch, rewards, columns_to_log=["query", "response", "ref_response", "ref_rewards"])
"""

REF_AFTER = """
from trl import RLOOConfig, RLOOTrainer
config = RLOOConfig(beta=0.1, max_completion_length=8, num_train_epochs=1)


def reward_fn(prompts, completions, **kwargs) -> list[float]:
    completions = tok.batch_decode(kwargs["completion_ids"])  # as the loop decoded them
    # score the answers
    rewards = [score(p + c) for p, c in zip(prompts, completions)]  # one per answer
    return [float(r) for r in rewards]


trainer = RLOOTrainer(args=config, model=m, processing_class=tok, train_dataset=ds, reward_funcs=reward_fn)
# policy and reference answers
trainer.train()
"""


def test_reference_responses_that_only_feed_logging_are_dropped():
    findings = assert_fixes(dedent(REF), dedent(REF_AFTER), select=("TRL106",))
    warning, sampling = sorted(
        (f for f in findings if f.severity.name == "WARNING"), key=lambda f: f.line
    )  # the reference responses on the loop's line, the sampling on the generate call's
    assert sampling.message.startswith(
        "`.generate(...)` left `do_sample`, `top_k`, `temperature` and `top_p` to the model's "
        "generation config"
    )
    assert warning.message == (
        "`generate_ref_response=True`: TRL 1.13 does not generate reference-model responses (the reference model "
        'enters only through the KL term, `beta`); dropped what only logged them: `ref_r`, `batch["ref_response"]`, '
        '`ref_scores`, `batch["ref_rewards"]`'
    )
    assert not [f for f in findings if f.fix is Fix.MANUAL]


def test_parsed_config_gets_generation_defaults_and_a_flag_still_wins():
    before = dedent(REF).replace(
        "config = RLOOConfig(beta=0.1)\n",
        "parser = HfArgumentParser((Args, RLOOConfig))\n"
        "args, config = parser.parse_args_into_dataclasses()\n",
    )
    after = dedent(REF_AFTER).replace(
        "config = RLOOConfig(beta=0.1, max_completion_length=8, num_train_epochs=1)\n",
        (
            "parser = HfArgumentParser((Args, RLOOConfig))\n"
            "parser.set_defaults(max_completion_length=8, num_train_epochs=1)\n"
            "args, config = parser.parse_args_into_dataclasses()\n"
        ),
    )
    assert_fixes(before, after, select=("TRL106",))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        pytest.param(
            (
                '    batch["ref_rewards"] = ref_scores\n',
                "    rewards = [a - b for a, b in zip(rewards, ref_scores)]\n",
            ),
            "the step's rewards `rewards` are computed from the reference responses (`generate_ref_response=True`), "
            "which TRL 1.13 does not generate; the reference model enters only through the KL term (`beta`)",
            id="ref-rewards-in-the-reward",
        ),
        pytest.param(
            ('    batch["ref_rewards"] = ref_scores\n', '    kept.append(batch["ref_response"])\n'),
            '`kept.append(batch["ref_response"])` uses `batch["ref_response"]`, computed from the reference responses '
            "(`generate_ref_response=True`), which TRL 1.13 does not generate, for more than logging it in the batch",
            id="ref-response-kept",
        ),
        pytest.param(
            ('    batch["ref_rewards"] = ref_scores\n', '    history["ref"] = ref_scores\n'),
            '`history["ref"] = ref_scores` uses `ref_scores`, computed from the reference responses',
            id="ref-rewards-stored-elsewhere",
        ),
        pytest.param(
            ("r, ref_r = trainer", "r, ref_r, extra = trainer"),
            "unpacks `.generate(...)` into 3 targets; it returns the responses, or (responses, reference "
            "responses) with generate_ref_response=True",
            id="three-target-unpack",
        ),
        pytest.param(
            ("generate_ref_response=True", "generate_ref_response=False"),
            "`generate_ref_response=False` does not match the result's assignment to (responses, reference responses)",
            id="ref-flag-false-with-two-targets",
        ),
        pytest.param(
            ("trainer.step(q, r, rewards)", "trainer.step(q, ref_r, rewards)"),
            "`.generate(...)` gives `r`, not the responses `ref_r` that `.step(...)` takes",
            id="step-on-ref",
        ),
        pytest.param(
            (
                '    batch["response"] =',
                '    r = trainer.generate(q, return_prompt=False)\n    batch["response"] =',
            ),
            "it calls `.generate(...)` more than once",
            id="generate-twice",
        ),
        pytest.param(
            ("    stats = trainer", "    keep = ref_scores\n    stats = trainer"),
            "",
            id="ref-copied-to-a-name-control",
        ),
        pytest.param(
            ("    stats = trainer", "    seen.append(ref_scores)\n    stats = trainer"),
            "`seen.append(ref_scores)` uses `ref_scores`",
            id="ref-appended",
        ),
        pytest.param(
            ("    # score the answers\n", "    # score the answers\n    print(ref_scores)\n"),
            "`print(ref_scores)` reads `ref_scores`, computed from the reference responses (`generate_ref_response=True`), "
            "which TRL 1.13 does not generate, in the loop before it is computed",
            id="ref-read-before-computed",
        ),
        pytest.param(
            ("    rewards = [score(p + c)", "    rewards = [score(q) + score(p + c)"),
            'reads `q`; a reward function sees only the prompts (`batch["query"]`) and the completions',
            id="reward-reads-query-tensors",
        ),
    ],
)
def test_reference_responses_used_beyond_logging_keep_the_todo(change, why):
    src = dedent(REF).replace(*change)
    assert src != dedent(REF)
    out, findings = run(src, select=("TRL106",))
    assert run(out, select=("TRL106",))[0] == out
    if not why:
        assert "trainer.train()" in out and "ref_scores" not in out
        return
    todos = [
        line
        for line in out.splitlines()
        if line.startswith("# TODO(trl-migrate TRL106): TRL 1.13 has no PPO")
    ]
    assert len(todos) == 1 and why in todos[0], todos
    assert "for batch in tqdm(trainer.dataloader):" in out
    assert [f.fix for f in findings] == [
        Fix.MANUAL
    ] * 2  # the loop's and the trainer's: nothing of the rewrite
    assert_trainer_todo(out)


def test_reference_value_used_after_the_loop_keeps_the_todo():
    src = dedent(REF) + "print(ref_scores)\n"
    out, _ = run(src, select=("TRL106",))
    assert (
        "`ref_scores`, computed from the reference responses (`generate_ref_response=True`), which TRL 1.13 does "
        "not generate, is used outside the loop" in out
    )


@pytest.mark.parametrize("version", ["0.9.6", "0.11.4"])
@pytest.mark.parametrize("target", ["rloo", "grpo"])
def test_trl_example_script_loop_is_rewritten(version, target, tmp_path):
    """TRL's own legacy `ppo.py` (read from its wheel at test time): the loop with
    generate_ref_response=True and a command-line-parsed config becomes reward_fn + train()."""
    import ast

    from tests.reliability.test_corpus_slice import unpack

    src = (
        unpack(version, tmp_path, ("trl/commands/scripts/ppo.py",)) / "trl/commands/scripts/ppo.py"
    ).read_text()
    loop = next(n for n in ast.parse(src).body if isinstance(n, ast.For))
    loop_comments = [
        line.strip()
        for line in src.splitlines()[loop.lineno - 1 : loop.end_lineno]
        if line.strip().startswith("#")
    ]
    out, findings = run(src, target=target)
    assert not [f for f in findings if f.code == "TRL106" and f.fix is Fix.MANUAL]
    # temperature and top_p left to the model's config (gpt2's sets neither); the reference
    # responses dropped; the texts decoded as the loop did; the loop rewritten
    assert [f.severity.name for f in findings if f.code == "TRL106"] == [
        "INFO",
        "WARNING",
        "INFO",
        "ERROR",
    ]
    assert findings[[f.code for f in findings].index("TRL106")].message.startswith(
        "`.generate(...)` left `temperature` to the model's generation config"
    )
    tree = ast.parse(out)
    assert not [
        n for n in ast.walk(tree) if isinstance(n, ast.For) and "dataloader" in ast.unparse(n.iter)
    ]
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not {
        n for n in names if n.startswith("ref_") and n != "ref_model"
    }  # the reference chain is gone
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "reward_fn")
    assert "batch" not in {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    assert (
        "parser.set_defaults(top_k=0, top_p=1.0, max_completion_length=32, num_train_epochs=1)"
        in out
    )
    assert all(c in out for c in loop_comments), "a comment of the loop was lost"
    assert run(out, target=target)[0] == out


# The older gpt2-sentiment notebooks (TRL 0.4-0.7): one query at a time, the length drawn by a
# LengthSampler with named bounds, the responses decoded one by one, and the repo's own reward
# function already called `reward_fn`.
PER_QUERY = """
from trl import PPOConfig, PPOTrainer
from trl.core import LengthSampler
config = PPOConfig(batch_size=4, mini_batch_size=2)
trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
output_min_length = 4
output_max_length = 16
output_length_sampler = LengthSampler(output_min_length, output_max_length)
generation_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True}
def reward_fn(texts):
    return [torch.tensor(float(len(t))) for t in texts]
for epoch, batch in enumerate(trainer.dataloader):
    query_tensors = batch["input_ids"]
    response_tensors = []
    for query in query_tensors:
        gen_len = output_length_sampler()
        generation_kwargs["max_new_tokens"] = gen_len
        response = trainer.generate(query, **generation_kwargs)
        response_tensors.append(response.squeeze()[-gen_len:])
    batch["response"] = [tokenizer.decode(r.squeeze()) for r in response_tensors]
    texts = [q + r for q, r in zip(batch["query"], batch["response"])]
    rewards = reward_fn(texts)
    stats = trainer.step(query_tensors, response_tensors, rewards)
"""


def test_per_query_generation_loop_is_one_batch_generation():
    out, findings = run(dedent(PER_QUERY), select=PPO)
    assert "def reward_fn_from_loop(prompts, completions, **kwargs) -> list[float]:\n" in out
    assert "    texts = [q + r for q, r in zip(prompts, completions)]\n" in out
    assert "    rewards = reward_fn(texts)\n" in out  # the repo's own function, still called
    assert "reward_funcs=reward_fn_from_loop)" in out and "trainer.train()" in out
    assert "max_completion_length=15" in out and "for query in query_tensors" not in out
    assert not [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    sampler = [f for f in findings if "drew a random length per sample" in f.message]
    assert len(sampler) == 1 and sampler[0].line == 15  # at `gen_len = output_length_sampler()`
    # `[-gen_len:]` of the prompt + response: a response ended early held the prompt's tail
    tail = [f for f in findings if "came with the prompt's last tokens" in f.message]
    assert [(f.line, f.severity.name) for f in tail] == [(17, "INFO")]
    assert run(out, select=PPO)[0] == out
    # the response alone (`return_prompt=False`) or cut by its own length: nothing to say
    for alone in (
        dedent(PER_QUERY).replace(
            "(query, **generation_kwargs)", "(query, return_prompt=False, **generation_kwargs)"
        ),
        dedent(PER_QUERY).replace(*CUT),
    ):
        _, findings = run(alone, select=PPO)
        assert not [f for f in findings if "came with the prompt's last tokens" in f.message]


# The later notebooks (TRL 0.10+): the generation returns prompt+response and the response is
# cut from it by length.
CUT = (
    """        response = trainer.generate(query, **generation_kwargs)
        response_tensors.append(response.squeeze()[-gen_len:])
""",
    """        query_response = trainer.generate(query, **generation_kwargs).squeeze()
        response_len = len(query_response) - len(query)
        response_tensors.append(query_response[-response_len:])
""",
)


def test_per_query_generation_cut_by_length_is_one_batch_generation():
    before = dedent(PER_QUERY).replace(*CUT)
    out, findings = run(before, select=PPO)
    reference, _ = run(dedent(PER_QUERY), select=PPO)
    assert out == reference  # the same rewrite as the older notebooks' shape
    assert not [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    "change",
    [
        ("response_len = len(query_response) - len(query)", "response_len = len(query) + 1"),
        ("query_response[-response_len:]", "query_response[:response_len]"),
        ("(query, **generation_kwargs).squeeze()", "(query, **generation_kwargs).flip()"),
    ],
    ids=["other-length", "head-not-tail", "other-method"],
)
def test_per_query_generation_cut_otherwise_keeps_the_todo(change):
    before = dedent(PER_QUERY).replace(*CUT).replace(*change)
    out, findings = run(before, select=PPO)
    todos = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert todos and "for query in query_tensors" in out
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    "change",
    [
        ("        response_tensors.append(", "        other.append("),
        ("        gen_len = output_length_sampler()\n", "        log(query)\n"),
    ],
    ids=["appends-elsewhere", "does-more-than-generate"],
)
def test_per_query_loop_with_more_in_it_keeps_the_todo(change):
    out, findings = run(dedent(PER_QUERY).replace(*change), select=PPO)
    todos = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert todos and "for query in query_tensors" in out
    assert any("left as it is" in f.message for f in todos)


# A loop that stops after N batches (stack-llama's `if epoch >= config.total_ppo_epochs: break`):
# N generations of the same batch, so max_steps = N * optimizer steps per generation.
STOPS = """
from tqdm import tqdm
from trl import PPOConfig, PPOTrainer
config = PPOConfig(batch_size=8, mini_batch_size=2, ppo_epochs=4, steps=80)
trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
for epoch, batch in tqdm(enumerate(trainer.dataloader)):
    if epoch >= config.total_ppo_epochs:
        break
    query_tensors = batch["input_ids"]
    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=8)
    batch["response"] = tokenizer.batch_decode(response_tensors)
    rewards = [torch.tensor(float(len(r))) for r in batch["response"]]
    stats = trainer.step(query_tensors, response_tensors, rewards)
    if epoch % 5 == 0:
        trainer.save_pretrained(f"out/{epoch}")
"""


@pytest.mark.parametrize(
    "guard",
    [
        "if epoch >= config.total_ppo_epochs:",  # ceil(80 / 8) = 10 batches
        "if epoch >= 10:",
        "if epoch > 9:",
        "if epoch == 10:",
        "if epoch >= 10: break  # ten batches",  # on one line (izaanz/thesis_pipeline_draft)
    ],
)
def test_loop_that_stops_after_n_batches_gets_max_steps(guard):
    old = "if epoch >= config.total_ppo_epochs:"
    src = dedent(STOPS).replace(old + "\n        break", guard) if "break" in guard else None
    src = src or dedent(STOPS).replace(old, guard)
    out, findings = run(src, select=PPO)
    if "#" in guard:  # the guard's comment stays, above train()
        assert "# ten batches\n" in out
    # 10 batches x steps_per_generation 4 (8 // 2) x num_iterations 4 (ppo_epochs) // grad acc 1
    assert "max_steps=160" in out and "num_train_epochs" not in out
    assert "trainer.train()" in out and "for epoch" not in out and "save_pretrained" not in out
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    stop = [f for f in findings if f.message.startswith("the loop stopped after")]
    assert len(stop) == 1 and stop[0].line == 6
    saved = [f for f in findings if "the loop saved the model" in f.message]
    line = 12 if "break" in guard else 13  # the one-line guard is a line shorter
    assert len(saved) == 1 and "`epoch % 5 == 0`" in saved[0].message and saved[0].line == line
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    ("guard", "batches"),
    [
        ("if epoch >= 9:", 10),  # after batch 9 has trained: 0..9
        ("if epoch > 8:", 10),
        ("if epoch == 9:", 10),
        ("if epoch >= n - 1:", None),  # read at run time: `n - 1 + 1` batches
    ],
)
def test_a_guard_after_the_step_counts_the_batch_it_follows(guard, batches):
    # seen in learn2Pro/buddygpt: `if epoch > 100: break` at the end of the loop body, after
    # the step (102 batches)
    src = dedent(STOPS).replace("    if epoch >= config.total_ppo_epochs:\n        break\n", "")
    src = src.replace(
        '    if epoch % 5 == 0:\n        trainer.save_pretrained(f"out/{epoch}")\n',
        f"    {guard}\n        break\n",
    )
    out, findings = run(src, select=PPO)
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    if batches is not None:
        assert f"max_steps={batches * 16}" in out  # x steps_per_generation 4 x num_iterations 4
    else:
        assert "max_steps=" in out and "n - 1 + 1" in out
    stop = [f for f in findings if f.message.startswith("the loop stopped after")]
    assert len(stop) == 1 and stop[0].line == 11
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    "change",
    [
        ("        break\n", "        continue\n"),  # skips, does not stop
        ("enumerate(trainer.dataloader)", "enumerate(trainer.dataloader, 1)"),  # counts from 1
        ("if epoch >= config.total_ppo_epochs:", "if len(batch) >= 3:"),  # not the counter
        ("    if epoch >= config.total_ppo_epochs:\n        break\n", ""),  # (control: no guard)
        (  # between the generation and the step: neither before nor after a whole batch
            '    if epoch >= config.total_ppo_epochs:\n        break\n    query_tensors = batch["input_ids"]\n',
            '    query_tensors = batch["input_ids"]\n    if epoch >= config.total_ppo_epochs:\n        break\n',
        ),
    ],
    ids=["continue", "start", "not-the-counter", "no-guard", "mid-body"],
)
def test_other_early_exits_keep_the_todo(change):
    out, findings = run(dedent(STOPS).replace(*change), select=PPO)
    todos = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    if change[1] == "":
        assert not todos and "num_train_epochs=1" in out and "max_steps" not in out
        return
    assert todos and "for epoch, batch in" in out and "max_steps=" not in out
    assert any("stops early" in f.message for f in todos)


def test_stop_after_batches_with_sizes_read_at_run_time():
    src = (
        dedent(STOPS)
        .replace(
            "PPOConfig(batch_size=8, mini_batch_size=2, ppo_epochs=4, steps=80)",
            "PPOConfig(batch_size=args.bs, mini_batch_size=args.mbs, gradient_accumulation_steps=2)",
        )
        .replace("if epoch >= config.total_ppo_epochs:", "if epoch >= args.batches:")
    )
    out, _ = run(src, select=PPO)
    assert "steps_per_generation=args.bs // args.mbs," in out
    assert "max_steps=args.batches * (args.bs // args.mbs) * 4 // 2)" in out
    assert run(out, select=PPO)[0] == out


# The whole run inside `def main():`, its generation dict and length sampler there too.
IN_MAIN = """
import torch
from trl import PPOConfig, PPOTrainer
from trl.core import LengthSampler
def main():
    config = PPOConfig(batch_size=4, mini_batch_size=2)
    trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
    sampler = LengthSampler(4, 16)
    generation_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True}
    for batch in trainer.dataloader:
        query_tensors = batch["input_ids"]
        response_tensors = trainer.generate(query_tensors, length_sampler=sampler, **generation_kwargs)
        batch["response"] = tokenizer.batch_decode(response_tensors)
        rewards = [torch.tensor(float(len(r))) for r in batch["response"]]
        trainer.step(query_tensors, response_tensors, rewards)
"""


def test_generation_settings_bound_inside_a_function_move_to_the_config():
    out, findings = run(dedent(IN_MAIN), select=PPO)
    assert "max_completion_length=15, top_k=0, top_p=1.0, num_train_epochs=1)" in out
    assert "    trainer.train()\n" in out and "for batch in" not in out
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=PPO)[0] == out


def test_a_generation_dict_another_function_binds_too_is_followed_in_the_loops_function():
    """Each function's `generation_kwargs` is its own local: the loop reads main()'s."""
    src = dedent(IN_MAIN) + 'def other():\n    generation_kwargs = {"top_k": 5}\n'
    out, findings = run(src, select=PPO)
    assert "max_completion_length=15, top_k=0, top_p=1.0, num_train_epochs=1)" in out
    assert "for batch in trainer.dataloader" not in out
    assert not [f for f in findings if f.fix is Fix.MANUAL]


@pytest.mark.parametrize(
    "after",
    [
        pytest.param('    generation_kwargs = {"top_k": 5}\n', id="a-dict"),
        pytest.param("    generation_kwargs = load_settings()\n", id="not-a-dict"),
    ],
)
def test_a_generation_dict_bound_again_below_the_loop_is_read_from_above_it(after):
    """The loop's function binds the name twice, each a statement of its body: the loop reads
    the binding above it, whatever the one below holds."""
    src = dedent(IN_MAIN) + after
    out, findings = run(src, select=PPO)
    assert "max_completion_length=15, top_k=0, top_p=1.0, num_train_epochs=1)" in out
    assert "    trainer.train()\n" in out and out.endswith(after)
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=PPO)[0] == out


TOP_LEVEL = "\n".join(
    line[4:] if line.startswith("    ") else line
    for line in dedent(IN_MAIN).replace("def main():\n", "").splitlines()
)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            TOP_LEVEL.replace("for batch in", "generation_kwargs = load_settings()\nfor batch in"),
            id="the-binding-above-is-not-a-dict",
        ),
        pytest.param(
            TOP_LEVEL.replace(
                "for batch in",
                'if args.greedy:\n    generation_kwargs = {"do_sample": False}\nfor batch in',
            ),
            id="bound-again-in-an-if-above",
        ),
        pytest.param(
            TOP_LEVEL.replace(
                "for batch in",
                'for generation_kwargs in [{"top_k": 1}]:\n    pass\nfor batch in',
            )
            + '\ngeneration_kwargs = {"top_k": 5}\n',
            id="a-loop-target-too",
        ),
        pytest.param(
            TOP_LEVEL.replace(
                "for batch in", "generation_kwargs, seed = load_settings()\nfor batch in"
            )
            + '\ngeneration_kwargs = {"top_k": 5}\n',
            id="unpacked-too",
        ),
        pytest.param(
            TOP_LEVEL.replace("for batch in", 'generation_kwargs["top_k"] = 3\nfor batch in')
            + '\ngeneration_kwargs = {"top_k": 5}\n',
            id="changed-by-key-above",
        ),
        pytest.param(
            TOP_LEVEL.replace("generation_kwargs = {", "settings = {").replace(
                "trainer.step(query_tensors, response_tensors, rewards)",
                "trainer.step(query_tensors, response_tensors, rewards)\n"
                'generation_kwargs = {"top_k": 5}\ngeneration_kwargs = {"top_k": 6}',
            ),
            id="bound-below-the-loop-only",
        ),
        pytest.param(
            TOP_LEVEL + '\ngeneration_kwargs = {"top_k": 5}\n'
            "def other():\n    global generation_kwargs\n    generation_kwargs = {}\n",
            id="global-in-another-function-and-twice",
        ),
        pytest.param(
            # at the top level, and rebound through `global` by another function
            TOP_LEVEL
            + '\ndef other():\n    global generation_kwargs\n    generation_kwargs = {"top_k": 5}\n',
            id="global-in-another-function",
        ),
    ],
)
def test_a_generation_dict_the_loops_scope_may_rebind_is_not_followed(src):
    out, findings = run(src, select=PPO)
    todo = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert any("`**generation_kwargs` is not a dict literal" in f.message for f in todo)
    assert "for batch in trainer.dataloader" in out


# TRL 0.5-0.7's `ppo.py`: the config is a dataclass field's default factory, parsed with
# `tyro.cli`, and handed to a function that reads a field the new config lacks.
FACTORY = """
from dataclasses import dataclass, field

import tyro
from trl import PPOConfig, PPOTrainer


@dataclass
class ScriptArguments:
    ppo_config: PPOConfig = field(
        default_factory=lambda: PPOConfig(
            model_name="gpt2",
            batch_size=4,
            mini_batch_size=2,
        )
    )


args = tyro.cli(ScriptArguments)


def build_dataset(config):
    return load(config.model_name)


dataset = build_dataset(args.ppo_config)
trainer = PPOTrainer(args.ppo_config, model, None, tokenizer, dataset=dataset)
generation_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 16}
for batch in trainer.dataloader:
    query_tensors = batch["input_ids"]
    response_tensors = trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
    batch["response"] = tokenizer.batch_decode(response_tensors)
    rewards = [torch.tensor(float(len(r))) for r in batch["response"]]
    trainer.step(query_tensors, response_tensors, rewards)
"""

FACTORY_AFTER = """
from dataclasses import dataclass, field

import tyro
from trl import RLOOConfig, RLOOTrainer


@dataclass
class ScriptArguments:
    ppo_config: RLOOConfig = field(
        default_factory=lambda: RLOOConfig(
            per_device_train_batch_size=2,
            steps_per_generation=2,
            seed=0,
            learning_rate=1.41e-05,
            beta=0.2,
            num_iterations=4,
            max_grad_norm=0.0,
            gradient_checkpointing=False,
            lr_scheduler_type="constant",
            bf16=False,
            disable_dropout=True,
            top_k=0,
            top_p=1.0,
            max_completion_length=16,
            num_train_epochs=1,
        )
    )


args = tyro.cli(ScriptArguments)


def build_dataset(config):
    return load("gpt2")


# TODO(trl-migrate TRL105): RLOOTrainer reads a "prompt" column (text or chat messages) from `dataset` and tokenizes it itself; PPO read tokenized `input_ids`: keep the text you tokenize as "prompt"
dataset = build_dataset(args.ppo_config)


def reward_fn(prompts, completions, **kwargs) -> list[float]:
    completions = tokenizer.batch_decode(kwargs["completion_ids"])  # as the loop decoded them
    rewards = [torch.tensor(float(len(r))) for r in completions]
    return [float(r) for r in rewards]


trainer = RLOOTrainer(args=args.ppo_config, model=model, processing_class=tokenizer, train_dataset=dataset, reward_funcs=reward_fn)
generation_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 16}
trainer.train()
"""


def test_a_config_built_by_a_dataclass_default_factory_takes_the_generation_settings():
    findings = assert_fixes(dedent(FACTORY), dedent(FACTORY_AFTER), select=PPO)
    assert any(
        f.code == "TRL103" and f.line == 22 and 'its value "gpt2" is used' in f.message
        for f in findings
    )  # `config.model_name` in the function every call hands `args.ppo_config`
    assert any("generation settings moved to `args.ppo_config`" in f.message for f in findings)


@pytest.mark.parametrize(
    ("change", "kept"),
    [
        (("args = tyro.cli(ScriptArguments)", "args = tyro.cli(Other)"), "for batch in"),
        (
            ("dataset = build_dataset(args.ppo_config)", "dataset = build_dataset(other)"),
            "load(config.model_name)",
        ),
    ],
    ids=["parsed-from-another-class", "function-handed-another-object"],
)
def test_a_default_factory_config_not_followed_keeps_the_code(change, kept):
    out, _ = run(dedent(FACTORY).replace(*change), select=PPO)
    assert kept in out
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    ("reward", "pooled"),
    [
        pytest.param(
            "    scores = [float(len(c)) for c in batch['response']]\n"
            "    baseline = sum(scores) / len(scores)\n"
            "    rewards = [torch.tensor(s - baseline) for s in scores]\n",
            "sum(scores)",
            id="mean-baseline",
        ),
        pytest.param(
            "    scores = torch.tensor([float(len(c)) for c in batch['response']])\n"
            "    rewards = list((scores - scores.mean()) / scores.std())\n",
            "scores.mean()",
            id="normalised",
        ),
        pytest.param(
            "    rewards = [torch.tensor(max(len(c), 3) / max(1, 2)) for c in batch['response']]\n",
            None,
            id="per-sample-max",
        ),
        pytest.param(
            "    rewards = []\n"
            "    for c in batch['response']:\n"
            "        rewards.append(torch.tensor(float(min(len(c), 9))))\n",
            None,
            id="per-sample-loop",
        ),
        pytest.param(
            "    rewards = [torch.tensor(logits.softmax(dim=-1).max(dim=-1)) for logits in batch['response']]\n",
            None,
            id="per-sample-axis",
        ),
    ],
)
def test_a_reward_that_pools_the_batch_is_reported(reward, pooled):
    src = dedent(SENTIMENT).replace(
        '    rewards = [torch.tensor(len(c)) for c in batch["response"]]\n', reward
    )
    out, findings = run(src, select=PPO)
    assert "trainer.train()" in out
    said = [f.message for f in findings if "pools the batch" in f.message]
    assert said == (
        [
            f"the reward pools the batch (`{pooled}`): the loop pooled its batch of prompts, one "
            "completion each; TRL 1.13 calls `reward_fn` on a generation batch that holds "
            "`num_generations` completions of each prompt, so the statistic is taken over other "
            "samples"
        ]
        if pooled
        else []
    )
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    ("gen", "left", "severity"),
    [
        pytest.param(
            '"top_k": 0.0, "top_p": 1.0, "temperature": 1.0, "do_sample": True, "max_new_tokens": 8',
            None,
            None,
            id="all-given",
        ),
        pytest.param(
            '"top_p": 1.0, "temperature": 0.7, "do_sample": True, "max_new_tokens": 8',
            "`top_k`",
            "WARNING",
            id="top-k-left",
        ),
        pytest.param(
            '"top_k": 0.0, "top_p": 1.0, "temperature": 1.0, "max_new_tokens": 8',
            "`do_sample`",
            "WARNING",
            id="do-sample-left",
        ),
        pytest.param(
            '"max_new_tokens": 8',
            "`do_sample`, `top_k`, `temperature` and `top_p`",
            "WARNING",
            id="all-sampling-left",
        ),
        # transformers' defaults for these are TRL 1.13's: only a model's own config differs
        pytest.param(
            '"top_k": 0.0, "do_sample": True, "max_new_tokens": 8',
            "`temperature` and `top_p`",
            "INFO",
            id="temperature-left",
        ),
        # transformers' default max_length=20 counted the prompt; 1.13 generates up to 512 new
        pytest.param(
            '"top_k": 0, "top_p": 1.0, "temperature": 1.0, "do_sample": True',
            "`max_new_tokens`",
            "WARNING",
            id="length-left",
        ),
    ],
)
def test_sampling_left_to_the_models_generation_config_is_reported(gen, left, severity):
    """Legacy `generate` fell back on the model's generation config (greedy, top_k=50,
    max_length=20 by transformers' defaults); TRL 1.13 ignores it and samples with its own
    config's values: a change of the run, or (temperature, top_p) one a model's config may make."""
    src = dedent(SENTIMENT).replace(
        '{"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 8, "no_repeat_ngram_size": 3}',
        "{" + gen + "}",
    )
    out, findings = run(src, select=PPO)
    assert "trainer.train()" in out
    said = [f for f in findings if "to the model's generation config" in f.message]
    if left is None:
        assert said == []
    else:
        assert [(f.line, f.severity.name, f.message.split(" to the model")[0]) for f in said] == [
            (7, severity, f"`.generate(...)` left {left}")
        ]
    assert run(out, select=PPO)[0] == out


# The MedicalGPT-style loop (catalogue shape 29): per-query generation decoded into a list, the
# step in a `try:` that only logs, the loop under `if do_train:` below the trainer.
MEDICAL = """
import torch
from trl import PPOConfig, PPOTrainer


def main(do_train=True):
    config = PPOConfig(batch_size=2, mini_batch_size=1)
    trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
    kw = {"max_new_tokens": 8, "top_k": 0, "top_p": 1.0, "do_sample": True}
    if do_train:
        for step, batch in enumerate(trainer.dataloader):
            qs = batch["input_ids"]
            texts = []
            rs = []
            for q in qs:
                r = trainer.generate(q, return_prompt=False, **kw)
                t = tokenizer.batch_decode(r, skip_special_tokens=True)[0]
                texts.append(t)
                rs.append(r.squeeze(0))
            batch["response"] = texts
            rewards = [torch.tensor(float(len(c))) for c in batch["response"]]
            try:
                stats = trainer.step(qs, rs, rewards)
            except ValueError as e:
                print(f"step {step} failed: {e}")
"""


def test_per_query_decode_in_a_guarded_step_under_an_if_is_rewritten():
    out, findings = run(dedent(MEDICAL), select=PPO)
    assert ".step(" not in out and "for q in qs" not in out and "try:" not in out
    assert "    if do_train:\n        trainer.train()\n" in out
    assert (
        "    def reward_fn(prompts, completions, **kwargs) -> list[float]:\n"
        "        texts = completions\n"
        "        rewards = [torch.tensor(float(len(c))) for c in texts]\n"
        "        return [float(r) for r in rewards]\n"
    ) in out
    assert "reward_funcs=reward_fn" in out.split("trainer = RLOOTrainer(", 1)[1].split("\n")[0]
    guard = [f for f in findings if "a `try:` around `trainer.step(...)` caught" in f.message]
    assert len(guard) == 1 and "`ValueError`" in guard[0].message
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    assert run(out, select=PPO)[0] == out


@pytest.mark.parametrize(
    "change",
    [
        # the handler does more than log: the batch's fate is the loop's own logic
        (
            '                print(f"step {step} failed: {e}")',
            "                rewards = [torch.tensor(0.0) for _ in rewards]",
        ),
        # the texts decoded held the prompt too (legacy generate returned it by default)
        ("r = trainer.generate(q, return_prompt=False, **kw)", "r = trainer.generate(q, **kw)"),
        # the decoded texts go nowhere the reward reads as a column
        ("                texts.append(t)\n", ""),
    ],
    ids=["handler-acts", "prompt-returned", "texts-unused"],
)
def test_guard_and_per_query_decode_otherwise_keep_the_todo(change):
    before = dedent(MEDICAL).replace(*change)
    assert before != dedent(MEDICAL)
    out, findings = run(before, select=PPO)
    assert ".step(" in out
    assert [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert run(out, select=PPO)[0] == out


def test_a_loop_under_an_if_whose_trainer_the_block_around_does_not_build_keeps_the_todo():
    built = "    trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)\n"
    before = (
        dedent(MEDICAL)
        .replace(built, "")
        .replace(
            "\n\ndef main(do_train=True):\n    config = PPOConfig(batch_size=2, mini_batch_size=1)\n",
            "\nconfig = PPOConfig(batch_size=2, mini_batch_size=1)\n"
            + built.strip()
            + "\n\n\ndef main(do_train=True):\n",
        )
    )
    assert "\ntrainer = PPOTrainer(" in before
    out, findings = run(before, select=PPO)
    left = [f.message for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert any("`trainer` is not built in the same block as the loop" in m for m in left), left
    assert "reward_fn" not in out.split("# trl-migrate draft")[0].split("TODO")[0]


def test_a_batch_limit_computed_between_config_and_loop_moves_only_when_pure():
    limit = "        total = math.ceil(20 / 2)\n        for step, batch in"
    pure = (
        dedent(MEDICAL)
        .replace("    if do_train:\n", "    if do_train:\n" + "        total = math.ceil(20 / 2)\n")
        .replace(
            "            qs = batch",
            "            if step >= total:\n                break\n            qs = batch",
        )
    )
    out, findings = run("import math\n" + pure, select=PPO)
    assert "max_steps=math.ceil(20 / 2) * 2 * 4" in out and ".step(" not in out
    impure = pure.replace("total = math.ceil(20 / 2)", "total = next_total()")
    out, findings = run("import math\n" + impure, select=PPO)
    left = [f.message for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert any(
        "`total` in the generation settings is set after `config` is built" in m for m in left
    )
    assert limit.split("\n")[0] not in out or ".step(" in out


def test_switching_checkpointing_around_generation_is_dropped_with_a_warning():
    from pathlib import Path

    src = (
        Path(__file__).parents[1] / "fixtures" / "loops" / "30_checkpointing_switched.py"
    ).read_text()
    out, findings = run(src, select=PPO)
    assert "gradient_checkpointing_" not in out and "use_cache" not in out
    assert "num_train_epochs=args.epochs" in out
    (switched,) = [
        f for f in findings if "switched the model's gradient checkpointing" in f.message
    ]
    assert (
        "`model.gradient_checkpointing_disable()`, `model.config.use_cache = True`"
        in switched.message
    )
    # a switch to a value the loop computes is not a mode switch: it stays in the reward code
    kept = src.replace("model.config.use_cache = False", "model.config.use_cache = len(texts) > 1")
    out, _ = run(kept, select=PPO)
    assert "    model.config.use_cache = len(texts) > 1\n" in out.split("def reward_fn", 1)[1]


@pytest.mark.parametrize(
    ("read", "given", "epochs"),
    [
        ("ppo_trainer.config.ppo_epochs", "", "4"),  # PPO's default, which TRL103 pins
        ("ppo_trainer.config.ppo_epochs", "ppo_epochs=2, ", "2"),
        ("config.ppo_epochs", "ppo_epochs=args.passes, ", "args.passes"),
    ],
)
def test_an_epoch_count_read_from_the_ppo_config_is_the_value_the_new_config_gives(
    read, given, epochs
):
    # Pranavbp525/StoryGen: `for epoch in range(trainer.config.ppo_epochs):`; the trainer is
    # built after the config, and RLOOConfig has no `ppo_epochs` (TRL103 renamed it).
    from pathlib import Path

    src = (
        Path(__file__).parents[1] / "fixtures" / "loops" / "30_checkpointing_switched.py"
    ).read_text()
    assert "config = PPOConfig(" in src and "range(args.epochs)" in src
    src = src.replace("range(args.epochs)", f"range({read})")
    src = src.replace("config = PPOConfig(", f"config = PPOConfig({given}")
    out, findings = run(src, select=PPO)
    assert ".step(" not in out and f"num_train_epochs={epochs})" in out, out
    assert f"num_iterations={epochs}," in out


def test_an_epoch_count_read_from_a_config_setting_that_has_no_new_value_keeps_the_todo():
    from pathlib import Path

    src = (
        Path(__file__).parents[1] / "fixtures" / "loops" / "30_checkpointing_switched.py"
    ).read_text()
    src = src.replace("range(args.epochs)", "range(ppo_trainer.config.forward_batch_size)")
    out, findings = run(src, select=PPO)
    left = [f.message for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert ".step(" in out and left


def _query_decode_shape() -> str:
    from pathlib import Path

    return (
        Path(__file__).parents[1] / "fixtures" / "loops" / "31_query_decoded_from_tokens.py"
    ).read_text()


def test_queries_decoded_into_the_batch_are_the_prompt_tokens_decoded_the_same_way():
    src = _query_decode_shape().replace(
        'batch["query"] = tokenizer.batch_decode(query_tensors, skip_special_tokens=True)',
        'batch["query"] = tokenizer.batch_decode(query_tensors, clean_up_tokenization_spaces=False)',
    )
    out, findings = run(src, select=PPO)
    assert (
        '    prompts = tokenizer.batch_decode(tokenizer(text=prompts)["input_ids"], '
        "clean_up_tokenization_spaces=False)  # as the loop decoded its queries\n"
    ) in out
    assert any("decoded its query tokens into" in f.message for f in findings)
    assert run(out, select=PPO)[0] == out


def test_the_query_column_decoded_from_other_tokens_keeps_the_todo():
    src = _query_decode_shape().replace(
        "tokenizer.batch_decode(query_tensors, skip_special_tokens=True)",
        "tokenizer.batch_decode(response_tensors, skip_special_tokens=True)",
        2,
    )
    out, findings = run(src, select=PPO)
    assert ".step(" in out
    assert [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]


@pytest.mark.parametrize(
    ("bounds", "largest"),
    [
        ("4, 9", "max_completion_length=8"),
        ("cfg.min_len, cfg.max_len", "max_completion_length=cfg.max_len - 1"),
    ],
    ids=["ints", "attributes"],
)
def test_a_length_sampler_built_in_the_generate_call_is_read_like_a_bound_one(bounds, largest):
    from pathlib import Path

    src = (Path(__file__).parents[1] / "fixtures" / "loops" / "02_length_sampler.py").read_text()
    inline = src.replace(
        "length_sampler=output_length_sampler", f"length_sampler=LengthSampler({bounds})"
    ).replace("config = PPOConfig(", "cfg = make_cfg()\nconfig = PPOConfig(")
    assert inline != src
    out, findings = run(inline, select=PPO)
    assert ".step(" not in out and largest in out, out
    assert any("drew a random length per sample" in f.message for f in findings)
    assert run(out, select=PPO)[0] == out
    other = inline.replace(f"LengthSampler({bounds})", "LengthSampler(lo + 1, hi)")
    out, findings = run(other, select=PPO)
    assert ".step(" in out and any(
        "is not a LengthSampler(min, max)" in f.message for f in findings
    )


def test_a_trainer_built_in_another_function_than_its_left_loop_gets_the_reward_todo():
    # dukeyuan/finetuning's rl_training.py: one function builds the trainer, another steps it
    before = dedent(
        """
        from trl import PPOConfig, PPOTrainer

        def build(model, tokenizer, ds):
            config = PPOConfig(batch_size=2, mini_batch_size=1)
            trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
            return trainer

        def train(trainer, score):
            for batch in trainer.dataloader:
                stats = trainer.step(batch["q"], batch["r"], score(batch))
        """
    )
    out, findings = run(before, select=PPO)
    todo = (
        "    # TODO(trl-migrate TRL106): RLOOTrainer needs `reward_funcs`: the rewards came from "
        "a PPO loop elsewhere in this file that steps `trainer`, which is left for you (see its "
        "TODO); pass `reward_funcs=reward_fn` here once it is written\n"
        "    trainer = RLOOTrainer("
    )
    assert todo in out
    marked = [f for f in findings if "elsewhere in this file" in f.message]
    assert [(f.line, f.fix) for f in marked] == [(5, Fix.MANUAL)]
    again, found = run(out, select=PPO)
    assert again == out
    assert out.count("elsewhere in this file that steps") == 1


def test_a_loop_whose_config_is_built_in_the_trainer_call_gets_its_settings_there():
    src = dedent(SENTIMENT).replace(
        "config = PPOConfig(batch_size=4, mini_batch_size=2)\n"
        "trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)\n",
        "trainer = PPOTrainer(PPOConfig(batch_size=4, mini_batch_size=2), model, None, tokenizer, dataset=ds)\n",
    )
    out, findings = run(src, select=PPO)
    [config_call] = [line for line in out.splitlines() if "RLOOTrainer(args=RLOOConfig(" in line]
    assert (
        "bf16=False, disable_dropout=True, top_k=0, top_p=1.0, max_completion_length=8, "
        "generation_kwargs="
        "{'no_repeat_ngram_size': 3}, num_train_epochs=1), model=model" in config_call
    )
    assert "reward_funcs=reward_fn" in config_call and ".step(" not in out
    assert [f.message for f in findings if "the PPO loop became" in f.message][0].endswith(
        "generation settings moved to the trainer's `RLOOConfig(...)`"
    )
    assert run(out, select=PPO)[0] == out


ONCE = """
import torch
from trl import PPOConfig, PPOTrainer
trainer = PPOTrainer(PPOConfig(batch_size=1, mini_batch_size=1), model, None, tokenizer)
q = tokenizer.encode("Hello there", return_tensors="pt")
r = trainer.generate(list(q), return_prompt=False, max_new_tokens=8)
SCORE
trainer.step([q[0]], [r[0]], score)
"""


def test_a_step_run_once_becomes_a_one_prompt_dataset_and_train():
    out, findings = run(dedent(ONCE).replace("SCORE", "score = [torch.tensor(1.0)]"), select=PPO)
    assert out.endswith(
        'q = tokenizer.encode("Hello there", return_tensors="pt")\ntrainer.train()\n'
    )
    assert 'train_dataset = Dataset.from_dict({"prompt": ["Hello there"] * 1})\n' in out
    assert "    return [float(score[0])] * len(completions)\n" in out
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    [done] = [f for f in findings if "the PPO loop became" in f.message]
    assert done.line == 7  # the step's line: the rewrite's one-turn loop is not in the file
    assert run(out, select=PPO)[0] == out


def test_a_step_run_once_that_the_rewrite_cannot_follow_keeps_its_todo_and_the_generate():
    # the reward reads the generated tokens: a reward function sees only texts
    src = dedent(ONCE).replace("SCORE", "score = [torch.tensor(float(len(r[0])))]")
    out, findings = run(src, select=PPO)
    manual = sorted((f for f in findings if f.fix is Fix.MANUAL), key=lambda f: f.line)
    assert [f.line for f in manual] == [3, 7]
    assert manual[1].message.startswith(
        "`trainer.step(...)` runs once, outside a loop, and the rewrite cannot follow it (`score "
        "= [torch.tensor(float(len(r[0])))]` reads the query, the response"
    )
    assert "r = trainer.generate(list(q)" in out and ".step(" in out
    assert out.count("# TODO(trl-migrate TRL106)") == 2
    assert run(out, select=PPO)[0] == out


def test_two_steps_outside_loops_are_not_a_step_run_once():
    src = dedent(ONCE).replace("SCORE", "score = [torch.tensor(1.0)]")
    src += "trainer.step([q[0]], [r[0]], score)\n"
    out, findings = run(src, select=PPO)
    assert out.count("sits where the loop rewrite cannot follow it") == 2


def test_a_step_run_once_of_a_trainer_built_elsewhere_keeps_the_todo_it_had():
    src = dedent(
        """
        from trl import PPOTrainer
        class Runner:
            def __init__(self, model, tokenizer, config):
                self.trainer = PPOTrainer(config, model, None, tokenizer)
            def train_step(self, q, r, rewards):
                self.trainer.step(q, r, rewards)
        """
    )
    out, findings = run(src, select=PPO)
    manual = sorted((f.line, f.message[:60]) for f in findings if f.fix is Fix.MANUAL)
    assert manual == [
        (4, "RLOOTrainer needs `reward_funcs`: the rewards came from `sel"),
        (6, "`self.trainer.step(...)` sits where the loop rewrite cannot "),
    ]


@pytest.mark.parametrize(
    ("after", "reason"),
    [
        (
            'samples.append(write_sample(tokenizer, model, f"epoch {epoch}"))',
            "and it reads `epoch` of the loop",
        ),
        ("samples.append(texts[0])", "and it reads `texts` of the loop"),
        ("global samples", "and a callback cannot run it as the loop did"),
        (
            "samples.append(ppo_trainer.generate(q))",
            "and it uses `ppo_trainer`, whose PPO methods the new trainer does not have",
        ),
    ],
)
def test_an_epoch_statement_a_callback_cannot_run_as_the_loop_did_keeps_the_todo(after, reason):
    from pathlib import Path

    src = (
        Path(__file__).parents[1] / "fixtures" / "loops" / "34_epoch_extra_statement.py"
    ).read_text()
    line = '    samples.append(write_sample(tokenizer, model, "Once upon a time"))\n'
    assert line in src
    out, findings = run(src.replace(line, f"    {after}\n"), select=PPO)
    left = [f.message for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert ".step(" in out and "TrainerCallback" not in out.split("# TODO")[0]
    assert any(
        f"the epoch loop around it also runs `{after}` after each pass" in m and reason in m
        for m in left
    ), left


def test_epoch_statements_run_in_a_callback_the_trainer_is_given_beside_none_of_its_own():
    from pathlib import Path

    src = (
        Path(__file__).parents[1] / "fixtures" / "loops" / "34_epoch_extra_statement.py"
    ).read_text()
    before = src.replace(
        "for epoch in range(2):\n",
        "for epoch in range(2):\n    # a fresh sample list\n    samples.clear()\n",
    )
    out, _ = run(before, select=PPO)
    assert (
        "class EachEpoch(TrainerCallback):\n"
        "    # what the PPO loop's epoch loop ran around each pass over the data\n"
        "    def on_epoch_begin(self, args, state, control, **kwargs):\n"
        "        # a fresh sample list\n"
        "        samples.clear()\n"
        "\n"
        "    def on_epoch_end(self, args, state, control, **kwargs):\n"
        '        samples.append(write_sample(tokenizer, model, "Once upon a time"))\n'
    ) in out
    assert "callbacks=[EachEpoch()])" in out and "from transformers import TrainerCallback" in out
    assert run(out, select=PPO)[0] == out
    own = src.replace("dataset=ds)", "dataset=ds, callbacks=[Logger()])")
    assert own != src
    out, findings = run(own, select=PPO)
    left = [f.message for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert ".step(" in out and any("already takes `callbacks=`" in m for m in left), left
    assert "TrainerCallback" not in out  # no import left behind by the refused rewrite


@pytest.mark.parametrize(
    ("again", "rewritten"),
    [
        pytest.param("output_max_length = 16\n", True, id="same-literal"),
        pytest.param("output_max_length = 32\n", False, id="another-literal"),
    ],
)
def test_sampler_bounds_set_again_to_the_same_literal_are_one_value(again, rewritten):
    # seen in DhanushGD/RLHF-PPO: two cells of a notebook each set `output_max_length = 400`;
    # every read sees that value, so the sampler's bounds are known
    before = dedent(PER_QUERY).replace(
        "output_length_sampler = LengthSampler(", again + "output_length_sampler = LengthSampler("
    )
    out, findings = run(before, select=PPO)
    todos = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert bool(todos) is not rewritten
    assert ("max_completion_length=15" in out) is rewritten
    assert run(out, select=PPO)[0] == out


def test_a_step_run_once_on_the_readmes_list_comprehension_of_the_query_rows():
    # TRL 0.7-0.11's README quickstart (seen in NomanTrips/verify_step_by_step):
    # `ppo_trainer.generate([item for item in query_tensor], return_prompt=False, ...)`
    src = dedent(ONCE).replace("SCORE", "score = [torch.tensor(1.0)]")
    reference, _ = run(src, select=PPO)
    out, findings = run(src.replace("list(q)", "[item for item in q]"), select=PPO)
    assert out == reference
    assert not [f for f in findings if f.fix is Fix.MANUAL]
    filtered = src.replace("list(q)", "[item for item in q if item is not None]")
    assert ".step(" in run(filtered, select=PPO)[0]  # not every row: left with its TODO


SAMPLER_IN_MAIN = (
    Path(__file__).resolve().parents[1] / "fixtures" / "loops" / "38_sampler_bounds_in_main.py"
).read_text()


@pytest.mark.parametrize(
    ("change", "rewritten"),
    [
        pytest.param(None, True, id="bound-once-above"),
        pytest.param(("def main():", "def main(output_max_length=9):"), False, id="a-parameter"),
        pytest.param(
            (
                "    output_min_length = 4\n",
                "    for output_min_length in (4,):\n        pass\n    output_min_length = 4\n",
            ),
            False,
            id="a-loop-target-too",
        ),
        pytest.param(
            (
                "    output_max_length = 9\n    output_length_sampler = LengthSampler(output_min_length, output_max_length)\n",
                "    output_length_sampler = LengthSampler(output_min_length, output_max_length)\n    output_max_length = 9\n",
            ),
            False,
            id="bound-below-the-sampler",
        ),
        pytest.param(
            ("    output_max_length = 9\n", "    output_max_length = 9.5\n"), False, id="not-an-int"
        ),
        pytest.param(
            ("    output_max_length = 9\n", "    output_max_length = n_max\n"), False, id="a-name"
        ),
    ],
)
def test_sampler_bounds_a_function_binds_once_to_ints(change, rewritten):
    # seen in AbdullahVanlioglu/Imperialist-AI-Agents: `output_min_length = 4` and
    # `output_max_length = 16` bound where the sampler is, not at the top level
    src = SAMPLER_IN_MAIN if change is None else SAMPLER_IN_MAIN.replace(*change)
    assert change is None or src != SAMPLER_IN_MAIN
    out, findings = run(src, select=PPO)
    todos = [f.message for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert bool(todos) is not rewritten, todos
    assert ("max_completion_length=8" in out) is rewritten
    if not rewritten:
        assert "whose bounds are ints or attributes" in todos[0]
    assert run(out, select=PPO)[0] == out


def test_a_generation_dict_name_a_def_also_binds_is_not_followed():
    src = TOP_LEVEL + '\ngeneration_kwargs = {"top_k": 5}\ndef generation_kwargs():\n    pass\n'
    out, findings = run(src, select=PPO)
    todo = [f for f in findings if f.fix is Fix.MANUAL and f.code == "TRL106"]
    assert any("`**generation_kwargs` is not a dict literal" in f.message for f in todo)


def test_an_eos_token_that_kept_generation_going_is_kept_and_its_cut_said():
    """TRL's toxicity example passes `eos_token_id=100_000` so that generation runs past the
    end-of-sequence token, and PPO trained on every token generated; TRL 1.13 generates as far
    but cuts each completion at its first end-of-sequence token for the reward and the loss."""
    src = dedent(SENTIMENT).replace(
        '"max_new_tokens": 8,', '"max_new_tokens": 8, "eos_token_id": 100_000,'
    )
    out, findings = run(src, select=PPO)
    assert "generation_kwargs={'eos_token_id': 100_000, 'no_repeat_ngram_size': 3}" in out
    [said] = [f for f in findings if f.message.startswith("`eos_token_id=100_000` kept")]
    assert (said.line, said.severity.name) == (4, "WARNING")
    assert "cuts each completion at its first end-of-sequence token" in said.message
    assert run(out, select=PPO)[0] == out
    # the tokenizer's own token is what TRL 1.13 stops on anyway: dropped, nothing said
    same = src.replace("100_000", "tokenizer.eos_token_id")
    out, findings = run(same, select=PPO)
    config = next(line for line in out.splitlines() if line.startswith("config = "))
    assert (
        "eos_token_id" not in config and "generation_kwargs={'no_repeat_ngram_size': 3}" in config
    )
    assert not [f for f in findings if f.message.startswith("`eos_token_id=")]


@pytest.mark.parametrize(
    ("extra", "rewritten"),
    [
        pytest.param('"max_length": 64', False, id="total-cap-alone"),
        # with max_new_tokens, transformers ignored max_length, as TRL 1.13 will
        pytest.param('"max_length": 64, "max_new_tokens": 8', True, id="with-new-tokens"),
    ],
)
def test_a_max_length_that_capped_prompt_and_response_keeps_the_todo(extra, rewritten):
    src = dedent(SENTIMENT).replace('"max_new_tokens": 8,', extra + ",")
    out, findings = run(src, select=PPO)
    assert ("\ntrainer.train()\n" in out) is rewritten
    if not rewritten:
        [todo] = [f for f in findings if "was left as it is" in f.message]
        assert "`max_length=64` capped the prompt and the response together" in todo.message
    else:  # the dict stays as it was; the config does not take the key
        assert "'max_length'" not in out and "max_length=" not in out
    assert run(out, select=PPO)[0] == out


TWO_LEFT = """
from trl import PPOConfig, PPOTrainer
config = PPOConfig(batch_size=2, mini_batch_size=1)
trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
for epoch, batch in enumerate(trainer.dataloader):
    q = batch["input_ids"]
    r = trainer.generate(q, return_prompt=False, max_new_tokens=8)
    batch["response"] = tokenizer.batch_decode(r)
    stats = trainer.step(q, r, [torch.tensor(epoch)] * len(q))
for batch in trainer.dataloader:
    q = batch["input_ids"]
    r = trainer.generate(q, return_prompt=False, max_new_tokens=8)
    batch["response"] = tokenizer.batch_decode(r)
    stats = trainer.step(q, r, [torch.tensor(1.0)] * len(q))
"""


def test_a_second_loop_below_a_left_one_gets_its_own_todo():
    """Two loops of one block on one trainer, the first left (its reward reads the counter):
    before, the second got no TODO at all; now each says why, and a second run agrees."""
    out, findings = run(TWO_LEFT, select=PPO)
    left = [f for f in findings if f.code == "TRL106" and f.fix is Fix.MANUAL]
    reasons = [
        f.message.split("left as it is (", 1)[1].split("); write", 1)[0]
        for f in left
        if "left as it is" in f.message
    ]
    assert reasons == [
        "the reward reads the loop counter `epoch`, which `reward_fn` does not have",
        "a PPO loop above it in this block, left for you too, comes first: the rewrite turns "
        "one loop per trainer into `reward_funcs` and `train()`, so once that one is written "
        "this one needs a trainer of its own",
    ]
    assert [f.line for f in left if "left as it is" in f.message] == [5, 10]
    assert out.count("# TODO(trl-migrate TRL106)") == 3  # the two loops and the trainer
    again, _ = run(out, select=PPO)
    assert again == out


@pytest.mark.parametrize(
    "head",
    [
        pytest.param("for _ in trange(1, 4):", id="trange-start-stop"),
        pytest.param("for _ in tqdm(range(1, 4)):", id="tqdm-range-start-stop"),
    ],
)
def test_a_range_with_a_start_is_not_a_count_of_batches(head):
    src = dedent(
        f"""
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(batch_size=1, mini_batch_size=1)
        trainer = PPOTrainer(config, model, None, tokenizer)
        query = tokenizer.encode("hi", return_tensors="pt")
        {head}
            response = trainer.generate(list(query), return_prompt=False, max_new_tokens=4)
            stats = trainer.step([query[0]], [response[0]], [torch.tensor(1.0)])
        """
    )
    out, findings = run(src, select=PPO)
    assert "trainer.step(" in out
    assert any(
        "it iterates over neither `trainer.dataloader` nor `range(<n>)`" in f.message
        for f in findings
        if f.code == "TRL106"
    )


def test_a_progress_bar_around_another_loop_keeps_the_dataloader_todo():
    """The `with tqdm(...) as bar:` of a loop that never steps is no PPO loop: TRL104's TODO on
    the legacy dataloader stays, and TRL106 leaves it alone."""
    src = dedent(
        """
        from trl import PPOConfig, PPOTrainer
        config = PPOConfig(batch_size=1, mini_batch_size=1)
        trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
        with tqdm(trainer.dataloader) as bar:
            for batch in bar:
                print(batch["query"])
        """
    )
    out, findings = run(src, select=PPO)
    manual = [f.message for f in findings if f.fix is Fix.MANUAL]
    assert [f.code for f in findings if f.fix is Fix.MANUAL] == ["TRL104", "TRL104"]
    assert manual[0].startswith("RLOOTrainer needs `reward_funcs`: legacy PPO got rewards")
    assert "`trainer.dataloader` was the legacy trainer's own DataLoader" in out
    assert "with tqdm(trainer.dataloader) as bar:\n    for batch in bar:" in out


def test_a_trainer_given_a_reward_model_is_not_taken_by_a_loop_above():
    """A trainer built with `reward_model=` (`reward_funcs=` now, as Yog-Sotho/LLM-fine-tuner
    mixes it with a legacy loop) and stepped by the block's first loop: that loop's own reason
    is given, not that another loop took the trainer."""
    src = (
        TWO_LEFT.split("for batch in")[0]
        .replace("mini_batch_size=1)", 'mini_batch_size=1, report_to="none")')
        .replace(
            "PPOTrainer(config, model, None, tokenizer, dataset=ds)",
            "PPOTrainer(config=config, model=model, ref_model=None, reward_model=rm, tokenizer=tokenizer)",
        )
    )
    out, findings = run(src, select=PPO)
    reasons = [f.message for f in findings if f.code == "TRL106" and "left as it is" in f.message]
    assert len(reasons) == 1
    assert "the reward reads the loop counter `epoch`" in reasons[0]
    assert "reward_funcs=rm" in out


LATER_WRAPPED = """
import torch
from tqdm import tqdm
from trl import PPOConfig, PPOTrainer

config = PPOConfig(batch_size=2, mini_batch_size=1)
ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
generation_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 8}

for batch in ppo_trainer.dataloader:
    query_tensors = batch["input_ids"]
    response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
    batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
    rewards = [torch.tensor(float(len(r))) for r in batch["response"]]
    stats = ppo_trainer.step(query_tensors, response_tensors, rewards)

with tqdm(ppo_trainer.dataloader) as bar:
    for batch in bar:
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
        batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
        rewards = [torch.tensor(-float(len(r))) for r in batch["response"]]
        stats = ppo_trainer.step(query_tensors, response_tensors, rewards)

if do_more:
    for batch in ppo_trainer.dataloader:
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
        batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
        rewards = [torch.tensor(2.0) for r in batch["response"]]
        stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
"""


def test_later_loops_in_a_bar_or_an_if_get_their_todo_where_a_second_run_puts_it():
    """A loop below the rewritten one, inside a progress-bar `with` or an `if` of the block:
    its TODO goes on the loop itself, where a second run (which meets it first) puts it too."""
    out, findings = run(LATER_WRAPPED, select=PPO)
    assert run(out, select=PPO)[0] == out
    left = [f.line for f in findings if f.code == "TRL106" and "left as it is" in f.message]
    assert left == [18, 26]  # the two inner `for` lines
    assert "with tqdm(ppo_trainer.dataloader) as bar:\n    # TODO(trl-migrate TRL106)" in out
    assert "if do_more:\n    # TODO(trl-migrate TRL106)" in out


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        pytest.param(
            # YangRui2015/RiC: each response cut to its cleaned text's token count before
            # step(); the TODO said the reward "carries `response_tensors` from one batch to the
            # next", which it does not (generate binds it in every batch)
            '    batch["response"] = tokenizer.batch_decode(r)\n',
            '    batch["response"] = tokenizer.batch_decode(r)\n'
            '    r = [r[j][: len(batch["response"][j])] for j in range(len(r))]\n',
            'it changes the responses after generating them (`r = [r[j][: len(batch["response"]'
            "[j])] for j in range(len(r))]`) and trains on those; RLOO/GRPO train on the "
            "completions they generate",
            id="responses-cut-after-generating",
        ),
        pytest.param(
            # JAGADISHSUNILPEDNEKAR/RLHF-training-pipeline: `for step in
            # range(config.ppo_steps)`; the TODO said it iterated over neither the dataloader
            # nor `range(<n>)`
            "for batch in tqdm(trainer.dataloader):\n",
            "for step in range(cfg.ppo_steps):\n",
            "it iterates over `range(cfg.ppo_steps)`, whose count is neither a number nor a name",
            id="range-of-an-attribute",
        ),
        pytest.param(
            # Bit-numeval/NumEval: `response_tensors = []`, then `while len(response_tensors)
            # == 0:` around the generate call
            "    r = trainer.generate(q, return_prompt=False, **gen_kwargs)\n",
            "    r = []\n    # until it says something\n    while len(r) == 0:\n"
            "        r = trainer.generate(q, return_prompt=False, **gen_kwargs)\n",
            "it generates the responses inside `while len(r) == 0:`, which the rewrite cannot "
            "follow",
            id="generated-in-a-retry-loop",
        ),
    ],
)
def test_a_left_loop_s_todo_names_its_real_reason(old, new, reason):
    src = SENTIMENT.replace(old, new)
    assert src != SENTIMENT
    out, findings = run(src, select=PPO)
    [left] = [f for f in findings if "left as it is" in f.message]
    assert left.message.split("left as it is (", 1)[1].split("); write", 1)[0] == reason
    assert run(out, select=PPO)[0] == out
