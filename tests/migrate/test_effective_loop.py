"""The legacy loop's sampling settings as the effective-settings checker reads them
(migrate/effective/loop.py): what `trainer.generate(...)` passed, what the model's generation
config supplied, and what a TRL 1.13 config generates with. No TRL needed: read with `ast`."""

from __future__ import annotations

from textwrap import dedent

import pytest

from migrate.effective.loop import MODEL_CONFIG, new_generation, old_generation, trainer_names
from migrate.effective.values import UNKNOWN

LOOP = """
from trl import PPOConfig, PPOTrainer
from trl.core import LengthSampler
trainer = PPOTrainer(PPOConfig(), model, None, tok, dataset=ds)
{setup}
for batch in trainer.dataloader:
    r = trainer.generate(batch["input_ids"], {call})
"""


def _old(setup: str, call: str) -> dict:
    found = old_generation(dedent(LOOP).format(setup=setup, call=call))
    assert found is not None
    return found


def test_a_dict_literal_unpacked_into_generate():
    got = _old(
        'gen = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True, '
        '"pad_token_id": tok.eos_token_id, "max_new_tokens": 32}',
        "return_prompt=False, **gen",
    )
    assert got == {
        "sampling": "sample",
        "temperature": MODEL_CONFIG,  # not passed: the model's config said
        "top_k": 0,
        "top_p": 1.0,
        "min_p": None,
        "repetition_penalty": 1.0,
        "min_length": "none",
        "max_completion_length": 32,
        "other_generation": "none",
    }


def test_dict_call_subscript_updates_and_a_named_length_sampler():
    got = _old(
        "gen = dict(do_sample=False, no_repeat_ngram_size=3)\n"
        "gen['temperature'] = 0.7\n"
        "sampler = LengthSampler(4, 16)",
        "length_sampler=sampler, **gen",
    )
    assert (got["sampling"], got["temperature"], got["top_k"]) == ("greedy", 0.7, MODEL_CONFIG)
    assert got["max_completion_length"] == "a random length in range(4, 16)"
    assert got["other_generation"] == "no_repeat_ngram_size=3"


def test_nothing_passed_leaves_everything_to_the_model():
    got = _old("", "")
    assert {k: got[k] for k in ("sampling", "top_k", "max_completion_length")} == dict.fromkeys(
        ("sampling", "top_k", "max_completion_length"), MODEL_CONFIG
    )


@pytest.mark.parametrize(
    ("setup", "call"),
    [
        pytest.param("gen = make_kwargs()", "**gen", id="dict-built-elsewhere"),
        pytest.param("gen = {'top_k': 0}\ngen = {'top_k': 50}", "**gen", id="bound-twice"),
    ],
)
def test_a_dict_not_known_in_the_file_is_unknown(setup, call):
    assert set(_old(setup, call).values()) == {UNKNOWN}


def test_calls_that_disagree_leave_that_setting_unknown():
    text = dedent(LOOP).format(setup="", call="max_new_tokens=8, top_k=0") + (
        "    r2 = trainer.generate(batch['input_ids'], max_new_tokens=16, top_k=0)\n"
    )
    got = old_generation(text)
    assert got is not None
    assert (got["max_completion_length"], got["top_k"]) == (UNKNOWN, 0)


def test_only_a_ppo_trainers_generate_counts():
    text = "from trl import PPOTrainer\nout = model.generate(q, max_new_tokens=8)\n"
    assert old_generation(text) is None
    assert trainer_names(__import__("ast").parse(dedent(LOOP).format(setup="", call=""))) == {
        "trainer"
    }


def test_new_settings_come_from_the_fields_and_generation_kwargs():
    fields = {
        "temperature": 0.7,
        "top_k": 0,
        "top_p": 1.0,
        "min_p": None,
        "repetition_penalty": 1.0,
        "max_completion_length": 32,
        "generation_kwargs": {"no_repeat_ngram_size": 3, "min_length": 4},
    }
    assert new_generation(fields) == {
        "sampling": "sample",
        "temperature": 0.7,
        "top_k": 0,
        "top_p": 1.0,
        "min_p": None,
        "repetition_penalty": 1.0,
        "min_length": 4,
        "max_completion_length": 32,
        "other_generation": "no_repeat_ngram_size=3",
    }
    assert set(new_generation({"generation_kwargs": UNKNOWN}).values()) == {UNKNOWN}


@pytest.mark.parametrize(
    ("load", "era", "old"),
    [
        pytest.param('M.from_pretrained("x")', "legacy", "float32", id="legacy-unset"),
        pytest.param('M.from_pretrained("x")', "v2", ("float32", "auto"), id="v2-unset"),
        pytest.param(
            'M.from_pretrained("x", torch_dtype=torch.bfloat16)', "v2", "bfloat16", id="set"
        ),
        pytest.param('M.from_pretrained("x", dtype="auto")', "legacy", "auto", id="auto"),
        pytest.param('M.from_pretrained("x", load_in_8bit=True)', "legacy", "none", id="8-bit"),
        pytest.param('M.from_pretrained("x", **kw)', "legacy", UNKNOWN, id="unpacked"),
    ],
)
def test_model_load_dtypes(load, era, old):
    from migrate.effective.models import new_dtypes, old_dtypes

    text = f"from transformers import AutoModelForCausalLM as M, AutoTokenizer\nm = {load}\n"
    text += 't = AutoTokenizer.from_pretrained("x")\n'  # a tokenizer is no model load
    text += 'p = PeftModel.from_pretrained(m, "adapter")\n'  # nor is peft's adapter load
    assert old_dtypes(text, era) == old
    assert (
        new_dtypes('import transformers\ntransformers.GPT2LMHeadModel.from_pretrained("x")')
        == "auto"
    )


def test_a_load_the_rewrite_drops_does_not_count_as_a_change():
    """RLOO builds its reference model itself: a rewrite may drop the old reference load."""
    from migrate.effective.models import new_dtypes, old_dtypes

    head = "from transformers import AutoModelForCausalLM\n"
    two = (
        head
        + 'a = AutoModelForCausalLM.from_pretrained("x")\nb = AutoModelForCausalLM.from_pretrained("x")\n'
    )
    one = head + 'a = AutoModelForCausalLM.from_pretrained("x", dtype="float32")\n'
    assert old_dtypes(two, "legacy") == new_dtypes(one) == "float32"
    mixed = two.replace('("x")\nb', '("x", torch_dtype=torch.float16)\nb')
    assert old_dtypes(mixed, "legacy") == "float16, float32"


def test_a_value_head_put_on_a_loaded_model_is_no_load():
    from migrate.effective.models import old_dtypes

    text = (
        "from transformers import AutoModelForCausalLM\n"
        "from trl import AutoModelForCausalLMWithValueHead\n"
        'base = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.float16)\n'
        "model = AutoModelForCausalLMWithValueHead.from_pretrained(base)\n"
        'other = AutoModelForCausalLMWithValueHead.from_pretrained("y")\n'
    )
    assert old_dtypes(text, "legacy") == "float16, float32"  # base, and the load of "y"
    assert (
        old_dtypes(
            text.replace('other = AutoModelForCausalLMWithValueHead.from_pretrained("y")\n', ""),
            "legacy",
        )
        == "float16"
    )
