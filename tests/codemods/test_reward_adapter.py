"""TRL102 + TRL106 on a value-head model built with `reward_adapter=` (TRL's multi-adapter
example): the model gets its reward adapter back as `X.compute_reward_score`, a RewardAdapter
written into the file, and the loop that scores with it becomes `reward_fn`. The written class
gives the numbers trl 0.11.4's own `add_and_load_reward_modeling_adapter` + `compute_reward_score`
gave (run from the wheel's source on the same tiny models)."""

from __future__ import annotations

import ast
import copy
import textwrap

import pytest

from codemods import inline
from codemods.rules.value_heads.tables import ADAPTER_PATH
from tests import old_wheels
from tests.codemods.helpers import assert_fixes, dedent, run

HELPER = inline.lookup(ADAPTER_PATH) or ""
WRITTEN = HELPER.replace("__NAME__", "RewardAdapter")

BUILT = dedent(
    """
    from trl import AutoModelForCausalLMWithValueHead

    model = AutoModelForCausalLMWithValueHead.from_pretrained(
        name,
        peft_config=lora_config,
        reward_adapter=script_args.rm_adapter,
    )
    """
)


def test_the_adapter_comes_back_as_compute_reward_score():
    after = (
        "from transformers import AutoModelForCausalLM\n"
        "from peft import get_peft_model\n\n\n"
        + WRITTEN
        + "\n\nmodel = get_peft_model(AutoModelForCausalLM.from_pretrained(\n"
        "    name,\n"
        "), lora_config)\n"
        "model.compute_reward_score = RewardAdapter(model, script_args.rm_adapter)\n"
    )
    findings = assert_fixes(BUILT, after, select=("TRL102",))
    adapter = [f for f in findings if "reward_adapter=" in f.message]
    assert len(adapter) == 1 and adapter[0].line == 6
    assert "TODO" not in after


def test_an_adapter_name_is_kept():
    src = BUILT.replace(
        "reward_adapter=script_args.rm_adapter,",
        'reward_adapter=script_args.rm_adapter,\n    reward_adapter_name="rm",',
    )
    out, _ = run(src, select=("TRL102",))
    assert (
        'model.compute_reward_score = RewardAdapter(model, script_args.rm_adapter, adapter_name="rm")'
        in out
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ((",\n    peft_config=lora_config", ""), "no peft_config: not a PeftModel"),
        (("model = Auto", "models[0] = Auto"), "not a plain `X = ...` line"),
        (("peft_config=lora_config", "peft_config=None"), "peft_config None"),
    ],
)
def test_what_is_not_certain_keeps_its_todo(change, why):
    src = BUILT.replace(*change)
    out, findings = run(src, select=("TRL102",))
    assert "RewardAdapter" not in out, why
    assert "TODO(trl-migrate TRL102): `reward_adapter=script_args.rm_adapter` was dropped" in out


def test_a_name_of_the_users_own_keeps_its_todo():
    src = BUILT + "\n\nclass RewardAdapter:\n    pass\n"
    out, _ = run(src, select=("TRL102",))
    assert "compute_reward_score" not in out and "TODO(trl-migrate TRL102)" in out


LOOP = BUILT.replace("from trl import", "from trl import PPOConfig, PPOTrainer,") + dedent(
    """
    config = PPOConfig(batch_size=2, mini_batch_size=1)
    ppo_trainer = PPOTrainer(config, model, None, tokenizer, dataset=ds)
    generation_kwargs = {"top_k": 0.0, "top_p": 1.0, "do_sample": True, "max_new_tokens": 8}

    for batch in ppo_trainer.dataloader:
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(query_tensors, return_prompt=False, **generation_kwargs)
        batch["response"] = tokenizer.batch_decode(response_tensors, skip_special_tokens=True)
        texts = [q + r for q, r in zip(batch["query"], batch["response"])]
        inputs = tokenizer(texts, padding=True, return_tensors="pt").to(ppo_trainer.accelerator.device)
        raw_rewards = ppo_trainer.accelerator.unwrap_model(ppo_trainer.model).compute_reward_score(**inputs)
        rewards = [raw_rewards[i, -1, 1] for i in range(len(raw_rewards))]
        stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
    """
)


def test_the_loop_scoring_with_it_becomes_reward_fn():
    out, findings = run(LOOP)
    assert "TODO(trl-migrate TRL106)" not in out, out
    tree = ast.parse(out)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "reward_fn")
    body = ast.unparse(fn)
    assert "ppo_trainer.accelerator.unwrap_model(ppo_trainer.model).compute_reward_score" in body
    assert "zip(prompts, completions)" in body
    assert run(out)[0] == out


def test_a_reward_adapter_nobody_attached_keeps_the_loop_todo():
    src = LOOP.replace(",\n    reward_adapter=script_args.rm_adapter", "")
    out, _ = run(src)
    assert "TODO(trl-migrate TRL106)" in out
    assert "the reward comes from the policy's own reward adapter" in out


def test_the_trainer_is_still_read_only_through_accelerator_and_its_policy():
    src = LOOP.replace(
        "rewards = [raw_rewards[i, -1, 1] for i in range(len(raw_rewards))]",
        "rewards = [raw_rewards[i, -1, 1] * ppo_trainer.kl_ctl.value for i in range(2)]",
    )
    out, _ = run(src)
    assert "TODO(trl-migrate TRL106)" in out


# -- the same scores as TRL 0.11.4's own code ------------------------------------------------


def _old_methods() -> dict[str, str]:
    try:
        text = old_wheels.member("0.11.4", "trl/models/modeling_base.py")
    except LookupError as why:
        pytest.skip(str(why))
    cls = next(
        n
        for n in ast.parse(text).body
        if isinstance(n, ast.ClassDef) and n.name == "PreTrainedModelWrapper"
    )
    return {
        n.name: textwrap.dedent(ast.get_source_segment(text, n, padded=True) or "")
        for n in cls.body
        if isinstance(n, ast.FunctionDef)
        and n.name in ("add_and_load_reward_modeling_adapter", "compute_reward_score")
    }


def test_the_written_class_scores_as_trl_0_11_did(tmp_path):
    torch = pytest.importorskip("torch")
    peft = pytest.importorskip("peft")
    from safetensors.torch import load_file

    from migrate.reference import tiny

    base = tiny.tiny_causal_lm()
    lora = peft.LoraConfig(
        task_type="CAUSAL_LM", r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False
    )
    torch.manual_seed(1)
    policy = peft.get_peft_model(copy.deepcopy(base), lora)
    twin = copy.deepcopy(policy)
    rm = tiny.tiny_seq_classifier(2)
    rm.load_state_dict(base.state_dict(), strict=False)  # the same backbone, its own head
    torch.manual_seed(2)
    rm_lora = peft.LoraConfig(
        task_type="SEQ_CLS", r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False
    )
    peft.get_peft_model(rm, rm_lora).save_pretrained(tmp_path / "rm")
    ids = torch.tensor([[5, 9, 14, 30, 7], [3, 8, 21, 2, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]])

    space: dict = {}
    exec(WRITTEN, space)
    policy.train()
    ours = space["RewardAdapter"](policy, str(tmp_path / "rm"))
    got = ours(input_ids=ids, attention_mask=mask)
    assert policy.training and policy.active_adapter == "default"
    assert not any(p.requires_grad for n, p in policy.named_parameters() if "reward_adapter" in n)
    assert any(p.requires_grad for n, p in policy.named_parameters() if ".default." in n)

    def offline(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("offline")

    old = _old_methods()
    namespace = {
        "os": __import__("os"),
        "torch": torch,
        "nn": torch.nn,
        "safe_load_file": load_file,
        "hf_hub_download": offline,
    }
    exec(old["add_and_load_reward_modeling_adapter"], namespace)
    exec(old["compute_reward_score"], namespace)

    class Wrapper:
        supported_rm_modules = ("score",)
        _get_current_device = classmethod(lambda cls: "cpu")
        add_and_load = classmethod(namespace["add_and_load_reward_modeling_adapter"])
        compute_reward_score = namespace["compute_reward_score"]

    wrapper = Wrapper()
    wrapper.pretrained_model = twin
    wrapper.supports_rm_adapter = True
    wrapper.rm_adapter_name, wrapper.policy_adapter_name = "reward_adapter", "default"
    wrapper.score = Wrapper.add_and_load(twin, str(tmp_path / "rm"), "reward_adapter")
    want = wrapper.compute_reward_score(input_ids=ids, attention_mask=mask)

    assert want.shape == got.shape == (2, 5, 2)
    assert torch.allclose(got, want, atol=1e-6, rtol=0)
    assert got.abs().sum() > 0  # a real score, not zeros from an untrained head
