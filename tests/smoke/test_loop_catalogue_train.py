"""Every rewritten shape of the loop catalogue trains 2 steps on real TRL 1.13: its golden,
behind a few lines that build what the fixtures take as given (a model, its tokenizer, a
sentiment pipeline, a prompt dataset; `trl-migrate smoke` swaps the named checkpoints for tiny
offline stand-ins). CI runs a slice; TRL_MIGRATE_SLOW=1 runs every shape on both targets."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from migrate.smoke import smoke_script  # noqa: E402
from tests.codemods.test_loop_catalogue import LOOPS, TARGETS, catalogue  # noqa: E402

GIVEN = """
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

tokenizer = AutoTokenizer.from_pretrained("gpt2")
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained("gpt2")
sentiment_pipe = pipeline("sentiment-analysis", model="lvwerra/distilbert-imdb")
texts = ["the movie was", "I did not like", "a great story of", "the actors were"] * 2
ds = Dataset.from_dict({"prompt": texts, "query": texts})
model_name, rm_adapter = "gpt2", "trl-lib/gpt2-imdb-reward-adapter"


def tqdm(it, *args, **kwargs):
    return it

"""
REWRITTEN = sorted(shape for shape, outcome in catalogue().items() if outcome == "rewritten")
SLICE = {
    ("01_batch_pipeline", "rloo"),
    ("11_prompt_returned_local_texts", "rloo"),
    ("14_gen_dict_in_main_guard", "grpo"),
    ("10_epoch_wrapper", "grpo"),
    ("27_reward_adapter", "rloo"),
}
CASES = [
    pytest.param(shape, target, marks=[] if (shape, target) in SLICE else [pytest.mark.slow])
    for shape in REWRITTEN
    for target in TARGETS
]


@pytest.mark.parametrize(("shape", "target"), CASES)
def test_rewritten_shape_trains_two_steps(shape, target, store, tmp_path):
    script = tmp_path / f"{shape}.{target}.py"
    script.write_text(GIVEN + (LOOPS / "expected" / f"{shape}.{target}.py").read_text())
    result = smoke_script(str(script), store=store, timeout=240)
    codes = [f.code for f in result.findings if f.code != "TRL420"]
    assert codes == ["TRL410"], (result.findings, result.log_tail)
    trainer = "GRPOTrainer" if target == "grpo" else "RLOOTrainer"
    assert trainer in result.findings[0].message
    assert result.steps_run == 2 and all(math.isfinite(x) for x in result.losses)
