"""Defects seen in rewrites of public PPO repositories (issue #14's review, 2026-12-02), one
test each, on our own minimal re-creations: the rewrite compiles, keeps behaviour, or says what
changed. Each also checks a second run changes nothing."""

from __future__ import annotations

import pytest

from migrate.kernel.findings import Fix
from tests.codemods.helpers import dedent, run

LOOP_HEAD = """
from trl import PPOConfig, PPOTrainer

config = PPOConfig(batch_size=8, mini_batch_size=4)
trainer = PPOTrainer(config, model, ref_model, tok, dataset=ds)
"""


def _fixed(src: str) -> tuple[str, list]:
    out, findings = run(dedent(src))
    assert run(out)[0] == out
    compile(out, "t.py", "exec")  # what ast.parse alone does not check (`break` outside a loop)
    return out, findings


def _manual(findings: list, words: str) -> list:
    return [f for f in findings if f.fix is Fix.MANUAL and words in f.message]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param(
            "for step, batch in enumerate(trainer.dataloader):\n"
            "    if converged():\n"  # (a stop after N batches is max_steps: test_ppo_loop)
            "        break\n",
            "it stops early (`break`)",
            id="break",
        ),
        pytest.param(
            "baseline = 0.0\nfor batch in trainer.dataloader:\n",
            "carries `baseline`",
            id="carried-state",
        ),
        pytest.param(
            "for epoch, batch in enumerate(trainer.dataloader):\n",
            "loop counter `epoch`",
            id="loop-counter",
        ),
    ],
)
def test_a_loop_whose_reward_cannot_live_in_reward_fn_is_left_with_a_todo(body, why):
    reward = {
        "carried-state": '    raw = [score(r) for r in batch["response"]]\n'
        "    baseline = 0.9 * baseline + 0.1 * sum(raw)\n"
        "    rewards = [torch.tensor(x - baseline) for x in raw]\n",
        "loop-counter": '    rewards = [torch.tensor(score(r) * 0.99**epoch) for r in batch["response"]]\n',
    }
    kind = "carried-state" if "baseline" in body else "loop-counter" if "epoch" in body else "break"
    src = (
        LOOP_HEAD
        + body
        + (
            '    query_tensors = batch["input_ids"]\n'
            "    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=16)\n"
            '    batch["response"] = tok.batch_decode(response_tensors)\n'
            + reward.get(
                kind, '    rewards = [torch.tensor(score(r)) for r in batch["response"]]\n'
            )
            + "    trainer.step(query_tensors, response_tensors, rewards)\n"
        )
    )
    out, findings = _fixed(src)
    assert "\ndef reward_fn" not in out  # the TODO names it; no function was written
    assert _manual(findings, why)


def test_a_step_inside_an_if_gets_a_todo():
    out, findings = _fixed(
        LOOP_HEAD + "qs, rs, ws = [], [], []\n"
        "for text in texts:\n"
        "    qs.append(q(text)); rs.append(r(text)); ws.append(w(text))\n"
        "    if len(qs) == 2:\n"
        "        trainer.step(qs, rs, ws)\n"
    )
    assert _manual(findings, "sits where the loop rewrite cannot follow it")
    # ... and the trainer, which TRL 1.13 refuses to build without a reward, says why
    trainer_todo = _manual(findings, "the rewards came from `trainer.step(...)`")
    assert len(trainer_todo) == 1 and trainer_todo[0].line == 4


def test_reading_a_prompt_column_does_not_hide_the_missing_one():
    out, findings = _fixed(
        """
        from trl import PPOConfig, PPOTrainer
        # the "prompt" column is tokenized below
        def tokenize(element):
            return {"input_ids": tok(element["prompt"], padding=False)["input_ids"], "n": 1}
        train = raw.map(tokenize, remove_columns=raw.column_names)
        args = PPOConfig(output_dir="out")
        trainer = PPOTrainer(args=args, processing_class=tok, model=policy, reward_model=rm, value_model=vm, train_dataset=train)
        """
    )
    assert _manual(findings, 'reads a "prompt" column')


def test_legacy_steps_do_not_become_max_steps():
    out, findings = _fixed(
        LOOP_HEAD.replace("PPOConfig(", "PPOConfig(steps=20000, ")
        + "for batch in trainer.dataloader:\n"
        '    query_tensors = batch["input_ids"]\n'
        "    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=16)\n"
        '    batch["response"] = tok.batch_decode(response_tensors)\n'
        '    rewards = [torch.tensor(score(r)) for r in batch["response"]]\n'
        "    trainer.step(query_tensors, response_tensors, rewards)\n"
    )
    assert "max_steps" not in out and "num_train_epochs=1" in out
    assert any("`steps=20000` was dropped" in f.message for f in findings)


@pytest.mark.parametrize(
    ("kwargs", "kept"),
    [
        pytest.param('"min_length": 24, "max_new_tokens": 32', "'min_length': 24", id="min-length"),
        pytest.param(
            '"eos_token_id": [tok.eos_token_id, 198], "max_new_tokens": 32',
            "'eos_token_id': [tok.eos_token_id, 198]",
            id="extra-stop-token",
        ),
    ],
)
def test_generation_settings_other_than_trls_own_are_kept(kwargs, kept):
    out, _ = _fixed(
        LOOP_HEAD + f"gen_kwargs = {{{kwargs}}}\n"
        "for batch in trainer.dataloader:\n"
        '    query_tensors = batch["input_ids"]\n'
        "    response_tensors = trainer.generate(query_tensors, return_prompt=False, **gen_kwargs)\n"
        '    batch["response"] = tok.batch_decode(response_tensors)\n'
        '    rewards = [torch.tensor(score(r)) for r in batch["response"]]\n'
        "    trainer.step(query_tensors, response_tensors, rewards)\n"
    )
    assert f"generation_kwargs={{{kept}}}" in out


def test_greedy_generation_is_a_todo():
    out, findings = _fixed(
        LOOP_HEAD + "for batch in trainer.dataloader:\n"
        '    query_tensors = batch["input_ids"]\n'
        "    response_tensors = trainer.generate(query_tensors, do_sample=False, max_new_tokens=8)\n"
        '    batch["response"] = tok.batch_decode(response_tensors)\n'
        '    rewards = [torch.tensor(score(r)) for r in batch["response"]]\n'
        "    trainer.step(query_tensors, response_tensors, rewards)\n"
    )
    assert _manual(findings, "`do_sample=False` (greedy)")


def test_v2_step_intervals_are_scaled_to_optimizer_steps():
    out, findings = _fixed(
        """
        from trl import PPOConfig
        args = PPOConfig(output_dir="out", total_episodes=64000, per_device_train_batch_size=16, gradient_accumulation_steps=4, num_ppo_epochs=4, warmup_steps=100, save_steps=200, eval_strategy="steps", eval_steps=50)
        """
    )
    assert "max_steps=4000" in out
    assert "warmup_steps=400" in out and "save_steps=800" in out and "eval_steps=200" in out
    assert any("`logging_steps` left at their defaults" in f.message for f in findings)


def test_is_trainable_is_a_todo_not_a_silent_drop():
    out, findings = _fixed(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("./adapter", is_trainable=True)
        """
    )
    assert 'AutoModelForCausalLM.from_pretrained("./adapter")' in out
    assert _manual(findings, "AutoPeftModelForCausalLM")


@pytest.mark.parametrize(
    ("params", "todo"),
    [
        pytest.param(
            '{"torch_dtype": torch.bfloat16, "load_in_8bit": False}', True, id="wrapper-key"
        ),
        pytest.param('{"torch_dtype": torch.bfloat16}', False, id="plain-keys"),
    ],
)
def test_unpacked_kwargs_that_may_hold_wrapper_keys_get_a_todo(params, todo):
    out, findings = _fixed(
        f"""
        import torch
        from trl import AutoModelForCausalLMWithValueHead
        model_params = {params}
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", **model_params)
        """
    )
    assert 'AutoModelForCausalLM.from_pretrained("gpt2", **model_params)' in out
    assert bool(_manual(findings, "**model_params` may hold")) is todo


def test_a_write_to_current_device_is_a_todo():
    out, findings = _fixed(
        """
        from trl import AutoModelForCausalLMWithValueHead
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        model.current_device = 0
        x = model.current_device
        """
    )
    assert "model.current_device = 0\n" in out and "x = model.device\n" in out
    assert _manual(findings, "cannot be set")


def test_query_read_elsewhere_stays_beside_the_new_prompt_column():
    out, _ = _fixed(
        """
        from trl import PPOConfig, PPOTrainer
        def tokenize(sample):
            sample["input_ids"] = tokenizer.encode(sample["review"])
            sample["query"] = tokenizer.decode(sample["input_ids"])
            return sample
        ds = ds.map(tokenize, batched=False)
        def collator(data):
            return {"q": [d["query"] for d in data]}
        trainer = PPOTrainer(PPOConfig(batch_size=4, mini_batch_size=4), model, None, tokenizer, dataset=ds, data_collator=collator)
        """
    )
    assert 'sample["query"] = sample["prompt"] = tokenizer.decode(sample["input_ids"])' in out


def test_single_quoted_batch_columns_are_the_same_columns():
    src = LOOP_HEAD + (
        "for batch in trainer.dataloader:\n"
        "    query_tensors = batch['input_ids']\n"
        "    response_tensors = trainer.generate(query_tensors, return_prompt=False, max_new_tokens=16)\n"
        "    batch['response'] = tok.batch_decode(response_tensors)\n"
        "    texts = [q + r for q, r in zip(batch['query'], batch['response'])]\n"
        "    rewards = [torch.tensor(score(t)) for t in texts]\n"
        "    trainer.step(query_tensors, response_tensors, rewards)\n"
    )
    out, _ = _fixed(src)
    assert "    texts = [q + r for q, r in zip(prompts, completions)]\n" in out


def test_a_reference_loaded_from_another_checkpoint_is_a_todo():
    out, findings = _fixed(
        """
        from transformers import AutoModelForCausalLM
        from trl import PPOConfig, PPOTrainer
        ref_policy = AutoModelForCausalLM.from_pretrained("org/sft")
        policy = AutoModelForCausalLM.from_pretrained("ckpt/epoch_3")
        args = PPOConfig(output_dir="out", kl_coef=0.05)
        trainer = PPOTrainer(args=args, processing_class=tok, model=policy, ref_model=ref_policy, reward_model=rm, value_model=vm, train_dataset=ds)
        """
    )
    todo = _manual(findings, "the KL would pull toward")
    assert len(todo) == 1 and '"org/sft"' in todo[0].message


def test_a_value_head_model_moved_to_a_device_is_still_followed():
    out, _ = _fixed(
        """
        from trl import AutoModelForCausalLMWithValueHead
        ref = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2").to("cuda")
        print(ref.pretrained_model.config)
        """
    )
    assert "print(ref.config)" in out


def test_the_base_constructor_called_from_a_subclass_is_a_todo_not_a_rename():
    out, findings = _fixed(
        """
        from trl import PPOTrainer
        class MyTrainer(PPOTrainer):
            def __init__(self, config, model, tok, ds):
                PPOTrainer.__init__(self, config=config, model=model, tokenizer=tok, dataset=ds)
        """
    )
    assert "        PPOTrainer.__init__(self, config=config" in out
    assert _manual(findings, "own method with PPO's arguments")
